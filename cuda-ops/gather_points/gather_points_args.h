// Argument checks shared by the CPU kernel and the CUDA launcher (internal).
#ifndef PVN3D_GATHER_POINTS_ARGS_H
#define PVN3D_GATHER_POINTS_ARGS_H

#include "../common/checks.h"

namespace pvn3d {
namespace gather_points {

constexpr const char* kOp = "PVN3D_GatherPoints";

// OK and *work = B*C*M (0: no output to compute; idx, B*M elements, is validated all the same), or the
// error. A pointer must be non-NULL only where the call goes through it: idx whenever it has elements
// (its indices are checked even when the output is empty), features and out only when there is output
// to compute and their tensor has elements (an empty tensor's data may be NULL).
inline pvn3d_status check_args(int64_t B, int64_t C, int64_t N, int64_t M, const void* features, const void* idx,
                               const void* out, int64_t* work) {
  PVN3D_TRY(check_at_least(kOp, "B", B, 0));
  PVN3D_TRY(check_at_least(kOp, "C", C, 0));
  PVN3D_TRY(check_at_least(kOp, "N", N, 0));
  PVN3D_TRY(check_at_least(kOp, "M", M, 0));
  int64_t features_count = 0, idx_count = 0;
  PVN3D_TRY(checked_numel(kOp, "features", {B, C, N}, &features_count));
  PVN3D_TRY(checked_numel(kOp, "idx", {B, M}, &idx_count));
  PVN3D_TRY(checked_numel(kOp, "out", {B, C, M}, work));
  if (*work > 0 && features_count > 0) PVN3D_TRY(check_pointer(kOp, "features", features));
  if (idx_count > 0) PVN3D_TRY(check_pointer(kOp, "idx", idx));
  if (*work > 0) PVN3D_TRY(check_pointer(kOp, "out", out));
  return PVN3D_OK;
}

}  // namespace gather_points
}  // namespace pvn3d

#endif
