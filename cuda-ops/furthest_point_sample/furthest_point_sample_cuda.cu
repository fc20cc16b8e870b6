// PVN3D_FurthestPointSample, CUDA kernels. See furthest_point_sample.h.
//
// FPS is a chain of npoint dependent block-wide argmax steps; a step costs the issue time of its
// distance updates (about 11 instructions a point: 8 for the distance, min, compare, select) plus the
// latency of the reduction. Two kernel shapes:
//
// * Cluster kernel (sm_90 and later, 4096 < N <= 32768 by default): the batch element is spread over a
//   thread-block cluster of C = 8, 4 or 2 blocks on C SMs, 1024 threads in all (1024/C per block, so the
//   cluster always has 32 warps), each thread holding PPT points and their running distances in
//   registers. An SM updates only N/C points per step, and no __syncthreads is left in the loop: each
//   warp reduces its 32 candidates (__reduce_max_sync on the running distance's bits, then
//   __reduce_min_sync on the index among the lanes holding the max) and sends its winner (bits, index,
//   x, y, z: 20 bytes) with st.async into one slot of EVERY block of the cluster, completing bytes on
//   that block's mbarrier. Every block receives 32 messages (640 bytes) a step; each warp waits on its
//   block's mbarrier, reads the 32 slots (one a lane), reduces them the same way and takes the winner's
//   coordinates from the winning slot. Slots and mbarriers are double-buffered by step parity (see
//   cluster_fps_kernel for why two buffers suffice). On sm_80 (or without room for the cluster) the
//   launcher uses the single-block kernels below.
//
// * Single-block kernels (one thread block per batch element). The whole step is on chip when
//   N <= 12288: every thread holds PPT points and their running distances in registers (PPT chosen by
//   a switch over templates) and the points are read from global memory once. Per step: each thread
//   updates its points and finds its best (running distances compared as int32 bit patterns, as on the
//   CPU: >= 0 orders like the float, padding holds -1.0f, which is negative); a warp finds max bits
//   with __reduce_max_sync and the lowest index holding it with __reduce_min_sync; one __syncthreads;
//   then every warp reduces the 32 warp results the same way, so every thread knows the pick without a
//   second barrier (the warp-result slots are double-buffered by step parity). The pick's coordinates
//   come from global memory (one broadcast load, an L1 hit after the first step). Up to 16384 points,
//   the points beyond the registers' 10240 (and their running distances) live in dynamic shared
//   memory. Larger N falls back to the same kernel shape with the running distances in the caller's
//   workspace and the points re-read from global memory (L1/L2) every step.
//
// Both compute the spec's distance with explicitly rounded operations (cuda::dist2: no FMA), the
// running minimum with fminf (== the CPU's d < dist ? d : dist, the running distance is never NaN) and
// break ties to the lowest index, so the picks equal the CPU kernel's exactly.
//
// PVN3D_FPS_CLUSTER (environment, read at every launch): "0" never uses the cluster kernel; "2", "4"
// or "8" asks for that cluster size at every N <= 32768 (when the device and the occupancy allow it,
// else the next smaller size, else a single block): for tests and tuning on the GPU machine.
#include "furthest_point_sample.h"

#include <atomic>
#include <climits>
#include <cstdlib>
#include <cstring>

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

// ---- Cluster kernel (sm_90) -------------------------------------------------------------------

constexpr int kClusterThreads = 1024;                 // threads of one cluster, all blocks together
constexpr int kMaxClusterSize = 8;                    // portable cluster size limit
constexpr int64_t kClusterMaxN = 32768;               // PPT 32
constexpr int64_t kClusterMinN = 4096;                // below: the single block's step is as short

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define PVN3D_FPS_CLUSTER_DEVICE 1
constexpr int kClusterSlots = kClusterThreads / 32;  // warps of a cluster = messages a block gets a step
constexpr unsigned kMessageBytes = 20;  // {bits, index, x, y} (16 bytes) + {z} (4 bytes)
constexpr unsigned kStepTxBytes = kClusterSlots * kMessageBytes;  // what every block receives a step
__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ uint32_t cluster_ctarank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
__device__ __forceinline__ uint32_t cluster_nctarank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(r));
  return r;
}
__device__ __forceinline__ uint32_t cluster_id_x() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(r));
  return r;
}
// The shared::cluster address of the variable at shared::cta address `addr` in block `rank`.
__device__ __forceinline__ uint32_t map_to_rank(uint32_t addr, uint32_t rank) {
  uint32_t d;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(d) : "r"(addr), "r"(rank));
  return d;
}
__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
// One arrival (of the one expected per phase) plus `bytes` expected from st.async messages.
__device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}
// True once the phase with this parity has completed; acquire at cluster scope pairs with the
// release of the remote st.async's complete-tx, so the message data is visible afterwards.
__device__ __forceinline__ bool mbar_try_wait(uint32_t bar, uint32_t parity) {
  uint32_t done;
  asm volatile(
      "{\n\t.reg .pred p;\n\t"
      "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n\t"
      "selp.u32 %0, 1, 0, p;\n\t}"
      : "=r"(done)
      : "r"(bar), "r"(parity)
      : "memory");
  return done != 0;
}
// Remote stores into the shared memory of another block of the cluster (addresses from map_to_rank),
// each completing its bytes on that block's mbarrier `bar` (same block as the data).
__device__ __forceinline__ void st_async_v4(uint32_t addr, int a, int b, float c, float d, uint32_t bar) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [%0], {%1, %2, %3, %4}, [%5];" ::"r"(addr),
               "r"(a), "r"(b), "r"(__float_as_int(c)), "r"(__float_as_int(d)), "r"(bar)
               : "memory");
}
__device__ __forceinline__ void st_async_b32(uint32_t addr, float v, uint32_t bar) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%0], %1, [%2];" ::"r"(addr),
               "r"(__float_as_int(v)), "r"(bar)
               : "memory");
}
// Every thread of every block of the cluster (all threads must execute it, convergent).
__device__ __forceinline__ void cluster_barrier() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
#endif

// One cluster per batch element (grid = B * C blocks, cluster dims (C, 1, 1), blockDim = 1024 / C).
// Thread g = rank * blockDim + tid of the cluster owns points g + k * 1024 (k < PPT), ascending in k,
// so its strict '>' keeps its lowest index. Dynamic shared memory: a copy of the block's own points
// (x, y, z as three arrays of PPT * blockDim floats, position k * blockDim + tid) from which a warp's
// sender lanes read the coordinates of the warp's winner.
//
// Per step t (= pick s - 1; b = t & 1 picks the buffers, phase parity (t >> 1) & 1):
//   1. every thread updates its points and finds its best (bits, index);
//   2. the warp reduces them to (wmax, widx); lanes l < C send {wmax, widx, x, y} and {z} with st.async
//      to slot [b][rank * W + warp] of block l, completing 20 bytes on block l's mbarrier [b];
//   3. every thread waits for the phase of mbarrier [b] (640 bytes: one message from each of the 32
//      warps of the cluster), reads slot [b][lane], and the warp reduces the 32 slots to the pick;
//   4. thread 0 re-arms mbarrier [b] for step t + 2 (one arrival + 640 expected bytes). A message of
//      step t + 2 can arrive before that (the tx-count goes negative for a while, which the mbarrier
//      allows), but never before the phase of step t has completed in every block.
// Why two buffers suffice: a message of step t + 2 is sent only after its sender has received all
// messages of step t + 1, i.e. after every warp of the cluster has sent its step t + 1 message, which
// each warp does only after it has read (and reduced) its step t slots. So slots [b] and the phase of
// mbarrier [b] are free again before anything of step t + 2 lands in them, and a slow waiter of step
// t still finds that phase completed (the next phase of mbarrier [b] cannot complete before it has
// sent its own step t + 1 message). No __syncthreads is needed in the loop.
template <int PPT>
__global__ void __launch_bounds__(PPT <= 16 ? 512 : 128, 1)
    cluster_fps_kernel(const float* __restrict__ xyz, int N, int npoint, int64_t* __restrict__ idx) {
#ifdef PVN3D_FPS_CLUSTER_DEVICE
  __shared__ __align__(16) int4 s_msg[2][kClusterSlots];  // {bits, index, x bits, y bits}
  __shared__ __align__(16) float s_z[2][kClusterSlots];
  __shared__ __align__(8) uint64_t s_bar[2];
  extern __shared__ float own[];  // [3][PPT * blockDim]: x, y, z of this block's points

  const uint32_t C = cluster_nctarank(), rank = cluster_ctarank();
  const int T = static_cast<int>(blockDim.x), tid = static_cast<int>(threadIdx.x);
  const int lane = tid & 31, warp = tid >> 5;
  const int slot = static_cast<int>(rank) * (T >> 5) + warp;  // this warp's slot in every block
  const int g = static_cast<int>(rank) * T + tid;
  const float* p = xyz + static_cast<int64_t>(cluster_id_x()) * N * 3;
  int64_t* out = idx + static_cast<int64_t>(cluster_id_x()) * npoint;
  float* own_x = own;
  float* own_y = own + PPT * T;
  float* own_z = own + 2 * PPT * T;

  const int steps = npoint - 1;
  const uint32_t bar0 = smem_u32(&s_bar[0]);
  if (tid == 0) {
    mbar_init(bar0, 1);
    mbar_init(bar0 + 8, 1);
    // The init must be visible to the other blocks' st.async before they send (cluster barrier below).
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    if (steps > 0) mbar_arrive_expect_tx(bar0, kStepTxBytes);
    if (steps > 1) mbar_arrive_expect_tx(bar0 + 8, kStepTxBytes);
  }

  float px[PPT], py[PPT], pz[PPT], pd[PPT];
#pragma unroll
  for (int k = 0; k < PPT; ++k) {
    const int i = g + k * kClusterThreads;
    if (i < N) {
      px[k] = __ldg(p + 3 * i);
      py[k] = __ldg(p + 3 * i + 1);
      pz[k] = __ldg(p + 3 * i + 2);
      pd[k] = initial_distance(px[k], py[k], pz[k]);
    } else {
      px[k] = py[k] = pz[k] = 0.f;
      pd[k] = -1.0f;  // not a point: never a candidate
    }
    own_x[k * T + tid] = px[k];
    own_y[k * T + tid] = py[k];
    own_z[k * T + tid] = pz[k];
  }
  // Remote addresses of the slots and mbarriers of block `lane` (sender lanes only).
  const bool sender = lane < static_cast<int>(C);
  const uint32_t r_msg = sender ? map_to_rank(smem_u32(&s_msg[0][slot]), lane) : 0u;
  const uint32_t r_z = sender ? map_to_rank(smem_u32(&s_z[0][slot]), lane) : 0u;
  const uint32_t r_bar = sender ? map_to_rank(bar0, lane) : 0u;

  const float x0 = __ldg(p), y0 = __ldg(p + 1), z0 = __ldg(p + 2);
  float lx = x0, ly = y0, lz = z0;
  if (rank == 0 && tid == 0) out[0] = 0;
  // mbarrier init and the own-point copy are visible cluster-wide (block-wide) from here on.
  cluster_barrier();

  for (int t = 0; t < steps; ++t) {
    const int b = t & 1;
    int best = INT_MIN, bk = 0;
#pragma unroll
    for (int k = 0; k < PPT; ++k) {
      const float d = cuda::dist2(px[k], py[k], pz[k], lx, ly, lz);
      const float v = fminf(d, pd[k]);  // == (d < pd ? d : pd): pd is never NaN
      pd[k] = v;
      const int vb = __float_as_int(v);
      if (vb > best) {
        best = vb;
        bk = k;
      }
    }
    const unsigned besti = static_cast<unsigned>(g + bk * kClusterThreads);
    const int wmax = __reduce_max_sync(kFull, best);
    const unsigned widx = __reduce_min_sync(kFull, best == wmax ? besti : 0xffffffffu);
    if (sender) {
      // widx is one of this warp's points: k = widx / 1024, owner tid = widx % 1024 - rank * T.
      const int pos = static_cast<int>(widx / kClusterThreads) * T +
                      (static_cast<int>(widx % kClusterThreads) - static_cast<int>(rank) * T);
      const uint32_t bar = r_bar + 8u * b;
      st_async_v4(r_msg + 16u * kClusterSlots * b, wmax, static_cast<int>(widx), own_x[pos], own_y[pos], bar);
      st_async_b32(r_z + 4u * kClusterSlots * b, own_z[pos], bar);
    }
    const uint32_t parity = static_cast<uint32_t>(t >> 1) & 1u;
    while (!mbar_try_wait(bar0 + 8u * b, parity)) {
    }
    const int4 m = s_msg[b][lane];
    const float mz = s_z[b][lane];
    const int gmax = __reduce_max_sync(kFull, m.x);
    const unsigned gidx = __reduce_min_sync(kFull, m.x == gmax ? static_cast<unsigned>(m.y) : 0xffffffffu);
    const unsigned from = __ballot_sync(kFull, m.x == gmax && static_cast<unsigned>(m.y) == gidx);
    const int src = __ffs(from) - 1;
    lx = __shfl_sync(kFull, __int_as_float(m.z), src);
    ly = __shfl_sync(kFull, __int_as_float(m.w), src);
    lz = __shfl_sync(kFull, mz, src);
    int pick = static_cast<int>(gidx);
    if (gmax < 0) {  // no candidate left: the pick is 0
      pick = 0;
      lx = x0;
      ly = y0;
      lz = z0;
    }
    if (tid == 0) {
      if (rank == 0) out[t + 1] = pick;
      // Phase t of mbarrier [b] has completed (this thread waited for it): arm its next phase.
      if (t + 2 < steps) mbar_arrive_expect_tx(bar0 + 8u * b, kStepTxBytes);
    }
  }
  // No block leaves while another could still address its shared memory (every message to a block
  // has arrived once that block passed its last wait; this barrier makes the exit order irrelevant).
  cluster_barrier();
#else
  (void)xyz;
  (void)N;
  (void)npoint;
  (void)idx;
  __trap();  // the launcher uses this kernel only where the sm_90 code was built (cluster_support)
#endif
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

// ---- Cluster launch: support, occupancy, choice ---------------------------------------------------

constexpr int kClusterTemplates = 6;  // PPT 4, 8, 12, 16, 24, 32
constexpr int kMaxDevices = 64;

int cluster_template(int64_t N) {  // index of the smallest PPT with 1024 * PPT >= N (N <= 32768)
  const int64_t ppt = (N + kClusterThreads - 1) / kClusterThreads;
  return ppt <= 4 ? 0 : ppt <= 8 ? 1 : ppt <= 12 ? 2 : ppt <= 16 ? 3 : ppt <= 24 ? 4 : 5;
}
constexpr int kTemplatePpt[kClusterTemplates] = {4, 8, 12, 16, 24, 32};
using ClusterKernel = void (*)(const float*, int, int, int64_t*);
ClusterKernel cluster_kernel(int tpl) {
  switch (tpl) {
    case 0: return cluster_fps_kernel<4>;
    case 1: return cluster_fps_kernel<8>;
    case 2: return cluster_fps_kernel<12>;
    case 3: return cluster_fps_kernel<16>;
    case 4: return cluster_fps_kernel<24>;
    default: return cluster_fps_kernel<32>;
  }
}
// Cluster sizes a template may run with: PPT > 16 needs the 128-thread blocks of C = 8 (register
// budget of __launch_bounds__(128)); the others take 128, 256 or 512 threads.
bool size_allowed(int tpl, int C) { return kTemplatePpt[tpl] <= 16 || C == kMaxClusterSize; }
// Dynamic shared memory of a cluster launch: the own-point copy, raised above half of the SM's shared
// memory so that no SM holds two blocks (blocks of one cluster would otherwise be allowed to share an
// SM, doubling its work per step). Set once per device (cluster_supported); 0 before that.
std::atomic<int> g_min_cluster_smem[kMaxDevices];
size_t own_points_bytes(int tpl, int C) {
  return static_cast<size_t>(3) * kTemplatePpt[tpl] * (kClusterThreads / C) * sizeof(float);
}
size_t cluster_smem(int dev, int tpl, int C) {
  const size_t own = own_points_bytes(tpl, C);
  const size_t spread = static_cast<size_t>(g_min_cluster_smem[dev].load(std::memory_order_relaxed));
  return own > spread ? own : spread;
}

// Per device, computed once: whether the cluster kernels can run (compute capability >= 9.0, cluster
// launch, and the sm_90 code in this build: a compute_80 PTX JIT-compiled for a newer GPU holds only
// the __trap() stub), and per (template, size) how many clusters fit on the GPU at once
// (cudaOccupancyMaxActiveClusters). Concurrent first calls compute the same values.
struct DeviceClusterInfo {
  std::atomic<int> supported;                          // 0 not yet known, 1 no, 2 yes
  std::atomic<int> max_active[kClusterTemplates][3];   // [tpl][size_slot(C)]: count + 1, 0 = not yet known
};
DeviceClusterInfo g_cluster_info[kMaxDevices];

int size_slot(int C) { return C == 2 ? 0 : C == 4 ? 1 : 2; }

bool cluster_supported(int dev) {
  if (dev < 0 || dev >= kMaxDevices) return false;
  DeviceClusterInfo& info = g_cluster_info[dev];
  const int known = info.supported.load(std::memory_order_acquire);
  if (known != 0) return known == 2;
  bool ok = false;
  int major = 0, cluster_launch = 0, per_sm = 0, optin = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) == cudaSuccess &&
      cudaDeviceGetAttribute(&cluster_launch, cudaDevAttrClusterLaunch, dev) == cudaSuccess &&
      cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev) == cudaSuccess &&
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) == cudaSuccess && major >= 9 &&
      cluster_launch != 0) {
    // Over half of the SM's shared memory (the static slots and the 1 KB the system reserves per block
    // count too), within what a block may opt in to.
    const int spread = per_sm / 2 + 1;
    g_min_cluster_smem[dev].store(spread <= optin ? spread : 0, std::memory_order_relaxed);
    ok = true;
    for (int tpl = 0; tpl < kClusterTemplates && ok; ++tpl) {
      cudaFuncAttributes fa;
      const ClusterKernel k = cluster_kernel(tpl);
      size_t smem = 0;
      for (int C = 2; C <= kMaxClusterSize; C *= 2)
        if (size_allowed(tpl, C) && cluster_smem(dev, tpl, C) > smem) smem = cluster_smem(dev, tpl, C);
      ok = smem <= static_cast<size_t>(optin) && cudaFuncGetAttributes(&fa, k) == cudaSuccess && fa.ptxVersion >= 90 &&
           fa.binaryVersion >= 90 &&
           cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)) == cudaSuccess;
    }
  }
  cudaGetLastError();  // a failed query is an answer ("no"), not an error for the next launch check
  info.supported.store(ok ? 2 : 1, std::memory_order_release);
  return ok;
}

// How many clusters of size C of template tpl can be resident at once on device dev (0: none).
int max_active_clusters(int dev, int tpl, int C) {
  std::atomic<int>& slot = g_cluster_info[dev].max_active[tpl][size_slot(C)];
  const int known = slot.load(std::memory_order_acquire);
  if (known != 0) return known - 1;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(static_cast<unsigned>(C));
  cfg.blockDim = dim3(static_cast<unsigned>(kClusterThreads / C));
  cfg.dynamicSmemBytes = cluster_smem(dev, tpl, C);
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = static_cast<unsigned>(C);
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  int n = 0;
  if (cudaOccupancyMaxActiveClusters(&n, reinterpret_cast<const void*>(cluster_kernel(tpl)), &cfg) != cudaSuccess) n = 0;
  cudaGetLastError();
  slot.store(n + 1, std::memory_order_release);
  return n;
}

// PVN3D_FPS_CLUSTER: -1 unset (automatic), 0 off, else the largest cluster size to use (2, 4 or 8).
int cluster_override() {
  const char* e = std::getenv("PVN3D_FPS_CLUSTER");
  if (e == nullptr || *e == '\0') return -1;
  const int v = std::atoi(e);
  return v >= 8 ? 8 : v >= 4 ? 4 : v >= 2 ? 2 : 0;
}

// The cluster size for this launch (and the device in *dev), or 0 for the single-block kernels.
int choose_cluster(int64_t B, int64_t N, int64_t npoint, int* device) {
  if (npoint < 2 || N > kClusterMaxN) return 0;
  const int forced = cluster_override();
  if (forced == 0) return 0;
  if (forced < 0 && N <= kClusterMinN) return 0;
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  if (!cluster_supported(dev)) return 0;
  *device = dev;
  const int tpl = cluster_template(N);
  const int largest = forced > 0 ? forced : kMaxClusterSize;
  // The largest size whose clusters for the whole batch are resident at once; else, when no single
  // block can hold the points (N > 16384), the largest that fits at all (the batch then runs in waves).
  for (int C = largest; C >= 2; C /= 2)
    if (size_allowed(tpl, C) && max_active_clusters(dev, tpl, C) >= B) return C;
  if (N > kMaxOnChip)
    for (int C = largest; C >= 2; C /= 2)
      if (size_allowed(tpl, C) && max_active_clusters(dev, tpl, C) >= 1) return C;
  return 0;
}

pvn3d_status launch_cluster(int dev, int C, int64_t B, int N, int npoint, const float* xyz, int64_t* idx,
                            cudaStream_t stream) {
  const int tpl = cluster_template(N);
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(static_cast<unsigned>(B * C));
  cfg.blockDim = dim3(static_cast<unsigned>(kClusterThreads / C));
  cfg.dynamicSmemBytes = cluster_smem(dev, tpl, C);
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = static_cast<unsigned>(C);
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  return cuda::cuda_status(cudaLaunchKernelEx(&cfg, cluster_kernel(tpl), xyz, N, npoint, idx), kOp,
                           "cudaLaunchKernelEx (cluster)");
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
  int dev = 0;
  const int cluster = B <= INT32_MAX / kMaxClusterSize ? choose_cluster(B, N, npoint, &dev) : 0;
  if (cluster > 0) {
    PVN3D_TRY(launch_cluster(dev, cluster, B, n, np, xyz, idx, s));
    return pvn3d::cuda::check_launch(kOp);
  }
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
