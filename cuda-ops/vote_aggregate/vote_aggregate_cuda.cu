// PVN3D_VoteAggregate on CUDA: one cooperative kernel. What it computes is vote_aggregate.h's definition;
// how, and why so, is below.
//
// Where the time goes. Per task (batch item, keypoint) the mean shift costs (active modes) x n pair
// evaluations per iteration, and a task runs until its slowest mode has settled. In PVN3D-like scenes
// (bandwidth 0.08 m, votes within ~1 cm of the keypoint, 30% outliers) nearly every mode is at its peak
// after 3-5 iterations, while a handful of slow modes (outlier votes crawling over flat density) keep a
// task going for 10-45 iterations (9 x 6443 votes: 11 iterations for the centre, 5-43 for the others).
// Shifting every mode of a running task in every iteration costs ~3x the pair evaluations that matter;
// paying a grid barrier plus serial L2 round trips per iteration, in two sequential phases (centre, then
// the others), with the counting spread over too few blocks and the compaction in one block, made the
// rest: ~0.45 ms of fixed cost even when every task converged in 2 iterations.
//
// What this kernel does about it:
//   * Per-mode freezing: a mode whose last step was at most bandwidth*1e-3/16 (a sixteenth of the
//     stopping tolerance) is not shifted again and counts as not moving. The answer of a task is the
//     mode of its chosen vote, which is never frozen, and the other modes matter only through the
//     iteration at which the task stops; a frozen mode would change that only by speeding up again
//     from < tol/16 to > tol per step (leaving a saddle of the density), while every unfrozen mode has
//     settled. Frozen modes leave the task's active list, so the work per iteration shrinks with it.
//   * The arithmetic of one pair: votes and modes are held relative to the task's chosen vote c, and the
//     exponent log2(w) = c2 |y - m|^2 is expanded as c2|y|^2 (stored with the vote) + c2|m|^2 +
//     (-2 c2 m).y: 4 FP32 operations, one ex2.approx.ftz (which also gives the spec's flush to 0 below
//     2^-126), 4 more for the sums of w and w*y; the new mode is sum(w y) / sum(w). Relative to c the
//     rounding of |y|^2 is small where it matters (near the chosen vote); the result differs from the
//     CPU's m + sum w (x - m) / sum w by rounding only (tests: 1e-5).
//   * Counting (exact float distances, as on the CPU) and mean shift use the same work item: 32 votes or
//     modes, one per lane, over all n votes of the task, split over the block's 16 warps and read as
//     broadcasts from shared memory, where the task's votes stay resident while they fit (6500 votes
//     with two blocks per SM on an H100/H200) across the items, steps and tails of the task.
//   * The centre row's mean shift only needs its chosen vote, known after its count, so it runs
//     beside the filter and the other rows' counting instead of before them (center_filter = 1).
//   * Grid-wide steps: every block derives every task's state from the previous step's results (the
//     same in every block) and takes an even, contiguous share of the step's work items. Once no task
//     has more than kTail active modes, each unfinished task finishes inside one block with block
//     barriers only (its last iterations: a few modes over all votes, the votes split over all threads).
//
// Steps (one grid barrier after each):
//   0   candidate flags of every (item, point); per-task results reset;
//   1   per (item, row) job: ordered compaction of the candidates and gather of the row's votes (the
//       centre row only with center_filter = 1, every row without);
//   2.. count items of the tasks in their counting step, filter jobs (step 3, center_filter = 1: the
//       points whose centre vote lies within bandwidth of the chosen centre vote, and the gather of the
//       other rows over them), shift items of the running tasks;
//   then the tails and the outputs, by the owner block of each task (task mod gridDim).
//
// Results: a task's state at step s (kind, iterations done, active modes, votes) is a function of its
// state at s-1 and of what step s-1 produced (res_cnt, res_moved: triple-buffered; state and active lists:
// double-buffered), so no block ever reads a value that is written in the same step. Data written by
// other blocks inside the kernel is read with __ldcg (L2), never through L1.
//
// Determinism: each mode's sums run over a fixed partition of the votes (by thread, then a fixed
// reduction order) that depends only on how many modes the item holds; the order in which modes sit in
// the active lists (atomic appends) changes nothing, so results are the same run to run.
#include "vote_aggregate.h"

#include <cooperative_groups.h>

#include <algorithm>
#include <climits>
#include <map>
#include <mutex>

#include "../common/checks.h"
#include "../common/cuda_utils.cuh"
#include "vote_aggregate_cuda.cuh"
#include "vote_aggregate_debug.h"
#include "vote_aggregate_internal.h"
#include "../common/nvtx_range.h"

namespace cg = cooperative_groups;

namespace pvn3d {
namespace vote {
namespace {

constexpr int kThreads = 512;
constexpr int kWarps = kThreads / 32;
constexpr int kModes = 32;      // modes (or counted votes) per work item: one per lane
constexpr int kTaskChunk = 64;  // tasks whose state a block holds in shared memory at once
constexpr int kTail = 32;       // a task with at most this many active modes may finish inside one block
constexpr int kMaxBlocksPerSM = 2;

// A mode is frozen once its squared step is at most tol2 / kFreezeDiv (step <= tol/16).
constexpr float kFreezeDiv = 256.0f;

enum : int { kIdle = 0, kCount = 1, kShift = 2, kDone = 3 };
enum : int { kTileNone = 0, kTileRaw = 1, kTileCentred = 2 };

struct Params {
  const float* votes;
  const void* mask;
  int mask_dtype;
  int center_filter;
  int max_iter;
  int tile_cap;  // votes the dynamic shared-memory tile holds
  int64_t B, K, N, BK;
  float bw2, c2, nc2x2, tol2, theta2;  // c2 = -0.5/bw^2 * log2(e): weight = 2^(d2 * c2); nc2x2 = -2 c2
  float* kps;
  int64_t* inliers;
  // workspace
  int* dbg;                  // [kDebugHeader + BK] (vote_aggregate_debug.h)
  unsigned char* flags;      // [B*N] candidate flags
  int* cand_idx;             // [B*N]
  int* cand_cnt;             // [B]
  int* used_cnt;             // [B]
  float4* vg;                // [BK*N] gathered votes (original coordinates)
  float4* modes;             // [BK*N] modes, relative to the task's chosen vote
  int* lists;                // [2][BK*N] active modes of a step
  unsigned long long* best;  // [BK] (count << 32) | (0xFFFFFFFF - index)
  int4* state;               // [2][BK] (kind, iterations done, active modes, votes)
  int* res_cnt;              // [3][BK] modes kept active by a step
  int* res_moved;            // [3][BK] whether a mode moved more than tol in a step
};

struct __align__(16) Shared {
  union {
    float4 f[kWarps][kModes];
    int i[kWarps][kModes];
  } red;
  float red2[4][kModes];
  float4 tm[kModes];  // tail: the active modes
  int4 st[kTaskChunk];
  long long pre[kTaskChunk + 1];
  long long scanl[kWarps];
  int scan[kWarps];
  int ti[kModes];  // tail: their indices
  int tail_a, tail_moved;
};

struct TileTag {
  long long tau;
  int kind;
};

__device__ __forceinline__ float ex2_ftz(float x) {
#ifdef __CUDA_ARCH__
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#else  // host compilation of the device code (an emulator): the same flush to 0 below 2^-126
  const float y = exp2f(x);
  return y < 1.17549435e-38f ? 0.0f : y;
#endif
}

__device__ __forceinline__ bool finite3(const float* v) {
  return isfinite(v[0]) && isfinite(v[1]) && isfinite(v[2]);
}

__device__ __forceinline__ float d2_exact(const float4& a, const float4& b) {
  return pvn3d::cuda::dist2(a.x, a.y, a.z, b.x, b.y, b.z);
}

__device__ __forceinline__ int chosen_index(unsigned long long key) {
  return static_cast<int>(0xFFFFFFFFu - static_cast<unsigned>(key & 0xFFFFFFFFull));
}

// A vote relative to the chosen vote c; with_w: .w = c2 |y - c|^2 (the vote's part of the exponent).
__device__ __forceinline__ float4 centred(const Params& p, const float4& y, const float4& c, bool with_w) {
  const float x = __fsub_rn(y.x, c.x), yy = __fsub_rn(y.y, c.y), z = __fsub_rn(y.z, c.z);
  const float w = with_w ? __fmul_rn(p.c2, __fadd_rn(__fadd_rn(__fmul_rn(x, x), __fmul_rn(yy, yy)), __fmul_rn(z, z)))
                         : 0.0f;
  return make_float4(x, yy, z, w);
}

// The mode's part of the exponent: (-2 c2 m, c2 |m|^2).
__device__ __forceinline__ float4 mode_coef(const Params& p, const float4& m) {
  const float mm = __fadd_rn(__fadd_rn(__fmul_rn(m.x, m.x), __fmul_rn(m.y, m.y)), __fmul_rn(m.z, m.z));
  return make_float4(__fmul_rn(p.nc2x2, m.x), __fmul_rn(p.nc2x2, m.y), __fmul_rn(p.nc2x2, m.z), __fmul_rn(p.c2, mm));
}

// Block-wide exclusive scan of one value per thread; *total = the sum. All threads must call it.
template <class T>
__device__ T block_scan(T v, T* warp_sums, T* total) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  T x = v;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const T y = __shfl_up_sync(0xFFFFFFFFu, x, o);
    if (lane >= o) x += y;
  }
  if (lane == 31) warp_sums[warp] = x;
  __syncthreads();
  if (warp == 0) {
    T w = lane < kWarps ? warp_sums[lane] : T(0);
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      const T y = __shfl_up_sync(0xFFFFFFFFu, w, o);
      if (lane >= o) w += y;
    }
    if (lane < kWarps) warp_sums[lane] = w;  // inclusive
  }
  __syncthreads();
  const T excl = x - v + (warp > 0 ? warp_sums[warp - 1] : T(0));
  *total = warp_sums[kWarps - 1];
  __syncthreads();  // warp_sums is reused by the next call
  return excl;
}

// Ordered compaction of [0, n): out(i, rank) for every i with flag(i), in index order; returns how many.
// Each thread takes a contiguous run of indices; flag is evaluated twice and must be deterministic.
// All threads of the block must call it.
template <class Flag, class Out>
__device__ int compact(Shared& sh, int n, Flag flag, Out out) {
  const int per = (n + kThreads - 1) / kThreads;
  const int lo = min(n, static_cast<int>(threadIdx.x) * per), hi = min(n, lo + per);
  int c = 0;
  for (int i = lo; i < hi; ++i) c += flag(i) ? 1 : 0;
  int total;
  int pos = block_scan<int>(c, sh.scan, &total);
  for (int i = lo; i < hi; ++i)
    if (flag(i)) out(i, pos++);
  return total;
}

__device__ bool candidate(const Params& p, int64_t b, int64_t n) {
  if (p.mask != nullptr) {
    if (p.mask_dtype == PVN3D_MASK_BOOL) {
      if (static_cast<const unsigned char*>(p.mask)[b * p.N + n] == 0) return false;
    } else if (static_cast<const float*>(p.mask)[b * p.N + n] == 0.0f) {
      return false;
    }
  }
  bool ok = true;
  for (int64_t k = 0; k < p.K; ++k) ok = ok && finite3(p.votes + ((b * p.K + k) * p.N + n) * 3);
  return ok;
}

// ---- per-task state ----------------------------------------------------------------------------------

// The first step in which row k shifts: the centre row (and every row without the filter) right after
// its count in step 2; the other rows after the filter (step 3) and their count (step 4).
__device__ __forceinline__ int shift_start(const Params& p, int64_t k) {
  return (p.center_filter && k != p.K - 1) ? 5 : 3;
}

// The state of task tau in step s (s >= 2): kind, iterations done, active modes, votes.
__device__ int4 task_state(const Params& p, int s, int64_t tau) {
  const int64_t b = tau / p.K, k = tau % p.K;
  const int s0 = shift_start(p, k);
  if (s < s0 - 1) return make_int4(kIdle, 0, 0, 0);
  const int n = __ldcg((s0 == 5 ? p.used_cnt : p.cand_cnt) + b);
  if (s == s0 - 1) return make_int4(kCount, 0, 0, n);
  if (s == s0) return (n == 0 || p.max_iter == 0) ? make_int4(kDone, 0, 0, n) : make_int4(kShift, 0, n, n);
  const int4 prev = __ldcg(p.state + static_cast<int64_t>((s - 1) & 1) * p.BK + tau);
  if (prev.x == kDone) return prev;
  const int64_t r = static_cast<int64_t>((s - 1) % 3) * p.BK + tau;
  const int it = prev.y + 1;
  const int a = __ldcg(p.res_cnt + r);
  const bool moved = __ldcg(p.res_moved + r) != 0;
  return make_int4((!moved || it >= p.max_iter) ? kDone : kShift, it, a, n);
}

__device__ __forceinline__ long long task_items(const int4& st) {
  if (st.x == kCount) return (st.w + kModes - 1) / kModes;
  if (st.x == kShift) return (st.z + kModes - 1) / kModes;
  return 0;
}

// States of the tasks [t0, t0 + kTaskChunk) in step s into sh.st, their item prefix sums into sh.pre
// (sh.pre[kTaskChunk] = the chunk's items). owner_writes: the owner block of each task also publishes the
// state for step s+1 to read and resets the results buffer that step s+1 writes. Returns whether a task
// of the chunk still needs the grid (a running task with more than kTail active modes).
__device__ __noinline__ bool load_chunk(const Params& p, Shared& sh, int s, int64_t t0, bool owner_writes) {
  long long items = 0;
  int needs = 0;
  if (threadIdx.x < kTaskChunk) {
    int4 st = make_int4(kIdle, 0, 0, 0);
    const int64_t tau = t0 + threadIdx.x;
    if (tau < p.BK) {
      st = task_state(p, s, tau);
      if (owner_writes && tau % gridDim.x == blockIdx.x) {
        if (s >= shift_start(p, tau % p.K)) p.state[static_cast<int64_t>(s & 1) * p.BK + tau] = st;
        const int64_t r = static_cast<int64_t>((s + 1) % 3) * p.BK + tau;
        p.res_cnt[r] = 0;
        p.res_moved[r] = 0;
      }
      items = task_items(st);
      needs = st.x == kShift && st.z > kTail;
    }
    sh.st[threadIdx.x] = st;
  }
  long long total;
  const long long excl = block_scan<long long>(items, sh.scanl, &total);
  if (threadIdx.x < kTaskChunk) sh.pre[threadIdx.x] = excl;
  if (threadIdx.x == 0) sh.pre[kTaskChunk] = total;
  return __syncthreads_or(needs) != 0;
}

// ---- the shared-memory tile ------------------------------------------------------------------------------

// Runs body(tile, len) over the votes of task tau as `kind` (raw: original coordinates; centred: relative
// to c, with the vote's part of the exponent in .w), tile by tile. A task whose votes fit stays resident
// (tag) and is not loaded again for the next item of the same task and kind.
template <class Body>
__device__ void over_votes(const Params& p, float4* tile, TileTag& tag, int64_t tau, int kind, int n,
                           const float4& c, Body body) {
  const float4* V = p.vg + tau * p.N;
  auto fill = [&](int j0, int len) {
    for (int q = threadIdx.x; q < len; q += kThreads) {
      const float4 y = __ldcg(V + j0 + q);
      tile[q] = kind == kTileCentred ? centred(p, y, c, true) : y;
    }
  };
  if (n <= p.tile_cap) {
    if (tag.tau != tau || tag.kind != kind) {
      __syncthreads();  // nobody reads the previous tile any more
      fill(0, n);
      __syncthreads();
      tag.tau = tau;
      tag.kind = kind;
    }
    body(static_cast<const float4*>(tile), n);
  } else {
    for (int j0 = 0; j0 < n; j0 += p.tile_cap) {
      const int len = min(p.tile_cap, n - j0);
      __syncthreads();
      fill(j0, len);
      __syncthreads();
      body(static_cast<const float4*>(tile), len);
    }
    tag.tau = -1;
    tag.kind = kTileNone;
  }
}

// ---- mean-shift sums ---------------------------------------------------------------------------------------

// Sums of w, w*y over the votes of this thread's slice: threads with the same slot (threadIdx.x mod M)
// share one mode; slice = threadIdx.x / M takes every (kThreads / M)-th vote.
template <int LOGM>
__device__ __forceinline__ void shift_votes(const float4* t, int len, const float4& coef, float4& acc) {
  constexpr int kSlices = kThreads >> LOGM;
  float sw = acc.x, sx = acc.y, sy = acc.z, sz = acc.w;
#pragma unroll 4
  for (int j = static_cast<int>(threadIdx.x >> LOGM); j < len; j += kSlices) {
    const float4 y = t[j];
    const float e = __fmaf_rn(y.x, coef.x, __fmaf_rn(y.y, coef.y, __fmaf_rn(y.z, coef.z, __fadd_rn(y.w, coef.w))));
    const float w = ex2_ftz(e);
    sw = __fadd_rn(sw, w);
    sx = __fmaf_rn(w, y.x, sx);
    sy = __fmaf_rn(w, y.y, sy);
    sz = __fmaf_rn(w, y.z, sz);
  }
  acc = make_float4(sw, sx, sy, sz);
}

// Reduces the per-thread sums of each slot over the block, in a fixed order: lanes (butterfly), then
// warps in order. Afterwards sh.red2[0..3][slot] = (sum w, sum w x, sum w y, sum w z) for slot < M.
// All threads must call it (two block barriers).
template <int LOGM>
__device__ void reduce_sums(Shared& sh, float4 v) {
  constexpr int M = 1 << LOGM;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int off = 16; off >= M; off >>= 1) {
    v.x = __fadd_rn(v.x, __shfl_xor_sync(0xFFFFFFFFu, v.x, off));
    v.y = __fadd_rn(v.y, __shfl_xor_sync(0xFFFFFFFFu, v.y, off));
    v.z = __fadd_rn(v.z, __shfl_xor_sync(0xFFFFFFFFu, v.z, off));
    v.w = __fadd_rn(v.w, __shfl_xor_sync(0xFFFFFFFFu, v.w, off));
  }
  if (lane < M) sh.red.f[warp][lane] = v;
  __syncthreads();
  if (threadIdx.x < 4 * M) {
    const int slot = threadIdx.x & (M - 1), comp = threadIdx.x >> LOGM;
    float s = reinterpret_cast<const float*>(&sh.red.f[0][slot])[comp];
    for (int w = 1; w < kWarps; ++w) s = __fadd_rn(s, reinterpret_cast<const float*>(&sh.red.f[w][slot])[comp]);
    sh.red2[comp][slot] = s;
  }
  __syncthreads();
}

// The new mode from the reduced sums of `slot` (unchanged when every weight is 0), and its squared step.
__device__ __forceinline__ float4 new_mode(const Shared& sh, int slot, const float4& m, float* step2) {
  const float sw = sh.red2[0][slot];
  float4 nm = m;
  if (sw > 0.0f) nm = make_float4(sh.red2[1][slot] / sw, sh.red2[2][slot] / sw, sh.red2[3][slot] / sw, 0.0f);
  const float ex = __fsub_rn(nm.x, m.x), ey = __fsub_rn(nm.y, m.y), ez = __fsub_rn(nm.z, m.z);
  *step2 = __fadd_rn(__fadd_rn(__fmul_rn(ex, ex), __fmul_rn(ey, ey)), __fmul_rn(ez, ez));
  return nm;
}

__device__ __forceinline__ float4 chosen_vote(const Params& p, int64_t tau, int* bi) {
  *bi = chosen_index(__ldcg(p.best + tau));
  return __ldcg(p.vg + tau * p.N + *bi);
}

// ---- work items ----------------------------------------------------------------------------------------------

// Count item: the votes [chunk*32, chunk*32+32) of task tau, each against all n votes (exact distance,
// strict <); the (count, -index) maximum goes to best[tau].
__device__ __noinline__ void count_item(const Params& p, Shared& sh, float4* tile, TileTag& tag, int64_t tau, int n, int chunk) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int i = chunk * kModes + lane;
  const bool valid = i < n;
  const float4 xi = valid ? __ldcg(p.vg + tau * p.N + i) : make_float4(0.f, 0.f, 0.f, 0.f);
  int cnt = 0;
  over_votes(p, tile, tag, tau, kTileRaw, n, xi, [&](const float4* t, int len) {
#pragma unroll 4
    for (int j = warp; j < len; j += kWarps) cnt += d2_exact(xi, t[j]) < p.bw2 ? 1 : 0;
  });
  sh.red.i[warp][lane] = cnt;
  __syncthreads();
  if (warp == 0) {
    int total = 0;
    for (int w = 0; w < kWarps; ++w) total += sh.red.i[w][lane];
    unsigned long long key =
        valid ? (static_cast<unsigned long long>(total) << 32) | (0xFFFFFFFFu - static_cast<unsigned>(i)) : 0ull;
    for (int off = 16; off > 0; off >>= 1) {
      const unsigned long long o = __shfl_xor_sync(0xFFFFFFFFu, key, off);
      key = o > key ? o : key;
    }
    if (lane == 0 && key != 0ull) atomicMax(p.best + tau, key);
  }
  __syncthreads();  // red is reused by the next item
}

// Shift item of a grid step: one iteration of the active modes [chunk*32, chunk*32+32) of task tau in step
// s (state st). Modes that stay active are appended to the next step's list.
__device__ __noinline__ void shift_item(const Params& p, Shared& sh, float4* tile, TileTag& tag, int s, int64_t tau,
                           const int4& st, int chunk) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int it = st.y, a = st.z, n = st.w;
  const int64_t N = p.N, BK = p.BK;
  int bi;
  const float4 c = chosen_vote(p, tau, &bi);
  const int pos = chunk * kModes + lane;
  const bool valid = pos < a;
  int i = 0;
  float4 m = make_float4(0.f, 0.f, 0.f, 0.f);
  if (valid) {
    i = it == 0 ? pos : __ldcg(p.lists + (static_cast<int64_t>(s & 1) * BK + tau) * N + pos);
    m = it == 0 ? centred(p, __ldcg(p.vg + tau * N + i), c, false) : __ldcg(p.modes + tau * N + i);
  }
  const float4 coef = mode_coef(p, m);
  float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
  over_votes(p, tile, tag, tau, kTileCentred, n, c,
             [&](const float4* t, int len) { shift_votes<5>(t, len, coef, acc); });
  reduce_sums<5>(sh, acc);
  if (warp == 0) {
    bool moved = false, keep = false;
    if (valid) {
      float step2;
      const float4 nm = new_mode(sh, lane, m, &step2);
      moved = step2 > p.tol2;
      keep = step2 > p.theta2 || i == bi;
      p.modes[tau * N + i] = nm;
    }
    const unsigned kb = __ballot_sync(0xFFFFFFFFu, keep);
    const int64_t r = static_cast<int64_t>(s % 3) * BK + tau;
    int base = 0;
    if (lane == 0 && kb != 0u) base = atomicAdd(p.res_cnt + r, __popc(kb));
    base = __shfl_sync(0xFFFFFFFFu, base, 0);
    if (keep) p.lists[(static_cast<int64_t>((s + 1) & 1) * BK + tau) * N + base + __popc(kb & ((1u << lane) - 1u))] = i;
    if (__any_sync(0xFFFFFFFFu, moved) && lane == 0) atomicOr(p.res_moved + r, 1);
  }
  // red/red2 are reused by the next item only after its vote loop and first barrier, which warp 0
  // reaches after this.
}

// Filter job (step 3, center_filter = 1) q = b * J + j, J = max(K-1, 1): the candidates of item b whose
// centre vote lies strictly within bandwidth of the chosen centre vote (all candidates if none does), in
// index order; row j's votes of them are gathered (j < K-1) and job j = 0 records how many.
__device__ __noinline__ void filter_job(const Params& p, Shared& sh, int64_t q) {
  const int64_t J = p.K > 1 ? p.K - 1 : 1, b = q / J, j = q % J, N = p.N, K = p.K;
  const int nc = __ldcg(p.cand_cnt + b);
  int used = 0;
  if (nc > 0) {
    const int64_t tc = b * K + K - 1;
    const float4* Vc = p.vg + tc * N;
    int bi;
    const float4 c = chosen_vote(p, tc, &bi);
    const int* ci = p.cand_idx + b * N;
    float4* dst = p.vg + (b * K + j) * N;
    const float* src = p.votes + (b * K + j) * N * 3;
    const bool gather = j < K - 1;
    auto out = [&](int i, int pos) {
      if (gather) {
        const int64_t pt = __ldcg(ci + i);
        dst[pos] = make_float4(src[pt * 3], src[pt * 3 + 1], src[pt * 3 + 2], 0.0f);
      }
    };
    used = compact(sh, nc, [&](int i) { return d2_exact(__ldcg(Vc + i), c) < p.bw2; }, out);
    if (used == 0) used = compact(sh, nc, [](int) { return true; }, out);  // cannot happen: c itself is in
  }
  if (j == 0 && threadIdx.x == 0) p.used_cnt[b] = used;
}

// ---- the tail of a task inside one block -----------------------------------------------------------------

// One iteration of the tail's a <= 32 active modes (sh.tm, sh.ti), M = 2^LOGM >= a slots. Updates sh.tm,
// sh.ti, sh.tail_a, sh.tail_moved.
template <int LOGM>
__device__ __noinline__ void tail_iteration(const Params& p, Shared& sh, float4* tile, TileTag& tag, int64_t tau, int n, int a,
                               int bi, const float4& c) {
  const int slot = threadIdx.x & ((1 << LOGM) - 1);
  const float4 m = slot < a ? sh.tm[slot] : make_float4(0.f, 0.f, 0.f, 0.f);
  const float4 coef = mode_coef(p, m);
  float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
  over_votes(p, tile, tag, tau, kTileCentred, n, c,
             [&](const float4* t, int len) { shift_votes<LOGM>(t, len, coef, acc); });
  reduce_sums<LOGM>(sh, acc);
  if (threadIdx.x < 32) {
    const int lane = threadIdx.x;
    bool moved = false, keep = false;
    float4 nm = m;
    int i = 0;
    if (lane < a) {  // lane < a <= M: lane == slot
      i = sh.ti[lane];
      float step2;
      nm = new_mode(sh, lane, m, &step2);
      moved = step2 > p.tol2;
      keep = step2 > p.theta2 || i == bi;
      p.modes[tau * p.N + i] = nm;
    }
    const unsigned kb = __ballot_sync(0xFFFFFFFFu, keep);
    const bool any = __any_sync(0xFFFFFFFFu, moved);
    __syncwarp();
    if (keep) {
      const int pos = __popc(kb & ((1u << lane) - 1u));
      sh.tm[pos] = nm;
      sh.ti[pos] = i;
    }
    if (lane == 0) {
      sh.tail_a = __popc(kb);
      sh.tail_moved = any ? 1 : 0;
    }
  }
  __syncthreads();
}

// Finishes task tau (state st: running, at most kTail active modes, their list in step s's buffer) inside
// this block; returns the iterations done in all and leaves the chosen mode in *m_best.
__device__ __noinline__ int tail(const Params& p, Shared& sh, float4* tile, TileTag& tag, int s, int64_t tau, const int4& st,
                    float4* m_best) {
  int it = st.y, a = st.z;
  const int n = st.w;
  int bi;
  const float4 c = chosen_vote(p, tau, &bi);
  if (threadIdx.x < a) {
    const int i = it == 0 ? static_cast<int>(threadIdx.x)
                          : __ldcg(p.lists + (static_cast<int64_t>(s & 1) * p.BK + tau) * p.N + threadIdx.x);
    sh.ti[threadIdx.x] = i;
    sh.tm[threadIdx.x] = it == 0 ? centred(p, __ldcg(p.vg + tau * p.N + i), c, false) : __ldcg(p.modes + tau * p.N + i);
  }
  __syncthreads();
  const int it0 = it;
  for (;;) {
    const int logm = a <= 1 ? 0 : 32 - __clz(a - 1);  // a in [1, 32] (the chosen mode is always active)
    switch (logm) {
      case 0: tail_iteration<0>(p, sh, tile, tag, tau, n, a, bi, c); break;
      case 1: tail_iteration<1>(p, sh, tile, tag, tau, n, a, bi, c); break;
      case 2: tail_iteration<2>(p, sh, tile, tag, tau, n, a, bi, c); break;
      case 3: tail_iteration<3>(p, sh, tile, tag, tau, n, a, bi, c); break;
      case 4: tail_iteration<4>(p, sh, tile, tag, tau, n, a, bi, c); break;
      default: tail_iteration<5>(p, sh, tile, tag, tau, n, a, bi, c); break;
    }
    ++it;
    a = sh.tail_a;
    const bool moved = sh.tail_moved != 0;
    __syncthreads();  // tail_a / tail_moved / tm are written again by the next iteration
    if (!moved || it >= p.max_iter) break;
  }
  // The chosen mode is always kept: find it.
  if (threadIdx.x < 32) {
    const bool hit = static_cast<int>(threadIdx.x) < a && sh.ti[threadIdx.x] == bi;
    const unsigned hb = __ballot_sync(0xFFFFFFFFu, hit);
    if (threadIdx.x == 0) sh.tm[kModes - 1] = hb ? sh.tm[__ffs(hb) - 1] : make_float4(0.f, 0.f, 0.f, 0.f);
  }
  __syncthreads();
  *m_best = sh.tm[kModes - 1];
  __syncthreads();
  if (threadIdx.x == 0) atomicAdd(p.dbg + 3, it - it0);
  return it;
}

// kps of task tau: the chosen vote plus its mode (the vote itself after 0 iterations), NaN without
// candidates; inliers with the task of row 0.
__device__ __noinline__ void write_outputs(const Params& p, int64_t tau, int it, bool have_mode, float4 m) {
  if (threadIdx.x != 0) return;
  const int64_t b = tau / p.K;
  const int nc = __ldcg(p.cand_cnt + b);
  float* out = p.kps + tau * 3;
  if (nc == 0) {
    out[0] = out[1] = out[2] = __int_as_float(0x7FC00000);
  } else {
    int bi;
    const float4 c = chosen_vote(p, tau, &bi);
    if (!have_mode) m = it > 0 ? __ldcg(p.modes + tau * p.N + bi) : make_float4(0.f, 0.f, 0.f, 0.f);
    out[0] = __fadd_rn(c.x, m.x);
    out[1] = __fadd_rn(c.y, m.y);
    out[2] = __fadd_rn(c.z, m.z);
  }
  if (tau % p.K == 0) p.inliers[b] = nc == 0 ? 0 : (p.center_filter ? __ldcg(p.used_cnt + b) : nc);
  p.dbg[kDebugHeader + tau] = it;
}

// ---- the kernel ------------------------------------------------------------------------------------------------

__global__ void __launch_bounds__(kThreads, kMaxBlocksPerSM) vote_aggregate_kernel(const __grid_constant__ Params p) {
  __shared__ Shared sh;
  extern __shared__ float4 tile[];
  cg::grid_group grid = cg::this_grid();
  const int64_t gtid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t gstride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t B = p.B, K = p.K, N = p.N, BK = p.BK, G = gridDim.x;

  // Step 0: candidate flags; results reset.
  for (int64_t e = gtid; e < B * N; e += gstride) p.flags[e] = candidate(p, e / N, e % N) ? 1 : 0;
  for (int64_t t = gtid; t < BK; t += gstride) {
    p.best[t] = 0ull;
    for (int r = 0; r < 3; ++r) p.res_cnt[r * BK + t] = p.res_moved[r * BK + t] = 0;
  }
  if (gtid < kDebugHeader) p.dbg[gtid] = 0;
  grid.sync();

  // Step 1: per (item, row) job, ordered compaction of the candidates and gather of the row.
  {
    const int64_t rows = p.center_filter ? 1 : K;
    for (int64_t job = blockIdx.x; job < B * rows; job += G) {
      const int64_t b = job / rows, k = p.center_filter ? K - 1 : job % rows;
      const unsigned char* f = p.flags + b * N;
      float4* dst = p.vg + (b * K + k) * N;
      const float* src = p.votes + (b * K + k) * N * 3;
      int* ci = p.cand_idx + b * N;
      const bool idx = k == K - 1;
      const int cnt = compact(sh, static_cast<int>(N), [&](int i) { return __ldcg(f + i) != 0; },
                              [&](int i, int pos) {
                                dst[pos] = make_float4(src[int64_t{i} * 3], src[int64_t{i} * 3 + 1],
                                                       src[int64_t{i} * 3 + 2], 0.0f);
                                if (idx) ci[pos] = i;
                              });
      if (idx && threadIdx.x == 0) p.cand_cnt[b] = cnt;
    }
  }
  grid.sync();

  // Steps 2...: counts, filter jobs, grid-wide mean-shift iterations.
  TileTag tag{-1, kTileNone};
  const int s_min = p.center_filter ? (K > 1 ? 5 : 4) : 3;  // every task is past its count by then
  const bool one_chunk = BK <= kTaskChunk;
  int s = 2;
  for (;; ++s) {
    const long long jobs = (s == 3 && p.center_filter) ? B * (K > 1 ? K - 1 : 1) : 0;
    long long total = jobs;
    bool need = s < s_min;
    for (int64_t t0 = 0; t0 < BK; t0 += kTaskChunk) {
      need = load_chunk(p, sh, s, t0, true) || need;
      total += sh.pre[kTaskChunk];
      __syncthreads();  // sh.st / sh.pre are overwritten by the next chunk
    }
    if (!need) break;  // the same decision in every block
    // This block's share of the step's items: [lo, hi), jobs first, then the tasks' items in task order.
    const long long per = total / G, extra = total % G, g = blockIdx.x;
    const long long lo = per * g + min(g, extra), hi = lo + per + (g < extra ? 1 : 0);
    long long idx = lo;
    for (; idx < hi && idx < jobs; ++idx) filter_job(p, sh, idx);
    long long base = jobs;
    for (int64_t t0 = 0; t0 < BK && idx < hi; t0 += kTaskChunk) {
      if (!one_chunk) load_chunk(p, sh, s, t0, false);  // one_chunk: sh still holds the chunk
      const long long in_chunk = sh.pre[kTaskChunk];
      int q = 0;
      while (idx < hi && idx < base + in_chunk) {
        while (base + sh.pre[q + 1] <= idx) ++q;
        const int4 st = sh.st[q];
        const int64_t tau = t0 + q;
        const int c = static_cast<int>(idx - base - sh.pre[q]);
        if (st.x == kCount)
          count_item(p, sh, tile, tag, tau, st.w, c);
        else
          shift_item(p, sh, tile, tag, s, tau, st, c);
        ++idx;
      }
      base += in_chunk;
      __syncthreads();  // sh.st / sh.pre are overwritten by the next chunk
    }
    grid.sync();
  }

  // Tails and outputs, by the owner block of each task.
  for (int64_t tau = blockIdx.x; tau < BK; tau += G) {
    const int4 st = task_state(p, s, tau);  // uniform over the block
    if (st.x == kShift) {
      float4 m;
      const int it = tail(p, sh, tile, tag, s, tau, st, &m);
      write_outputs(p, tau, it, true, m);
    } else {
      write_outputs(p, tau, st.y, false, make_float4(0.f, 0.f, 0.f, 0.f));
    }
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    p.dbg[0] = s;  // barriers: steps 0 .. s-1 each ended with one
    p.dbg[1] = p.tile_cap;
    p.dbg[2] = static_cast<int>(G);
  }
}

// ---- host side -------------------------------------------------------------------------------------------------

constexpr size_t kAlign = 256;
size_t align_up(size_t x) { return (x + kAlign - 1) / kAlign * kAlign; }

struct Layout {
  size_t dbg, flags, cand_idx, cand_cnt, used_cnt, vg, modes, lists, best, state, res_cnt, res_moved, total;
};
bool layout(int64_t B, int64_t K, int64_t N, Layout* L) {
  if (B < 1 || K < 1 || N < 0 || N > INT32_MAX) return false;
  if (static_cast<double>(B) * static_cast<double>(K) > static_cast<double>(INT32_MAX)) return false;
  // Every product below must stay far from overflow: B*K*N*(16+16+8) bytes and the rest.
  const double approx = static_cast<double>(B) * static_cast<double>(K) * static_cast<double>(N > 0 ? N : 1) * 48.0;
  if (approx > 4.0e18) return false;
  const size_t b = B, bk = B * K, n = N;
  size_t o = 0;
  L->dbg = o;       o += align_up((kDebugHeader + bk) * sizeof(int));
  L->flags = o;     o += align_up(b * n);
  L->cand_idx = o;  o += align_up(b * n * sizeof(int));
  L->cand_cnt = o;  o += align_up(b * sizeof(int));
  L->used_cnt = o;  o += align_up(b * sizeof(int));
  L->vg = o;        o += align_up(bk * n * sizeof(float4));
  L->modes = o;     o += align_up(bk * n * sizeof(float4));
  L->lists = o;     o += align_up(2 * bk * n * sizeof(int));
  L->best = o;      o += align_up(bk * sizeof(unsigned long long));
  L->state = o;     o += align_up(2 * bk * sizeof(int4));
  L->res_cnt = o;   o += align_up(3 * bk * sizeof(int));
  L->res_moved = o; o += align_up(3 * bk * sizeof(int));
  L->total = o;
  return true;
}

// Per device: SMs, cooperative support, shared memory, and co-resident blocks per tile size (cached).
struct DeviceInfo {
  int sms = 0, coop = 0;
  size_t smem_sm = 0, smem_block = 0, reserved = 0, static_smem = 0;
  std::map<size_t, int> blocks_per_sm;  // by dynamic shared memory bytes
};

pvn3d_status device_info(const char* op, int* dev_out, DeviceInfo** out) {
  static std::mutex mu;
  static std::map<int, DeviceInfo> cache;
  int dev = 0;
  PVN3D_TRY(pvn3d::cuda::cuda_status(cudaGetDevice(&dev), op, "cudaGetDevice"));
  *dev_out = dev;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(dev);
  if (it != cache.end()) {
    *out = &it->second;
    return PVN3D_OK;
  }
  DeviceInfo d;
  int v = 0;
  PVN3D_TRY(pvn3d::cuda::cuda_status(cudaDeviceGetAttribute(&d.sms, cudaDevAttrMultiProcessorCount, dev), op,
                                     "cudaDeviceGetAttribute(multiProcessorCount)"));
  PVN3D_TRY(pvn3d::cuda::cuda_status(cudaDeviceGetAttribute(&d.coop, cudaDevAttrCooperativeLaunch, dev), op,
                                     "cudaDeviceGetAttribute(cooperativeLaunch)"));
  PVN3D_TRY(pvn3d::cuda::cuda_status(cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev), op,
                                     "cudaDeviceGetAttribute(maxSharedMemoryPerMultiprocessor)"));
  d.smem_sm = static_cast<size_t>(v);
  PVN3D_TRY(pvn3d::cuda::cuda_status(cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev), op,
                                     "cudaDeviceGetAttribute(maxSharedMemoryPerBlockOptin)"));
  d.smem_block = static_cast<size_t>(v);
  PVN3D_TRY(pvn3d::cuda::cuda_status(cudaDeviceGetAttribute(&v, cudaDevAttrReservedSharedMemoryPerBlock, dev), op,
                                     "cudaDeviceGetAttribute(reservedSharedMemoryPerBlock)"));
  d.reserved = static_cast<size_t>(v);
  cudaFuncAttributes fa;
  PVN3D_TRY(pvn3d::cuda::cuda_status(cudaFuncGetAttributes(&fa, vote_aggregate_kernel), op, "cudaFuncGetAttributes"));
  d.static_smem = fa.sharedSizeBytes;
  if (d.smem_block > d.static_smem) {
    PVN3D_TRY(pvn3d::cuda::cuda_status(
        cudaFuncSetAttribute(vote_aggregate_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(d.smem_block - d.static_smem)),
        op, "cudaFuncSetAttribute(maxDynamicSharedMemorySize)"));
  }
  auto res = cache.emplace(dev, std::move(d));
  *out = &res.first->second;
  return PVN3D_OK;
}

// Votes of the shared tile: a task's n votes when they fit with two blocks per SM (or, failing that, with
// one), else the two-block size rounded down to a multiple of kThreads (the votes are then streamed).
int tile_votes(const DeviceInfo& d, int64_t N) {
  auto fit = [&](size_t per_block) -> int64_t {
    const size_t used = d.static_smem + d.reserved;
    return per_block > used ? static_cast<int64_t>((per_block - used) / sizeof(float4)) : 0;
  };
  const int64_t two = std::min<int64_t>(fit(d.smem_sm / 2), fit(d.smem_block + d.reserved));
  const int64_t one = std::min<int64_t>(fit(d.smem_sm), fit(d.smem_block + d.reserved));
  const int64_t n = std::max<int64_t>(N, 1);
  if (n <= two) return static_cast<int>(n);
  if (n <= one) return static_cast<int>(n);
  const int64_t cap = two / kThreads * kThreads;
  return static_cast<int>(std::max<int64_t>(cap, kThreads));
}

pvn3d_status blocks_per_sm(const char* op, DeviceInfo* d, size_t dyn, int* out) {
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  auto it = d->blocks_per_sm.find(dyn);
  if (it != d->blocks_per_sm.end()) {
    *out = it->second;
    return PVN3D_OK;
  }
  int b = 0;
  PVN3D_TRY(pvn3d::cuda::cuda_status(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, vote_aggregate_kernel, kThreads, dyn),
                                     op, "cudaOccupancyMaxActiveBlocksPerMultiprocessor"));
  if (d->blocks_per_sm.size() < 256) d->blocks_per_sm.emplace(dyn, b);
  *out = b;
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
  int dev = 0;
  DeviceInfo* d = nullptr;
  PVN3D_TRY(device_info(op, &dev, &d));
  if (!d->coop) return fail(PVN3D_ERR_CUDA, "%s: the device does not support cooperative launches", op);
  const int tile = tile_votes(*d, N);
  const size_t dyn = static_cast<size_t>(tile) * sizeof(float4);
  int bps = 0;
  PVN3D_TRY(blocks_per_sm(op, d, dyn, &bps));
  if (bps < 1) return fail(PVN3D_ERR_CUDA, "%s: the kernel cannot be resident on this device", op);
  const Consts cs = make_consts(bandwidth);
  Params p;
  p.votes = votes;
  p.mask = mask;
  p.mask_dtype = mask_dtype;
  p.center_filter = center_filter;
  p.max_iter = static_cast<int>(std::min<int64_t>(max_iter, INT_MAX));
  p.tile_cap = tile;
  p.B = B; p.K = K; p.N = N; p.BK = B * K;
  p.bw2 = cs.bw2;
  p.c2 = cs.neg_half_inv * 1.44269504088896341f;
  p.nc2x2 = -2.0f * p.c2;
  p.tol2 = cs.tol2;
  p.theta2 = cs.tol2 / kFreezeDiv;
  p.kps = kps;
  p.inliers = inliers;
  char* ws = static_cast<char*>(workspace);
  p.dbg = reinterpret_cast<int*>(ws + L.dbg);
  p.flags = reinterpret_cast<unsigned char*>(ws + L.flags);
  p.cand_idx = reinterpret_cast<int*>(ws + L.cand_idx);
  p.cand_cnt = reinterpret_cast<int*>(ws + L.cand_cnt);
  p.used_cnt = reinterpret_cast<int*>(ws + L.used_cnt);
  p.vg = reinterpret_cast<float4*>(ws + L.vg);
  p.modes = reinterpret_cast<float4*>(ws + L.modes);
  p.lists = reinterpret_cast<int*>(ws + L.lists);
  p.best = reinterpret_cast<unsigned long long*>(ws + L.best);
  p.state = reinterpret_cast<int4*>(ws + L.state);
  p.res_cnt = reinterpret_cast<int*>(ws + L.res_cnt);
  p.res_moved = reinterpret_cast<int*>(ws + L.res_moved);
  // As many blocks as the largest step can use, at most kMaxBlocksPerSM per SM (cheaper barriers).
  const int64_t max_blocks = static_cast<int64_t>(d->sms) * std::min(bps, kMaxBlocksPerSM);
  const int64_t useful = std::max<int64_t>(B * K, B * K * ((N + kModes - 1) / kModes));
  const unsigned grid = static_cast<unsigned>(std::max<int64_t>(1, std::min(max_blocks, useful)));
  void* args[] = {&p};
  return pvn3d::cuda::cuda_status(
      cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(vote_aggregate_kernel), dim3(grid), dim3(kThreads), args,
                                  dyn, stream),
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
  return pvn3d::guarded("PVN3D_VoteAggregate", [&]() -> pvn3d_status {
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
  });
}
