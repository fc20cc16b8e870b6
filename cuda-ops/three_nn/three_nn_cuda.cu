// PVN3D_ThreeNN, CUDA kernel. See three_nn.h.
//
// A group of G consecutive threads shares Q unknown points: thread g of the group scans known points
// g, g+G, ... of each shared-memory tile (one float4 per point) and keeps, for each of its Q unknown
// points, the three best with strict `<` in index order, so one shared-memory read serves Q distances
// (the kernel was bound by those reads with one unknown point per group). The group then merges its
// partial lists by (distance, index), which is exactly the sequential strict-`<` result: both are the
// three lexicographically smallest (distance, index) pairs among the points that were ever inserted
// (never +inf or NaN). G is picked per launch so that small batches still fill the GPU (G = 32 for one
// cloud of 12288 points, 8 for eight of 16384). The group's merges are reduce-scatters (merge_group,
// refresh_bounds): each lane ends with one of the Q lists, not all of them.
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
constexpr int kStageUnroll = 4;  // known points a thread loads at once into the tile

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

// The k-th smallest of two sorted triples (a1, a2, a3), (b1, b2, b3) of distances (+inf where a lane has fewer
// than three): the smallest of max(a_i, b_j) over i + j = k (a_0 = b_0 = -inf). In place into a.
__device__ __forceinline__ void merge_distances(float& a1, float& a2, float& a3, float b1, float b2, float b3) {
  const float c2 = fminf(fminf(a2, b2), fmaxf(a1, b1));
  const float c3 = fminf(fminf(a3, b3), fminf(fmaxf(a1, b2), fmaxf(a2, b1)));
  a1 = fminf(a1, b1);
  a2 = c2;
  a3 = c3;
}

// Where a group's four lists end up after the reduce-scatters below (refresh_bounds, merge_group): lane g of
// the group holds query 2 * (g & G/2 ? 1 : 0) + (g & G/4 ? 1 : 0); lane_of_query is the first lane holding q.
template <int G>
__device__ __forceinline__ int query_of_lane(int g) { return ((g & (G / 2)) ? 2 : 0) + ((g & (G / 4)) ? 1 : 0); }
template <int G>
__device__ __forceinline__ int lane_of_query(int q) { return (q >> 1) * (G / 2) + (q & 1) * (G / 4); }

// The group's reductions over its G lanes' lists of the kQueries = 4 unknown points are reduce-scatters: the
// first round (partner G/2 away) leaves each lane two of the four queries, merged with its partner's copies of
// them, the second (G/4) one, and the remaining rounds reduce that one as a butterfly. Against a butterfly over
// all four (every lane merging every query every round): a third of the shuffles and merges, which were a
// quarter of the kernel's instructions at B=1 (G=32). split_pair picks, from two values, the one a lane keeps
// and the one it sends: the lower half of a pair keeps the first.
template <typename T>
__device__ __forceinline__ void split_pair(bool upper, const T& first, const T& second, T& keep, T& send) {
  keep = upper ? second : first;
  send = upper ? first : second;
}

// bound[q] = min(bound[q], the third smallest distance over the group's lists of query q) on every lane.
// Every lane of the warp must call it (shuffles over the whole warp).
template <int G>
__device__ __forceinline__ void refresh_bounds(const Top3 (&best)[kQueries], float (&bound)[kQueries]) {
  static_assert(kQueries == 4 && G >= 4 && 32 % G == 0, "two halving rounds over four queries");
  const int g = threadIdx.x % G;
  const bool up1 = g & (G / 2), up2 = g & (G / 4);
  float k[2][3], s[2][3];
#pragma unroll
  for (int h = 0; h < 2; ++h) {  // query pairs (0, 2) and (1, 3): the lower half keeps 0 and 1
    split_pair(up1, best[h].d1, best[h + 2].d1, k[h][0], s[h][0]);
    split_pair(up1, best[h].d2, best[h + 2].d2, k[h][1], s[h][1]);
    split_pair(up1, best[h].d3, best[h + 2].d3, k[h][2], s[h][2]);
  }
#pragma unroll
  for (int h = 0; h < 2; ++h)
    merge_distances(k[h][0], k[h][1], k[h][2], __shfl_xor_sync(0xffffffffu, s[h][0], G / 2),
                    __shfl_xor_sync(0xffffffffu, s[h][1], G / 2), __shfl_xor_sync(0xffffffffu, s[h][2], G / 2));
  float a1, a2, a3, b1, b2, b3;
  split_pair(up2, k[0][0], k[1][0], a1, b1);
  split_pair(up2, k[0][1], k[1][1], a2, b2);
  split_pair(up2, k[0][2], k[1][2], a3, b3);
  merge_distances(a1, a2, a3, __shfl_xor_sync(0xffffffffu, b1, G / 4), __shfl_xor_sync(0xffffffffu, b2, G / 4),
                  __shfl_xor_sync(0xffffffffu, b3, G / 4));
#pragma unroll
  for (int off = G / 8; off >= 1; off >>= 1)
    merge_distances(a1, a2, a3, __shfl_xor_sync(0xffffffffu, a1, off), __shfl_xor_sync(0xffffffffu, a2, off),
                    __shfl_xor_sync(0xffffffffu, a3, off));
#pragma unroll
  for (int q = 0; q < kQueries; ++q)
    bound[q] = fminf(bound[q], __shfl_sync(0xffffffffu, a3, lane_of_query<G>(q), G));
}

__device__ __forceinline__ Top3 shfl_xor(const Top3& t, int off) {
  Top3 o;
  o.d1 = __shfl_xor_sync(0xffffffffu, t.d1, off);
  o.d2 = __shfl_xor_sync(0xffffffffu, t.d2, off);
  o.d3 = __shfl_xor_sync(0xffffffffu, t.d3, off);
  o.i1 = __shfl_xor_sync(0xffffffffu, t.i1, off);
  o.i2 = __shfl_xor_sync(0xffffffffu, t.i2, off);
  o.i3 = __shfl_xor_sync(0xffffffffu, t.i3, off);
  return o;
}

// The group's merged list of query query_of_lane<G>(g) (the same reduce-scatter as refresh_bounds, on whole
// lists). Every lane of the warp must call it.
template <int G>
__device__ __forceinline__ Top3 merge_group(const Top3 (&best)[kQueries]) {
  const int g = threadIdx.x % G;
  const bool up1 = g & (G / 2), up2 = g & (G / 4);
  Top3 k0, k1, s0, s1;
  split_pair(up1, best[0], best[2], k0, s0);
  split_pair(up1, best[1], best[3], k1, s1);
  k0 = merge(k0, shfl_xor(s0, G / 2));
  k1 = merge(k1, shfl_xor(s1, G / 2));
  Top3 a, b;
  split_pair(up2, k0, k1, a, b);
  a = merge(a, shfl_xor(b, G / 4));
#pragma unroll
  for (int off = G / 8; off >= 1; off >>= 1) a = merge(a, shfl_xor(a, off));
  return a;
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
  const int total_steps = m / kTile * (kTile / G) + (m % kTile + G - 1) / G;  // kBound's steps over all tiles
  for (int base = 0; base < m; base += kTile) {
    const int len = min(kTile, m - base);
    // kBound scans whole steps of G points: the tile's tail is padded with points at infinity, whose distance
    // (+inf, or NaN for a non-finite unknown point) is never taken
    const int padded = kBound ? (len + G - 1) / G * G : len;
    __syncthreads();
    // kStageUnroll points a thread at a time, all their loads issued before any store (a load per point
    // clamped into the tile, so none is conditional): one memory round trip per kStageUnroll points instead
    // of one per point, which at B=1 (one wave, every block staging at once) is time no warp can hide
    for (int t0 = threadIdx.x; t0 < padded; t0 += kThreads * kStageUnroll) {
      float4 v[kStageUnroll];
#pragma unroll
      for (int u = 0; u < kStageUnroll; ++u) {
        const int t = t0 + u * kThreads;
        const float* p = pts + 3 * static_cast<int64_t>(base + min(t, len - 1));
        v[u] = make_float4(__ldg(p), __ldg(p + 1), __ldg(p + 2), 0.f);
        if (t >= len) v[u] = make_float4(inf, inf, inf, 0.f);
      }
#pragma unroll
      for (int u = 0; u < kStageUnroll; ++u)
        if (t0 + u * kThreads < padded) tile[t0 + u * kThreads] = v[u];
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
          // the four distances first, then one branch for the step's inserts: the common step (no lane takes a
          // point) is one uniform branch instead of four divergent ones (H100, B=1: 0.0268 -> 0.0264 ms held,
          // B=8 0.319 -> 0.294)
          float d[kQueries];
          bool hit = false;
#pragma unroll
          for (int q = 0; q < kQueries; ++q) {
            d[q] = cuda::dist2(p.x, p.y, p.z, ux[q], uy[q], uz[q]);
            hit |= d[q] < bound[q];
          }
          if (hit) {
#pragma unroll
            for (int q = 0; q < kQueries; ++q) {
              if (d[q] < bound[q]) {  // bound[q] <= best[q].d3
                insert_below(best[q], d[q], base + t);
                bound[q] = fminf(bound[q], best[q].d3);
              }
            }
          }
        }
        // the same on every lane: the whole warp shuffles (none after the last step, where no point is left)
        if (done == next_refresh && done < total_steps) {
          next_refresh *= 2;
          refresh_bounds<G>(best, bound);
        }
      }
    }
  }
  // Lanes g with g % (G/4) == 0 write the merged list they hold (one query each).
  const Top3 merged = merge_group<G>(best);
  const int q = query_of_lane<G>(g);
  if (g % (G / 4) == 0 && j0 + q < n) {
    const int64_t u = static_cast<int64_t>(b) * n + j0 + q;
    dist2[3 * u] = merged.d1;
    dist2[3 * u + 1] = merged.d2;
    dist2[3 * u + 2] = merged.d3;
    idx[3 * u] = merged.i1;
    idx[3 * u + 1] = merged.i2;
    idx[3 * u + 2] = merged.i3;
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
