#include "gather_cuda.cuh"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "checks.h"

namespace pvn3d {
namespace cuda {

namespace {

constexpr int kMaxDevices = 64;
struct SmemCache {
  std::atomic<int> known;  // 0 not yet, 1 queried
  std::atomic<int> sms, per_sm, optin;
};
SmemCache g_smem[kMaxDevices];

// CH channels a thread (8, 4, 2 or 1): fewer when the grid would otherwise leave SMs idle (direct_channels).
// V positions a thread: 4 (P % 4 == 0, idx and out 16-byte aligned: two 16-byte index loads, all 4 x CH
// feature loads in flight before one float4 store per channel) or 1. The grid's y covers the chunks of CH
// channels and z the batch, each striding past 65535, so a thread finds its (b, chunk) without dividing (a
// 64-bit division a thread, even on its 32-bit fast path, costs more instructions than the gather of one
// channel).
template <int CH, int V>
__global__ void __launch_bounds__(kGatherThreads)
    gather_direct_kernel(const float* __restrict__ features, const int64_t* __restrict__ idx, int64_t B, int64_t C,
                         int64_t N, int64_t P, float* __restrict__ out, int64_t* index_error) {
  const int64_t p = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * V;
  if (p >= P) return;
  const int64_t chunks = (C + CH - 1) / CH;
  for (int64_t b = blockIdx.z; b < B; b += gridDim.z) {
    const int64_t ipos = b * P + p;
    int64_t v[V];
    bool ok[V];
    if constexpr (V == 4) {
      const longlong2 lo = __ldg(reinterpret_cast<const longlong2*>(idx + ipos));
      const longlong2 hi = __ldg(reinterpret_cast<const longlong2*>(idx + ipos + 2));
      v[0] = lo.x;
      v[V > 1 ? 1 : 0] = lo.y;
      v[V > 2 ? 2 : 0] = hi.x;
      v[V > 3 ? 3 : 0] = hi.y;
    } else {
      v[0] = __ldg(idx + ipos);
    }
#pragma unroll
    for (int e = 0; e < V; ++e) {
      ok[e] = index_ok(v[e], N);
      // one report per position: the chunk holding channel 0 makes it (every chunk reads the same index)
      if (!ok[e] && blockIdx.y == 0) record_bad_index(index_error, ipos + e, v[e]);
      if (!ok[e]) v[e] = 0;  // read an element in bounds, write 0
    }
    for (int64_t chunk = blockIdx.y; chunk < chunks; chunk += gridDim.y) {
      const int64_t c0 = chunk * CH;
      const float* f = features + (b * C + c0) * N;
      float* o = out + (b * C + c0) * P + p;
      const int nc = static_cast<int>(C - c0 < CH ? C - c0 : CH);
      float vals[CH][V];
#pragma unroll
      for (int k = 0; k < CH; ++k)
#pragma unroll
        for (int e = 0; e < V; ++e) vals[k][e] = (k < nc && ok[e]) ? __ldg(f + k * N + v[e]) : 0.f;
#pragma unroll
      for (int k = 0; k < CH; ++k) {
        if (k >= nc) continue;
        if constexpr (V == 4)
          *reinterpret_cast<float4*>(o + k * P) = make_float4(vals[k][0], vals[k][V > 1 ? 1 : 0],
                                                              vals[k][V > 2 ? 2 : 0], vals[k][V > 3 ? 3 : 0]);
        else
          o[k * P] = vals[k][0];
      }
    }
  }
}

// Staged gather (see gather_cuda.cuh). V = 4: a unit is 4 consecutive positions (P % 4 == 0, idx and
// out 16-byte aligned: two 16-byte index loads, one float4 store per row); V = 1: one position.
// Units of the block's position range are spread over the threads; when there are fewer units than
// threads, S = blockDim / units threads share a unit, each taking every S-th row (a unit's indices are
// then loaded by S threads, only the one with r0 == 0 reports bad ones).
template <int V>
__global__ void __launch_bounds__(kStagedThreads, 2)
    gather_staged_kernel(const float* __restrict__ features, const int64_t* __restrict__ idx, int64_t B, int64_t C,
                         int N, int64_t P, float* __restrict__ out, int rows, int64_t p_per_block,
                         int64_t* index_error) {
  extern __shared__ __align__(16) float staged[];
  const int64_t chunks = (C + rows - 1) / rows;
  const int64_t p0 = static_cast<int64_t>(blockIdx.x) * p_per_block;
  const int64_t p1 = p0 + p_per_block < P ? p0 + p_per_block : P;
  const int units = static_cast<int>((p1 - p0 + V - 1) / V);
  const int share = units >= static_cast<int>(blockDim.x) ? 1 : static_cast<int>(blockDim.x) / units;
  for (int64_t bc = blockIdx.y; bc < B * chunks; bc += gridDim.y) {
    const int64_t b = bc / chunks;
    const int64_t c0 = (bc - b * chunks) * rows;
    const int nc = static_cast<int>(C - c0 < rows ? C - c0 : rows);
    __syncthreads();  // every thread is done with the previous (b, chunk)'s rows
    stage_rows_issue(staged, features + (b * C + c0) * N, nc * N);
    stage_rows_wait();
    __syncthreads();
    for (int u = threadIdx.x; u < units * share; u += blockDim.x) {
      const int q = u % units, r0 = u / units;
      const int64_t p = p0 + static_cast<int64_t>(q) * V;
      const int64_t ipos = b * P + p;
      int at[V];
      bool ok[V];
      int64_t v[V];
      if (V == 4) {
        const longlong2 lo = __ldg(reinterpret_cast<const longlong2*>(idx + ipos));
        const longlong2 hi = __ldg(reinterpret_cast<const longlong2*>(idx + ipos + 2));
        v[0] = lo.x;
        v[V > 1 ? 1 : 0] = lo.y;
        v[V > 2 ? 2 : 0] = hi.x;
        v[V > 3 ? 3 : 0] = hi.y;
      } else {
        v[0] = __ldg(idx + ipos);
      }
#pragma unroll
      for (int e = 0; e < V; ++e) {
        ok[e] = index_ok(v[e], N);
        at[e] = ok[e] ? static_cast<int>(v[e]) : 0;
        if (!ok[e] && r0 == 0) record_bad_index(index_error, ipos + e, v[e]);
      }
      for (int k = r0; k < nc; k += share) {
        const float* row = staged + k * N;
        float* o = out + (b * C + c0 + k) * P + p;
        if (V == 4) {
          // Branch-free: a bad position reads row[0] (in bounds) and gives 0.
          const float x = row[at[0]], y = row[at[V > 1 ? 1 : 0]], z = row[at[V > 2 ? 2 : 0]], w = row[at[V > 3 ? 3 : 0]];
          float4 r;
          r.x = ok[0] ? x : 0.f;
          r.y = ok[V > 1 ? 1 : 0] ? y : 0.f;
          r.z = ok[V > 2 ? 2 : 0] ? z : 0.f;
          r.w = ok[V > 3 ? 3 : 0] ? w : 0.f;
          __stcs(reinterpret_cast<float4*>(o), r);  // streaming: the output is not read back here
        } else {
          const float x = row[at[0]];
          *o = ok[0] ? x : 0.f;
        }
      }
    }
  }
}

bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

}  // namespace

pvn3d_status allow_max_smem(const char* op, const void* kernel, std::atomic<int>* per_device_flags) {
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return cuda_status(cudaGetLastError(), op, "cudaGetDevice");
  std::atomic<int>* flag = dev >= 0 && dev < kMaxDeviceFlags ? &per_device_flags[dev] : nullptr;
  if (flag != nullptr && flag->load(std::memory_order_acquire) != 0) return PVN3D_OK;
  const DeviceSmem d = device_smem();
  PVN3D_TRY(cuda_status(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             static_cast<int>(d.per_block_optin)),
                        op, "cudaFuncSetAttribute(MaxDynamicSharedMemorySize)"));
  if (flag != nullptr) flag->store(1, std::memory_order_release);
  return PVN3D_OK;
}

DeviceSmem device_smem() {
  DeviceSmem d;
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= kMaxDevices) {
    cudaGetLastError();
    return d;
  }
  SmemCache& c = g_smem[dev];
  if (c.known.load(std::memory_order_acquire) == 0) {
    int sms = 0, per_sm = 0, optin = 0;
    if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess) {
      cudaGetLastError();
      return d;
    }
    c.sms.store(sms, std::memory_order_relaxed);
    c.per_sm.store(per_sm, std::memory_order_relaxed);
    c.optin.store(optin, std::memory_order_relaxed);
    c.known.store(1, std::memory_order_release);
  }
  d.sms = c.sms.load(std::memory_order_relaxed);
  d.per_sm = c.per_sm.load(std::memory_order_relaxed);
  d.per_block_optin = c.optin.load(std::memory_order_relaxed);
  return d;
}

namespace {

// The plans this thread made last, by their arguments and device: plan_rows' search costs 0.2-2 us a
// launch (up to 64 row counts, each with its splits), which is most of a launcher's host time above the
// CUDA launch itself, and a model launches the same shapes run after run. Per thread, so no locking: ORT
// runs a session's nodes on the calling thread (or its pool's), and a thread sees few shapes.
struct PlanKey {
  int device = -1;
  int64_t B = 0, C = 0, len = 0, P = 0, min_p = 0;
  double index_cost = 0;
  bool operator==(const PlanKey& o) const {
    return device == o.device && B == o.B && C == o.C && len == o.len && P == o.P && min_p == o.min_p &&
           index_cost == o.index_cost;
  }
};
constexpr int kPlanCacheSize = 32;
struct PlanCache {
  PlanKey keys[kPlanCacheSize];
  RowsPlan plans[kPlanCacheSize];
  int next = 0;
};
thread_local PlanCache t_plans;

RowsPlan search_rows(const DeviceSmem& d, int64_t B, int64_t C, int64_t len, int64_t P, int64_t min_p_per_block,
                     double index_cost);

}  // namespace

RowsPlan plan_rows(int64_t B, int64_t C, int64_t len, int64_t P, int64_t min_p_per_block, double index_cost) {
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) {
    cudaGetLastError();
    return RowsPlan{};
  }
  PlanKey key;
  key.device = dev;
  key.B = B;
  key.C = C;
  key.len = len;
  key.P = P;
  key.min_p = min_p_per_block;
  key.index_cost = index_cost;
  PlanCache& cache = t_plans;
  for (int i = 0; i < kPlanCacheSize; ++i)
    if (cache.keys[i] == key) return cache.plans[i];
  const DeviceSmem d = device_smem();
  if (d.sms < 1) return RowsPlan{};  // the device's sizes unknown (a failed query): not remembered
  const RowsPlan plan = search_rows(d, B, C, len, P, min_p_per_block, index_cost);
  cache.keys[cache.next] = key;
  cache.plans[cache.next] = plan;
  cache.next = (cache.next + 1) % kPlanCacheSize;
  return plan;
}

namespace {

RowsPlan search_rows(const DeviceSmem& d, int64_t B, int64_t C, int64_t len, int64_t P, int64_t min_p_per_block,
                     double index_cost) {
  RowsPlan plan;
  if (d.sms < 1 || B < 1 || C < 1 || len < 1 || P < 1 || P > (int64_t{1} << 30)) return plan;
  // Two blocks per SM: half an SM's shared memory each, less the 1 KB the system reserves per block.
  int64_t budget = d.per_sm / 2 - 1024;
  if (budget > d.per_block_optin) budget = d.per_block_optin;
  const int64_t row_bytes = len * static_cast<int64_t>(sizeof(float));
  if (budget < row_bytes) return plan;
  int64_t rows_max = budget / row_bytes;
  if (rows_max > C) rows_max = C;
  const int64_t slots = 2 * static_cast<int64_t>(d.sms);
  const int64_t min_p = min_p_per_block > 4 ? min_p_per_block : 4;
  const int64_t max_split = P / min_p > 1 ? P / min_p : 1;
  // Cost of a launch, in float-sized units moved by one block times the waves of blocks: a block writes
  // rows*J floats, stages rows*len (from L2, counted half) and reads index_cost units per position.
  // Candidates: every distinct number of rows per chunk from the most that fit down (at most 64 of
  // them), and splits of P around the one that gives about four blocks per SM.
  double best = -1;
  const int64_t chunks_min = (C + rows_max - 1) / rows_max;
  int64_t tried = 0;
  for (int64_t rows_try = rows_max; rows_try >= 1 && tried < 64; --rows_try) {
    const int64_t chunks = (C + rows_try - 1) / rows_try;
    const int64_t rows = (C + chunks - 1) / chunks;  // the same rows in every chunk (but the last)
    if (rows != rows_try) continue;  // the same chunk count as a larger rows_try
    ++tried;
    const int64_t items = B * chunks;
    const int64_t s0 = (2 * slots + items - 1) / items;
    int64_t lo = s0 / 2 > 1 ? s0 / 2 : 1;
    if (lo > max_split) lo = max_split;
    for (int64_t split = lo; split <= 2 * s0 + 2 && split <= max_split; ++split) {
      const int64_t per = ((P + split - 1) / split + 3) / 4 * 4;
      const int64_t blocks = items * ((P + per - 1) / per);
      const int64_t waves = (blocks + slots - 1) / slots;
      const double cost = static_cast<double>(waves) *
                          (static_cast<double>(rows) * (static_cast<double>(per) + 0.5 * static_cast<double>(len)) +
                           index_cost * static_cast<double>(per));
      if (best < 0 || cost < best * 0.999) {
        best = cost;
        plan.rows = static_cast<int>(rows);
        plan.p_per_block = per;
        plan.gx = static_cast<unsigned>((P + per - 1) / per);
        plan.gy = static_cast<unsigned>(items < 65535 ? items : 65535);
        plan.smem_bytes = static_cast<size_t>(rows * row_bytes);
      }
    }
  }
  if (best < 0) {  // no split in range (P small): one block per (b, chunk) of the most rows
    const int64_t rows = (C + chunks_min - 1) / chunks_min;
    const int64_t items = B * chunks_min;
    plan.rows = static_cast<int>(rows);
    plan.p_per_block = (P + 3) / 4 * 4;
    plan.gx = 1;
    plan.gy = static_cast<unsigned>(items < 65535 ? items : 65535);
    plan.smem_bytes = static_cast<size_t>(rows * row_bytes);
  }
  return plan;
}

// PVN3D_GATHER=direct never stages, =staged stages whenever the rows fit (whatever N and P); directN (N = 8,
// 4, 2 or 1) also fixes the direct kernel's channels a thread (else direct_channels picks). Read once, for
// A/B benchmarks and forced tests.
struct GatherOverride {
  int mode = 0;      // 0 the rule, 1 direct, 2 staged
  int channels = 0;  // 0: direct_channels decides
};
GatherOverride gather_override() {
  static const GatherOverride o = [] {
    GatherOverride r;
    const char* e = std::getenv("PVN3D_GATHER");
    if (e == nullptr || *e == '\0') return r;
    if (std::strcmp(e, "staged") == 0) r.mode = 2;
    if (std::strcmp(e, "direct") == 0) r.mode = 1;
    for (const char* v : {"direct8", "direct4", "direct2", "direct1"})
      if (std::strcmp(e, v) == 0) {
        r.mode = 1;
        r.channels = v[6] - '0';
      }
    // An A/B run must not time the rule's choice believing it forced another: say so, once a process.
    if (r.mode == 0)
      std::fprintf(stderr, "pvn3d_ops: PVN3D_GATHER=%s is not one of staged, direct, direct8, direct4, direct2, "
                   "direct1; the rule chooses\n", e);
    return r;
  }();
  return o;
}

// Channels a thread of the direct kernel: the most (more loads in flight a thread, each index read once for
// them) that still gives every SM two blocks; 1 when even that does not (a small batch of few channels).
int direct_channels(int64_t B, int64_t C, int64_t gx) {
  const int sms = device_smem().sms;
  const int64_t slots = 2 * static_cast<int64_t>(sms > 0 ? sms : 1);
  for (int ch = kGatherChannels; ch > 1; ch /= 2)
    if (gx * B * ((C + ch - 1) / ch) >= slots) return ch;
  return 1;
}

// Staged when a block's rows are repaid by the positions it serves: a direct 4-byte gather moves a 32-byte
// sector per output, staging moves N/P bytes per output byte, coalesced, but in two phases (stage, then
// gather) that a small launch cannot hide. So: every row serving at least 4 outputs an element (N <= P/4,
// GroupPoints' shapes); and, where the direct kernel takes one position a thread (P % 4 != 0 or unaligned),
// N <= 4 P over features of at least 2^21 floats. Measured: with one position a thread, staged 0.86 against
// direct 1.20 of the reference kernel's time at B=8 C=256 N=4096 P=1024 (8.4 M floats; H200,
// results/2026-12-05-gpu); with four (16-byte index loads, all 4 x CH loads in flight) direct 0.75 against
// staged 0.80-0.82 there, and direct the faster at the smaller sizes as before (H100,
// results/2026-12-05-h100-reduce-scatter, three interleaved rounds of each).
bool stage_by_rule(int64_t B, int64_t C, int64_t N, int64_t P, bool vec) {
  if (N <= P / 4) return true;
  return !vec && N <= 4 * P && B * C * N >= (int64_t{1} << 21);
}

template <int CH>
void launch_direct(const float* features, const int64_t* idx, int64_t B, int64_t C, int64_t N, int64_t P, float* out,
                   int64_t* index_error, bool vec, unsigned gx, cudaStream_t stream) {
  const int64_t chunks = (C + CH - 1) / CH;
  const unsigned gy = static_cast<unsigned>(chunks < 65535 ? chunks : 65535);
  const unsigned gz = static_cast<unsigned>(B < 65535 ? B : 65535);
  const auto kernel = vec ? gather_direct_kernel<CH, 4> : gather_direct_kernel<CH, 1>;
  kernel<<<dim3(gx, gy, gz), kGatherThreads, 0, stream>>>(features, idx, B, C, N, P, out, index_error);
}

}  // namespace

pvn3d_status gather_rows_cuda(const char* op, const float* features, const int64_t* idx, int64_t B, int64_t C,
                              int64_t N, int64_t P, float* out, int64_t* index_error, cudaStream_t stream) {
  if ((P + kGatherThreads - 1) / kGatherThreads > INT32_MAX)
    return fail(PVN3D_ERR_INVALID_ARGUMENT, "%s: too many points per batch for CUDA (%lld)", op, (long long)P);
  pvn3d::cuda::clear_stale_error();
  const GatherOverride forced = gather_override();
  const bool vec = P % 4 == 0 && aligned16(idx) && aligned16(out);
  const bool stage = forced.mode == 2 || (forced.mode == 0 && stage_by_rule(B, C, N, P, vec));
  const RowsPlan plan = stage ? plan_rows(B, C, N, P, N / 4 > 512 ? N / 4 : 512, 1.0) : RowsPlan{};
  if (plan.rows > 0) {
    const auto kernel = vec ? gather_staged_kernel<4> : gather_staged_kernel<1>;
    static std::atomic<int> smem_set[2][kMaxDeviceFlags];
    PVN3D_TRY(allow_max_smem(op, reinterpret_cast<const void*>(kernel), smem_set[vec ? 1 : 0]));
    kernel<<<dim3(plan.gx, plan.gy), kStagedThreads, plan.smem_bytes, stream>>>(
        features, idx, B, C, static_cast<int>(N), P, out, plan.rows, plan.p_per_block, index_error);
  } else {
    const int64_t per_thread = vec ? 4 : 1;
    const int64_t gx = (P / per_thread + kGatherThreads - 1) / kGatherThreads;
    const int ch = forced.channels > 0 ? forced.channels : direct_channels(B, C, gx);
    const unsigned ugx = static_cast<unsigned>(gx);
    if (ch == 8) launch_direct<8>(features, idx, B, C, N, P, out, index_error, vec, ugx, stream);
    else if (ch == 4) launch_direct<4>(features, idx, B, C, N, P, out, index_error, vec, ugx, stream);
    else if (ch == 2) launch_direct<2>(features, idx, B, C, N, P, out, index_error, vec, ugx, stream);
    else launch_direct<1>(features, idx, B, C, N, P, out, index_error, vec, ugx, stream);
  }
  return check_launch(op);
}

}  // namespace cuda
}  // namespace pvn3d
