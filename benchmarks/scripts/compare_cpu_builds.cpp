// Bitwise comparison of every CPU entry point of two builds of libpvn3d_ops (cpu-ab.sh: a base commit against
// a new one), with each vote_aggregate call timed. Usage: compare_cpu_builds A.so B.so
#include <dlfcn.h>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <cmath>
#include <random>
#include <vector>
#include <chrono>
typedef int st;
// Every call must succeed: a failing call writes no output, and two untouched outputs compare equal.
#define OK(call) do { const int s_ = (call); if (s_ != 0) { printf("status %d: %s\n", s_, #call); return 2; } } while (0)
struct Lib {
  void* h;
  st (*fps)(int64_t, int64_t, int64_t, const float*, int64_t*);
  st (*bq)(int64_t, int64_t, int64_t, float, int64_t, const float*, const float*, int64_t*);
  st (*gather)(int64_t, int64_t, int64_t, int64_t, const float*, const int64_t*, float*);
  st (*group)(int64_t, int64_t, int64_t, int64_t, int64_t, const float*, const int64_t*, float*);
  st (*tnn)(int64_t, int64_t, int64_t, const float*, const float*, float*, int64_t*);
  st (*tint)(int64_t, int64_t, int64_t, int64_t, const float*, const int64_t*, const float*, float*);
  st (*va)(const float*, const void*, int, int64_t, int64_t, int64_t, float, int64_t, int, float*, int64_t*);
  st (*ps)(const float*, const void*, int, int64_t, int64_t, int64_t, const float*, int64_t, int64_t, float, int64_t, int, float*, float*, float*, int64_t*);
  st (*kab)(const float*, int64_t, int64_t, const float*, int64_t, int64_t, float*, float*);
};
static Lib load(const char* p) {
  Lib l; l.h = dlopen(p, RTLD_NOW | RTLD_LOCAL);
  if (!l.h) { printf("dlopen %s: %s\n", p, dlerror()); exit(2); }
#define S(f, n) *(void**)&l.f = dlsym(l.h, n); if (!l.f) { printf("no %s\n", n); exit(2); }
  S(fps, "pvn3d_furthest_point_sample_cpu") S(bq, "pvn3d_ball_query_cpu") S(gather, "pvn3d_gather_points_cpu")
  S(group, "pvn3d_group_points_cpu") S(tnn, "pvn3d_three_nn_cpu") S(tint, "pvn3d_three_interpolate_cpu")
  S(va, "pvn3d_vote_aggregate_cpu") S(ps, "pvn3d_pose_solve_cpu") S(kab, "pvn3d_kabsch_solver_cpu")
  return l;
}
template <class T> static int same(const char* what, const std::vector<T>& a, const std::vector<T>& b) {
  int bad = memcmp(a.data(), b.data(), a.size() * sizeof(T)) != 0;
  printf("%-40s %s\n", what, bad ? "DIFFERENT" : "identical");
  return bad;
}
int main(int argc, char** argv) {
  Lib A = load(argv[1]), B = load(argv[2]);
  if ((void*)A.fps == (void*)B.fps) { printf("same library loaded twice\n"); return 2; }
  std::mt19937 rng(7); std::normal_distribution<float> g(0.f, 1.f); std::uniform_real_distribution<float> u(-1.f, 1.f);
  int bad = 0;
  for (int round = 0; round < 3; ++round) {
    const int64_t b = 2, n = 3000 + round * 777, m = 512, s = 32, c = 19;
    std::vector<float> xyz(b * n * 3); for (auto& v : xyz) v = round == 2 ? std::round(u(rng) * 20) / 20 : u(rng) * 0.2f;
    std::vector<int64_t> fa(b * m), fb(b * m); OK(A.fps(b, n, m, xyz.data(), fa.data())); OK(B.fps(b, n, m, xyz.data(), fb.data()));
    bad += same("fps", fa, fb);
    std::vector<float> nx(b * m * 3); for (int64_t i = 0; i < b; ++i) for (int64_t j = 0; j < m; ++j) for (int d = 0; d < 3; ++d) nx[(i * m + j) * 3 + d] = xyz[(i * n + fa[i * m + j]) * 3 + d];
    std::vector<int64_t> qa(b * m * s), qb(b * m * s); OK(A.bq(b, n, m, 0.03f, s, xyz.data(), nx.data(), qa.data())); OK(B.bq(b, n, m, 0.03f, s, xyz.data(), nx.data(), qb.data()));
    bad += same("ball_query", qa, qb);
    std::vector<float> feat(b * c * n); for (auto& v : feat) v = g(rng);
    std::vector<float> ga(b * c * m), gb(b * c * m); OK(A.gather(b, c, n, m, feat.data(), fa.data(), ga.data())); OK(B.gather(b, c, n, m, feat.data(), fa.data(), gb.data()));
    bad += same("gather", ga, gb);
    std::vector<float> pa(b * c * m * s), pb(b * c * m * s); OK(A.group(b, c, n, m, s, feat.data(), qa.data(), pa.data())); OK(B.group(b, c, n, m, s, feat.data(), qa.data(), pb.data()));
    bad += same("group", pa, pb);
    std::vector<float> da(b * n * 3), db(b * n * 3); std::vector<int64_t> ia(b * n * 3), ib(b * n * 3);
    OK(A.tnn(b, n, m, xyz.data(), nx.data(), da.data(), ia.data())); OK(B.tnn(b, n, m, xyz.data(), nx.data(), db.data(), ib.data()));
    bad += same("three_nn dist", da, db); bad += same("three_nn idx", ia, ib);
    std::vector<float> w(b * n * 3); for (auto& v : w) v = std::fabs(g(rng));
    std::vector<float> mf(b * c * m); for (auto& v : mf) v = g(rng);
    std::vector<float> ta(b * c * n), tb(b * c * n); OK(A.tint(b, c, m, n, mf.data(), ia.data(), w.data(), ta.data())); OK(B.tint(b, c, m, n, mf.data(), ia.data(), w.data(), tb.data()));
    bad += same("three_interpolate", ta, tb);
    // votes: K keypoints, clusters with noise and outliers
    const int64_t K = 9, N = 600 + 300 * round;
    std::vector<float> votes(b * K * N * 3), mask(b * N);
    for (int64_t i = 0; i < b; ++i) for (int64_t k = 0; k < K; ++k) {
      float cx = u(rng) * 0.1f, cy = u(rng) * 0.1f, cz = 0.5f + u(rng) * 0.1f;
      for (int64_t p = 0; p < N; ++p) { float* v = &votes[((i * K + k) * N + p) * 3]; float sd = p % 7 == 0 ? 0.2f : 0.01f; v[0] = cx + g(rng) * sd; v[1] = cy + g(rng) * sd; v[2] = cz + g(rng) * sd; }
    }
    for (int64_t p = 0; p < b * N; ++p) mask[p] = (p % 5) != 0;
    if (round == 1) votes[7] = NAN;
    std::vector<float> ka(b * K * 3), kb(b * K * 3); std::vector<int64_t> la(b), lb(b);
    for (int cf = 0; cf < 2; ++cf) {
      auto t0 = std::chrono::steady_clock::now();
      OK(A.va(votes.data(), mask.data(), 0, b, K, N, 0.08f, 300, cf, ka.data(), la.data()));
      auto t1 = std::chrono::steady_clock::now();
      OK(B.va(votes.data(), mask.data(), 0, b, K, N, 0.08f, 300, cf, kb.data(), lb.data()));
      auto t2 = std::chrono::steady_clock::now();
      printf("  vote_aggregate N=%lld cf=%d: A %.1f ms, B %.1f ms\n", (long long)N, cf, std::chrono::duration<double, std::milli>(t1 - t0).count(), std::chrono::duration<double, std::milli>(t2 - t1).count());
      bad += same("vote_aggregate kps", ka, kb); bad += same("vote_aggregate inliers", la, lb);
    }
    std::vector<float> model(K * 3); for (auto& v : model) v = u(rng) * 0.1f;
    std::vector<float> Ra(b * 9), Rb(b * 9), tA(b * 3), tB(b * 3);
    OK(A.ps(votes.data(), mask.data(), 0, b, K, N, model.data(), 0, K, 0.05f, 100, 1, Ra.data(), tA.data(), ka.data(), la.data()));
    OK(B.ps(votes.data(), mask.data(), 0, b, K, N, model.data(), 0, K, 0.05f, 100, 1, Rb.data(), tB.data(), kb.data(), lb.data()));
    bad += same("pose_solve R", Ra, Rb); bad += same("pose_solve t", tA, tB); bad += same("pose_solve kps", ka, kb);
    OK(A.kab(model.data(), 0, K, ka.data(), b, K, Ra.data(), tA.data())); OK(B.kab(model.data(), 0, K, ka.data(), b, K, Rb.data(), tB.data()));
    bad += same("kabsch R", Ra, Rb); bad += same("kabsch t", tA, tB);
  }
  printf("%s\n", bad ? "FAIL" : "all identical");
  return bad != 0;
}
