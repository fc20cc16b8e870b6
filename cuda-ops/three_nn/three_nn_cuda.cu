// PVN3D_ThreeNN, CUDA kernel. See three_nn.h.
//
// kGroup consecutive threads share one unknown point; thread g of the group scans known points
// g, g+kGroup, ... of each shared-memory tile (structure of arrays) and keeps its three best with
// strict `<` in index order. The group then merges its partial lists by (distance, index), which is
// exactly the sequential strict-`<` result: both are the three lexicographically smallest
// (distance, index) pairs among the points that were ever inserted (never +inf or NaN).
#include "three_nn.h"

#include "../common/cuda_utils.cuh"
#include "three_nn_args.h"
#include "../common/nvtx_range.h"

namespace pvn3d {
namespace three_nn {
namespace {

constexpr int kGroup = 8;
constexpr int kThreads = 256;
constexpr int kPerBlock = kThreads / kGroup;  // unknown points per block
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

__global__ void __launch_bounds__(kThreads)
    three_nn_kernel(int n, int m, const float* __restrict__ unknown, const float* __restrict__ known,
                    float* __restrict__ dist2, int64_t* __restrict__ idx) {
  __shared__ float sx[kTile], sy[kTile], sz[kTile];
  const int g = threadIdx.x % kGroup;
  const int blocks_per_batch = (n + kPerBlock - 1) / kPerBlock;
  const int b = blockIdx.x / blocks_per_batch;
  const int j = (blockIdx.x - b * blocks_per_batch) * kPerBlock + threadIdx.x / kGroup;
  const bool active = j < n;
  const int64_t u = static_cast<int64_t>(b) * n + (active ? j : 0);
  const float ux = __ldg(unknown + 3 * u), uy = __ldg(unknown + 3 * u + 1), uz = __ldg(unknown + 3 * u + 2);
  const float* pts = known + static_cast<int64_t>(b) * m * 3;
  const float inf = __int_as_float(0x7f800000);
  Top3 best{inf, inf, inf, 0, 0, 0};
  for (int base = 0; base < m; base += kTile) {
    const int len = min(kTile, m - base);
    __syncthreads();
    for (int t = threadIdx.x; t < len; t += kThreads) {
      const float* q = pts + 3 * static_cast<int64_t>(base + t);
      sx[t] = __ldg(q);
      sy[t] = __ldg(q + 1);
      sz[t] = __ldg(q + 2);
    }
    __syncthreads();
    for (int t = g; t < len; t += kGroup) {
      const float d = cuda::dist2(sx[t], sy[t], sz[t], ux, uy, uz);
      if (d < best.d3) {
        const int i = base + t;
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
  }
#pragma unroll
  for (int off = kGroup / 2; off >= 1; off >>= 1) {
    Top3 other;
    other.d1 = __shfl_xor_sync(0xffffffffu, best.d1, off);
    other.d2 = __shfl_xor_sync(0xffffffffu, best.d2, off);
    other.d3 = __shfl_xor_sync(0xffffffffu, best.d3, off);
    other.i1 = __shfl_xor_sync(0xffffffffu, best.i1, off);
    other.i2 = __shfl_xor_sync(0xffffffffu, best.i2, off);
    other.i3 = __shfl_xor_sync(0xffffffffu, best.i3, off);
    best = merge(best, other);
  }
  if (active && g == 0) {
    dist2[3 * u] = best.d1;
    dist2[3 * u + 1] = best.d2;
    dist2[3 * u + 2] = best.d3;
    idx[3 * u] = best.i1;
    idx[3 * u + 1] = best.i2;
    idx[3 * u + 2] = best.i3;
  }
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
  PVN3D_TRY(pvn3d::check_at_most(kOp, "n", n, "2^31-1 (CUDA)", INT32_MAX - kPerBlock));
  PVN3D_TRY(pvn3d::check_at_most(kOp, "m", m, "2^31-1 (CUDA)", INT32_MAX - kTile));
  const int64_t blocks = B * ((n + kPerBlock - 1) / kPerBlock);
  if (blocks > INT32_MAX)
    return pvn3d::fail(PVN3D_ERR_INVALID_ARGUMENT, "%s: B*n (%lld) too large for one CUDA launch", kOp, (long long)(B * n));
  pvn3d::cuda::clear_stale_error();
  three_nn_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, pvn3d::cuda::as_stream(stream)>>>(
      static_cast<int>(n), static_cast<int>(m), unknown, known, dist2, idx);
  return pvn3d::cuda::check_launch(kOp);
}
