/* The VoteAggregate CUDA launch, shared with PoseSolve (internal; .cu files only). */
#ifndef PVN3D_VOTE_AGGREGATE_CUDA_CUH
#define PVN3D_VOTE_AGGREGATE_CUDA_CUH

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "status.h"

namespace pvn3d {
namespace vote {

/* Workspace bytes for (B,K,N), 0 when the sizes are invalid or overflow. */
size_t cuda_workspace_bytes(int64_t B, int64_t K, int64_t N);

/* Launches the aggregation (arguments already checked; workspace already checked for size).
 * op names the operator in CUDA error messages. */
pvn3d_status launch_cuda(const char* op, const float* votes, const void* mask, int mask_dtype, int64_t B, int64_t K,
                         int64_t N, float bandwidth, int64_t max_iter, int center_filter, float* kps,
                         int64_t* inliers, void* workspace, cudaStream_t stream);

}  // namespace vote
}  // namespace pvn3d

#endif
