// The CPU kernels' AVX2 / AVX-512 clones (common/cpu_clones.h) against the baseline: every CPU entry point
// of the library (whose loader picked the widest clone this CPU runs) and of a build of the same sources
// without clones (pvn3d_ops_baseline, CMakeLists.txt), on the same inputs, must give the same bytes. The
// inputs reach the paths the clones change: ties on a grid, balls holding from no point to more than
// nsample, outlier-laden votes that keep the mean shift going to max_iter, non-finite votes, bool masks.
//
//   pvn3d_test_cpu_clones   (support/test_env.h; CMake compiles in the paths of the baseline build and of an
//                           x86-64-v3 build, and PVN3D_BASELINE_LIBRARY=<path> / PVN3D_V3_LIBRARY=<path>
//                           override them: for a copy of the tests run elsewhere, as
//                           benchmarks/gpu/run-native.sh does)
#include <dlfcn.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "../common/cpu_clones.h"
#include "harness.h"
#include "pvn3d_ops.h"
#include "test_data.h"
#include "test_env.h"

namespace {

// The CPU entry points, from one library.
struct CpuOps {
  decltype(&pvn3d_furthest_point_sample_cpu) fps;
  decltype(&pvn3d_ball_query_cpu) ball_query;
  decltype(&pvn3d_gather_points_cpu) gather;
  decltype(&pvn3d_group_points_cpu) group;
  decltype(&pvn3d_three_nn_cpu) three_nn;
  decltype(&pvn3d_three_interpolate_cpu) three_interpolate;
  decltype(&pvn3d_vote_aggregate_cpu) vote_aggregate;
  decltype(&pvn3d_pose_solve_cpu) pose_solve;
  decltype(&pvn3d_kabsch_solver_cpu) kabsch;
};

CpuOps linked() {
  return {pvn3d_furthest_point_sample_cpu, pvn3d_ball_query_cpu, pvn3d_gather_points_cpu, pvn3d_group_points_cpu,
          pvn3d_three_nn_cpu, pvn3d_three_interpolate_cpu, pvn3d_vote_aggregate_cpu, pvn3d_pose_solve_cpu,
          pvn3d_kabsch_solver_cpu};
}

template <class F>
bool find(void* lib, const char* name, F& f) {
  f = reinterpret_cast<F>(dlsym(lib, name));
  return CHECK(f != nullptr, "%s not in the baseline library", name);
}

// A build of the same sources without clones, loaded beside the library: env_name overrides the path CMake
// compiled in.
bool load(const char* env_name, const char* compiled_path, CpuOps& ops, void** handle) {
  const char* env = std::getenv(env_name);
  const char* path = env != nullptr && *env != '\0' ? env : compiled_path;
  *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!CHECK(*handle != nullptr, "dlopen %s: %s", path, dlerror())) return false;
  void* h = *handle;
  return find(h, "pvn3d_furthest_point_sample_cpu", ops.fps) && find(h, "pvn3d_ball_query_cpu", ops.ball_query) &&
         find(h, "pvn3d_gather_points_cpu", ops.gather) && find(h, "pvn3d_group_points_cpu", ops.group) &&
         find(h, "pvn3d_three_nn_cpu", ops.three_nn) &&
         find(h, "pvn3d_three_interpolate_cpu", ops.three_interpolate) &&
         find(h, "pvn3d_vote_aggregate_cpu", ops.vote_aggregate) && find(h, "pvn3d_pose_solve_cpu", ops.pose_solve) &&
         find(h, "pvn3d_kabsch_solver_cpu", ops.kabsch);
}

const char* g_label = "";  // which build the current comparison is of, for the messages

template <class T>
void same(const char* what, int round, const std::vector<T>& a, const std::vector<T>& b) {
  CHECK(a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0,
        "round %d, %s: %s output differs from the baseline's", round, what, g_label);
}

void ok2(pvn3d_status a, pvn3d_status b, const char* what) {
  CHECK(a == PVN3D_OK && b == PVN3D_OK, "%s: status %d (library) / %d (baseline): %s", what, a, b, pvn3d_last_error());
}

#if PVN3D_CPU_CLONES_ENABLED
// The compiler's dispatcher over the same three levels, as C++ function versions in this program: it picks
// the library's clones too (the same compiler and rules). An outputs-only comparison cannot tell a dispatcher
// that always picks the baseline (Clang before 18 did) from a working one.
__attribute__((target("default"))) int dispatched_level() { return 0; }
__attribute__((target("arch=x86-64-v3"))) int dispatched_level() { return 3; }
__attribute__((target("arch=x86-64-v4"))) int dispatched_level() { return 4; }
#endif

}  // namespace

TEST(cpu_clones_dispatch_picks_the_widest_level) {
#if !PVN3D_CPU_CLONES_ENABLED
  SKIP("this build has no clones (cpu_clones.h: not x86-64 Linux, an older compiler, or PVN3D_CPU_CLONES=OFF)");
#else
  const int expected = __builtin_cpu_supports("x86-64-v4") ? 4 : __builtin_cpu_supports("x86-64-v3") ? 3 : 0;
  const int level = dispatched_level();
  CHECK(level == expected, "the dispatcher picked x86-64 level %d on a CPU of level %d", level, expected);
  std::printf("  this CPU runs the %s clones\n", level == 4 ? "x86-64-v4 (AVX-512)" : level == 3 ? "x86-64-v3 (AVX2)" : "baseline");
#endif
}

// Every CPU entry point of A and B on the same inputs, output by output.
void compare(const CpuOps& A, const CpuOps& B) {
  std::mt19937 rng(20261205);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::normal_distribution<float> g(0.0f, 1.0f);
  for (int round = 0; round < 3; ++round) {
    // round 2: coordinates on a 1/20 grid, so that distances tie
    const int64_t b = 2, n = 2000 + 517 * round, m = 384, s = 32, c = 19;
    std::vector<float> xyz(b * n * 3);
    for (float& v : xyz) v = round == 2 ? std::round(u(rng) * 4.0f) / 20.0f : u(rng) * 0.2f;
    std::vector<int64_t> fa(b * m), fb(b * m);
    ok2(A.fps(b, n, m, xyz.data(), fa.data()), B.fps(b, n, m, xyz.data(), fb.data()), "fps");
    same("furthest_point_sample", round, fa, fb);
    std::vector<float> centres(b * m * 3);
    for (int64_t i = 0; i < b; ++i)
      for (int64_t j = 0; j < m; ++j)
        for (int d = 0; d < 3; ++d) centres[(i * m + j) * 3 + d] = xyz[(i * n + fa[i * m + j]) * 3 + d];
    for (float radius : {0.004f, 0.03f, 0.3f}) {  // from empty balls to more hits than nsample
      std::vector<int64_t> qa(b * m * s), qb(b * m * s);
      ok2(A.ball_query(b, n, m, radius, s, xyz.data(), centres.data(), qa.data()),
          B.ball_query(b, n, m, radius, s, xyz.data(), centres.data(), qb.data()), "ball_query");
      same("ball_query", round, qa, qb);
      if (radius != 0.03f) continue;
      std::vector<float> feat(b * c * n);
      for (float& v : feat) v = g(rng);
      std::vector<float> ga(b * c * m * s), gb(b * c * m * s);
      ok2(A.group(b, c, n, m, s, feat.data(), qa.data(), ga.data()),
          B.group(b, c, n, m, s, feat.data(), qa.data(), gb.data()), "group_points");
      same("group_points", round, ga, gb);
      std::vector<float> pa(b * c * m), pb(b * c * m);
      ok2(A.gather(b, c, n, m, feat.data(), fa.data(), pa.data()), B.gather(b, c, n, m, feat.data(), fa.data(), pb.data()),
          "gather_points");
      same("gather_points", round, pa, pb);
    }
    std::vector<float> da(b * n * 3), db(b * n * 3);
    std::vector<int64_t> ia(b * n * 3), ib(b * n * 3);
    ok2(A.three_nn(b, n, m, xyz.data(), centres.data(), da.data(), ia.data()),
        B.three_nn(b, n, m, xyz.data(), centres.data(), db.data(), ib.data()), "three_nn");
    same("three_nn dist2", round, da, db);
    same("three_nn idx", round, ia, ib);
    std::vector<float> known(b * c * m), w(b * n * 3);
    for (float& v : known) v = g(rng);
    for (float& v : w) v = std::fabs(g(rng));
    std::vector<float> ta(b * c * n), tb(b * c * n);
    ok2(A.three_interpolate(b, c, m, n, known.data(), ia.data(), w.data(), ta.data()),
        B.three_interpolate(b, c, m, n, known.data(), ia.data(), w.data(), tb.data()), "three_interpolate");
    same("three_interpolate", round, ta, tb);

    // Votes: K clusters, one vote in 7 an outlier 20x as spread (slow modes: the mean shift runs long).
    const int64_t K = 9, N = 300 + 150 * round;
    std::vector<float> votes(b * K * N * 3);
    for (int64_t i = 0; i < b; ++i)
      for (int64_t k = 0; k < K; ++k) {
        const float cx = u(rng) * 0.1f, cy = u(rng) * 0.1f, cz = 0.5f + u(rng) * 0.1f;
        for (int64_t p = 0; p < N; ++p) {
          float* v = &votes[((i * K + k) * N + p) * 3];
          const float sd = p % 7 == 0 ? 0.2f : 0.01f;
          v[0] = cx + g(rng) * sd;
          v[1] = cy + g(rng) * sd;
          v[2] = cz + g(rng) * sd;
        }
      }
    if (round == 1) votes[7] = NAN;
    std::vector<float> fmask(b * N);
    std::vector<uint8_t> bmask(b * N);
    for (int64_t p = 0; p < b * N; ++p) bmask[p] = static_cast<uint8_t>((fmask[p] = (p % 5) != 0 ? 1.0f : 0.0f) != 0);
    for (int cf = 0; cf <= 1; ++cf) {
      const void* mask = cf ? static_cast<const void*>(bmask.data()) : fmask.data();
      const int dtype = cf ? PVN3D_MASK_BOOL : PVN3D_MASK_FLOAT32;
      std::vector<float> ka(b * K * 3), kb(b * K * 3);
      std::vector<int64_t> la(b), lb(b);
      ok2(A.vote_aggregate(votes.data(), mask, dtype, b, K, N, 0.08f, 300, cf, ka.data(), la.data()),
          B.vote_aggregate(votes.data(), mask, dtype, b, K, N, 0.08f, 300, cf, kb.data(), lb.data()), "vote_aggregate");
      same("vote_aggregate kps", round, ka, kb);
      same("vote_aggregate inliers", round, la, lb);
    }
    std::vector<float> model(K * 3);
    for (float& v : model) v = u(rng) * 0.1f;
    std::vector<float> Ra(b * 9), Rb(b * 9), tA(b * 3), tB(b * 3), ka(b * K * 3), kb(b * K * 3);
    std::vector<int64_t> la(b), lb(b);
    ok2(A.pose_solve(votes.data(), fmask.data(), PVN3D_MASK_FLOAT32, b, K, N, model.data(), 0, K, 0.05f, 100, 1, Ra.data(),
                     tA.data(), ka.data(), la.data()),
        B.pose_solve(votes.data(), fmask.data(), PVN3D_MASK_FLOAT32, b, K, N, model.data(), 0, K, 0.05f, 100, 1, Rb.data(),
                     tB.data(), kb.data(), lb.data()),
        "pose_solve");
    same("pose_solve R", round, Ra, Rb);
    same("pose_solve t", round, tA, tB);
    same("pose_solve kps", round, ka, kb);
    ok2(A.kabsch(model.data(), 0, K, ka.data(), b, K, Ra.data(), tA.data()),
        B.kabsch(model.data(), 0, K, ka.data(), b, K, Rb.data(), tB.data()), "kabsch");
    same("kabsch R", round, Ra, Rb);
    same("kabsch t", round, tA, tB);
  }
}

TEST(cpu_clones_give_the_baseline_bits) {
#if !(defined(__x86_64__) && defined(__linux__))
  SKIP("the clones are built on x86-64 Linux only; elsewhere the library is the baseline");
#endif
  CpuOps A = linked(), B{};
  void* handle = nullptr;
  if (!load("PVN3D_BASELINE_LIBRARY", PVN3D_BASELINE_LIBRARY, B, &handle)) return;
  CHECK(reinterpret_cast<void*>(A.fps) != reinterpret_cast<void*>(B.fps), "the baseline resolved to the library itself");
  g_label = "the library's (the clones this CPU runs)";
  compare(A, B);
  dlclose(handle);
}

TEST(x86_64_v3_build_gives_the_baseline_bits) {
  // On an AVX-512 machine the library runs its v4 clones only; the v3 (AVX2) code is checked here, as a
  // build of the same sources with -march=x86-64-v3 (what the v3 clone is compiled with).
#if !defined(PVN3D_V3_LIBRARY)
  SKIP("no x86-64-v3 build of the library (cpu_clones.h: not x86-64 Linux or an older compiler)");
#else
  if (!__builtin_cpu_supports("x86-64-v3")) SKIP("this CPU cannot run x86-64-v3 code");
  CpuOps A{}, B{};
  void* v3 = nullptr;
  void* base = nullptr;
  if (!load("PVN3D_V3_LIBRARY", PVN3D_V3_LIBRARY, A, &v3) || !load("PVN3D_BASELINE_LIBRARY", PVN3D_BASELINE_LIBRARY, B, &base))
    return;
  g_label = "the x86-64-v3 build's";
  compare(A, B);
  dlclose(v3);
  dlclose(base);
#endif
}

int main(int argc, char** argv) { return testenv::run(argc, argv); }
