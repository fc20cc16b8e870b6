// PVN3D_FurthestPointSample, CPU kernel. See furthest_point_sample.h.
//
// Running distances live in a float array; padding points hold -1 there, which no min() with a
// distance (>= 0) changes and which never wins the argmax. The argmax compares the float BIT
// PATTERNS as int32: for values >= 0 they order like the floats, -1.0f is negative, and an integer
// max reduction vectorises (a float one does not without -ffast-math). The winner is then the first
// index holding the maximal pattern (lowest index on ties).
#include "furthest_point_sample.h"

#include <climits>
#include <cstring>
#include <new>
#include <vector>

#include "../common/threads.h"
#include "furthest_point_sample_args.h"

namespace pvn3d {
namespace fps {
namespace {

inline int32_t float_bits(float f) {
  int32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

struct Cloud {  // one batch element as structure of arrays, plus running distances
  std::vector<float> x, y, z, dist;
  explicit Cloud(int64_t n) : x(n), y(n), z(n), dist(n) {}
};

void load(Cloud& c, const float* xyz, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) {
    const float x = xyz[3 * i], y = xyz[3 * i + 1], z = xyz[3 * i + 2];
    c.x[i] = x;
    c.y[i] = y;
    c.z[i] = z;
    const float mag = x * x + y * y + z * z;
    c.dist[i] = static_cast<double>(mag) <= kPaddingNorm2 ? -1.0f : kInitialDistance;
  }
}

// dist[i] = min(dist[i], |p_i - last|^2) over [begin, end); returns the max bit pattern (INT32_MIN
// for an empty range).
int32_t update(Cloud& c, int64_t begin, int64_t end, float lx, float ly, float lz) {
  const float* __restrict__ xs = c.x.data();
  const float* __restrict__ ys = c.y.data();
  const float* __restrict__ zs = c.z.data();
  float* __restrict__ dist = c.dist.data();
  int32_t best = INT32_MIN;
  for (int64_t i = begin; i < end; ++i) {
    const float dx = xs[i] - lx, dy = ys[i] - ly, dz = zs[i] - lz;
    const float d = dx * dx + dy * dy + dz * dz;
    const float t = d < dist[i] ? d : dist[i];
    dist[i] = t;
    const int32_t tb = float_bits(t);
    best = tb > best ? tb : best;
  }
  return best;
}

// First index in [begin, end) whose running distance has bit pattern `bits` (-1 if none).
int64_t find(const Cloud& c, int64_t begin, int64_t end, int32_t bits) {
  const float* dist = c.dist.data();
  for (int64_t i = begin; i < end; ++i)
    if (float_bits(dist[i]) == bits) return i;
  return -1;
}

void sample_sequential(Cloud& c, const float* xyz, int64_t N, int64_t npoint, int64_t* out) {
  load(c, xyz, 0, N);
  int64_t last = 0;
  out[0] = 0;
  for (int64_t s = 1; s < npoint; ++s) {
    const int32_t best = update(c, 0, N, c.x[last], c.y[last], c.z[last]);
    last = best < 0 ? 0 : find(c, 0, N, best);
    out[s] = last;
  }
}

#if PVN3D_HAVE_OPENMP
// One batch element on `threads` threads: each owns a contiguous chunk of points; per step each
// publishes its chunk's (max bits, first index), one barrier, and every thread reduces the slots
// itself (in chunk order, so the first slot with the max holds the lowest index). Slots are double
// buffered by step parity: a thread can write step s+2's slot only after every thread has passed
// step s+1's barrier, i.e. after everyone has read step s's slots.
void sample_parallel(Cloud& c, const float* xyz, int64_t N, int64_t npoint, int64_t* out, int threads) {
  struct alignas(64) Slot {
    int32_t bits;
    int64_t idx;
  };
  std::vector<Slot> slots(2 * static_cast<size_t>(threads));
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num();
    const int nt = omp_get_num_threads();
    const int64_t begin = N * t / nt, end = N * (t + 1) / nt;
    load(c, xyz, begin, end);
#pragma omp barrier
    int64_t last = 0;
    if (t == 0) out[0] = 0;
    for (int64_t s = 1; s < npoint; ++s) {
      const int32_t best = update(c, begin, end, c.x[last], c.y[last], c.z[last]);
      Slot& mine = slots[static_cast<size_t>((s & 1) * nt + t)];
      mine.bits = best;
      mine.idx = best < 0 ? -1 : find(c, begin, end, best);
#pragma omp barrier
      const Slot* row = &slots[static_cast<size_t>((s & 1) * nt)];
      int32_t gbest = INT32_MIN;
      int64_t gidx = 0;
      for (int k = 0; k < nt; ++k)
        if (row[k].bits > gbest) {
          gbest = row[k].bits;
          gidx = row[k].idx;
        }
      last = gbest < 0 ? 0 : gidx;
      if (t == 0) out[s] = last;
    }
  }
}
#endif

}  // namespace
}  // namespace fps
}  // namespace pvn3d

extern "C" pvn3d_status pvn3d_furthest_point_sample_cpu(int64_t B, int64_t N, int64_t npoint, const float* xyz,
                                                         int64_t* idx) {
  using namespace pvn3d::fps;
  int64_t work = 0;
  PVN3D_TRY(check_args(B, N, npoint, xyz, idx, &work));
  if (work == 0) return PVN3D_OK;
  try {
    const int threads = pvn3d::num_threads();
#if PVN3D_HAVE_OPENMP
    // Within-step parallelism pays once a step is long enough to hide a barrier (~1 us).
    constexpr int64_t kMinPointsPerThread = 4096;
    const int inner = static_cast<int>(std::min<int64_t>(threads, N / kMinPointsPerThread));
    if (B < threads && inner >= 2) {
      Cloud cloud(N);
      for (int64_t b = 0; b < B; ++b) sample_parallel(cloud, xyz + b * N * 3, N, npoint, idx + b * npoint, inner);
      return PVN3D_OK;
    }
#endif
    (void)threads;
    // Parallel over the batch; each task owns its scratch. Allocation happens outside the workers
    // (an exception must not escape a parallel region).
    std::vector<Cloud> clouds;
    const int64_t tasks = std::min<int64_t>(B, std::max(1, pvn3d::num_threads()));
    clouds.reserve(static_cast<size_t>(tasks));
    for (int64_t t = 0; t < tasks; ++t) clouds.emplace_back(N);
    pvn3d::parallel_for(tasks, 1, [&](int64_t tb, int64_t te) {
      for (int64_t t = tb; t < te; ++t)
        for (int64_t b = t; b < B; b += tasks)
          sample_sequential(clouds[static_cast<size_t>(t)], xyz + b * N * 3, N, npoint, idx + b * npoint);
    });
  } catch (const std::bad_alloc&) {
    return pvn3d::fail(PVN3D_ERR_OUT_OF_MEMORY, "%s: out of host memory for N = %lld", kOp, (long long)N);
  }
  return PVN3D_OK;
}
