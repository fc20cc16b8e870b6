// PVN3D_FurthestPointSample, CUDA kernels. See furthest_point_sample.h.
//
// One thread block per batch element. The whole step is on chip when N <= 12288: every thread holds
// PPT points and their running distances in registers (PPT chosen by a switch over templates) and the
// points are read from global memory once. Per step: each thread updates its points and finds its
// best (running distances compared as int32 bit patterns, as on the CPU: >= 0 orders like the float,
// padding holds -1.0f, which is negative); a warp finds max bits with __reduce_max_sync and the lowest
// index holding it with __reduce_min_sync; one __syncthreads; then every warp reduces the 32 warp
// results the same way, so every thread knows the pick without a second barrier (the warp-result
// slots are double-buffered by step parity). The pick's coordinates come from global memory (one
// broadcast load, an L1 hit after the first step).
// Up to 16384 points, the points beyond the registers' 10240 (and their running distances) live in
// dynamic shared memory. Larger N falls back to the same kernel shape with the running distances in
// the caller's workspace and the points re-read from global memory (L1/L2) every step.
#include "furthest_point_sample.h"

#include <climits>

#include "../common/cuda_utils.cuh"
#include "furthest_point_sample_args.h"
#include "../common/nvtx_range.h"

namespace pvn3d {
namespace fps {
namespace {

constexpr int kMaxThreads = 1024;
constexpr int kMaxPointsPerThread = 12;
// Above 12288, a variant keeps kTailPointsPerThread points per thread in registers (fewer, to leave
// registers for the extra loop) and the rest, x, y, z and running distance (16 bytes per point), in
// dynamic shared memory, up to 96 KB so that it fits every target (sm_80 allows 163 KB per block,
// sm_90 227 KB).
constexpr int kTailPointsPerThread = 10;
constexpr int64_t kMaxSharedTail = 6144;
constexpr int64_t kMaxOnChip = int64_t{kMaxThreads} * kTailPointsPerThread + kMaxSharedTail;  // 16384
constexpr unsigned kFull = 0xffffffffu;

__device__ __forceinline__ float initial_distance(float x, float y, float z) {
  const float mag = __fadd_rn(__fadd_rn(__fmul_rn(x, x), __fmul_rn(y, y)), __fmul_rn(z, z));
  return static_cast<double>(mag) <= kPaddingNorm2 ? -1.0f : kInitialDistance;
}

// Block-wide argmax of (bits, index) pairs: max bits, ties to the lowest index; pick 0 when the
// max is negative (no candidate). `slots` is [2][32] ints per array, indexed by step parity.
__device__ __forceinline__ int block_pick(int bits, int index, int step, int (*slot_bits)[32],
                                          int (*slot_idx)[32]) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
  const int wmax = __reduce_max_sync(kFull, bits);
  const unsigned widx = __reduce_min_sync(kFull, bits == wmax ? static_cast<unsigned>(index) : 0xffffffffu);
  const int parity = step & 1;
  if (lane == 0) {
    slot_bits[parity][warp] = wmax;
    slot_idx[parity][warp] = static_cast<int>(widx);
  }
  __syncthreads();
  const int v = lane < nwarps ? slot_bits[parity][lane] : INT_MIN;
  const unsigned vi = lane < nwarps ? static_cast<unsigned>(slot_idx[parity][lane]) : 0xffffffffu;
  const int gmax = __reduce_max_sync(kFull, v);
  const unsigned gidx = __reduce_min_sync(kFull, v == gmax ? vi : 0xffffffffu);
  return gmax < 0 ? 0 : static_cast<int>(gidx);
}

template <int PPT, bool TAIL>
__global__ void __launch_bounds__(kMaxThreads, 1)
    fps_on_chip_kernel(const float* __restrict__ xyz, int N, int npoint, int64_t* __restrict__ idx) {
  __shared__ int slot_bits[2][32];
  __shared__ int slot_idx[2][32];
  extern __shared__ float tail[];  // TAIL only: [4][tail_len] = x, y, z, running distance
  const float* p = xyz + static_cast<int64_t>(blockIdx.x) * N * 3;
  int64_t* out = idx + static_cast<int64_t>(blockIdx.x) * npoint;
  const int T = blockDim.x, tid = threadIdx.x;
  const int tail_begin = PPT * T;  // TAIL: registers hold [0, PPT*T), shared memory the rest
  const int tail_len = TAIL ? N - tail_begin : 0;

  float px[PPT], py[PPT], pz[PPT], pd[PPT];
#pragma unroll
  for (int k = 0; k < PPT; ++k) {
    const int i = tid + k * T;
    if (i < N) {
      px[k] = p[3 * i];
      py[k] = p[3 * i + 1];
      pz[k] = p[3 * i + 2];
      pd[k] = initial_distance(px[k], py[k], pz[k]);
    } else {
      px[k] = py[k] = pz[k] = 0.f;
      pd[k] = -1.0f;  // not a point: never a candidate
    }
  }
  if (TAIL) {
    // Each thread only ever touches its own tail entries (t = tid, tid+T, ...): no barrier needed.
    for (int t = tid; t < tail_len; t += T) {
      const int i = tail_begin + t;
      const float x = p[3 * i], y = p[3 * i + 1], z = p[3 * i + 2];
      tail[t] = x;
      tail[tail_len + t] = y;
      tail[2 * tail_len + t] = z;
      tail[3 * tail_len + t] = initial_distance(x, y, z);
    }
  }
  if (tid == 0) out[0] = 0;
  float lx = __ldg(p), ly = __ldg(p + 1), lz = __ldg(p + 2);
  for (int s = 1; s < npoint; ++s) {
    int best = INT_MIN, besti = 0;
#pragma unroll
    for (int k = 0; k < PPT; ++k) {
      const float d = cuda::dist2(px[k], py[k], pz[k], lx, ly, lz);
      const float t = fminf(d, pd[k]);  // == (d < pd ? d : pd): pd is never NaN
      pd[k] = t;
      const int tb = __float_as_int(t);
      if (tb > best) {
        best = tb;
        besti = tid + k * T;
      }
    }
    if (TAIL) {
      for (int t = tid; t < tail_len; t += T) {  // indices above every register point: order kept
        const float d = cuda::dist2(tail[t], tail[tail_len + t], tail[2 * tail_len + t], lx, ly, lz);
        const float old = tail[3 * tail_len + t];
        const float v = fminf(d, old);
        tail[3 * tail_len + t] = v;
        const int tb = __float_as_int(v);
        if (tb > best) {
          best = tb;
          besti = tail_begin + t;
        }
      }
    }
    const int pick = block_pick(best, besti, s, slot_bits, slot_idx);
    if (tid == 0) out[s] = pick;
    lx = __ldg(p + 3 * pick);
    ly = __ldg(p + 3 * pick + 1);
    lz = __ldg(p + 3 * pick + 2);
  }
}

__global__ void __launch_bounds__(kMaxThreads, 1)
    fps_global_kernel(const float* __restrict__ xyz, int N, int npoint, int64_t* __restrict__ idx,
                      float* __restrict__ workspace) {
  __shared__ int slot_bits[2][32];
  __shared__ int slot_idx[2][32];
  const float* p = xyz + static_cast<int64_t>(blockIdx.x) * N * 3;
  float* dist = workspace + static_cast<int64_t>(blockIdx.x) * N;
  int64_t* out = idx + static_cast<int64_t>(blockIdx.x) * npoint;
  const int T = blockDim.x, tid = threadIdx.x;
  for (int i = tid; i < N; i += T) {
    const float* q = p + 3 * static_cast<int64_t>(i);
    dist[i] = initial_distance(q[0], q[1], q[2]);
  }
  if (tid == 0) out[0] = 0;
  float lx = __ldg(p), ly = __ldg(p + 1), lz = __ldg(p + 2);
  for (int s = 1; s < npoint; ++s) {
    int best = INT_MIN, besti = 0;
    for (int i = tid; i < N; i += T) {  // each thread only touches its own dist[i]
      const float* q = p + 3 * static_cast<int64_t>(i);
      const float d = cuda::dist2(__ldg(q), __ldg(q + 1), __ldg(q + 2), lx, ly, lz);
      const float t = d < dist[i] ? d : dist[i];
      dist[i] = t;
      const int tb = __float_as_int(t);
      if (tb > best) {
        best = tb;
        besti = i;
      }
    }
    const int pick = block_pick(best, besti, s, slot_bits, slot_idx);
    if (tid == 0) out[s] = pick;
    const float* q = p + 3 * static_cast<int64_t>(pick);
    lx = __ldg(q);
    ly = __ldg(q + 1);
    lz = __ldg(q + 2);
  }
}

template <int PPT>
void launch_on_chip(int64_t B, int N, int npoint, const float* xyz, int64_t* idx, cudaStream_t stream) {
  int threads = (N + PPT - 1) / PPT;
  threads = ((threads + 31) / 32) * 32;
  if (threads > kMaxThreads) threads = kMaxThreads;
  fps_on_chip_kernel<PPT, false><<<static_cast<unsigned>(B), threads, 0, stream>>>(xyz, N, npoint, idx);
}

pvn3d_status launch_with_tail(int64_t B, int N, int npoint, const float* xyz, int64_t* idx, cudaStream_t stream) {
  const int tail_len = N - kMaxThreads * kTailPointsPerThread;
  const size_t smem = static_cast<size_t>(tail_len) * 4 * sizeof(float);
  auto kernel = fps_on_chip_kernel<kTailPointsPerThread, true>;
  PVN3D_TRY(cuda::cuda_status(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)),
                              kOp, "cudaFuncSetAttribute(MaxDynamicSharedMemorySize)"));
  kernel<<<static_cast<unsigned>(B), kMaxThreads, smem, stream>>>(xyz, N, npoint, idx);
  return PVN3D_OK;
}

}  // namespace
}  // namespace fps
}  // namespace pvn3d

extern "C" size_t pvn3d_furthest_point_sample_cuda_workspace_bytes(int64_t B, int64_t N, int64_t npoint) {
  if (B < 0 || N < 0 || npoint < 1 || npoint > N || N <= pvn3d::fps::kMaxOnChip) return 0;
  if (B > INT64_MAX / 4 / N) return 0;
  return static_cast<size_t>(B * N * 4);
}

extern "C" pvn3d_status pvn3d_furthest_point_sample_cuda(int64_t B, int64_t N, int64_t npoint, const float* xyz,
                                                          int64_t* idx, void* workspace, size_t workspace_bytes,
                                                          void* stream) {
  using namespace pvn3d::fps;
  PVN3D_NVTX_RANGE(kOp);
  int64_t work = 0;
  PVN3D_TRY(check_args(B, N, npoint, xyz, idx, &work));
  if (work == 0) return PVN3D_OK;
  PVN3D_TRY(pvn3d::check_at_most(kOp, "N", N, "2^31-1 (CUDA)", INT32_MAX));
  PVN3D_TRY(pvn3d::check_at_most(kOp, "B", B, "2^31-1 (CUDA)", INT32_MAX));
  const size_t need = pvn3d_furthest_point_sample_cuda_workspace_bytes(B, N, npoint);
  if (workspace_bytes < need)
    return pvn3d::fail(PVN3D_ERR_INVALID_ARGUMENT, "%s: workspace_bytes (%zu) is smaller than the %zu bytes needed for B=%lld N=%lld",
                       kOp, workspace_bytes, need, (long long)B, (long long)N);
  if (need > 0) PVN3D_TRY(pvn3d::check_pointer(kOp, "workspace", workspace));
  pvn3d::cuda::clear_stale_error();
  const cudaStream_t s = pvn3d::cuda::as_stream(stream);
  const int n = static_cast<int>(N), np = static_cast<int>(npoint);
  const int64_t ppt = (N + kMaxThreads - 1) / kMaxThreads;
  if (ppt <= 1) launch_on_chip<1>(B, n, np, xyz, idx, s);
  else if (ppt <= 2) launch_on_chip<2>(B, n, np, xyz, idx, s);
  else if (ppt <= 4) launch_on_chip<4>(B, n, np, xyz, idx, s);
  else if (ppt <= 8) launch_on_chip<8>(B, n, np, xyz, idx, s);
  else if (ppt <= kMaxPointsPerThread) launch_on_chip<kMaxPointsPerThread>(B, n, np, xyz, idx, s);
  else if (N <= kMaxOnChip) PVN3D_TRY(launch_with_tail(B, n, np, xyz, idx, s));
  else fps_global_kernel<<<static_cast<unsigned>(B), kMaxThreads, 0, s>>>(xyz, n, np, idx, static_cast<float*>(workspace));
  return pvn3d::cuda::check_launch(kOp);
}
