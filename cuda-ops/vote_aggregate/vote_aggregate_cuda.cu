// PVN3D_VoteAggregate on CUDA: one cooperative kernel, phases separated by grid-wide barriers.
//
//   0. per batch item, the candidate points (masked, all K votes finite) are compacted into a list;
//   1. per task (batch item, keypoint) of a phase, the votes of the phase's points are gathered into a
//      dense float4 array (and copied as the starting modes);
//   2. counting: each thread owns one vote and counts, over shared-memory tiles of the task's votes,
//      the votes strictly within bandwidth (exact float distance); the (count, -index) maximum of the
//      task is kept with a 64-bit atomicMax;
//   3. mean shift: work items are (task, 32 modes); a block of 8 warps takes an item, each lane owns a
//      mode, each warp one eighth of the votes (read from shared memory as broadcasts), partial sums
//      are reduced over the warps; a task whose modes all moved <= bandwidth*1e-3 in an iteration
//      stops; the decision is taken on the device after a grid barrier, so there is no host round
//      trip per iteration and no N x N matrix anywhere. Items are dealt round-robin over the blocks
//      of the still-active tasks each iteration, so converged tasks cost nothing;
//   4. (center_filter) the points whose centre vote lies within bandwidth of the chosen centre vote
//      are compacted, and phases 1-3 run again for the other keypoints over them;
//   5. the answer of every task is the converged mode of its chosen vote.
// Data written by other blocks inside the kernel is read with __ldcg (L2), never through L1.
#include "vote_aggregate.h"

#include <cooperative_groups.h>

#include <algorithm>
#include <climits>
#include <mutex>

#include "../common/checks.h"
#include "../common/cuda_utils.cuh"
#include "vote_aggregate_cuda.cuh"
#include "vote_aggregate_internal.h"
#include "../common/nvtx_range.h"

namespace cg = cooperative_groups;

namespace pvn3d {
namespace vote {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kTile = 1024;  // votes per shared-memory tile (16 KiB)
constexpr int kModes = 32;   // modes per mean-shift work item (one per lane)
constexpr int kMaxBlocksPerSM = 4;

struct Params {
  const float* votes;
  const void* mask;
  int mask_dtype;
  int center_filter;
  int64_t B, K, N;
  float bw2, c2, tol2;  // c2 = -0.5/bw^2 * log2(e): weight = 2^(d2 * c2)
  int max_iter;
  float* kps;
  int64_t* inliers;
  // workspace
  int* cand_idx;  // [B,N]
  int* used_idx;  // [B,N]
  int* cand_cnt;  // [B]
  int* used_cnt;  // [B]
  float4* vg;     // [B*K,N] gathered votes
  float4* modes;  // [B*K,N]
  unsigned long long* best;  // [B*K] (count << 32) | (0xFFFFFFFF - index)
  int* moved;     // [3][B*K]
};

struct __align__(16) Shared {
  float4 tile[kTile];
  float4 red[kWarps][kModes];
  int warp_tot[kWarps];
};

__device__ __forceinline__ float ex2_ftz(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

__device__ __forceinline__ bool finite3(const float* v) {
  return isfinite(v[0]) && isfinite(v[1]) && isfinite(v[2]);
}

__device__ __forceinline__ float d2_exact(const float4& a, const float4& b) {
  return pvn3d::cuda::dist2(a.x, a.y, a.z, b.x, b.y, b.z);
}

__device__ __forceinline__ unsigned chosen_index(unsigned long long key) {
  return 0xFFFFFFFFu - static_cast<unsigned>(key & 0xFFFFFFFFull);
}

// Block-wide compaction step: the position of this thread's item among the flagged items of the
// block (in thread order); *total = the number flagged. All threads of the block must call it.
__device__ int block_compact(bool flag, Shared& sh, int* total) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const unsigned bal = __ballot_sync(0xFFFFFFFFu, flag);
  const int pre = __popc(bal & ((1u << lane) - 1u));
  if (lane == 0) sh.warp_tot[warp] = __popc(bal);
  __syncthreads();
  int off = 0, tot = 0;
  for (int w = 0; w < kWarps; ++w) {
    const int c = sh.warp_tot[w];
    if (w < warp) off += c;
    tot += c;
  }
  __syncthreads();
  *total = tot;
  return off + pre;
}

__device__ bool candidate(const Params& p, int64_t b, int64_t n) {
  if (p.mask != nullptr) {
    if (p.mask_dtype == PVN3D_MASK_BOOL) {
      if (static_cast<const unsigned char*>(p.mask)[b * p.N + n] == 0) return false;
    } else if (static_cast<const float*>(p.mask)[b * p.N + n] == 0.0f) {
      return false;
    }
  }
  for (int64_t k = 0; k < p.K; ++k)
    if (!finite3(p.votes + ((b * p.K + k) * p.N + n) * 3)) return false;
  return true;
}

// One mean-shift step of the modes [chunk*32, chunk*32+32) of task tau (n votes).
__device__ void shift_item(const Params& p, Shared& sh, int64_t tau, int n, int chunk, int* moved_cur) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int i = chunk * kModes + lane;
  const bool valid = i < n;
  const float4* V = p.vg + tau * p.N;
  float4* M = p.modes + tau * p.N;
  const float4 m = valid ? __ldcg(M + i) : make_float4(0.f, 0.f, 0.f, 0.f);
  float sw = 0.f, sx = 0.f, sy = 0.f, sz = 0.f;
  for (int j0 = 0; j0 < n; j0 += kTile) {
    const int len = min(kTile, n - j0);
    for (int q = threadIdx.x; q < len; q += kThreads) sh.tile[q] = __ldcg(V + j0 + q);
    __syncthreads();
#pragma unroll 4
    for (int q = warp; q < len; q += kWarps) {
      const float4 y = sh.tile[q];
      const float dx = y.x - m.x, dy = y.y - m.y, dz = y.z - m.z;
      const float d2 = __fmaf_rn(dx, dx, __fmaf_rn(dy, dy, __fmul_rn(dz, dz)));
      const float w = ex2_ftz(__fmul_rn(d2, p.c2));
      sw = __fadd_rn(sw, w);
      sx = __fmaf_rn(w, dx, sx);
      sy = __fmaf_rn(w, dy, sy);
      sz = __fmaf_rn(w, dz, sz);
    }
    __syncthreads();
  }
  sh.red[warp][lane] = make_float4(sw, sx, sy, sz);
  __syncthreads();
  if (warp == 0) {
    float4 s = sh.red[0][lane];
    for (int w = 1; w < kWarps; ++w) {
      const float4 r = sh.red[w][lane];
      s.x += r.x; s.y += r.y; s.z += r.z; s.w += r.w;
    }
    bool mv = false;
    if (valid && s.x > 0.0f) {
      const float nx = m.x + s.y / s.x, ny = m.y + s.z / s.x, nz = m.z + s.w / s.x;
      const float ex = nx - m.x, ey = ny - m.y, ez = nz - m.z;
      mv = ex * ex + ey * ey + ez * ez > p.tol2;
      M[i] = make_float4(nx, ny, nz, 0.0f);
    }
    if (__any_sync(0xFFFFFFFFu, mv) && lane == 0) atomicOr(moved_cur + tau, 1);
  }
  __syncthreads();  // red is reused by the next item
}

// Phases 1-3 for keypoints [k_lo, k_hi) of every batch item, over the point lists idx/cnt.
__device__ void cluster_phase(const Params& p, Shared& sh, cg::grid_group& grid, int64_t k_lo, int64_t k_hi,
                              const int* idx, const int* cnt) {
  const int64_t TK = k_hi - k_lo, T = p.B * TK, N = p.N, BK = p.B * p.K;
  const int64_t gtid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t gstride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t G = gridDim.x;
  if (T == 0) return;
  // 1. Gather.
  for (int64_t e = gtid; e < T * N; e += gstride) {
    const int64_t tp = e / N, i = e % N, b = tp / TK, k = k_lo + tp % TK;
    if (i >= __ldcg(cnt + b)) continue;
    const int64_t pt = __ldcg(idx + b * N + i);
    const float* v = p.votes + ((b * p.K + k) * N + pt) * 3;
    const float4 x = make_float4(v[0], v[1], v[2], 0.0f);
    p.vg[(b * p.K + k) * N + i] = x;
    p.modes[(b * p.K + k) * N + i] = x;
  }
  grid.sync();
  // 2. Count.
  const int64_t chunks = (N + kThreads - 1) / kThreads;
  for (int64_t item = blockIdx.x; item < T * chunks; item += G) {
    const int64_t tp = item / chunks, c = item % chunks, b = tp / TK, k = k_lo + tp % TK, tau = b * p.K + k;
    const int n = __ldcg(cnt + b);
    if (c * kThreads >= n) continue;  // uniform over the block
    const int i = static_cast<int>(c * kThreads + threadIdx.x);
    const bool valid = i < n;
    const float4* V = p.vg + tau * N;
    const float4 xi = valid ? __ldcg(V + i) : make_float4(0.f, 0.f, 0.f, 0.f);
    int count = 0;
    for (int j0 = 0; j0 < n; j0 += kTile) {
      const int len = min(kTile, n - j0);
      for (int q = threadIdx.x; q < len; q += kThreads) sh.tile[q] = __ldcg(V + j0 + q);
      __syncthreads();
      if (valid)
        for (int q = 0; q < len; ++q) count += d2_exact(xi, sh.tile[q]) < p.bw2;
      __syncthreads();
    }
    unsigned long long key =
        valid ? (static_cast<unsigned long long>(count) << 32) | (0xFFFFFFFFu - static_cast<unsigned>(i)) : 0ull;
    for (int off = 16; off > 0; off >>= 1) {
      const unsigned long long o = __shfl_xor_sync(0xFFFFFFFFu, key, off);
      key = o > key ? o : key;
    }
    if ((threadIdx.x & 31) == 0 && key != 0ull) atomicMax(p.best + tau, key);
  }
  // 3. Mean shift (reads no count; the barrier at the end of each iteration orders everything).
  for (int it = 0; it < p.max_iter; ++it) {
    int* moved_prev = p.moved + ((it + 2) % 3) * BK;
    int* moved_cur = p.moved + (it % 3) * BK;
    int* moved_next = p.moved + ((it + 1) % 3) * BK;
    if (blockIdx.x == 0)
      for (int64_t tp = threadIdx.x; tp < T; tp += blockDim.x)
        moved_next[(tp / TK) * p.K + k_lo + tp % TK] = 0;
    int64_t base = 0;
    for (int64_t tp = 0; tp < T; ++tp) {
      const int64_t b = tp / TK, tau = b * p.K + k_lo + tp % TK;
      const int n = __ldcg(cnt + b);
      if (n == 0) continue;
      if (it > 0 && __ldcg(moved_prev + tau) == 0) continue;  // converged
      const int64_t nitems = (n + kModes - 1) / kModes;
      int64_t r = (static_cast<int64_t>(blockIdx.x) - base) % G;
      if (r < 0) r += G;
      for (int64_t g = base + r; g < base + nitems; g += G)
        shift_item(p, sh, tau, n, static_cast<int>(g - base), moved_cur);
      base += nitems;
    }
    grid.sync();
    bool any = false;
    for (int64_t tp = 0; tp < T && !any; ++tp)
      any = __ldcg(moved_cur + (tp / TK) * p.K + k_lo + tp % TK) != 0;
    if (!any) break;  // the same decision in every block: nobody writes moved_cur until after the next barrier
  }
  grid.sync();
}

__global__ void __launch_bounds__(kThreads) vote_aggregate_kernel(Params p) {
  __shared__ Shared sh;
  cg::grid_group grid = cg::this_grid();
  const int64_t gtid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t gstride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t B = p.B, K = p.K, N = p.N, BK = B * K;
  // 0. Candidates, and the per-task state.
  for (int64_t b = blockIdx.x; b < B; b += gridDim.x) {
    int base = 0;
    for (int64_t n0 = 0; n0 < N; n0 += kThreads) {
      const int64_t n = n0 + threadIdx.x;
      const bool f = n < N && candidate(p, b, n);
      int tot;
      const int pos = block_compact(f, sh, &tot);
      if (f) p.cand_idx[b * N + base + pos] = static_cast<int>(n);
      base += tot;
    }
    if (threadIdx.x == 0) p.cand_cnt[b] = base;
  }
  for (int64_t t = gtid; t < BK; t += gstride) {
    p.best[t] = 0ull;
    p.moved[t] = p.moved[BK + t] = p.moved[2 * BK + t] = 0;
  }
  grid.sync();
  if (p.center_filter) {
    cluster_phase(p, sh, grid, K - 1, K, p.cand_idx, p.cand_cnt);
    // 4. The points whose centre vote lies within bandwidth of the chosen centre vote.
    for (int64_t b = blockIdx.x; b < B; b += gridDim.x) {
      const int n = __ldcg(p.cand_cnt + b);
      int base = 0;
      if (n > 0) {
        const int64_t tau = b * K + K - 1;
        const float4* V = p.vg + tau * N;
        const float4 c = __ldcg(V + chosen_index(__ldcg(p.best + tau)));
        for (int i0 = 0; i0 < n; i0 += kThreads) {
          const int i = i0 + threadIdx.x;
          const bool f = i < n && d2_exact(__ldcg(V + i), c) < p.bw2;
          int tot;
          const int pos = block_compact(f, sh, &tot);
          if (f) p.used_idx[b * N + base + pos] = __ldcg(p.cand_idx + b * N + i);
          base += tot;
        }
        if (base == 0) {  // cannot happen for bandwidth > 0 (the chosen vote itself), kept for safety
          for (int i = threadIdx.x; i < n; i += kThreads) p.used_idx[b * N + i] = __ldcg(p.cand_idx + b * N + i);
          base = n;
        }
      }
      if (threadIdx.x == 0) p.used_cnt[b] = base;
    }
    grid.sync();
    cluster_phase(p, sh, grid, 0, K - 1, p.used_idx, p.used_cnt);
  } else {
    cluster_phase(p, sh, grid, 0, K, p.cand_idx, p.cand_cnt);
  }
  // 5. Outputs.
  for (int64_t tau = gtid; tau < BK; tau += gstride) {
    const int64_t b = tau / K;
    float* out = p.kps + tau * 3;
    if (__ldcg(p.cand_cnt + b) == 0) {
      out[0] = out[1] = out[2] = __int_as_float(0x7FC00000);
      continue;
    }
    const float4 m = __ldcg(p.modes + tau * N + chosen_index(__ldcg(p.best + tau)));
    out[0] = m.x;
    out[1] = m.y;
    out[2] = m.z;
  }
  for (int64_t b = gtid; b < B; b += gstride) {
    const int n = __ldcg(p.cand_cnt + b);
    p.inliers[b] = n == 0 ? 0 : (p.center_filter ? __ldcg(p.used_cnt + b) : n);
  }
}

constexpr size_t kAlign = 256;
size_t align_up(size_t x) { return (x + kAlign - 1) / kAlign * kAlign; }

struct Layout {
  size_t cand_idx, used_idx, cand_cnt, used_cnt, vg, modes, best, moved, total;
};
bool layout(int64_t B, int64_t K, int64_t N, Layout* L) {
  if (B < 1 || K < 1 || N < 0 || N > INT32_MAX) return false;
  // B*K*N*16*2 must not overflow: keep every product under 2^62.
  const double approx = static_cast<double>(B) * static_cast<double>(K) * static_cast<double>(N > 0 ? N : 1) * 40.0;
  if (approx > 4.0e18) return false;
  const size_t b = B, bk = B * K, n = N;
  size_t o = 0;
  L->cand_idx = o; o += align_up(b * n * sizeof(int));
  L->used_idx = o; o += align_up(b * n * sizeof(int));
  L->cand_cnt = o; o += align_up(b * sizeof(int));
  L->used_cnt = o; o += align_up(b * sizeof(int));
  L->vg = o;       o += align_up(bk * n * sizeof(float4));
  L->modes = o;    o += align_up(bk * n * sizeof(float4));
  L->best = o;     o += align_up(bk * sizeof(unsigned long long));
  L->moved = o;    o += align_up(3 * bk * sizeof(int));
  L->total = o;
  return true;
}

// Co-resident blocks of the kernel per device (cached).
struct DeviceInfo {
  int sms = 0, blocks_per_sm = 0, coop = 0;
};
pvn3d_status device_info(const char* op, DeviceInfo* out) {
  static std::mutex mu;
  static DeviceInfo cache[64];
  int dev = 0;
  PVN3D_TRY(pvn3d::cuda::cuda_status(cudaGetDevice(&dev), op, "cudaGetDevice"));
  std::lock_guard<std::mutex> lock(mu);
  if (dev >= 0 && dev < 64 && cache[dev].sms > 0) {
    *out = cache[dev];
    return PVN3D_OK;
  }
  DeviceInfo d;
  PVN3D_TRY(pvn3d::cuda::cuda_status(cudaDeviceGetAttribute(&d.sms, cudaDevAttrMultiProcessorCount, dev), op,
                                     "cudaDeviceGetAttribute(multiProcessorCount)"));
  PVN3D_TRY(pvn3d::cuda::cuda_status(cudaDeviceGetAttribute(&d.coop, cudaDevAttrCooperativeLaunch, dev), op,
                                     "cudaDeviceGetAttribute(cooperativeLaunch)"));
  PVN3D_TRY(pvn3d::cuda::cuda_status(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&d.blocks_per_sm, vote_aggregate_kernel, kThreads, 0), op,
      "cudaOccupancyMaxActiveBlocksPerMultiprocessor"));
  if (dev >= 0 && dev < 64) cache[dev] = d;
  *out = d;
  return PVN3D_OK;
}

}  // namespace

size_t cuda_workspace_bytes(int64_t B, int64_t K, int64_t N) {
  Layout L;
  return layout(B, K, N, &L) ? L.total : 0;
}

pvn3d_status launch_cuda(const char* op, const float* votes, const void* mask, int mask_dtype, int64_t B, int64_t K,
                         int64_t N, float bandwidth, int64_t max_iter, int center_filter, float* kps,
                         int64_t* inliers, void* workspace, cudaStream_t stream) {
  Layout L;
  if (!layout(B, K, N, &L)) return fail(PVN3D_ERR_INVALID_ARGUMENT, "%s: sizes too large for the workspace", op);
  DeviceInfo d;
  PVN3D_TRY(device_info(op, &d));
  if (!d.coop) return fail(PVN3D_ERR_CUDA, "%s: the device does not support cooperative launches", op);
  if (d.blocks_per_sm < 1) return fail(PVN3D_ERR_CUDA, "%s: the kernel cannot be resident on this device", op);
  const Consts cs = make_consts(bandwidth);
  Params p;
  p.votes = votes;
  p.mask = mask;
  p.mask_dtype = mask_dtype;
  p.center_filter = center_filter;
  p.B = B; p.K = K; p.N = N;
  p.bw2 = cs.bw2;
  p.c2 = cs.neg_half_inv * 1.44269504088896341f;
  p.tol2 = cs.tol2;
  p.max_iter = static_cast<int>(std::min<int64_t>(max_iter, INT_MAX));
  p.kps = kps;
  p.inliers = inliers;
  char* ws = static_cast<char*>(workspace);
  p.cand_idx = reinterpret_cast<int*>(ws + L.cand_idx);
  p.used_idx = reinterpret_cast<int*>(ws + L.used_idx);
  p.cand_cnt = reinterpret_cast<int*>(ws + L.cand_cnt);
  p.used_cnt = reinterpret_cast<int*>(ws + L.used_cnt);
  p.vg = reinterpret_cast<float4*>(ws + L.vg);
  p.modes = reinterpret_cast<float4*>(ws + L.modes);
  p.best = reinterpret_cast<unsigned long long*>(ws + L.best);
  p.moved = reinterpret_cast<int*>(ws + L.moved);
  // As many blocks as the largest phase can use, at most kMaxBlocksPerSM per SM (cheaper barriers).
  const int64_t max_blocks = static_cast<int64_t>(d.sms) * std::min(d.blocks_per_sm, kMaxBlocksPerSM);
  const int64_t useful = std::max<int64_t>(B, B * K * ((N + kModes - 1) / kModes));
  const unsigned grid = static_cast<unsigned>(std::max<int64_t>(1, std::min(max_blocks, useful)));
  void* args[] = {&p};
  return pvn3d::cuda::cuda_status(
      cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(vote_aggregate_kernel), dim3(grid), dim3(kThreads), args,
                                  0, stream),
      op, "cudaLaunchCooperativeKernel(vote_aggregate_kernel)");
}

}  // namespace vote
}  // namespace pvn3d

extern "C" size_t pvn3d_vote_aggregate_cuda_workspace_bytes(int64_t B, int64_t K, int64_t N) {
  return pvn3d::vote::cuda_workspace_bytes(B, K, N);
}

extern "C" pvn3d_status pvn3d_vote_aggregate_cuda(const float* votes, const void* mask, int mask_dtype, int64_t B,
                                                  int64_t K, int64_t N, float bandwidth, int64_t max_iter,
                                                  int center_filter, float* kps, int64_t* inliers, void* workspace,
                                                  size_t workspace_bytes, void* stream) {
  PVN3D_NVTX_RANGE("PVN3D_VoteAggregate");
  static const char* op = "PVN3D_VoteAggregate";
  using namespace pvn3d;
  PVN3D_TRY(vote::check_args(op, votes, mask, mask_dtype, B, K, N, bandwidth, max_iter, center_filter, kps, inliers));
  const size_t need = vote::cuda_workspace_bytes(B, K, N);
  if (need == 0) return fail(PVN3D_ERR_INVALID_ARGUMENT, "%s: sizes too large for the workspace", op);
  PVN3D_TRY(check_pointer(op, "workspace", workspace));
  if (workspace_bytes < need)
    return fail(PVN3D_ERR_INVALID_ARGUMENT, "%s: workspace_bytes (%zu) is smaller than needed (%zu)", op, workspace_bytes,
                need);
  return vote::launch_cuda(op, votes, mask, mask_dtype, B, K, N, bandwidth, max_iter, center_filter, kps, inliers,
                           workspace, pvn3d::cuda::as_stream(stream));
}
