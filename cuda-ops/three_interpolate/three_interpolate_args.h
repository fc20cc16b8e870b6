// Argument checks shared by the CPU kernel and the CUDA launcher (internal).
#ifndef PVN3D_THREE_INTERPOLATE_ARGS_H
#define PVN3D_THREE_INTERPOLATE_ARGS_H

#include "../common/checks.h"

namespace pvn3d {
namespace three_interpolate {

constexpr const char* kOp = "PVN3D_ThreeInterpolate";

// OK and *work = B*C*n (0: nothing to do), or the error.
inline pvn3d_status check_args(int64_t B, int64_t C, int64_t m, int64_t n, const void* features, const void* idx,
                               const void* weight, const void* out, int64_t* work) {
  PVN3D_TRY(check_at_least(kOp, "B", B, 0));
  PVN3D_TRY(check_at_least(kOp, "C", C, 0));
  PVN3D_TRY(check_at_least(kOp, "m", m, 0));
  PVN3D_TRY(check_at_least(kOp, "n", n, 0));
  int64_t count = 0;
  PVN3D_TRY(checked_numel(kOp, "features", {B, C, m}, &count));
  PVN3D_TRY(checked_numel(kOp, "idx", {B, n, 3}, &count));
  PVN3D_TRY(checked_numel(kOp, "out", {B, C, n}, work));
  if (*work == 0) return PVN3D_OK;
  PVN3D_TRY(check_pointer(kOp, "features", features));
  PVN3D_TRY(check_pointer(kOp, "idx", idx));
  PVN3D_TRY(check_pointer(kOp, "weight", weight));
  PVN3D_TRY(check_pointer(kOp, "out", out));
  return PVN3D_OK;
}

}  // namespace three_interpolate
}  // namespace pvn3d

#endif
