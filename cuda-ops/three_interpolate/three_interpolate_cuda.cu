// PVN3D_ThreeInterpolate, CUDA kernel. See three_interpolate.h.
//
// When the feature rows fit (m <= 24576), blocks stage rows in shared memory and gather from there
// (three_interpolate_staged_kernel). Otherwise grid.x covers the n target points (one thread each: coalesced idx/weight reads and out writes),
// grid.y covers (b, chunk of kChannels channels): a thread reads its three indices and weights once
// and then issues the 3*kChannels gathered loads of its chunk before the stores.
#include "three_interpolate.h"

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
// Staged kernel: 512 threads and up to 96 KB of staged rows per block (two blocks per SM on sm_80 and
// sm_90): more rows per block means the three indices and weights are re-read for fewer chunks.
constexpr int kStagedThreads = 512;
constexpr int64_t kStagedBytes = 96 * 1024;

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
    if (!ok) cuda::record_bad_index(index_error, ipos + (!ok0 ? 0 : (!ok1 ? 1 : 2)));
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

// Staged variant (common/gather_cuda.cuh's plan): a block copies `rows` feature rows of one batch
// element (rows*m floats, contiguous) into shared memory once and gathers from there for its range of
// target points; each thread reads its three indices and weights once per (b, chunk).
__global__ void __launch_bounds__(kStagedThreads)
    three_interpolate_staged_kernel(int64_t B, int64_t C, int m, int64_t n, const float* __restrict__ features,
                                    const int64_t* __restrict__ idx, const float* __restrict__ weight,
                                    float* __restrict__ out, int rows, int64_t j_per_block, int64_t* index_error) {
  extern __shared__ float staged[];
  const int64_t chunks = (C + rows - 1) / rows;
  const int64_t j0 = static_cast<int64_t>(blockIdx.x) * j_per_block;
  const int64_t j1 = j0 + j_per_block < n ? j0 + j_per_block : n;
  for (int64_t bc = blockIdx.y; bc < B * chunks; bc += gridDim.y) {
    const int64_t b = bc / chunks;
    const int64_t c0 = (bc - b * chunks) * rows;
    const int nc = static_cast<int>(C - c0 < rows ? C - c0 : rows);
    const float* src = features + (b * C + c0) * m;
    const int count = nc * m;
    __syncthreads();  // the previous (b, chunk) is done with the staged rows
#pragma unroll 4
    for (int t = threadIdx.x; t < count; t += blockDim.x) staged[t] = __ldg(src + t);
    __syncthreads();
    for (int64_t j = j0 + threadIdx.x; j < j1; j += blockDim.x) {
      const int64_t ipos = (b * n + j) * 3;
      const int64_t i0 = __ldg(idx + ipos), i1 = __ldg(idx + ipos + 1), i2 = __ldg(idx + ipos + 2);
      const bool ok0 = cuda::index_ok(i0, m), ok1 = cuda::index_ok(i1, m), ok2 = cuda::index_ok(i2, m);
      const bool ok = ok0 && ok1 && ok2;
      if (!ok) cuda::record_bad_index(index_error, ipos + (!ok0 ? 0 : (!ok1 ? 1 : 2)));
      const float w0 = __ldg(weight + ipos), w1 = __ldg(weight + ipos + 1), w2 = __ldg(weight + ipos + 2);
      const int a0 = ok ? static_cast<int>(i0) : 0, a1 = ok ? static_cast<int>(i1) : 0,
                a2 = ok ? static_cast<int>(i2) : 0;
      float* o = out + (b * C + c0) * n + j;
      for (int k = 0; k < nc; ++k) {
        const float* f = staged + k * m;
        o[k * n] = ok ? __fadd_rn(__fadd_rn(__fmul_rn(f[a0], w0), __fmul_rn(f[a1], w1)), __fmul_rn(f[a2], w2)) : 0.f;
      }
    }
  }
}

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
  PVN3D_TRY(pvn3d::cuda::index_error_begin(kOp, index_error, s));
  const pvn3d::cuda::StagedPlan plan = pvn3d::cuda::plan_staged(B, C, m, n, kStagedBytes);
  if (plan.rows > 0) {
    PVN3D_TRY(pvn3d::cuda::cuda_status(
        cudaFuncSetAttribute(three_interpolate_staged_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(plan.smem_bytes)),
        kOp, "cudaFuncSetAttribute(MaxDynamicSharedMemorySize)"));
    three_interpolate_staged_kernel<<<dim3(plan.gx, plan.gy), kStagedThreads, plan.smem_bytes, s>>>(
        B, C, static_cast<int>(m), n, features, idx, weight, out, plan.rows, plan.p_per_block, index_error);
  } else {
    three_interpolate_kernel<<<dim3(static_cast<unsigned>(gx), static_cast<unsigned>(gy)), kThreads, 0, s>>>(
        B, C, m, n, features, idx, weight, out, index_error);
  }
  PVN3D_TRY(pvn3d::cuda::check_launch(kOp));
  return pvn3d::cuda::index_error_finish(kOp, index_error, idx, s);
}
