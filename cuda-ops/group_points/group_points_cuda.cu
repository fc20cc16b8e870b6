// PVN3D_GroupPoints, CUDA launcher over the shared gather kernel (common/gather_cuda.cuh), P = M*S.
#include "group_points.h"

#include "../common/gather_cuda.cuh"
#include "group_points_args.h"
#include "../common/nvtx_range.h"

extern "C" pvn3d_status pvn3d_group_points_cuda(int64_t B, int64_t C, int64_t N, int64_t M, int64_t S,
                                                 const float* features, const int64_t* idx, float* out,
                                                 int64_t* index_error, void* stream) {
  using namespace pvn3d::group_points;
  PVN3D_NVTX_RANGE(kOp);
  int64_t work = 0;
  PVN3D_TRY(check_args(B, C, N, M, S, features, idx, out, &work));
  if (work == 0)  // no output, but the indices are still checked (an error even when C == 0, spec/ops.md)
    return pvn3d::cuda::check_indices_cuda(kOp, idx, B * M * S, N, index_error, pvn3d::cuda::as_stream(stream));
  return pvn3d::cuda::gather_rows_cuda(kOp, features, idx, B, C, N, M * S, out, index_error,
                                       pvn3d::cuda::as_stream(stream));
}
