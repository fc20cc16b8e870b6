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
#include "three_nn.h"

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

__device__ __forceinline__ void insert(Top3& best, float d, int i) {
  if (d < best.d3) {
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
}

// Unknown points of a block: (kThreads / G) groups x kQueries.
template <int G>
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
  for (int base = 0; base < m; base += kTile) {
    const int len = min(kTile, m - base);
    __syncthreads();
    for (int t = threadIdx.x; t < len; t += kThreads) {
      const float* p = pts + 3 * static_cast<int64_t>(base + t);
      tile[t] = make_float4(__ldg(p), __ldg(p + 1), __ldg(p + 2), 0.f);
    }
    __syncthreads();
#pragma unroll 2
    for (int t = g; t < len; t += G) {
      const float4 p = tile[t];
#pragma unroll
      for (int q = 0; q < kQueries; ++q) insert(best[q], cuda::dist2(p.x, p.y, p.z, ux[q], uy[q], uz[q]), base + t);
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
  const int64_t per_block = kThreads / G * kQueries;  // unknown points
  const int64_t blocks = B * ((n + per_block - 1) / per_block);
  if (blocks > INT32_MAX)
    return pvn3d::fail(PVN3D_ERR_INVALID_ARGUMENT, "%s: B*n (%lld) too large for one CUDA launch", kOp, (long long)(B * n));
  pvn3d::cuda::clear_stale_error();
  const auto kernel = G == 8 ? three_nn_kernel<8> : G == 16 ? three_nn_kernel<16> : three_nn_kernel<32>;
  kernel<<<static_cast<unsigned>(blocks), kThreads, 0, pvn3d::cuda::as_stream(stream)>>>(
      static_cast<int>(n), static_cast<int>(m), unknown, known, dist2, idx);
  return pvn3d::cuda::check_launch(kOp);
}
