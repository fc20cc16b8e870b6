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
// Transposed (the same staging, point-major, 8 rows at a time; see the kernel): taken when every SM gets a
// (b, chunk of 8 rows) of its own and n >= 8192, B=8 C=256 m=4096 n=16384 0.073 ms against the staged
// kernel's 0.088.
// Otherwise grid.x covers the n target points (one thread each: coalesced idx/weight reads and out
// writes), grid.y covers (b, chunk of kChannels channels): a thread reads its three indices and
// weights once and then issues the 3*kChannels gathered loads of its chunk before the stores.
#include "three_interpolate.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

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

// Transposed kernel (n % 4 == 0, 16-byte aligned idx, weight and out; a batch large enough to give every
// SM a (b, chunk of rows) of its own). The staged kernel above is bound by L1: a warp's 32 lanes read 32
// random points of one row, which share banks about 3.5 deep, and every lane loads its own 12 indices
// and weights for every 6 rows. Here a block stages kRowsT = 8 rows point-major (staged[point * 8 +
// row], 32 bytes a point). Two lanes serve a group of 4 consecutive target points, each reading 4 rows
// of a neighbour with one 16-byte load: a quarter-warp's 8 lanes are 4 groups reading 32 contiguous
// bytes each, so only the groups can collide (Nsight: 8.5 wavefronts a warp's 16-byte load, 2.1 per 32
// values against ~3.5), and a lane's index and weight loads serve 4 rows. A lane writes 4 float4 (its
// rows, its group's 4 points): a warp's store covers 2 rows x 256 contiguous bytes. 1024 threads, one
// block per SM at m = 4096 (128 KB of rows). Q = 1 (one row a lane, 8 lanes a group, scalar shared
// reads) is kept for comparison (PVN3D_THREE_INTERPOLATE=transposed1): its index loads serve one row
// each and make it slower than the staged kernel.
constexpr int kRowsT = 8;
constexpr int kTransposedThreads = 1024;
constexpr int64_t kMinTransposedPoints = 4 * (kTransposedThreads / 32) * 64;  // 4 passes of every warp: 8192

// Q: rows a lane computes (1: scalar shared reads, 8 lanes a group; 4: one 16-byte read gives a lane 4
// rows of a point, 2 lanes a group, so the index and weight loads serve 4 times the outputs).
template <int Q>
__global__ void __launch_bounds__(kTransposedThreads, 1)
    three_interpolate_transposed_kernel(int64_t B, int64_t C, int m, int64_t n, const float* __restrict__ features,
                                        const int64_t* __restrict__ idx, const float* __restrict__ weight,
                                        float* __restrict__ out, int64_t j_per_block, int64_t* index_error) {
  extern __shared__ __align__(16) float staged[];
  constexpr int kLanesPerGroup = kRowsT / Q;
  constexpr int kPerWarp = 4 * (32 / kLanesPerGroup);  // target points a warp serves at a time
  const int64_t chunks = (C + kRowsT - 1) / kRowsT;
  const int64_t j0 = static_cast<int64_t>(blockIdx.x) * j_per_block;
  const int64_t j1 = j0 + j_per_block < n ? j0 + j_per_block : n;
  const int lane = threadIdx.x & 31, part = lane % kLanesPerGroup, group = lane / kLanesPerGroup;
  const int row0 = part * Q;  // this lane's first row of the chunk
  const int warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  for (int64_t bc = blockIdx.y; bc < B * chunks; bc += gridDim.y) {
    const int64_t b = bc / chunks;
    const int64_t c0 = (bc - b * chunks) * kRowsT;
    const int nc = static_cast<int>(C - c0 < kRowsT ? C - c0 : kRowsT);
    const float* src = features + (b * C + c0) * m;
    __syncthreads();  // every thread is done with the previous (b, chunk)'s rows
#pragma unroll 2
    for (int p = threadIdx.x; p < m; p += blockDim.x) {
      float v[kRowsT];
#pragma unroll
      for (int k = 0; k < kRowsT; ++k) v[k] = k < nc ? __ldg(src + static_cast<int64_t>(k) * m + p) : 0.f;
      // A point's two halves, the half (p >> 2) & 1 first: the 8 lanes of a quarter-warp then store to 8
      // different groups of banks (in order, lanes p and p + 4 would share one).
      float4* d = reinterpret_cast<float4*>(staged) + 2 * p;
      const int first = (p >> 2) & 1;
      const float4 lo = make_float4(v[0], v[1], v[2], v[3]), hi = make_float4(v[4], v[5], v[6], v[7]);
      d[first] = first ? hi : lo;
      d[1 - first] = first ? lo : hi;
    }
    __syncthreads();
    float* out_row = out + (b * C + c0 + row0) * n;
    for (int64_t j = j0 + static_cast<int64_t>(warp) * kPerWarp + 4 * group; j < j1;
         j += static_cast<int64_t>(warps) * kPerWarp) {
      const int64_t ipos = (b * n + j) * 3;
      const longlong2* ip = reinterpret_cast<const longlong2*>(idx + ipos);
      const float4* wp = reinterpret_cast<const float4*>(weight + ipos);
      // The indices are checked as they arrive and kept as 32-bit offsets (a bad one rereads its three
      // from memory to report them): 12 int64 would hold 24 registers through the loop.
      int at[12];
      unsigned bad = 0;
#pragma unroll
      for (int h = 0; h < 6; ++h) {
        const longlong2 t = __ldg(ip + h);
        bad |= (cuda::index_ok(t.x, m) ? 0u : 1u) << (2 * h);
        bad |= (cuda::index_ok(t.y, m) ? 0u : 1u) << (2 * h + 1);
        at[2 * h] = static_cast<int>(static_cast<unsigned>(t.x) * kRowsT);  // (a bad one is never used)
        at[2 * h + 1] = static_cast<int>(static_cast<unsigned>(t.y) * kRowsT);
      }
      float w[12];
#pragma unroll
      for (int h = 0; h < 3; ++h) {
        const float4 t = __ldg(wp + h);
        w[4 * h] = t.x;
        w[4 * h + 1] = t.y;
        w[4 * h + 2] = t.z;
        w[4 * h + 3] = t.w;
      }
      float r[Q][4];
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const bool ok = ((bad >> (3 * e)) & 7u) == 0;
        if (!ok && part == 0) {
          const int64_t i0 = idx[ipos + 3 * e], i1 = idx[ipos + 3 * e + 1], i2 = idx[ipos + 3 * e + 2];
          const bool ok0 = cuda::index_ok(i0, m), ok1 = cuda::index_ok(i1, m);
          cuda::record_bad_index(index_error, ipos + 3 * e + (!ok0 ? 0 : (!ok1 ? 1 : 2)), !ok0 ? i0 : (!ok1 ? i1 : i2));
        }
        // branch-free: a bad point reads point 0 (in bounds) and gives 0
        const int a0 = (ok ? at[3 * e] : 0) + row0, a1 = (ok ? at[3 * e + 1] : 0) + row0,
                  a2 = (ok ? at[3 * e + 2] : 0) + row0;
        if (Q == 1) {
          const float v = interp(staged, a0, a1, a2, w[3 * e], w[3 * e + 1], w[3 * e + 2]);
          r[0][e] = ok ? v : 0.f;
        } else {
          const float4 f0 = *reinterpret_cast<const float4*>(staged + a0);
          const float4 f1 = *reinterpret_cast<const float4*>(staged + a1);
          const float4 f2 = *reinterpret_cast<const float4*>(staged + a2);
          const float f0v[4] = {f0.x, f0.y, f0.z, f0.w}, f1v[4] = {f1.x, f1.y, f1.z, f1.w},
                      f2v[4] = {f2.x, f2.y, f2.z, f2.w};
#pragma unroll
          for (int k = 0; k < Q; ++k) {
            const float v = __fadd_rn(__fadd_rn(__fmul_rn(f0v[k], w[3 * e]), __fmul_rn(f1v[k], w[3 * e + 1])),
                                      __fmul_rn(f2v[k], w[3 * e + 2]));
            r[k][e] = ok ? v : 0.f;
          }
        }
      }
#pragma unroll
      for (int k = 0; k < Q; ++k)
        if (row0 + k < nc)
          __stcs(reinterpret_cast<float4*>(out_row + static_cast<int64_t>(k) * n + j),
                 make_float4(r[k][0], r[k][1], r[k][2], r[k][3]));
    }
  }
}

// The transposed kernel's launch when it applies (see above), else gx == 0.
struct TransposedPlan {
  unsigned gx = 0, gy = 0;
  int64_t j_per_block = 0;
  size_t smem_bytes = 0;
  int q = 4;
};

// PVN3D_THREE_INTERPOLATE=staged never takes the transposed kernel, =transposed takes it whenever the rows
// fit (whatever the batch); read once (for A/B benchmarks and tests).
int kernel_override() {
  static const int mode = [] {
    const char* e = std::getenv("PVN3D_THREE_INTERPOLATE");
    if (e == nullptr) return 0;
    if (std::strcmp(e, "staged") == 0) return 1;
    if (std::strcmp(e, "transposed") == 0) return 2;
    if (std::strcmp(e, "transposed1") == 0) return 3;
    return 0;
  }();
  return mode;
}

TransposedPlan plan_transposed(int64_t B, int64_t C, int64_t m, int64_t n, bool vec) {
  TransposedPlan plan;
  const int mode = kernel_override();
  if (!vec || mode == 1) return plan;
  const pvn3d::cuda::DeviceSmem d = pvn3d::cuda::device_smem();
  const int64_t smem = m * kRowsT * static_cast<int64_t>(sizeof(float));
  // m == 0 (every index bad): no rows to stage, and the kernel's reads of point 0 would leave shared memory.
  if (d.sms < 1 || m < 1 || smem > d.per_block_optin || n > (int64_t{1} << 40)) return plan;
  const int64_t items = B * ((C + kRowsT - 1) / kRowsT);
  // Measured faster (0.073 against 0.088 ms) at B=8 C=256 m=4096 n=16384, where every SM has a chunk of its
  // own and each warp makes 8 passes over its points. With fewer target points a block's 32 warps run out
  // of work (64 points a warp and pass): the full model's B=8 FP levels with n = 512-2048 stay on the
  // staged kernel until measured; FP0 (n = 12288) takes this one.
  if ((items < d.sms || n < kMinTransposedPoints) && mode < 2) return plan;
  if (mode == 3) plan.q = 1;
  int64_t per_sm = d.per_sm / (smem + 1024);
  if (per_sm > 2) per_sm = 2;
  if (per_sm < 1) per_sm = 1;
  const int64_t slots = per_sm * d.sms;
  const int64_t split = items >= slots ? 1 : slots / items;
  const int64_t per = ((n + split - 1) / split + 3) / 4 * 4;
  plan.j_per_block = per;
  plan.gx = static_cast<unsigned>((n + per - 1) / per);
  plan.gy = static_cast<unsigned>(items < 65535 ? items : 65535);
  plan.smem_bytes = static_cast<size_t>(smem);
  return plan;
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
  if (work == 0)  // no output, but the indices are still checked (an error even when C == 0, spec/ops.md)
    return pvn3d::cuda::check_indices_cuda(kOp, idx, B * n * 3, m, index_error, pvn3d::cuda::as_stream(stream));
  const int64_t gx = (n + kThreads - 1) / kThreads;
  if (gx > INT32_MAX)
    return pvn3d::fail(PVN3D_ERR_INVALID_ARGUMENT, "%s: n (%lld) too large for one CUDA launch", kOp, (long long)n);
  const int64_t chunks = (C + kChannels - 1) / kChannels;
  const int64_t gy = B * chunks < 65535 ? B * chunks : 65535;
  pvn3d::cuda::clear_stale_error();
  const cudaStream_t s = pvn3d::cuda::as_stream(stream);
  // A block stages rows*m floats; it should serve at least m/2 points so that the staging costs at most
  // twice its output. Per point it reads 3 indices and 3 weights (9 float-sized units, L2 hits: 4.5).
  const bool vec = n % 4 == 0 && aligned16(idx) && aligned16(weight) && aligned16(out);
  const TransposedPlan tp = plan_transposed(B, C, m, n, vec);
  if (tp.gx > 0) {
    const auto kernel = tp.q == 1 ? three_interpolate_transposed_kernel<1> : three_interpolate_transposed_kernel<4>;
    static std::atomic<int> smem_set_t[2][pvn3d::cuda::kMaxDeviceFlags];
    PVN3D_TRY(pvn3d::cuda::allow_max_smem(kOp, reinterpret_cast<const void*>(kernel), smem_set_t[tp.q == 1 ? 0 : 1]));
    kernel<<<dim3(tp.gx, tp.gy), kTransposedThreads, tp.smem_bytes, s>>>(
        B, C, static_cast<int>(m), n, features, idx, weight, out, tp.j_per_block, index_error);
    return pvn3d::cuda::check_launch(kOp);
  }
  const pvn3d::cuda::RowsPlan plan = pvn3d::cuda::plan_rows(B, C, m, n, m / 2 > 512 ? m / 2 : 512, 4.5);
  if (plan.rows > 0) {
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
