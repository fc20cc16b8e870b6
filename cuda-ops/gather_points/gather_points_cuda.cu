// PVN3D_GatherPoints, CUDA launcher over the shared gather kernel (common/gather_cuda.cuh).
#include "gather_points.h"

#include "../common/gather_cuda.cuh"
#include "gather_points_args.h"
#include "../common/nvtx_range.h"

extern "C" pvn3d_status pvn3d_gather_points_cuda(int64_t B, int64_t C, int64_t N, int64_t M, const float* features,
                                                  const int64_t* idx, float* out, int64_t* index_error,
                                                  void* stream) {
  using namespace pvn3d::gather_points;
  PVN3D_NVTX_RANGE(kOp);
  int64_t work = 0;
  PVN3D_TRY(check_args(B, C, N, M, features, idx, out, &work));
  if (work == 0)  // no output, but the indices are still checked (an error even when C == 0, spec/ops.md)
    return pvn3d::cuda::check_indices_cuda(kOp, idx, B * M, N, index_error, pvn3d::cuda::as_stream(stream));
  return pvn3d::cuda::gather_rows_cuda(kOp, features, idx, B, C, N, M, out, index_error,
                                       pvn3d::cuda::as_stream(stream));
}
