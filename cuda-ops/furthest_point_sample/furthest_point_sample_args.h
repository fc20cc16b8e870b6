// Argument checks shared by the CPU kernel and the CUDA launcher (internal).
#ifndef PVN3D_FURTHEST_POINT_SAMPLE_ARGS_H
#define PVN3D_FURTHEST_POINT_SAMPLE_ARGS_H

#include "../common/checks.h"

namespace pvn3d {
namespace fps {

constexpr const char* kOp = "PVN3D_FurthestPointSample";
constexpr float kInitialDistance = 1e10f;
constexpr double kPaddingNorm2 = 1e-3;

// OK and *work = B*npoint (0: nothing to do), or the error.
inline pvn3d_status check_args(int64_t B, int64_t N, int64_t npoint, const void* xyz, const void* idx,
                               int64_t* work) {
  PVN3D_TRY(check_at_least(kOp, "B", B, 0));
  PVN3D_TRY(check_at_least(kOp, "N", N, 0));
  PVN3D_TRY(check_at_least(kOp, "npoint", npoint, 1));
  PVN3D_TRY(check_at_most(kOp, "npoint", npoint, "N", N));
  int64_t n_xyz = 0;
  PVN3D_TRY(checked_numel(kOp, "xyz", {B, N, 3}, &n_xyz));
  PVN3D_TRY(checked_numel(kOp, "idx", {B, npoint}, work));
  if (*work == 0) return PVN3D_OK;
  PVN3D_TRY(check_pointer(kOp, "xyz", xyz));
  PVN3D_TRY(check_pointer(kOp, "idx", idx));
  return PVN3D_OK;
}

}  // namespace fps
}  // namespace pvn3d

#endif
