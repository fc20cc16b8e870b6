// PVN3D_GatherPoints, CPU kernel. See gather_points.h.
#include "gather_points.h"

#include "../common/gather_cpu.h"
#include "../common/index_check_internal.h"
#include "gather_points_args.h"

extern "C" pvn3d_status pvn3d_gather_points_cpu(int64_t B, int64_t C, int64_t N, int64_t M, const float* features,
                                                 const int64_t* idx, float* out) {
  using namespace pvn3d::gather_points;
  int64_t work = 0;
  PVN3D_TRY(check_args(B, C, N, M, features, idx, out, &work));
  // Before the empty-output return: an index outside [0, N) is an error even when C == 0 (spec/ops.md).
  PVN3D_TRY(pvn3d::check_indices(kOp, "idx", idx, B * M, N));
  if (work == 0) return PVN3D_OK;
  pvn3d::gather_rows_cpu(features, idx, B, C, N, M, out);
  return PVN3D_OK;
}
