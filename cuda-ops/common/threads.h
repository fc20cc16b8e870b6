/*
 * CPU parallelism for the kernels (internal; not part of the public ABI).
 *
 *   pvn3d::num_threads()            threads a kernel may use: pvn3d_set_num_threads(n) if n >= 1 was
 *                                   set, else the default (OpenMP's max threads, i.e. OMP_NUM_THREADS
 *                                   or all cores; without OpenMP std::thread::hardware_concurrency()).
 *   pvn3d::parallel_for(n, grain, f) calls f(begin, end) on disjoint, contiguous ranges covering
 *                                   [0, n), each of at least `grain` items (except the last), on up to
 *                                   num_threads() threads, and returns when all are done. With one
 *                                   range, f runs on the calling thread. Ranges are handed out
 *                                   dynamically (about 4 per thread) so uneven work balances. f must
 *                                   not throw and must only write disjoint memory (or use atomics).
 *
 * parallel_for runs on the library's own pool of sleeping helper threads (threads.cpp), not OpenMP: the
 * calling thread starts on the ranges at once, the helpers that wake in time take ranges too, and the call
 * returns as soon as every range is done, without waiting for a helper that never woke up. An OpenMP
 * region ends in a barrier that waits for every thread of the team to arrive, so a call paid the wake-up
 * of a sleeping thread (tens to hundreds of microseconds when ORT's own threads hold the cores) however
 * little work it had. One call at a time has the helpers; a parallel_for that finds them busy (another
 * kernel on another thread, or a nested call) runs its ranges on its own thread. parallel_for's ranges may
 * thus run one after the other on one thread, so threads that must wait for each other
 * (FurthestPointSample's teams, which exchange a result every step) use an OpenMP region of their own and
 * test PVN3D_HAVE_OPENMP.
 */
#ifndef PVN3D_COMMON_THREADS_H
#define PVN3D_COMMON_THREADS_H

#include <algorithm>
#include <atomic>
#include <cstdint>

#if defined(_OPENMP)
#include <omp.h>
#define PVN3D_HAVE_OPENMP 1
#else
#define PVN3D_HAVE_OPENMP 0
#endif

namespace pvn3d {

int num_threads();

/*
 * The work a range must hold before parallel_for hands it to another thread: about 2^16 simple operations
 * (tens of microseconds on one core), so that handing a range over (a helper takes it from a shared counter)
 * stays a small part of it. grain_for(ops_per_item) is the grain that gives each range about that much.
 */
constexpr int64_t kParallelRangeOps = int64_t{1} << 16;
inline int64_t grain_for(int64_t ops_per_item) {
  return ops_per_item >= kParallelRangeOps ? 1 : kParallelRangeOps / (ops_per_item > 0 ? ops_per_item : 1);
}

/*
 * How many pieces to cut each of `items` rows of `len` elements into, so that small counts of long rows still
 * give every thread ranges (about 4 a thread) while no piece is shorter than `min_len` elements: 1 when
 * there are rows enough. parallel_for's grain still joins pieces holding less than kParallelRangeOps into
 * one range, so short rows stay on fewer threads.
 */
inline int64_t pieces_for(int64_t items, int64_t len, int64_t min_len) {
  const int64_t want = 4 * static_cast<int64_t>(num_threads());
  if (items <= 0 || items >= want) return 1;
  const int64_t most = std::max<int64_t>(1, len / std::max<int64_t>(1, min_len));
  return std::min<int64_t>((want + items - 1) / items, most);
}

namespace detail {

/* One parallel_for call as the pool sees it: ranges [0, count), range r run by run(ctx, r). */
struct Job {
  void (*run)(void* ctx, int64_t r) = nullptr;
  void* ctx = nullptr;
  int64_t count = 0;
  int max_helpers = 0;             // helper threads that may join (num_threads() - 1)
  std::atomic<int64_t> next{0};    // the next range to hand out
  int helpers = 0;                 // helpers inside the job (guarded by the pool's mutex)
};

/* Runs every range of `job`, on the calling thread and on the helpers that join in time; returns when all
 * are done. When the pool is busy it runs them all on the calling thread. */
void run_job(Job& job);

}  // namespace detail

template <class F>
void parallel_for(int64_t n, int64_t grain, F&& f) {
  if (n <= 0) return;
  if (grain < 1) grain = 1;
  const int64_t threads = num_threads();
  const int64_t max_ranges = (n + grain - 1) / grain;
  if (threads <= 1 || max_ranges <= 1) {
    f(int64_t{0}, n);
    return;
  }
  const int64_t ranges = std::min<int64_t>(max_ranges, threads * 4);
  struct Ctx {
    F* f;
    int64_t n, ranges;
  } ctx{&f, n, ranges};
  detail::Job job;
  job.ctx = &ctx;
  job.count = ranges;
  job.max_helpers = static_cast<int>(std::min<int64_t>(threads, ranges)) - 1;
  job.run = [](void* p, int64_t r) {
    const Ctx& c = *static_cast<const Ctx*>(p);
    auto begin = [&c](int64_t i) { return (c.n / c.ranges) * i + std::min<int64_t>(i, c.n % c.ranges); };
    (*c.f)(begin(r), begin(r + 1));
  };
  detail::run_job(job);
}

}  // namespace pvn3d

#endif /* PVN3D_COMMON_THREADS_H */
