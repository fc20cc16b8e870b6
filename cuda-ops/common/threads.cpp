#include "threads.h"

#include "status.h"

namespace {
// 0: use the default.
std::atomic<int> g_num_threads{0};

int default_threads() {
#if PVN3D_HAVE_OPENMP
  return std::max(1, omp_get_max_threads());
#else
  return std::max(1u, std::thread::hardware_concurrency());
#endif
}
}  // namespace

namespace pvn3d {
int num_threads() {
  const int n = g_num_threads.load(std::memory_order_relaxed);
  return n >= 1 ? n : default_threads();
}
}  // namespace pvn3d

extern "C" {

void pvn3d_set_num_threads(int n) {
  // At most PVN3D_MAX_THREADS: far more threads than cores only slows the kernels, and an OpenMP team of
  // ten thousand overflowed the calling thread's stack (a JVM thread's) while starting.
  g_num_threads.store(n >= 1 ? std::min(n, PVN3D_MAX_THREADS) : 0, std::memory_order_relaxed);
}

int pvn3d_get_num_threads(void) { return pvn3d::num_threads(); }

}  // extern "C"
