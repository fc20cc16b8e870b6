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
 * Built with OpenMP when CMake finds it (omp parallel for, dynamic schedule); otherwise with
 * std::thread (one short-lived thread per extra worker). parallel_for's ranges may run one after
 * the other on one thread, so threads that must wait for each other (FurthestPointSample's teams,
 * which exchange a result every step) use an OpenMP region of their own and test PVN3D_HAVE_OPENMP.
 */
#ifndef PVN3D_COMMON_THREADS_H
#define PVN3D_COMMON_THREADS_H

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#define PVN3D_HAVE_OPENMP 1
#else
#define PVN3D_HAVE_OPENMP 0
#endif

namespace pvn3d {

int num_threads();

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
  const int workers = static_cast<int>(std::min<int64_t>(threads, ranges));
  auto range_begin = [n, ranges](int64_t r) { return (n / ranges) * r + std::min<int64_t>(r, n % ranges); };
#if PVN3D_HAVE_OPENMP
#pragma omp parallel for num_threads(workers) schedule(dynamic, 1)
  for (int64_t r = 0; r < ranges; ++r) f(range_begin(r), range_begin(r + 1));
#else
  std::atomic<int64_t> next{0};
  auto work = [&]() {
    for (int64_t r = next.fetch_add(1); r < ranges; r = next.fetch_add(1)) f(range_begin(r), range_begin(r + 1));
  };
  std::vector<std::thread> pool;
  pool.reserve(workers - 1);
  for (int w = 1; w < workers; ++w) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
#endif
}

}  // namespace pvn3d

#endif /* PVN3D_COMMON_THREADS_H */
