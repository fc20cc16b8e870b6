// Tests of what common/ declares for callers (status.h): the version, whether CUDA is compiled in,
// status names, the last-error message and the CPU kernels' thread count, and the CPU kernels' shared
// thread pool (threads.h) under concurrent callers. (common/index_check.h's
// pvn3d_index_error_describe is tested with the operators that read indices: test_gather_points.cpp,
// test_group_points.cpp, test_three_interpolate.cpp.)
//
//   pvn3d_test_common   (support/test_env.h)
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "harness.h"
#include "pvn3d_ops.h"
#include "test_data.h"
#include "test_env.h"

TEST(library_info) {
  CHECK(std::strlen(pvn3d_version()) >= 5, "version '%s'", pvn3d_version());
  CHECK(pvn3d_built_with_cuda() == 0 || pvn3d_built_with_cuda() == 1, "built_with_cuda %d", pvn3d_built_with_cuda());
  CHECK(std::strcmp(pvn3d_status_name(PVN3D_ERR_INDEX_OUT_OF_RANGE), "PVN3D_ERR_INDEX_OUT_OF_RANGE") == 0, "name");
  pvn3d_set_num_threads(3);
  CHECK(pvn3d_get_num_threads() == 3, "threads %d", pvn3d_get_num_threads());
  pvn3d_set_num_threads(100000);  // an OpenMP team that large overflowed the caller's stack
  CHECK(pvn3d_get_num_threads() == PVN3D_MAX_THREADS, "threads capped: %d", pvn3d_get_num_threads());
  pvn3d_set_num_threads(0);
  CHECK(pvn3d_get_num_threads() >= 1, "default threads %d", pvn3d_get_num_threads());
  pvn3d_clear_error();
  CHECK(pvn3d_last_error()[0] == '\0', "cleared error '%s'", pvn3d_last_error());
}

TEST(cpu_pool_concurrent_callers) {
  // parallel_for's helpers serve one call at a time; a call that finds them busy runs alone. Six threads
  // calling kernels at once (ThreeNN, GroupPoints, BallQuery: many ranges each), with 8 kernel threads on
  // however many cores, must each get exactly what one thread alone computes.
  testdata::Rng rng(7);
  const int64_t B = 2, n = 3000, m = 700, C = 21, S = 16;
  const std::vector<float> unknown = testdata::random_cloud(rng, B, n, -1.0f, 1.0f);
  const std::vector<float> known = testdata::random_cloud(rng, B, m, -1.0f, 1.0f);
  const std::vector<float> feats = testdata::random_floats(rng, B * C * n, -1.0f, 1.0f);
  struct Out {
    std::vector<float> dist2, grouped;
    std::vector<int64_t> idx, ball;
  };
  auto compute = [&](Out& o) {
    o.dist2.assign(B * n * 3, 0.0f);
    o.idx.assign(B * n * 3, -1);
    o.ball.assign(B * m * S, -1);
    o.grouped.assign(B * C * m * S, 0.0f);
    return pvn3d_three_nn_cpu(B, n, m, unknown.data(), known.data(), o.dist2.data(), o.idx.data()) == PVN3D_OK &&
           pvn3d_ball_query_cpu(B, n, m, 0.2f, S, unknown.data(), known.data(), o.ball.data()) == PVN3D_OK &&
           pvn3d_group_points_cpu(B, C, n, m, S, feats.data(), o.ball.data(), o.grouped.data()) == PVN3D_OK;
  };
  pvn3d_set_num_threads(1);
  Out alone;
  CHECK(compute(alone), "one thread: %s", pvn3d_last_error());
  pvn3d_set_num_threads(8);
  std::atomic<int> wrong{0}, failed{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 6; ++t)
    callers.emplace_back([&] {
      for (int rep = 0; rep < 5; ++rep) {
        Out o;
        if (!compute(o)) ++failed;
        else if (o.dist2 != alone.dist2 || o.idx != alone.idx || o.ball != alone.ball || o.grouped != alone.grouped) ++wrong;
      }
    });
  for (std::thread& c : callers) c.join();
  pvn3d_set_num_threads(0);
  CHECK(failed.load() == 0, "%d of 30 concurrent calls failed", failed.load());
  CHECK(wrong.load() == 0, "%d of 30 concurrent calls differ from one thread's answer", wrong.load());
}

TEST(cpu_pool_in_a_forked_child) {
  // A child of fork() has none of the parent's helper threads, and the pool's mutex may be held there for
  // good: it must run kernels and exit normally (it crashed in exit(), joining threads it does not have).
#if defined(__SANITIZE_THREAD__)
  SKIP("ThreadSanitizer cannot run threads in the child of a multi-threaded fork (it dies: 'dup thread')");
#endif
  testdata::Rng rng(11);
  const int64_t n = 4000, m = 900;
  const std::vector<float> unknown = testdata::random_cloud(rng, 2, n, -1.0f, 1.0f);
  const std::vector<float> known = testdata::random_cloud(rng, 2, m, -1.0f, 1.0f);
  auto nn = [&](std::vector<int64_t>& idx) {
    std::vector<float> d(2 * n * 3);
    idx.assign(2 * n * 3, -1);
    return pvn3d_three_nn_cpu(2, n, m, unknown.data(), known.data(), d.data(), idx.data()) == PVN3D_OK;
  };
  pvn3d_set_num_threads(4);
  std::vector<int64_t> parent;
  CHECK(nn(parent), "parent: %s", pvn3d_last_error());
  std::fflush(stdout);
  const pid_t child = fork();
  if (child == 0) {
    std::vector<int64_t> mine;
    std::exit(nn(mine) && mine == parent ? 0 : 3);  // exit(), not _exit(): the library's destructors run
  }
  int status = 0;
  CHECK(child > 0 && waitpid(child, &status, 0) == child, "fork/waitpid failed");
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child %s %d",
        WIFEXITED(status) ? "exited with status" : "died of signal", WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
  std::vector<int64_t> again;
  CHECK(nn(again) && again == parent, "the parent after the fork: %s", pvn3d_last_error());
  pvn3d_set_num_threads(0);
}

int main(int argc, char** argv) { return testenv::run(argc, argv); }
