// check_indices_cuda (index_check_cuda.cuh): the index check of launchers that have no output to compute.
#include "index_check_cuda.cuh"

#include "cuda_utils.cuh"

namespace pvn3d {
namespace cuda {

namespace {

constexpr int kCheckThreads = 256;

// Grid-stride over the indices, a warp's 32 lanes on 32 consecutive positions (blockDim and the stride
// are multiples of 32, so a warp stays together through the loop). Only the warp's lowest bad lane
// records: when every index is bad (limit == 0) that is 32 times fewer atomics on the two report words,
// and the report is the same, record_bad_index keeping the lowest position whatever order warps run in.
__global__ void __launch_bounds__(kCheckThreads)
    check_indices_kernel(const int64_t* __restrict__ idx, int64_t count, int64_t limit, int64_t* index_error) {
  const int lane = threadIdx.x & 31;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t p = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; p - lane < count; p += stride) {
    const int64_t v = p < count ? __ldg(idx + p) : 0;
    const bool bad = p < count && !index_ok(v, limit);
    const unsigned bad_lanes = __ballot_sync(0xFFFFFFFFu, bad);
    if (bad && lane == __ffs(static_cast<int>(bad_lanes)) - 1) record_bad_index(index_error, p, v);
  }
}

}  // namespace

pvn3d_status check_indices_cuda(const char* op, const int64_t* idx, int64_t count, int64_t limit,
                                int64_t* index_error, cudaStream_t stream) {
  if (count <= 0 || index_error == nullptr) return PVN3D_OK;
  clear_stale_error();
  check_indices_kernel<<<grid_for(count, kCheckThreads), kCheckThreads, 0, stream>>>(idx, count, limit, index_error);
  return check_launch(op);
}

}  // namespace cuda
}  // namespace pvn3d
