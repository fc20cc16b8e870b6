#include "threads.h"

#include <pthread.h>

#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

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
// most num_threads() - 1 of them, and wakes only that many). The mutex guards everything but Job::next; a
// helper enters a job (and the caller waits for it to leave) only under the mutex, and once the caller has taken its job back no
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
    int woken = 0;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      grow(job.max_helpers);
      job_ = &job;
      ++generation_;
      woken = std::min(job.max_helpers, static_cast<int>(threads_.size()));
    }
    // Takes the job back however run_ranges ends (a range that throws on this thread unwinds through here:
    // no helper may touch the job after that, and the next call must find the pool free).
    struct Retract {
      Pool& pool;
      Job& job;
      ~Retract() {
        {
          std::unique_lock<std::mutex> lock(pool.mutex_);
          pool.job_ = nullptr;  // helpers not yet awake stay out of it
          pool.left_.wait(lock, [this] { return job.helpers == 0; });
        }
        pool.busy_.store(false, std::memory_order_release);
      }
    } retract{*this, job};
    // As many helpers as may join, not all the pool has (it keeps the most any call asked for).
    for (int i = 0; i < woken; ++i) wake_.notify_one();
    run_ranges(job);
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
      // Full, or nothing left to take: joining would only make the caller wait for this thread.
      if (job.helpers >= job.max_helpers || job.next.load(std::memory_order_relaxed) >= job.count) continue;
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
// (a helper must not sleep inside code that dlclose unmaps). A child of fork() drops the parent's pool
// without touching it (its helper threads exist only in the parent, its mutex may be locked for good) and
// makes its own on first use.
std::atomic<Pool*> g_pool{nullptr};

Pool& pool() {
  Pool* p = g_pool.load(std::memory_order_acquire);
  if (p != nullptr) return *p;
  Pool* made = new Pool;
  if (g_pool.compare_exchange_strong(p, made, std::memory_order_acq_rel)) return *made;
  delete made;  // another thread made one first (this one never started a thread)
  return *p;
}

void on_fork_child() { g_pool.store(nullptr, std::memory_order_release); }

__attribute__((constructor)) void watch_fork() { pthread_atfork(nullptr, nullptr, on_fork_child); }

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
