// PVN3D_ThreeInterpolate, CUDA kernel. See three_interpolate.h.
//
// Staged (when a feature row fits in half an SM's shared memory, m <= ~28K on sm_90): a block copies
// `rows` feature rows of one batch element into shared memory with cp.async (common/gather_cuda.cuh's
// plan: 512 threads, two blocks per SM, so one block's staging overlaps the other's work) and serves a
// range of target points from there. A thread owns 4 consecutive target points (when n % 4 == 0 and
// the pointers are 16-byte aligned): it loads their 12 indices and 12 weights once with 16-byte loads,
// then for each of its rows does 12 shared-memory reads and one float4 store, so global traffic is the
// output (written once, coalesced, vectorised), the staged rows and the index/weight rows once per
// chunk of rows. The output dominates: B=8 C=256 m=4096 n=16384 writes 134 MB.
// Otherwise grid.x covers the n target points (one thread each: coalesced idx/weight reads and out
// writes), grid.y covers (b, chunk of kChannels channels): a thread reads its three indices and
// weights once and then issues the 3*kChannels gathered loads of its chunk before the stores.
#include "three_interpolate.h"

#include <atomic>

#include "../common/cuda_utils.cuh"
#include "../common/gather_cuda.cuh"
#include "../common/index_check_cuda.cuh"
#include "three_interpolate_args.h"
#include "../common/nvtx_range.h"

namespace pvn3d {
namespace three_interpolate {
namespace {

constexpr int kThreads = 256;
constexpr int kChannels = 8;

__global__ void __launch_bounds__(kThreads)
    three_interpolate_kernel(int64_t B, int64_t C, int64_t m, int64_t n, const float* __restrict__ features,
                             const int64_t* __restrict__ idx, const float* __restrict__ weight,
                             float* __restrict__ out, int64_t* index_error) {
  const int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= n) return;
  const int64_t chunks = (C + kChannels - 1) / kChannels;
  for (int64_t bc = blockIdx.y; bc < B * chunks; bc += gridDim.y) {
    const int64_t b = bc / chunks;
    const int64_t c0 = (bc - b * chunks) * kChannels;
    const int64_t ipos = (b * n + j) * 3;
    const int64_t i0 = __ldg(idx + ipos), i1 = __ldg(idx + ipos + 1), i2 = __ldg(idx + ipos + 2);
    const bool ok0 = cuda::index_ok(i0, m), ok1 = cuda::index_ok(i1, m), ok2 = cuda::index_ok(i2, m);
    const bool ok = ok0 && ok1 && ok2;
    if (!ok) cuda::record_bad_index(index_error, ipos + (!ok0 ? 0 : (!ok1 ? 1 : 2)), !ok0 ? i0 : (!ok1 ? i1 : i2));
    const float w0 = __ldg(weight + ipos), w1 = __ldg(weight + ipos + 1), w2 = __ldg(weight + ipos + 2);
    const float* f = features + (b * C + c0) * m;
    float* o = out + (b * C + c0) * n + j;
    const int nc = static_cast<int>(C - c0 < kChannels ? C - c0 : kChannels);
    float vals[kChannels];
#pragma unroll
    for (int k = 0; k < kChannels; ++k) {
      float v = 0.f;
      if (k < nc && ok) {
        const float* fk = f + k * m;
        v = __fadd_rn(__fadd_rn(__fmul_rn(__ldg(fk + i0), w0), __fmul_rn(__ldg(fk + i1), w1)),
                      __fmul_rn(__ldg(fk + i2), w2));
      }
      vals[k] = v;
    }
#pragma unroll
    for (int k = 0; k < kChannels; ++k)
      if (k < nc) o[k * n] = vals[k];
  }
}

__device__ __forceinline__ float interp(const float* row, int a0, int a1, int a2, float w0, float w1, float w2) {
  return __fadd_rn(__fadd_rn(__fmul_rn(row[a0], w0), __fmul_rn(row[a1], w1)), __fmul_rn(row[a2], w2));
}

// Staged kernel. V = 4: a unit is 4 consecutive target points (n % 4 == 0; idx, weight and out 16-byte
// aligned); V = 1: one point. As in common/gather_cuda.cu's staged gather, units are spread over the
// threads and, when there are fewer units than threads, S threads share a unit, each taking every S-th
// row (only the one with r0 == 0 reports bad indices). A point with any bad index gives 0 in every
// channel and reports its first bad position, as the direct kernel does.
template <int V>
__global__ void __launch_bounds__(cuda::kStagedThreads, 2)
    three_interpolate_staged_kernel(int64_t B, int64_t C, int m, int64_t n, const float* __restrict__ features,
                                    const int64_t* __restrict__ idx, const float* __restrict__ weight,
                                    float* __restrict__ out, int rows, int64_t j_per_block, int64_t* index_error) {
  extern __shared__ __align__(16) float staged[];
  const int64_t chunks = (C + rows - 1) / rows;
  const int64_t j0 = static_cast<int64_t>(blockIdx.x) * j_per_block;
  const int64_t j1 = j0 + j_per_block < n ? j0 + j_per_block : n;
  const int units = static_cast<int>((j1 - j0 + V - 1) / V);
  const int share = units >= static_cast<int>(blockDim.x) ? 1 : static_cast<int>(blockDim.x) / units;
  for (int64_t bc = blockIdx.y; bc < B * chunks; bc += gridDim.y) {
    const int64_t b = bc / chunks;
    const int64_t c0 = (bc - b * chunks) * rows;
    const int nc = static_cast<int>(C - c0 < rows ? C - c0 : rows);
    __syncthreads();  // every thread is done with the previous (b, chunk)'s rows
    cuda::stage_rows_issue(staged, features + (b * C + c0) * m, nc * m);
    cuda::stage_rows_wait();
    __syncthreads();
    for (int u = threadIdx.x; u < units * share; u += blockDim.x) {
      const int q = u % units, r0 = u / units;
      const int64_t j = j0 + static_cast<int64_t>(q) * V;
      const int64_t ipos = (b * n + j) * 3;
      int64_t iv[3 * V];
      float w[3 * V];
      if (V == 4) {
        const longlong2* ip = reinterpret_cast<const longlong2*>(idx + ipos);
        const float4* wp = reinterpret_cast<const float4*>(weight + ipos);
#pragma unroll
        for (int h = 0; h < 3 * V / 2; ++h) {
          const longlong2 t = __ldg(ip + h);
          iv[2 * h] = t.x;
          iv[2 * h + 1] = t.y;
        }
#pragma unroll
        for (int h = 0; h < 3 * V / 4; ++h) {
          const float4 t = __ldg(wp + h);
          w[4 * h] = t.x;
          w[4 * h + 1] = t.y;
          w[4 * h + 2] = t.z;
          w[4 * h + 3] = t.w;
        }
      } else {
#pragma unroll
        for (int e = 0; e < 3 * V; ++e) {
          iv[e] = __ldg(idx + ipos + e);
          w[e] = __ldg(weight + ipos + e);
        }
      }
      int at[3 * V];
      bool ok[V];
#pragma unroll
      for (int e = 0; e < V; ++e) {
        const bool ok0 = cuda::index_ok(iv[3 * e], m), ok1 = cuda::index_ok(iv[3 * e + 1], m),
                   ok2 = cuda::index_ok(iv[3 * e + 2], m);
        ok[e] = ok0 && ok1 && ok2;
        if (!ok[e] && r0 == 0) {
          // selects, not iv[3 * e + h]: a runtime index would move iv to local memory
          cuda::record_bad_index(index_error, ipos + 3 * e + (!ok0 ? 0 : (!ok1 ? 1 : 2)),
                                 !ok0 ? iv[3 * e] : (!ok1 ? iv[3 * e + 1] : iv[3 * e + 2]));
        }
#pragma unroll
        for (int h = 0; h < 3; ++h) at[3 * e + h] = ok[e] ? static_cast<int>(iv[3 * e + h]) : 0;
      }
      for (int k = r0; k < nc; k += share) {
        const float* row = staged + k * m;
        float* o = out + (b * C + c0 + k) * n + j;
        float r[V];
#pragma unroll
        for (int e = 0; e < V; ++e) {  // branch-free: a bad point reads row[0] (in bounds) and gives 0
          const float v = interp(row, at[3 * e], at[3 * e + 1], at[3 * e + 2], w[3 * e], w[3 * e + 1], w[3 * e + 2]);
          r[e] = ok[e] ? v : 0.f;
        }
        if (V == 4) {
          // One 16-byte store (a plain float4 assignment was split into four 4-byte stores here), streaming:
          // the output is not read back by this kernel.
          __stcs(reinterpret_cast<float4*>(o), make_float4(r[0], r[V > 1 ? 1 : 0], r[V > 2 ? 2 : 0], r[V > 3 ? 3 : 0]));
        } else {
          *o = r[0];
        }
      }
    }
  }
}

bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

}  // namespace
}  // namespace three_interpolate
}  // namespace pvn3d

extern "C" pvn3d_status pvn3d_three_interpolate_cuda(int64_t B, int64_t C, int64_t m, int64_t n, const float* features,
                                                      const int64_t* idx, const float* weight, float* out,
                                                      int64_t* index_error, void* stream) {
  using namespace pvn3d::three_interpolate;
  PVN3D_NVTX_RANGE(kOp);
  int64_t work = 0;
  PVN3D_TRY(check_args(B, C, m, n, features, idx, weight, out, &work));
  if (work == 0) return PVN3D_OK;
  const int64_t gx = (n + kThreads - 1) / kThreads;
  if (gx > INT32_MAX)
    return pvn3d::fail(PVN3D_ERR_INVALID_ARGUMENT, "%s: n (%lld) too large for one CUDA launch", kOp, (long long)n);
  const int64_t chunks = (C + kChannels - 1) / kChannels;
  const int64_t gy = B * chunks < 65535 ? B * chunks : 65535;
  pvn3d::cuda::clear_stale_error();
  const cudaStream_t s = pvn3d::cuda::as_stream(stream);
  // A block stages rows*m floats; it should serve at least m/2 points so that the staging costs at most
  // twice its output. Per point it reads 3 indices and 3 weights (9 float-sized units, L2 hits: 4.5).
  const pvn3d::cuda::RowsPlan plan = pvn3d::cuda::plan_rows(B, C, m, n, m / 2 > 512 ? m / 2 : 512, 4.5);
  if (plan.rows > 0) {
    const bool vec = n % 4 == 0 && aligned16(idx) && aligned16(weight) && aligned16(out);
    const auto kernel = vec ? three_interpolate_staged_kernel<4> : three_interpolate_staged_kernel<1>;
    static std::atomic<int> smem_set[2][pvn3d::cuda::kMaxDeviceFlags];
    PVN3D_TRY(pvn3d::cuda::allow_max_smem(kOp, reinterpret_cast<const void*>(kernel), smem_set[vec ? 1 : 0]));
    kernel<<<dim3(plan.gx, plan.gy), pvn3d::cuda::kStagedThreads, plan.smem_bytes, s>>>(
        B, C, static_cast<int>(m), n, features, idx, weight, out, plan.rows, plan.p_per_block, index_error);
  } else {
    three_interpolate_kernel<<<dim3(static_cast<unsigned>(gx), static_cast<unsigned>(gy)), kThreads, 0, s>>>(
        B, C, m, n, features, idx, weight, out, index_error);
  }
  return pvn3d::cuda::check_launch(kOp);
}
