// Argument checks shared by the CPU kernel and the CUDA launcher (internal).
#ifndef PVN3D_BALL_QUERY_ARGS_H
#define PVN3D_BALL_QUERY_ARGS_H

#include "../common/checks.h"

namespace pvn3d {
namespace ball_query {

constexpr const char* kOp = "PVN3D_BallQuery";

// OK and *work = B*M (0: nothing to do), or the error.
inline pvn3d_status check_args(int64_t B, int64_t N, int64_t M, float radius, int64_t nsample, const void* xyz,
                               const void* new_xyz, const void* idx, int64_t* work) {
  PVN3D_TRY(check_at_least(kOp, "B", B, 0));
  PVN3D_TRY(check_at_least(kOp, "N", N, 0));
  PVN3D_TRY(check_at_least(kOp, "M", M, 0));
  PVN3D_TRY(check_at_least(kOp, "nsample", nsample, 1));
  if (!(radius > 0.0f)) return fail(PVN3D_ERR_INVALID_ARGUMENT, "%s: radius must be > 0, got %g", kOp, (double)radius);
  int64_t n = 0;
  PVN3D_TRY(checked_numel(kOp, "xyz", {B, N, 3}, &n));
  PVN3D_TRY(checked_numel(kOp, "new_xyz", {B, M, 3}, &n));
  PVN3D_TRY(checked_numel(kOp, "idx", {B, M, nsample}, &n));
  *work = B * M;
  if (*work == 0) return PVN3D_OK;
  if (N > 0) PVN3D_TRY(check_pointer(kOp, "xyz", xyz));
  PVN3D_TRY(check_pointer(kOp, "new_xyz", new_xyz));
  PVN3D_TRY(check_pointer(kOp, "idx", idx));
  return PVN3D_OK;
}

}  // namespace ball_query
}  // namespace pvn3d

#endif
