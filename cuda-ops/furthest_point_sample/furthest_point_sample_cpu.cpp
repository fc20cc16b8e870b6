// PVN3D_FurthestPointSample, CPU kernel. See furthest_point_sample.h.
//
// Running distances live in a float array; padding points hold -1 there, which no min() with a
// distance (>= 0) changes and which never wins the argmax. The argmax compares the float BIT
// PATTERNS as int32: for values >= 0 they order like the floats, -1.0f is negative, and an integer
// max reduction vectorises (a float one does not without -ffast-math). The winner is then the first
// index holding the maximal pattern (lowest index on ties).
#include "furthest_point_sample.h"

#include <atomic>
#include <climits>
#include <memory>
#include <new>
#include <thread>
#include <vector>

#include "../common/cpu_clones.h"
#include "../common/float_bits.h"
#include "../common/threads.h"
#include "furthest_point_sample_args.h"

namespace pvn3d {
namespace fps {
namespace {

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
// for an empty range). Every step of every sample runs this over the whole cloud: cloned for AVX2 and
// AVX-512 (cpu_clones.h; the baseline SSE2 has no packed int32 max).
PVN3D_CPU_CLONES int32_t update(Cloud& c, int64_t begin, int64_t end, float lx, float ly, float lz) {
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
PVN3D_CPU_CLONES int64_t find(const Cloud& c, int64_t begin, int64_t end, int32_t bits) {
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

// One batch element after another on the calling thread, from an atomic counter of items (each
// caller owns its scratch `c`).
void sample_items(Cloud& c, std::atomic<int64_t>& next, int64_t B, const float* xyz, int64_t N, int64_t npoint,
                  int64_t* idx) {
  for (int64_t b = next.fetch_add(1); b < B; b = next.fetch_add(1))
    sample_sequential(c, xyz + b * N * 3, N, npoint, idx + b * npoint);
}

#if PVN3D_HAVE_OPENMP
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// The per-step exchange of a team of threads working on one batch element: each member publishes its
// chunk's (max bits, first index) for round r and waits until every member has published round r.
// Slots are double buffered by round parity: a member writes round r+2's slot only after it has seen
// every member's round r+1, i.e. after everyone has read round r's slots. A waiting member spins
// briefly, then yields its core: a member the OS preempted (for another process, or for ORT's
// spinning intra-op threads) then gets to run sooner, instead of the whole team burning its cores.
class Team {
 public:
  struct alignas(64) Slot {
    std::atomic<int64_t> round{-1};
    int32_t bits = INT32_MIN;
    int64_t idx = -1;
  };

  explicit Team(int capacity) : capacity_(capacity), slots_(new Slot[2 * static_cast<size_t>(capacity)]) {}

  // Publishes (bits, idx) as member m of `members` (<= capacity) for round r, waits for the others, and
  // returns round r's slots in member (= chunk) order.
  const Slot* exchange(int m, int members, int64_t r, int32_t bits, int64_t idx) {
    Slot* row = &slots_[static_cast<size_t>((r & 1) * capacity_)];
    row[m].bits = bits;
    row[m].idx = idx;
    row[m].round.store(r, std::memory_order_release);
    for (int o = 0; o < members; ++o)
      for (int spins = 0; row[o].round.load(std::memory_order_acquire) != r; ++spins) {
        if (spins < kSpinsBeforeYield)
          cpu_relax();
        else
          std::this_thread::yield();
      }
    return row;
  }

 private:
  static constexpr int kSpinsBeforeYield = 2000;  // some 10-100 us of pause: far above a step's skew
  int capacity_;
  std::unique_ptr<Slot[]> slots_;
};

// Batch elements on teams of threads, one OpenMP region of (up to) teams*k threads: thread t is
// member t % k of team t / k; team g samples elements g, g + teams, ... one after the other, each
// member owning a contiguous chunk of the points. Per step every member updates its chunk, finds the
// chunk's first maximum and exchanges it with its team (Team above); every member then reduces the
// k results itself in chunk order, so the first chunk holding the maximum gives the lowest index.
// With k = 1 there is no exchange at all. The distance update is update() on each chunk, so the
// result is bit-identical to sample_sequential.
void sample_teams(int teams, int k, const float* xyz, int64_t B, int64_t N, int64_t npoint, int64_t* idx) {
  // Scratch and exchange slots for every team, allocated before the region (an exception must not
  // escape it).
  std::vector<Cloud> clouds;
  clouds.reserve(static_cast<size_t>(teams));
  for (int g = 0; g < teams; ++g) clouds.emplace_back(N);
  std::vector<Team> exch;
  exch.reserve(static_cast<size_t>(teams));
  for (int g = 0; g < teams; ++g) exch.emplace_back(k);
#pragma omp parallel num_threads(teams * k)
  {
    // The runtime may give fewer threads than asked (OMP_DYNAMIC, thread limits, a nested call):
    // the layout follows the threads there are, never fewer than one per team member.
    const int nt = omp_get_num_threads();
    const int used_teams = std::min(teams, nt);
    const int kk = std::min(k, nt / used_teams);
    const int t = omp_get_thread_num();
    const int g = t / kk, m = t % kk;
    if (g < used_teams) {
      Cloud& c = clouds[static_cast<size_t>(g)];
      Team& team = exch[static_cast<size_t>(g)];
      const int64_t begin = N * m / kk, end = N * (m + 1) / kk;
      int64_t round = 0;
      for (int64_t b = g; b < B; b += used_teams) {
        load(c, xyz + b * N * 3, begin, end);
        if (kk > 1) team.exchange(m, kk, round++, 0, 0);  // every chunk loaded
        int64_t* out = idx + b * npoint;
        int64_t last = 0;
        if (m == 0) out[0] = 0;
        for (int64_t s = 1; s < npoint; ++s) {
          const int32_t best = update(c, begin, end, c.x[last], c.y[last], c.z[last]);
          const int64_t first = best < 0 ? -1 : find(c, begin, end, best);
          if (kk == 1) {
            last = first < 0 ? 0 : first;
          } else {
            const Team::Slot* row = team.exchange(m, kk, round++, best, first);
            int32_t gbest = INT32_MIN;
            int64_t gidx = 0;
            for (int o = 0; o < kk; ++o)
              if (row[o].bits > gbest) {
                gbest = row[o].bits;
                gidx = row[o].idx;
              }
            last = gbest < 0 ? 0 : gidx;
          }
          if (m == 0) out[s] = last;
        }
      }
    }
  }
}
#endif

}  // namespace
}  // namespace fps
}  // namespace pvn3d

extern "C" pvn3d_status pvn3d_furthest_point_sample_cpu(int64_t B, int64_t N, int64_t npoint, const float* xyz,
                                                         int64_t* idx) {
  return pvn3d::guarded("PVN3D_FurthestPointSample", [&]() -> pvn3d_status {
    using namespace pvn3d::fps;
    int64_t work = 0;
    PVN3D_TRY(check_args(B, N, npoint, xyz, idx, &work));
    if (work == 0) return PVN3D_OK;
    try {
      const int threads = std::max(1, pvn3d::num_threads());
      // How the threads are spent (the indices are the same for any choice):
      // - B >= threads: one thread per batch element, each element sampled sequentially (below). No
      //   synchronisation inside an element at all, which nothing with a per-step exchange can beat
      //   when every thread has an element of its own.
      // - B < threads: all elements at once, each on a team of k = threads / B threads (a nested
      //   split), as long as every member keeps at least kMinPointsPerThread points, so that its share
      //   of a step's work (N/k points, a few us) stays well above the exchange (~0.1-1 us). Sampling
      //   the elements one after the other with all threads (what this kernel did before) paid B times
      //   as many exchanges, each among more threads, and left cores idle whenever N capped the team:
      //   B = 8, N = 16384 on 16 threads ran 8 x 4-thread teams in turn (230 ms); now it runs 8
      //   2-thread teams at once.
      // - B < threads but N too small for teams (k = 1): one thread per element, B threads.
      constexpr int64_t kMinPointsPerThread = 4096;
      const int64_t teams = std::min<int64_t>(B, threads);
      const int64_t k = std::max<int64_t>(1, std::min<int64_t>(threads / teams, N / kMinPointsPerThread));
  #if PVN3D_HAVE_OPENMP
      if (k >= 2) {
        sample_teams(static_cast<int>(teams), static_cast<int>(k), xyz, B, N, npoint, idx);
        return PVN3D_OK;
      }
  #endif
      // One thread per batch element (k = 1, or a build without OpenMP: parallel_for does not promise that
      // its ranges run at the same time, which a team needs). Each worker owns its scratch (allocated
      // here: an exception must not escape a worker) and takes elements from a shared counter.
      const int64_t tasks = teams;
      std::vector<Cloud> clouds;
      clouds.reserve(static_cast<size_t>(tasks));
      for (int64_t t = 0; t < tasks; ++t) clouds.emplace_back(N);
      std::atomic<int64_t> next{0};
      pvn3d::parallel_for(tasks, 1, [&](int64_t tb, int64_t te) {
        for (int64_t t = tb; t < te; ++t) sample_items(clouds[static_cast<size_t>(t)], next, B, xyz, N, npoint, idx);
      });
    } catch (const std::bad_alloc&) {
      return pvn3d::fail(PVN3D_ERR_OUT_OF_MEMORY, "%s: out of host memory for N = %lld", kOp, (long long)N);
    }
    return PVN3D_OK;
  });
}
