// PVN3D_PoseSolve on CUDA: the VoteAggregate cooperative kernel writes the keypoints into `kps` (device),
// then the Kabsch kernel fits them, both on the caller's stream; nothing returns to the host.
#include "pose_solve.h"

#include "../common/checks.h"
#include "../common/cuda_utils.cuh"
#include "../kabsch_solver/kabsch_internal.h"
#include "../kabsch_solver/kabsch_solver_cuda.cuh"
#include "vote_aggregate.h"
#include "../vote_aggregate/vote_aggregate_cuda.cuh"
#include "../vote_aggregate/vote_aggregate_internal.h"
#include "pose_solve_internal.h"
#include "../common/nvtx_range.h"

namespace {
constexpr size_t kAlign = 256;
size_t inliers_bytes(int64_t B) { return (static_cast<size_t>(B) * sizeof(int64_t) + kAlign - 1) / kAlign * kAlign; }
}  // namespace

extern "C" size_t pvn3d_pose_solve_cuda_workspace_bytes(int64_t B, int64_t K, int64_t N) {
  const size_t va = pvn3d::vote::cuda_workspace_bytes(B, K, N);
  return va == 0 ? 0 : va + inliers_bytes(B);
}

extern "C" pvn3d_status pvn3d_pose_solve_cuda(const float* votes, const void* mask, int mask_dtype, int64_t B,
                                              int64_t K, int64_t N, const float* model_kps, int64_t model_B,
                                              int64_t model_K, float bandwidth, int64_t max_iter, int center_filter,
                                              float* R, float* t, float* kps, int64_t* inliers, int64_t* input_error,
                                              void* workspace, size_t workspace_bytes, void* stream) {
  PVN3D_NVTX_RANGE("PVN3D_PoseSolve");
  static const char* op = "PVN3D_PoseSolve";
  using namespace pvn3d;
  PVN3D_TRY(pose_solve::check_args(op, votes, mask, mask_dtype, B, K, N, model_kps, model_B, model_K, bandwidth, max_iter,
                                   center_filter, R, t, kps, inliers));
  const size_t need = pvn3d_pose_solve_cuda_workspace_bytes(B, K, N);
  if (need == 0) return fail(PVN3D_ERR_INVALID_ARGUMENT, "%s: sizes too large for the workspace", op);
  PVN3D_TRY(check_pointer(op, "workspace", workspace));
  if (workspace_bytes < need)
    return fail(PVN3D_ERR_INVALID_ARGUMENT, "%s: workspace_bytes (%zu) is smaller than needed (%zu)", op, workspace_bytes,
                need);
  const size_t va = vote::cuda_workspace_bytes(B, K, N);
  int64_t* inl = inliers != nullptr ? inliers : reinterpret_cast<int64_t*>(static_cast<char*>(workspace) + va);
  cudaStream_t s = pvn3d::cuda::as_stream(stream);
  PVN3D_TRY(vote::launch_cuda(op, votes, mask, mask_dtype, B, K, N, bandwidth, max_iter, center_filter, kps, inl,
                              workspace, s));
  return kabsch::launch_cuda(op, model_kps, model_B, kps, B, K, R, t, input_error, 0, s);
}
