// PVN3D_ThreeNN, CUDA kernel. See three_nn.h.
//
// A group of G consecutive threads shares Q unknown points: thread g of the group scans known points
// g, g+G, ... of each shared-memory tile (one float4 per point) and keeps, for each of its Q unknown
// points, the three best with strict `<` in index order, so one shared-memory read serves Q distances
// (the kernel was bound by those reads with one unknown point per group). The group then merges its
// partial lists by (distance, index), which is exactly the sequential strict-`<` result: both are the
// three lexicographically smallest (distance, index) pairs among the points that were ever inserted
// (never +inf or NaN). G is picked per launch so that small batches still fill the GPU (G = 32 for one
// cloud of 12288 points, 8 for eight of 16384).
//
// The group also shares a bound (kBound, the default): after 8, 16, 32, ... steps in lockstep the group
// computes its third-best distance so far over all its lanes' lists, and a lane then takes a point only if it
// is below that bound (or its own third best). Exact: the group holds three points at or below the bound, all
// of smaller index than any point still to come (every lane is past them), so a later point at or above it is
// never among the three. Why: with G = 32 each lane sees only m/32 points, so some lane of a warp was still
// filling its own three at nearly every step, and the warp took the (divergent) insert path for nearly every
// step and unknown point: two thirds of the kernel's instructions at B=1 n=12288 m=2048 (Nsight Compute,
// 2026-12-04: 120 warp instructions a step). A warp-level emulation of uniform clouds puts the insert path at
// 16 steps of 64 with the bound, about 75 instructions a step with the refreshes' shuffles
// (PVN3D_THREE_NN=plain runs the kernel without the bound, for A/B runs).
#include "three_nn.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "../common/cuda_utils.cuh"
#include "three_nn_args.h"
#include "../common/nvtx_range.h"

namespace pvn3d {
namespace three_nn {
namespace {

constexpr int kThreads = 256;
constexpr int kQueries = 4;  // unknown points per thread (Q)
constexpr int kTile = 2048;

struct Top3 {
  float d1, d2, d3;
  int i1, i2, i3;
};

__device__ __forceinline__ bool before(float da, int ia, float db, int ib) {
  return da < db || (da == db && ia < ib);
}

// Drops the head of a sorted triple (the tail slot keeps its value; it is never read again).
__device__ __forceinline__ void pop(Top3& t) {
  t.d1 = t.d2; t.i1 = t.i2;
  t.d2 = t.d3; t.i2 = t.i3;
}

// The three smallest of two sorted triples, by (distance, index). Only named registers, no arrays
// indexed at run time (which would go to local memory).
__device__ __forceinline__ Top3 merge(Top3 a, Top3 b) {
  Top3 o;
  bool ta = before(a.d1, a.i1, b.d1, b.i1);
  o.d1 = ta ? a.d1 : b.d1;
  o.i1 = ta ? a.i1 : b.i1;
  if (ta) pop(a); else pop(b);
  ta = before(a.d1, a.i1, b.d1, b.i1);
  o.d2 = ta ? a.d1 : b.d1;
  o.i2 = ta ? a.i1 : b.i1;
  if (ta) pop(a); else pop(b);
  ta = before(a.d1, a.i1, b.d1, b.i1);
  o.d3 = ta ? a.d1 : b.d1;
  o.i3 = ta ? a.i1 : b.i1;
  return o;
}

// Inserts (d, i) into a sorted triple whose third distance d is known to be below.
__device__ __forceinline__ void insert_below(Top3& best, float d, int i) {
  if (d < best.d1) {
    best.d3 = best.d2; best.i3 = best.i2;
    best.d2 = best.d1; best.i2 = best.i1;
    best.d1 = d; best.i1 = i;
  } else if (d < best.d2) {
    best.d3 = best.d2; best.i3 = best.i2;
    best.d2 = d; best.i2 = i;
  } else {
    best.d3 = d; best.i3 = i;
  }
}

// Inserts (d, i) if it beats the third best (strict `<`: a later index never displaces an equal distance).
__device__ __forceinline__ void insert(Top3& best, float d, int i) {
  if (d < best.d3) insert_below(best, d, i);
}

// The third smallest distance over the G lanes of a group, each holding its own sorted (a1, a2, a3) (+inf
// where it has fewer than three): the k-th smallest of two sorted triples is the smallest of max(a_i, b_j)
// over i + j = k (a_0 = b_0 = -inf). Every lane of the warp must call it (shuffles over the whole warp).
template <int G>
__device__ __forceinline__ float group_third(float a1, float a2, float a3) {
#pragma unroll
  for (int off = G / 2; off >= 1; off >>= 1) {
    const float b1 = __shfl_xor_sync(0xffffffffu, a1, off);
    const float b2 = __shfl_xor_sync(0xffffffffu, a2, off);
    const float b3 = __shfl_xor_sync(0xffffffffu, a3, off);
    const float c2 = fminf(fminf(a2, b2), fmaxf(a1, b1));
    const float c3 = fminf(fminf(a3, b3), fminf(fmaxf(a1, b2), fmaxf(a2, b1)));
    a1 = fminf(a1, b1);
    a2 = c2;
    a3 = c3;
  }
  return a3;
}

// Unknown points of a block: (kThreads / G) groups x kQueries.
template <int G, bool kBound>
__global__ void __launch_bounds__(kThreads)
    three_nn_kernel(int n, int m, const float* __restrict__ unknown, const float* __restrict__ known,
                    float* __restrict__ dist2, int64_t* __restrict__ idx) {
  constexpr int kPerBlock = kThreads / G * kQueries;
  __shared__ float4 tile[kTile];
  const int g = threadIdx.x % G;
  const int blocks_per_batch = (n + kPerBlock - 1) / kPerBlock;
  const int b = blockIdx.x / blocks_per_batch;
  const int j0 = (blockIdx.x - b * blocks_per_batch) * kPerBlock + (threadIdx.x / G) * kQueries;
  float ux[kQueries], uy[kQueries], uz[kQueries];
#pragma unroll
  for (int q = 0; q < kQueries; ++q) {
    const int64_t u = static_cast<int64_t>(b) * n + (j0 + q < n ? j0 + q : 0);
    ux[q] = __ldg(unknown + 3 * u);
    uy[q] = __ldg(unknown + 3 * u + 1);
    uz[q] = __ldg(unknown + 3 * u + 2);
  }
  const float* pts = known + static_cast<int64_t>(b) * m * 3;
  const float inf = __int_as_float(0x7f800000);
  Top3 best[kQueries];
#pragma unroll
  for (int q = 0; q < kQueries; ++q) best[q] = Top3{inf, inf, inf, 0, 0, 0};
  // kBound: min(the group's third best at the last refresh, this lane's own third best); the steps so far
  // (over all tiles, the same on every lane of the warp) and the step count of the next refresh
  float bound[kQueries];
#pragma unroll
  for (int q = 0; q < kQueries; ++q) bound[q] = inf;
  int done = 0, next_refresh = 8;
  for (int base = 0; base < m; base += kTile) {
    const int len = min(kTile, m - base);
    // kBound scans whole steps of G points: the tile's tail is padded with points at infinity, whose distance
    // (+inf, or NaN for a non-finite unknown point) is never taken
    const int padded = kBound ? (len + G - 1) / G * G : len;
    __syncthreads();
    for (int t = threadIdx.x; t < padded; t += kThreads) {
      if (t < len) {
        const float* p = pts + 3 * static_cast<int64_t>(base + t);
        tile[t] = make_float4(__ldg(p), __ldg(p + 1), __ldg(p + 2), 0.f);
      } else {
        tile[t] = make_float4(inf, inf, inf, 0.f);
      }
    }
    __syncthreads();
    if constexpr (!kBound) {
#pragma unroll 2
      for (int t = g; t < len; t += G) {
        const float4 p = tile[t];
#pragma unroll
        for (int q = 0; q < kQueries; ++q) insert(best[q], cuda::dist2(p.x, p.y, p.z, ux[q], uy[q], uz[q]), base + t);
      }
    } else {
      const int steps = padded / G;
      for (int s = 0; s < steps;) {
        const int s_end = min(steps, s + (next_refresh - done));
        done += s_end - s;
#pragma unroll 2
        for (; s < s_end; ++s) {
          const int t = s * G + g;
          const float4 p = tile[t];
#pragma unroll
          for (int q = 0; q < kQueries; ++q) {
            const float d = cuda::dist2(p.x, p.y, p.z, ux[q], uy[q], uz[q]);
            if (d < bound[q]) {  // bound[q] <= best[q].d3
              insert_below(best[q], d, base + t);
              bound[q] = fminf(bound[q], best[q].d3);
            }
          }
        }
        if (done == next_refresh) {  // the same on every lane: the whole warp shuffles
          next_refresh *= 2;
#pragma unroll
          for (int q = 0; q < kQueries; ++q)
            bound[q] = fminf(bound[q], group_third<G>(best[q].d1, best[q].d2, best[q].d3));
        }
      }
    }
  }
#pragma unroll
  for (int q = 0; q < kQueries; ++q) {
#pragma unroll
    for (int off = G / 2; off >= 1; off >>= 1) {
      Top3 other;
      other.d1 = __shfl_xor_sync(0xffffffffu, best[q].d1, off);
      other.d2 = __shfl_xor_sync(0xffffffffu, best[q].d2, off);
      other.d3 = __shfl_xor_sync(0xffffffffu, best[q].d3, off);
      other.i1 = __shfl_xor_sync(0xffffffffu, best[q].i1, off);
      other.i2 = __shfl_xor_sync(0xffffffffu, best[q].i2, off);
      other.i3 = __shfl_xor_sync(0xffffffffu, best[q].i3, off);
      best[q] = merge(best[q], other);
    }
  }
  // The group's thread q writes unknown point j0 + q (all of them hold the merged lists).
#pragma unroll
  for (int q = 0; q < kQueries; ++q) {
    if (g == q % G && j0 + q < n) {
      const int64_t u = static_cast<int64_t>(b) * n + j0 + q;
      dist2[3 * u] = best[q].d1;
      dist2[3 * u + 1] = best[q].d2;
      dist2[3 * u + 2] = best[q].d3;
      idx[3 * u] = best[q].i1;
      idx[3 * u + 1] = best[q].i2;
      idx[3 * u + 2] = best[q].i3;
    }
  }
}

// The group size for B clouds of n unknown points: the smallest of 8, 16, 32 that gives every SM of a
// large GPU (132 SMs) about four blocks' worth of threads, so that one small cloud still spreads.
int group_for(int64_t B, int64_t n) {
  const int64_t want = int64_t{132} * 4 * kThreads;
  const int64_t threads_per_g = B * ((n + kQueries - 1) / kQueries);
  if (threads_per_g * 8 >= want) return 8;
  if (threads_per_g * 16 >= want) return 16;
  return 32;
}

// PVN3D_THREE_NN=plain: the kernel without the group's bound (A/B runs, forced tests); read once. Another value
// says so on stderr, once.
bool plain_forced() {
  static const bool plain = [] {
    const char* e = std::getenv("PVN3D_THREE_NN");
    if (e == nullptr || *e == '\0' || std::strcmp(e, "bound") == 0) return false;
    if (std::strcmp(e, "plain") == 0) return true;
    std::fprintf(stderr, "pvn3d_ops: PVN3D_THREE_NN=%s is not one of plain, bound; the bound kernel runs\n", e);
    return false;
  }();
  return plain;
}

}  // namespace
}  // namespace three_nn
}  // namespace pvn3d

extern "C" pvn3d_status pvn3d_three_nn_cuda(int64_t B, int64_t n, int64_t m, const float* unknown, const float* known,
                                             float* dist2, int64_t* idx, void* stream) {
  using namespace pvn3d::three_nn;
  PVN3D_NVTX_RANGE(kOp);
  int64_t work = 0;
  PVN3D_TRY(check_args(B, n, m, unknown, known, dist2, idx, &work));
  if (work == 0) return PVN3D_OK;
  PVN3D_TRY(pvn3d::check_at_most(kOp, "n", n, "2^31-1 (CUDA)", INT32_MAX - kThreads * kQueries));
  PVN3D_TRY(pvn3d::check_at_most(kOp, "m", m, "2^31-1 (CUDA)", INT32_MAX - kTile));
  // (Measured on the H200 against 1 and 2 unknown points a thread and the other group sizes: 4 points
  // and the group_for sizes were best or within noise at B=1 n=12288 and B=8 n=16384.)
  const int G = group_for(B, n);
  const bool bound = !plain_forced();
  const int64_t per_block = kThreads / G * kQueries;  // unknown points
  const int64_t blocks = B * ((n + per_block - 1) / per_block);
  if (blocks > INT32_MAX)
    return pvn3d::fail(PVN3D_ERR_INVALID_ARGUMENT, "%s: B*n (%lld) too large for one CUDA launch", kOp, (long long)(B * n));
  pvn3d::cuda::clear_stale_error();
  const auto kernel = bound ? (G == 8 ? three_nn_kernel<8, true> : G == 16 ? three_nn_kernel<16, true> : three_nn_kernel<32, true>)
                            : (G == 8 ? three_nn_kernel<8, false> : G == 16 ? three_nn_kernel<16, false> : three_nn_kernel<32, false>);
  kernel<<<static_cast<unsigned>(blocks), kThreads, 0, pvn3d::cuda::as_stream(stream)>>>(
      static_cast<int>(n), static_cast<int>(m), unknown, known, dist2, idx);
  return pvn3d::cuda::check_launch(kOp);
}
