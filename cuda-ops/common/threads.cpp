#include "threads.h"

#include <condition_variable>
#include <mutex>

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

namespace detail {
namespace {

// The helpers of parallel_for (threads.h). They sleep on `wake_` between jobs (no spinning: the cores are
// ORT's in between), and the pool grows to the helpers a job may use, never shrinks (a job asks for at
// most num_threads() - 1 of them). The mutex guards everything but Job::next; a helper enters a job (and
// the caller waits for it to leave) only under the mutex, and once the caller has taken its job back no
// helper can enter it, so the job, which lives on the caller's stack, is never touched after it returns.
class Pool {
 public:
  // Ends the helpers (they finish the range in hand first). The pool itself stays usable: a later call
  // runs alone.
  void stop() {
    std::vector<std::thread> threads;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
      threads.swap(threads_);
    }
    wake_.notify_all();
    for (std::thread& t : threads) t.join();
  }

  void run(Job& job) {
    bool expected = false;
    if (!busy_.compare_exchange_strong(expected, true, std::memory_order_acquire)) {
      run_ranges(job);  // another call has the helpers: this one works alone
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      grow(job.max_helpers);
      job_ = &job;
      ++generation_;
    }
    wake_.notify_all();
    run_ranges(job);
    {
      std::unique_lock<std::mutex> lock(mutex_);
      job_ = nullptr;  // helpers not yet awake stay out of it
      left_.wait(lock, [&job] { return job.helpers == 0; });
    }
    busy_.store(false, std::memory_order_release);
  }

 private:
  static void run_ranges(Job& job) {
    for (int64_t r = job.next.fetch_add(1, std::memory_order_relaxed); r < job.count;
         r = job.next.fetch_add(1, std::memory_order_relaxed))
      job.run(job.ctx, r);
  }

  // Under mutex_. A thread that cannot be started leaves the pool smaller: the ranges still all run.
  void grow(int helpers) {
    while (!stop_ && static_cast<int>(threads_.size()) < helpers) {
      try {
        threads_.emplace_back([this] { loop(); });
      } catch (...) {
        return;
      }
    }
  }

  void loop() {
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return stop_ || (job_ != nullptr && generation_ != seen); });
      if (stop_) return;
      seen = generation_;
      Job& job = *job_;
      if (job.helpers >= job.max_helpers) continue;
      ++job.helpers;
      lock.unlock();
      run_ranges(job);
      lock.lock();
      if (--job.helpers == 0) left_.notify_all();
    }
  }

  std::atomic<bool> busy_{false};
  std::mutex mutex_;
  std::condition_variable wake_, left_;
  std::vector<std::thread> threads_;
  Job* job_ = nullptr;
  uint64_t generation_ = 0;
  bool stop_ = false;
};

// Made on first use and never destroyed, so that a kernel still running on another thread while the process
// exits finds a valid pool; stop_pool ends the helpers when the library is unloaded or the process exits
// (a helper must not sleep inside code that dlclose unmaps).
std::atomic<Pool*> g_pool{nullptr};

Pool& pool() {
  static Pool* const p = [] {
    Pool* made = new Pool;
    g_pool.store(made, std::memory_order_release);
    return made;
  }();
  return *p;
}

__attribute__((destructor)) void stop_pool() {
  if (Pool* p = g_pool.load(std::memory_order_acquire)) p->stop();
}

}  // namespace

void run_job(Job& job) { pool().run(job); }

}  // namespace detail
}  // namespace pvn3d

extern "C" {

void pvn3d_set_num_threads(int n) {
  // At most PVN3D_MAX_THREADS: far more threads than cores only slows the kernels, and an OpenMP team of
  // ten thousand overflowed the calling thread's stack (a JVM thread's) while starting.
  g_num_threads.store(n >= 1 ? std::min(n, PVN3D_MAX_THREADS) : 0, std::memory_order_relaxed);
}

int pvn3d_get_num_threads(void) { return pvn3d::num_threads(); }

}  // extern "C"
