/*
 * The shared kernel of GatherPoints and GroupPoints on CUDA (internal; .cu files only):
 *   out[b, c, p] = features[b, c, idx[b, p]]  (0 where idx[b, p] is outside [0, N): reported
 *   through index_error at flat position b*P + p, see index_check.h).
 * grid.x covers p (one thread per p, so idx reads and out writes are coalesced), grid.y covers
 * (b, chunk of kChannels channels): each thread reads its index once and issues kChannels
 * independent loads before its stores.
 */
#ifndef PVN3D_COMMON_GATHER_CUDA_CUH
#define PVN3D_COMMON_GATHER_CUDA_CUH

#include "cuda_utils.cuh"
#include "index_check_cuda.cuh"

namespace pvn3d {
namespace cuda {

constexpr int kGatherThreads = 256;
constexpr int kGatherChannels = 8;

/* How a staged gather (rows of the source staged in shared memory, then gathered from there) splits
 * out[B, C, P] from src[B, C, N]: each block stages `rows` rows of N floats (at most budget_bytes of
 * shared memory) and serves p_per_block target positions; grid gx x gy. rows == 0: a row does not
 * fit, use a direct kernel. Used by ThreeInterpolate (three gathers per output repay the staging;
 * for Gather/Group's one gather per output the direct kernel measured faster on the H200). */
struct StagedPlan {
  int rows = 0;
  int64_t p_per_block = 0;
  unsigned gx = 0, gy = 0;
  size_t smem_bytes = 0;
};

inline StagedPlan plan_staged(int64_t B, int64_t C, int64_t N, int64_t P, int64_t budget_bytes) {
  const int64_t kBudgetFloats = budget_bytes / 4;
  constexpr int64_t kMaxRows = 16;
  constexpr int64_t kTargetBlocks = 132 * 8;  // a few waves on the largest target GPU
  constexpr int64_t kMinPerBlock = 1024;      // keeps the staging cost small against the output
  StagedPlan plan;
  if (N < 1 || N > kBudgetFloats || C < 1) return plan;
  int64_t rows = kBudgetFloats / N;
  if (rows > kMaxRows) rows = kMaxRows;
  if (rows > C) rows = C;
  const int64_t chunks = B * ((C + rows - 1) / rows);
  int64_t split = (kTargetBlocks + chunks - 1) / chunks;
  const int64_t max_split = P / kMinPerBlock > 1 ? P / kMinPerBlock : 1;
  if (split > max_split) split = max_split;
  if (split < 1) split = 1;
  plan.p_per_block = (P + split - 1) / split;
  plan.gx = static_cast<unsigned>((P + plan.p_per_block - 1) / plan.p_per_block);
  plan.gy = static_cast<unsigned>(chunks < 65535 ? chunks : 65535);
  plan.rows = static_cast<int>(rows);
  plan.smem_bytes = static_cast<size_t>(rows * N) * sizeof(float);
  return plan;
}

__global__ void __launch_bounds__(kGatherThreads)
    gather_rows_kernel(const float* __restrict__ features, const int64_t* __restrict__ idx, int64_t B, int64_t C,
                       int64_t N, int64_t P, float* __restrict__ out, int64_t* index_error);

/* Launches gather_rows_kernel on `stream` with the index-error protocol around it (index_error may
 * be NULL). Sizes must be validated and the work non-empty. */
pvn3d_status gather_rows_cuda(const char* op, const float* features, const int64_t* idx, int64_t B, int64_t C,
                              int64_t N, int64_t P, float* out, int64_t* index_error, cudaStream_t stream);

}  // namespace cuda
}  // namespace pvn3d

#endif /* PVN3D_COMMON_GATHER_CUDA_CUH */
