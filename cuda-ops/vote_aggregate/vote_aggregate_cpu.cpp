// PVN3D_VoteAggregate on the CPU: mean shift per (batch item, keypoint), parallel over modes.
#include "vote_aggregate.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include "../common/checks.h"
#include "../common/cpu_clones.h"
#include "../common/float_bits.h"
#include "../common/threads.h"
#include "vote_aggregate_internal.h"

namespace pvn3d {
namespace vote {

pvn3d_status check_args(const char* op, const float* votes, const void* mask, int mask_dtype, int64_t B, int64_t K,
                        int64_t N, float bandwidth, int64_t max_iter, int center_filter, const void* kps,
                        const void* inliers) {
  PVN3D_TRY(check_at_least(op, "B", B, 1));
  PVN3D_TRY(check_at_least(op, "K", K, 1));
  PVN3D_TRY(check_at_least(op, "N", N, 0));
  PVN3D_TRY(check_at_most(op, "N", N, "2^31-1", INT32_MAX));
  int64_t numel = 0;
  PVN3D_TRY(checked_numel(op, "votes", {B, K, N, 3}, &numel));
  if (!(std::isfinite(bandwidth) && bandwidth > 0.0f))
    return fail(PVN3D_ERR_INVALID_ARGUMENT, "%s: bandwidth must be finite and > 0, got %g", op, (double)bandwidth);
  // a subnormal square (bandwidth below about 1.1e-19): -0.5/bw^2, or the CUDA kernel's constants derived from it,
  // overflow, and a vote's weight of itself is 0 * inf = NaN
  if (!(bandwidth * bandwidth >= std::numeric_limits<float>::min()) || !std::isfinite(bandwidth * bandwidth))
    return fail(PVN3D_ERR_INVALID_ARGUMENT, "%s: bandwidth %g squared leaves the float32 range", op, (double)bandwidth);
  PVN3D_TRY(check_at_least(op, "max_iter", max_iter, 0));
  if (center_filter != 0 && center_filter != 1)
    return fail(PVN3D_ERR_INVALID_ARGUMENT, "%s: center_filter must be 0 or 1, got %d", op, center_filter);
  if (mask_dtype != PVN3D_MASK_FLOAT32 && mask_dtype != PVN3D_MASK_BOOL)
    return fail(PVN3D_ERR_INVALID_ARGUMENT, "%s: mask_dtype must be PVN3D_MASK_FLOAT32 (0) or PVN3D_MASK_BOOL (1), got %d",
                op, mask_dtype);
  (void)mask;  // NULL = every point masked
  if (N > 0) PVN3D_TRY(check_pointer(op, "votes", votes));
  PVN3D_TRY(check_pointer(op, "kps", kps));
  PVN3D_TRY(check_pointer(op, "inliers", inliers));
  return PVN3D_OK;
}

namespace {

// exp(x) for x in [kMinExponent, 0], branch-free (vectorisable): Cody-Waite reduction to
// r in [-ln2/2, ln2/2] and a degree-7 Taylor polynomial (relative error ~1e-7). Below
// kMinExponent the weight is 0 by definition; NaN stays NaN (as expf's), computed on a clamped
// value so that the conversion to int below never sees it (undefined behaviour, UBSan: a NaN
// vote distance next to an overflowing one).
inline float weight_exp(float x) {
  const float xc = !(x >= kMinExponent) ? kMinExponent : x;
  const float t = xc * 1.44269504088896341f + 12582912.0f;  // round-to-nearest via the 1.5*2^23 trick
  const float nf = t - 12582912.0f;
  const float r = (xc - nf * 0.693145751953125f) - nf * 1.428606765330187e-06f;
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const int32_t n = static_cast<int32_t>(nf);
  const int32_t bits = (n + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  const float e = p * scale;
  return x != x ? x : (x < kMinExponent || e < std::numeric_limits<float>::min()) ? 0.0f : e;
}

inline float d2_exact(float ax, float ay, float az, float bx, float by, float bz) {
  // The spec's distance: left to right, no contraction (the library is built with -ffp-contract=off).
  const float dx = ax - bx, dy = ay - by, dz = az - bz;
  return dx * dx + dy * dy + dz * dz;
}

struct Task {
  int64_t b = 0, k = 0;
  const std::vector<int32_t>* pts = nullptr;
  std::vector<float> x, y, z;     // the votes, gathered (SoA)
  std::vector<float> mx, my, mz;  // the modes
  std::vector<int32_t> count;
  std::vector<int32_t> live;     // the modes that may still move (see cluster_tasks)
  std::vector<uint8_t> settled;  // 1: the mode's last shift left it where it was, bit for bit
  int64_t best = 0;
  std::atomic<int> moved{0};
  int64_t n() const { return static_cast<int64_t>(pts->size()); }
};

// Shift of one mode: sum_j w_j, sum_j w_j (x_j - m). 8 lanes, float partials over chunks of 256 votes,
// accumulated in double. The mean shift's time is almost all here (n modes x n votes x iterations): cloned
// for AVX2 and AVX-512 (cpu_clones.h), and its file is built with -fno-trapping-math (CMakeLists.txt),
// without which GCC keeps weight_exp's selects as branches and leaves this loop scalar below AVX-512
// (3.5x slower with SSE2; the same bits either way).
PVN3D_CPU_CLONES void shift_sums(const Task& tk, int64_t n, float mx, float my, float mz, float c, double& sw,
                                 double& sx, double& sy, double& sz) {
  constexpr int L = 8;
  constexpr int64_t kChunk = 256;
  sw = sx = sy = sz = 0.0;
  const float* X = tk.x.data();
  const float* Y = tk.y.data();
  const float* Z = tk.z.data();
  for (int64_t c0 = 0; c0 < n; c0 += kChunk) {
    const int64_t c1 = std::min(n, c0 + kChunk);
    float aw[L] = {0}, ax[L] = {0}, ay[L] = {0}, az[L] = {0};
    int64_t j = c0;
    for (; j + L <= c1; j += L) {
      for (int l = 0; l < L; ++l) {
        const float dx = X[j + l] - mx, dy = Y[j + l] - my, dz = Z[j + l] - mz;
        const float d2 = dx * dx + dy * dy + dz * dz;
        const float w = weight_exp(d2 * c);
        aw[l] += w;
        ax[l] += w * dx;
        ay[l] += w * dy;
        az[l] += w * dz;
      }
    }
    for (int l = 0; j < c1; ++j, ++l) {
      const float dx = X[j] - mx, dy = Y[j] - my, dz = Z[j] - mz;
      const float d2 = dx * dx + dy * dy + dz * dz;
      const float w = weight_exp(d2 * c);
      aw[l] += w;
      ax[l] += w * dx;
      ay[l] += w * dy;
      az[l] += w * dz;
    }
    for (int l = 0; l < L; ++l) {
      sw += aw[l];
      sx += ax[l];
      sy += ay[l];
      sz += az[l];
    }
  }
}

// Votes strictly within bandwidth (d2 < bw2) of (xi, yi, zi) among the n votes X, Y, Z.
PVN3D_CPU_CLONES int32_t count_within(const float* X, const float* Y, const float* Z, int64_t n, float xi, float yi,
                                      float zi, float bw2) {
  int32_t cnt = 0;
  for (int64_t j = 0; j < n; ++j) cnt += d2_exact(xi, yi, zi, X[j], Y[j], Z[j]) < bw2;
  return cnt;
}

// Calls f(task_index, i0, i1) for the part of the flattened (task, mode) range [begin, end).
template <class F>
void for_items(const std::vector<Task*>& tasks, const std::vector<int64_t>& offset, int64_t begin, int64_t end, F&& f) {
  size_t t = std::upper_bound(offset.begin(), offset.end(), begin) - offset.begin() - 1;
  for (; t < tasks.size() && offset[t] < end; ++t) {
    const int64_t i0 = std::max(begin, offset[t]) - offset[t];
    const int64_t i1 = std::min(end, offset[t + 1]) - offset[t];
    if (i1 > i0) f(t, i0, i1);
  }
}

// offset[t] = the items of tasks[0..t) (items(task): its votes, or its live modes).
template <class Items>
void build_offsets(const std::vector<Task*>& tasks, std::vector<int64_t>& offset, Items items) {
  offset.assign(tasks.size() + 1, 0);
  for (size_t t = 0; t < tasks.size(); ++t) offset[t + 1] = offset[t] + items(*tasks[t]);
}

// The same float, bit for bit (== takes -0.0 for 0.0, and the answer is a mode's bits).
inline bool same_bits(float a, float b) { return float_bits(a) == float_bits(b); }

// PVN3D_MEAN_SHIFT=every-mode computes every mode in every iteration, settled or not (see cluster_tasks):
// the same bits, more slowly; for the test that says so and for A/B timing. Read at each call.
bool every_mode_requested() {
  const char* e = std::getenv("PVN3D_MEAN_SHIFT");
  return e != nullptr && std::strcmp(e, "every-mode") == 0;
}

// Clusters every task (all non-empty) together: count, argmax, mean shift. Afterwards tk->best is the
// chosen vote and tk->m*[best] the answer.
void cluster_tasks(std::vector<Task*>& all, const float* votes, int64_t K, int64_t N, float bandwidth,
                   int64_t max_iter) {
  const Consts cs = make_consts(bandwidth);
  // Gather.
  for (Task* tk : all) {
    const int64_t n = tk->n();
    const float* v = votes + (tk->b * K + tk->k) * N * 3;
    tk->x.resize(n); tk->y.resize(n); tk->z.resize(n);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t p = (*tk->pts)[i];
      tk->x[i] = v[p * 3 + 0];
      tk->y[i] = v[p * 3 + 1];
      tk->z[i] = v[p * 3 + 2];
    }
    tk->mx = tk->x; tk->my = tk->y; tk->mz = tk->z;
    tk->count.assign(n, 0);
    tk->live.resize(n);
    for (int64_t i = 0; i < n; ++i) tk->live[i] = static_cast<int32_t>(i);
    tk->settled.assign(n, 0);
    tk->moved.store(0);
  }
  std::vector<int64_t> offset;
  build_offsets(all, offset, [](const Task& tk) { return tk.n(); });
  int64_t avg_n = all.empty() ? 1 : std::max<int64_t>(1, offset.back() / static_cast<int64_t>(all.size()));
  const int64_t grain = grain_for(8 * avg_n);  // a weight is a polynomial exp: about 8 simple operations
  // Count: original votes strictly within bandwidth of each original vote.
  parallel_for(offset.back(), grain, [&](int64_t begin, int64_t end) {
    for_items(all, offset, begin, end, [&](size_t t, int64_t i0, int64_t i1) {
      Task& tk = *all[t];
      const int64_t n = tk.n();
      for (int64_t i = i0; i < i1; ++i)
        tk.count[i] = count_within(tk.x.data(), tk.y.data(), tk.z.data(), n, tk.x[i], tk.y[i], tk.z[i], cs.bw2);
    });
  });
  for (Task* tk : all) {
    int64_t best = 0;
    for (int64_t i = 1; i < tk->n(); ++i)
      if (tk->count[i] > tk->count[best]) best = i;
    tk->best = best;
  }
  // Mean shift, all modes of all tasks in lockstep; a task stops after an iteration where none of its
  // modes moved more than bandwidth*1e-3.
  //
  // A mode's shift is a function of its position alone (the votes never change), so a mode whose shift
  // left it where it was, bit for bit, would repeat exactly that in every later iteration: it has settled
  // and is skipped from then on, with the same result as computing it. Most modes settle within a few
  // dozen iterations while a few slow ones (votes far from any cluster) keep the task going, often to
  // max_iter: then almost all of the n x n work per iteration goes away.
  const bool skip_settled = !every_mode_requested();
  std::vector<Task*> active = all;
  for (int64_t it = 0; it < max_iter && !active.empty(); ++it) {
    build_offsets(active, offset, [](const Task& tk) { return static_cast<int64_t>(tk.live.size()); });
    for (Task* tk : active) tk->moved.store(0, std::memory_order_relaxed);
    parallel_for(offset.back(), grain, [&](int64_t begin, int64_t end) {
      for_items(active, offset, begin, end, [&](size_t t, int64_t l0, int64_t l1) {
        Task& tk = *active[t];
        const int64_t n = tk.n();
        int moved = 0;
        for (int64_t l = l0; l < l1; ++l) {
          const int32_t i = tk.live[l];
          const float mx = tk.mx[i], my = tk.my[i], mz = tk.mz[i];
          double sw, sx, sy, sz;
          shift_sums(tk, n, mx, my, mz, cs.neg_half_inv, sw, sx, sy, sz);
          if (!(sw > 0.0)) {  // no vote within reach: the mode stays, now and in every later iteration
            tk.settled[i] = 1;
            continue;
          }
          const float nx = mx + static_cast<float>(sx / sw);
          const float ny = my + static_cast<float>(sy / sw);
          const float nz = mz + static_cast<float>(sz / sw);
          const float ex = nx - mx, ey = ny - my, ez = nz - mz;
          if (ex * ex + ey * ey + ez * ez > cs.tol2) moved = 1;
          if (same_bits(nx, mx) && same_bits(ny, my) && same_bits(nz, mz)) tk.settled[i] = 1;
          tk.mx[i] = nx; tk.my[i] = ny; tk.mz[i] = nz;
        }
        if (moved) tk.moved.store(1, std::memory_order_relaxed);
      });
    });
    std::vector<Task*> next;
    for (Task* tk : active) {
      if (!tk->moved.load(std::memory_order_relaxed)) continue;
      if (skip_settled)
        tk->live.erase(std::remove_if(tk->live.begin(), tk->live.end(), [tk](int32_t i) { return tk->settled[i] != 0; }),
                     tk->live.end());
      next.push_back(tk);
    }
    active.swap(next);
  }
}

bool is_masked(const void* mask, int mask_dtype, int64_t flat) {
  if (mask == nullptr) return true;
  if (mask_dtype == PVN3D_MASK_BOOL) return static_cast<const uint8_t*>(mask)[flat] != 0;
  return static_cast<const float*>(mask)[flat] != 0.0f;
}

}  // namespace

void aggregate_cpu(const float* votes, const void* mask, int mask_dtype, int64_t B, int64_t K, int64_t N,
                   float bandwidth, int64_t max_iter, int center_filter, float* kps, int64_t* inliers) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Consts cs = make_consts(bandwidth);
  // 1. Candidates: masked points whose K votes are all finite.
  std::vector<std::vector<int32_t>> cand(B), used(B);
  // Room for every point now, outside the workers: an allocation failure must throw here (the entry
  // point turns it into a status), never inside a parallel region, where it would end the process.
  for (auto& c : cand) c.reserve(static_cast<size_t>(N));
  parallel_for(B, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      for (int64_t n = 0; n < N; ++n) {
        if (!is_masked(mask, mask_dtype, b * N + n)) continue;
        bool finite = true;
        for (int64_t k = 0; k < K && finite; ++k) {
          const float* v = votes + ((b * K + k) * N + n) * 3;
          finite = std::isfinite(v[0]) && std::isfinite(v[1]) && std::isfinite(v[2]);
        }
        if (finite) cand[b].push_back(static_cast<int32_t>(n));
      }
    }
  });
  std::vector<Task> tasks(B * K);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t k = 0; k < K; ++k) {
      tasks[b * K + k].b = b;
      tasks[b * K + k].k = k;
    }
  // 2. The centre rows first (center_filter = 1), over all candidates.
  if (center_filter) {
    std::vector<Task*> phase;
    for (int64_t b = 0; b < B; ++b) {
      if (cand[b].empty()) continue;
      Task& tk = tasks[b * K + K - 1];
      tk.pts = &cand[b];
      phase.push_back(&tk);
    }
    cluster_tasks(phase, votes, K, N, bandwidth, max_iter);
    for (Task* tk : phase) {
      const int64_t b = tk->b;
      const float cx = tk->x[tk->best], cy = tk->y[tk->best], cz = tk->z[tk->best];
      for (size_t i = 0; i < cand[b].size(); ++i)
        if (d2_exact(tk->x[i], tk->y[i], tk->z[i], cx, cy, cz) < cs.bw2) used[b].push_back(cand[b][i]);
      if (used[b].empty()) used[b] = cand[b];
    }
  } else {
    for (int64_t b = 0; b < B; ++b) used[b] = cand[b];
  }
  // 3. The other rows (all rows without the filter), over the used points.
  {
    std::vector<Task*> phase;
    const int64_t rows = center_filter ? K - 1 : K;
    for (int64_t b = 0; b < B; ++b) {
      if (cand[b].empty()) continue;
      for (int64_t k = 0; k < rows; ++k) {
        Task& tk = tasks[b * K + k];
        tk.pts = &used[b];
        phase.push_back(&tk);
      }
    }
    cluster_tasks(phase, votes, K, N, bandwidth, max_iter);
  }
  // 4. Outputs.
  for (int64_t b = 0; b < B; ++b) {
    inliers[b] = cand[b].empty() ? 0 : static_cast<int64_t>(used[b].size());
    for (int64_t k = 0; k < K; ++k) {
      float* out = kps + (b * K + k) * 3;
      if (cand[b].empty()) {
        out[0] = out[1] = out[2] = nan;
        continue;
      }
      const Task& tk = tasks[b * K + k];
      out[0] = tk.mx[tk.best];
      out[1] = tk.my[tk.best];
      out[2] = tk.mz[tk.best];
    }
  }
}

}  // namespace vote
}  // namespace pvn3d

extern "C" pvn3d_status pvn3d_vote_aggregate_cpu(const float* votes, const void* mask, int mask_dtype, int64_t B,
                                                 int64_t K, int64_t N, float bandwidth, int64_t max_iter,
                                                 int center_filter, float* kps, int64_t* inliers) {
  return pvn3d::guarded("PVN3D_VoteAggregate", [&]() -> pvn3d_status {
    using namespace pvn3d;
    PVN3D_TRY(vote::check_args("PVN3D_VoteAggregate", votes, mask, mask_dtype, B, K, N, bandwidth, max_iter,
                               center_filter, kps, inliers));
    vote::aggregate_cpu(votes, mask, mask_dtype, B, K, N, bandwidth, max_iter, center_filter, kps, inliers);
    return PVN3D_OK;
  });
}
