/*
 * The shared gather machinery of GatherPoints, GroupPoints and ThreeInterpolate on CUDA (internal; .cu
 * files only).
 *
 *   out[b, c, p] = features[b, c, idx[b, p]]  (0 where idx[b, p] is outside [0, N): reported through
 *   index_error at flat position b*P + p, see index_check.h).
 *
 * Two kernels for that gather (gather_rows_cuda picks one):
 *  - staged: a block copies `rows` whole feature rows of one batch element (rows*N floats, contiguous)
 *    into shared memory with cp.async (16-byte copies, all in flight at once) and serves a range of
 *    target positions from there. Each thread owns a group of 4 consecutive positions (one 16-byte
 *    index pair load, one float4 store per row) and a subset of the rows, so every global access is
 *    coalesced and vectorised; only the shared-memory reads are random. Used when a block's staged
 *    rows are small beside what it writes (N <= P / 4); where the direct kernel must take one position
 *    a thread, also when they are not much larger (N <= 4 * P) over features large enough (2^21
 *    floats) to hide the two phases: a direct 4-byte gather moves a whole 32-byte sector per output.
 *  - direct: grid.x covers p (4 consecutive positions a thread where P % 4 == 0 and idx and out are
 *    16-byte aligned, else one; idx reads and out writes coalesced), grid.y covers (b, chunk of up to
 *    kGatherChannels channels): each thread reads its indices once and issues a chunk's independent
 *    loads before its stores; chunks shrink (8, 4, 2, 1 channels) until every SM has two blocks.
 *
 * plan_rows (also used by ThreeInterpolate) sizes the staged launch for the current device: 512-thread
 * blocks, two per SM (so one block's staging overlaps the other's gathers), up to as many rows as fit in
 * half an SM's shared memory, and the target positions split so that the blocks fill whole waves,
 * without letting a block stage more than its positions repay.
 */
#ifndef PVN3D_COMMON_GATHER_CUDA_CUH
#define PVN3D_COMMON_GATHER_CUDA_CUH

#include <atomic>

#include "cuda_utils.cuh"
#include "index_check_cuda.cuh"

namespace pvn3d {
namespace cuda {

constexpr int kGatherThreads = 256;
constexpr int kGatherChannels = 8;
constexpr int kStagedThreads = 512;

/* A staged launch: each block stages `rows` rows of `len` floats (smem_bytes of dynamic shared memory)
 * for one (b, chunk of rows) of grid.y and serves target positions [blockIdx.x * p_per_block, ...) of
 * it. rows == 0: no row fits, use a direct kernel. */
struct RowsPlan {
  int rows = 0;
  int64_t p_per_block = 0;  // a multiple of 4
  unsigned gx = 0, gy = 0;
  size_t smem_bytes = 0;
};

/* The device's SM count, shared memory per SM and the opt-in maximum per block (cached per device). */
struct DeviceSmem {
  int sms = 0;
  int64_t per_sm = 0;
  int64_t per_block_optin = 0;
};
DeviceSmem device_smem();

/* Sets the kernel's MaxDynamicSharedMemorySize to the device's opt-in maximum, once per device
 * (per_device_flags: kMaxDeviceFlags zero-initialised flags owned by the caller, one set per kernel). */
constexpr int kMaxDeviceFlags = 64;
pvn3d_status allow_max_smem(const char* op, const void* kernel, std::atomic<int>* per_device_flags);

/* Plan for out[B, C, P] from rows of `len` floats (features [B, C, len]): the rows per chunk and the
 * split of P that minimise (waves of blocks) x (a block's output + half its staged floats + index_cost
 * per position: the index/weight floats read per position, L2 hits counted half). min_p_per_block
 * bounds the split (a block stages rows*len floats, so it should serve a comparable number of
 * positions per row). The plans a thread made last are remembered (32, by arguments and device): the
 * search is most of a launcher's host time above the CUDA launch. */
RowsPlan plan_rows(int64_t B, int64_t C, int64_t len, int64_t P, int64_t min_p_per_block, double index_cost);

/* Issues the copy of `count` floats from src to shared memory dst (all threads of the block take part;
 * cp.async 16-byte copies when src and dst are 16-byte aligned, else plain loads and stores). Follow
 * with stage_rows_wait() and __syncthreads() before reading dst. */
__device__ __forceinline__ void stage_rows_issue(float* dst, const float* __restrict__ src, int count) {
  const bool aligned = ((reinterpret_cast<uintptr_t>(src) | reinterpret_cast<uintptr_t>(dst)) & 15u) == 0;
  if (aligned) {
    const int vec = count >> 2;
    const uint32_t d0 = static_cast<uint32_t>(__cvta_generic_to_shared(dst));
    for (int t = threadIdx.x; t < vec; t += blockDim.x)
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(d0 + 16u * static_cast<uint32_t>(t)),
                   "l"(__cvta_generic_to_global(src + 4 * static_cast<int64_t>(t)))
                   : "memory");
    for (int t = (vec << 2) + threadIdx.x; t < count; t += blockDim.x) dst[t] = __ldg(src + t);
  } else {
#pragma unroll 8
    for (int t = threadIdx.x; t < count; t += blockDim.x) dst[t] = __ldg(src + t);
  }
}
__device__ __forceinline__ void stage_rows_wait() { asm volatile("cp.async.wait_all;" ::: "memory"); }

/* Launches the staged or the direct kernel on `stream` with the index-error protocol around it
 * (index_error may be NULL). Sizes must be validated and the work non-empty. The environment variable
 * PVN3D_GATHER=direct|staged (read once) overrides the choice, for A/B runs and forced tests; direct8,
 * direct4, direct2 or direct1 also fixes the direct kernel's channels a thread. */
pvn3d_status gather_rows_cuda(const char* op, const float* features, const int64_t* idx, int64_t B, int64_t C,
                              int64_t N, int64_t P, float* out, int64_t* index_error, cudaStream_t stream);

}  // namespace cuda
}  // namespace pvn3d

#endif /* PVN3D_COMMON_GATHER_CUDA_CUH */
