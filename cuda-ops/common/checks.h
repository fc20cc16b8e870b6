/*
 * Argument checks shared by every entry point (internal; C++ only, host code of .cpp and .cu files).
 *
 * Each check returns PVN3D_OK or sets the thread's last error (pvn3d::fail) and returns the status,
 * with a message that names the operator, the argument and the offending value, e.g.
 *   "PVN3D_FurthestPointSample: npoint (4096) must be <= N (2048)".
 * Use PVN3D_TRY(check(...)) to return early on the first failure.
 */
#ifndef PVN3D_COMMON_CHECKS_H
#define PVN3D_COMMON_CHECKS_H

#include <cmath>
#include <cstdint>
#include <initializer_list>

#include "status_internal.h"

#define PVN3D_TRY(expr)                           \
  do {                                            \
    const pvn3d_status pvn3d_try_status_ = (expr); \
    if (pvn3d_try_status_ != PVN3D_OK) return pvn3d_try_status_; \
  } while (0)

namespace pvn3d {

/* `name` (a size or attribute) must be >= min. */
inline pvn3d_status check_at_least(const char* op, const char* name, int64_t value, int64_t min) {
  if (value < min)
    return fail(PVN3D_ERR_INVALID_ARGUMENT, "%s: %s must be >= %lld, got %lld", op, name, (long long)min,
                (long long)value);
  return PVN3D_OK;
}

/* `name` must be <= max (max_name says what max is, e.g. "N"). */
inline pvn3d_status check_at_most(const char* op, const char* name, int64_t value, const char* max_name,
                                  int64_t max) {
  if (value > max)
    return fail(PVN3D_ERR_INVALID_ARGUMENT, "%s: %s (%lld) must be <= %s (%lld)", op, name, (long long)value,
                max_name, (long long)max);
  return PVN3D_OK;
}

/* A pointer that the work needs must not be NULL. */
inline pvn3d_status check_pointer(const char* op, const char* name, const void* p) {
  if (p == nullptr) return fail(PVN3D_ERR_INVALID_ARGUMENT, "%s: %s is NULL", op, name);
  return PVN3D_OK;
}

/* Product of non-negative sizes into *out; fails when it overflows int64 (tensor_name names the
 * tensor whose element count it is). */
inline pvn3d_status checked_numel(const char* op, const char* tensor_name, std::initializer_list<int64_t> dims,
                                  int64_t* out) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) return fail(PVN3D_ERR_INVALID_ARGUMENT, "%s: %s has a negative dimension (%lld)", op, tensor_name, (long long)d);
    if (d != 0 && n > INT64_MAX / d)
      return fail(PVN3D_ERR_INVALID_ARGUMENT, "%s: %s has more than 2^63-1 elements", op, tensor_name);
    n *= d;
  }
  *out = n;
  return PVN3D_OK;
}

}  // namespace pvn3d

#endif /* PVN3D_COMMON_CHECKS_H */
