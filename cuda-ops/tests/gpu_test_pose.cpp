// CUDA == CPU for the pose operators (VoteAggregate, KabschSolver, PoseSolve) on every case of the CPU
// tests, plus the CUDA-only error paths. Without a CUDA device (or with a CPU-only library) it prints
// "SKIPPED: no CUDA device" and exits 77 (ctest's skip code).
//
//   gpu_test_pose                 the tests
//   gpu_test_pose --bench [file]  timings (CUDA events, median of 50 after 5 warm-ups) of the mean shift
//                                 and the fused pose solve at PVN3D's sizes; also written to `file`
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "common/status.h"
#include "device/device.h"
#include "kabsch_solver/kabsch_solver.h"
#include "pose_solve/pose_solve.h"
#include "vote_aggregate/vote_aggregate.h"
#include "test_pose_solve_reference.h"

using namespace poseref;

namespace {
Harness H;
void* g_stream = nullptr;

#define CK(expr)                                                                                   \
  do {                                                                                             \
    const int st_ = (expr);                                                                        \
    if (st_ != PVN3D_OK) {                                                                         \
      std::printf("FATAL: %s -> %s: %s\n", #expr, pvn3d_status_name(st_), pvn3d_last_error());    \
      std::exit(2);                                                                                \
    }                                                                                              \
  } while (0)

struct Dev {
  void* p = nullptr;
  size_t bytes = 0;
  explicit Dev(size_t n) : bytes(n) { CK(pvn3d_cuda_malloc(&p, n)); }
  template <class T>
  Dev(const std::vector<T>& v) : Dev(v.size() * sizeof(T)) {
    CK(pvn3d_cuda_memcpy_h2d_async(p, v.data(), bytes, g_stream));
  }
  ~Dev() { pvn3d_cuda_free(p); }
  template <class T>
  T* as() const { return static_cast<T*>(p); }
  template <class T>
  std::vector<T> get() const {
    std::vector<T> v(bytes / sizeof(T));
    CK(pvn3d_cuda_memcpy_d2h_async(v.data(), p, bytes, g_stream));
    CK(pvn3d_cuda_stream_synchronize(g_stream));
    return v;
  }
  Dev(const Dev&) = delete;
  Dev& operator=(const Dev&) = delete;
};

struct VAOut {
  std::vector<float> kps;
  std::vector<int64_t> inl;
};

VAOut va_cpu(const VoteCase& c, const void* mask, int dtype, float bw, int64_t it, int cf) {
  VAOut o;
  o.kps.resize(c.B * c.K * 3);
  o.inl.resize(c.B);
  CK(pvn3d_vote_aggregate_cpu(c.votes.data(), mask, dtype, c.B, c.K, c.N, bw, it, cf, o.kps.data(), o.inl.data()));
  return o;
}

VAOut va_cuda(const VoteCase& c, const void* mask_host, size_t mask_bytes, int dtype, float bw, int64_t it, int cf) {
  Dev votes(std::max<size_t>(4, c.votes.size() * sizeof(float)));
  if (!c.votes.empty()) CK(pvn3d_cuda_memcpy_h2d_async(votes.p, c.votes.data(), c.votes.size() * 4, g_stream));
  Dev mask(std::max<size_t>(4, mask_bytes));
  if (mask_host) CK(pvn3d_cuda_memcpy_h2d_async(mask.p, mask_host, mask_bytes, g_stream));
  Dev kps(c.B * c.K * 3 * sizeof(float)), inl(c.B * sizeof(int64_t));
  const size_t wsb = pvn3d_vote_aggregate_cuda_workspace_bytes(c.B, c.K, c.N);
  Dev ws(wsb);
  CK(pvn3d_vote_aggregate_cuda(votes.as<float>(), mask_host ? mask.p : nullptr, dtype, c.B, c.K, c.N, bw, it, cf,
                               kps.as<float>(), inl.as<int64_t>(), ws.p, wsb, g_stream));
  VAOut o;
  o.kps = kps.get<float>();
  o.inl = inl.get<int64_t>();
  return o;
}

void compare_va(const char* name, const VoteCase& c, const float* mask, float bw, int64_t it, int cf) {
  VAOut a = va_cpu(c, mask, PVN3D_MASK_FLOAT32, bw, it, cf);
  VAOut g = va_cuda(c, mask, mask ? c.B * c.N * sizeof(float) : 0, PVN3D_MASK_FLOAT32, bw, it, cf);
  const double d = max_diff(g.kps, a.kps);
  H.check(d <= 1e-5, "%s: CUDA kps differ from CPU by %g (rel, tol 1e-5)", name, d);
  H.check(g.inl == a.inl, "%s: CUDA inliers differ from CPU (%lld vs %lld)", name, (long long)g.inl[0],
          (long long)a.inl[0]);
  std::printf("  %-44s max |cuda-cpu| = %.3g\n", name, d);
}

void test_vote_aggregate() {
  struct P { uint32_t seed; int64_t B, K, N; double sigma, outl, maskr; };
  const P ps[] = {{1, 2, 9, 300, 0.005, 0.2, 0.8},  {2, 3, 3, 250, 0.01, 0.4, 0.9},  {3, 1, 9, 400, 0.002, 0.0, 1.0},
                  {4, 2, 9, 200, 0.02, 0.6, 0.7},   {5, 1, 3, 64, 0.03, 0.3, 0.5},   {6, 2, 9, 3000, 0.01, 0.3, 0.9},
                  {7, 4, 9, 1500, 0.008, 0.25, 0.95}, {8, 1, 9, 5000, 0.01, 0.2, 1.0}};
  for (const P& p : ps) {
    VoteCase c = make_vote_case(p.seed, p.B, p.K, p.N, p.sigma, p.outl, p.maskr, p.seed == 1 ? M_PI - 1e-3 : -1);
    for (int cf = 0; cf <= 1; ++cf) {
      char name[128];
      std::snprintf(name, sizeof name, "VA seed=%u B=%lld K=%lld N=%lld cf=%d", p.seed, (long long)p.B, (long long)p.K,
                    (long long)p.N, cf);
      compare_va(name, c, c.mask.data(), 0.08f, 300, cf);
    }
  }
  VoteCase c = make_vote_case(11, 2, 4, 300, 0.03, 0.5, 0.9);
  compare_va("VA bw=0.02", c, c.mask.data(), 0.02f, 300, 1);
  compare_va("VA max_iter=3", c, c.mask.data(), 0.05f, 3, 1);
  compare_va("VA max_iter=0", c, c.mask.data(), 0.05f, 0, 1);
  compare_va("VA NULL mask", c, nullptr, 0.08f, 300, 1);
  // Bool mask.
  {
    std::vector<uint8_t> bm(c.mask.size());
    for (size_t i = 0; i < bm.size(); ++i) bm[i] = c.mask[i] != 0.0f;
    VAOut a = va_cpu(c, c.mask.data(), PVN3D_MASK_FLOAT32, 0.08f, 300, 1);
    VAOut g = va_cuda(c, bm.data(), bm.size(), PVN3D_MASK_BOOL, 0.08f, 300, 1);
    H.check(max_diff(g.kps, a.kps) <= 1e-5 && g.inl == a.inl, "VA bool mask on CUDA == float mask on CPU");
  }
  // Empty items, all-empty, N = 0.
  VoteCase e = make_vote_case(31, 3, 9, 100, 0.005, 0.2, 0.9);
  for (int64_t n = 0; n < e.N; ++n) e.mask[1 * e.N + n] = 0.0f;
  compare_va("VA one empty item", e, e.mask.data(), 0.08f, 300, 1);
  {
    VAOut g = va_cuda(e, e.mask.data(), e.mask.size() * 4, 0, 0.08f, 300, 1);
    bool ok = g.inl[1] == 0;
    for (int i = 0; i < 27; ++i) ok = ok && std::isnan(g.kps[27 + i]);
    H.check(ok, "VA CUDA empty item: NaN and 0 inliers");
  }
  std::vector<float> zero(e.mask.size(), 0.0f);
  compare_va("VA all empty", e, zero.data(), 0.08f, 300, 1);
  VoteCase e0 = e;
  e0.N = 0;
  e0.votes.clear();
  {
    VAOut g = va_cuda(e0, nullptr, 0, 0, 0.08f, 300, 0);
    bool ok = true;
    for (float v : g.kps) ok = ok && std::isnan(v);
    for (int64_t v : g.inl) ok = ok && v == 0;
    H.check(ok, "VA CUDA N=0: NaN and 0 inliers");
  }
  // Non-finite votes.
  VoteCase d = make_vote_case(41, 2, 9, 150, 0.005, 0.2, 1.0);
  d.votes[((0 * 9 + 4) * 150 + 3) * 3 + 1] = NAN;
  d.votes[((1 * 9 + 8) * 150 + 7) * 3 + 0] = INFINITY;
  compare_va("VA non-finite votes", d, d.mask.data(), 0.08f, 300, 1);
  // One point; tie of two clusters.
  VoteCase one = make_vote_case(52, 1, 9, 1, 0.0, 0.0, 1.0);
  compare_va("VA one point", one, nullptr, 0.08f, 300, 1);
  VoteCase t;
  t.B = 1; t.K = 1; t.N = 30;
  t.votes.resize(90);
  std::mt19937 gen(3);
  std::normal_distribution<double> nd(0, 0.003);
  for (int64_t n = 0; n < 30; ++n) {
    t.votes[n * 3] = (float)(((n % 2) ? 0.0 : 1.0) + nd(gen));
    t.votes[n * 3 + 1] = (float)nd(gen);
    t.votes[n * 3 + 2] = (float)nd(gen);
  }
  compare_va("VA tie (K=1)", t, nullptr, 0.08f, 300, 1);
  // Errors on the CUDA entry point.
  {
    Dev kps(27 * 4), inl(8);
    const size_t wsb = pvn3d_vote_aggregate_cuda_workspace_bytes(1, 9, 10);
    Dev ws(wsb), votes(1 * 9 * 10 * 3 * 4);
    int st = pvn3d_vote_aggregate_cuda(votes.as<float>(), nullptr, 0, 1, 9, 10, 0.08f, 300, 1, kps.as<float>(),
                                       inl.as<int64_t>(), ws.p, wsb - 1, g_stream);
    H.check(st == PVN3D_ERR_INVALID_ARGUMENT && std::string(pvn3d_last_error()).find("workspace_bytes") != std::string::npos,
            "VA CUDA small workspace: '%s'", pvn3d_last_error());
    st = pvn3d_vote_aggregate_cuda(votes.as<float>(), nullptr, 0, 1, 9, 10, 0.0f, 300, 1, kps.as<float>(),
                                   inl.as<int64_t>(), ws.p, wsb, g_stream);
    H.check(st == PVN3D_ERR_INVALID_ARGUMENT && std::string(pvn3d_last_error()).find("bandwidth") != std::string::npos,
            "VA CUDA bandwidth 0: '%s'", pvn3d_last_error());
  }
}

struct KOut {
  std::vector<float> R, t;
  int64_t err[2];
};
KOut kabsch_cuda(const std::vector<float>& model, int64_t model_B, const std::vector<float>& pred, int64_t B, int64_t K) {
  Dev m(model), p(pred), R(B * 9 * 4), t(B * 3 * 4), e(16);
  CK(pvn3d_kabsch_solver_cuda(m.as<float>(), model_B, K, p.as<float>(), B, K, R.as<float>(), t.as<float>(),
                              e.as<int64_t>(), g_stream));
  KOut o;
  o.R = R.get<float>();
  o.t = t.get<float>();
  auto ev = e.get<int64_t>();
  o.err[0] = ev[0];
  o.err[1] = ev[1];
  return o;
}

void test_kabsch() {
  std::mt19937 g(1234);
  std::uniform_real_distribution<double> u(-0.2, 0.2);
  std::normal_distribution<double> nd(0.0, 0.005);
  const double angles[] = {-1, -1, 0.0, M_PI / 2, M_PI - 1e-3, M_PI - 1e-6, M_PI};
  int cases = 0;
  bool all_bitwise = true;
  for (int64_t K : {3, 4, 9}) {
    for (double ang : angles) {
      for (int batched = 0; batched <= 1; ++batched) {
        const int64_t B = 4;
        std::vector<float> model((batched ? B : 1) * K * 3), pred(B * K * 3);
        for (auto& m : model) m = (float)u(g);
        for (int64_t b = 0; b < B; ++b) {
          double R[9];
          random_rotation(g, R, ang);
          const float* a = &model[batched ? b * K * 3 : 0];
          for (int64_t i = 0; i < K; ++i)
            for (int r = 0; r < 3; ++r)
              pred[(b * K + i) * 3 + r] =
                  (float)(R[r * 3] * a[i * 3] + R[r * 3 + 1] * a[i * 3 + 1] + R[r * 3 + 2] * a[i * 3 + 2] + 0.3 * r +
                          (b % 2 ? nd(g) : 0.0));
        }
        std::vector<float> Rc(B * 9), tc(B * 3);
        CK(pvn3d_kabsch_solver_cpu(model.data(), batched ? B : 0, K, pred.data(), B, K, Rc.data(), tc.data()));
        KOut o = kabsch_cuda(model, batched ? B : 0, pred, B, K);
        const double d = std::max(max_diff(o.R, Rc), max_diff(o.t, tc));
        H.check(d <= 1e-5, "Kabsch K=%lld angle=%g batched=%d: CUDA differs from CPU by %g", (long long)K, ang, batched, d);
        H.check(o.err[0] == -1 && o.err[1] == -1, "Kabsch: input_error must be {-1,-1} for finite input");
        all_bitwise = all_bitwise && std::memcmp(o.R.data(), Rc.data(), Rc.size() * 4) == 0 &&
                      std::memcmp(o.t.data(), tc.data(), tc.size() * 4) == 0;
        ++cases;
      }
    }
  }
  std::printf("  Kabsch: %d random cases, CUDA bit-identical to CPU: %s\n", cases, all_bitwise ? "yes" : "no");
  H.check(all_bitwise, "Kabsch: CUDA should be bit-identical to CPU (same double code, no FMA)");
  // Degenerate and reflection cases: bit-identical too.
  const int64_t K = 5;
  std::vector<float> line(K * 3), pline(K * 3), same(K * 3, 0.25f), mirror(K * 3);
  for (int64_t i = 0; i < K; ++i) {
    line[i * 3] = 0.03f * i; line[i * 3 + 1] = 0.02f * i; line[i * 3 + 2] = -0.01f * i;
    pline[i * 3] = 0.1f - 0.02f * i; pline[i * 3 + 1] = 0.03f * i; pline[i * 3 + 2] = 0.9f + 0.01f * i;
  }
  std::vector<float> rnd(K * 3);
  for (auto& v : rnd) v = (float)u(g);
  for (int64_t i = 0; i < K; ++i) {
    mirror[i * 3] = rnd[i * 3]; mirror[i * 3 + 1] = rnd[i * 3 + 1]; mirror[i * 3 + 2] = -rnd[i * 3 + 2];
  }
  struct D { const char* name; const std::vector<float>* a; const std::vector<float>* b; };
  const D ds[] = {{"collinear", &line, &pline}, {"coincident", &same, &pline}, {"reflection", &rnd, &mirror}};
  for (const D& dd : ds) {
    std::vector<float> Rc(9), tc(3);
    CK(pvn3d_kabsch_solver_cpu(dd.a->data(), 0, K, dd.b->data(), 1, K, Rc.data(), tc.data()));
    KOut o = kabsch_cuda(*dd.a, 0, *dd.b, 1, K);
    H.check(std::memcmp(o.R.data(), Rc.data(), 36) == 0 && std::memcmp(o.t.data(), tc.data(), 12) == 0,
            "Kabsch %s: CUDA bit-identical to CPU", dd.name);
    H.check(std::fabs(det3(o.R.data()) - 1) < 1e-5, "Kabsch %s: CUDA det = %g", dd.name, det3(o.R.data()));
  }
  // Non-finite input: NaN pose for the item, the report decodes to the CPU's message.
  std::vector<float> model(9 * 3), pred(3 * 9 * 3);
  for (auto& v : model) v = (float)u(g);
  for (auto& v : pred) v = (float)u(g);
  pred[27 + 5] = NAN;  // item 1
  std::vector<float> Rc(27), tc(9);
  const int cst = pvn3d_kabsch_solver_cpu(model.data(), 0, 9, pred.data(), 3, 9, Rc.data(), tc.data());
  const std::string cmsg = pvn3d_last_error();
  KOut o = kabsch_cuda(model, 0, pred, 3, 9);
  const int gst = pvn3d_kabsch_error_describe(nullptr, o.err[0], o.err[1], 27, nullptr);
  H.check(cst == PVN3D_ERR_INVALID_ARGUMENT && gst == cst && cmsg == pvn3d_last_error(),
          "Kabsch non-finite: CUDA report '%s' vs CPU '%s'", pvn3d_last_error(), cmsg.c_str());
  H.check(std::isnan(o.R[9]) && std::isnan(o.t[3]) && std::isfinite(o.R[0]) && std::isfinite(o.R[18]),
          "Kabsch non-finite: NaN pose for item 1 only");
  model[4] = INFINITY;
  o = kabsch_cuda(model, 0, pred, 3, 9);
  pvn3d_kabsch_error_describe(nullptr, o.err[0], o.err[1], 27, nullptr);
  H.check(std::string(pvn3d_last_error()) ==
              "PVN3D_KabschSolver: input model_kps holds a non-finite value (inf) at flat position 4",
          "Kabsch non-finite model: '%s'", pvn3d_last_error());
  // Shape errors on the CUDA entry point.
  Dev m(model), p(pred), R(27 * 4), t(9 * 4);
  int st = pvn3d_kabsch_solver_cuda(m.as<float>(), 0, 9, p.as<float>(), 3, 2, R.as<float>(), t.as<float>(), nullptr,
                                    g_stream);
  H.check(st == PVN3D_ERR_INVALID_ARGUMENT, "Kabsch CUDA K<3: status %d", st);
  st = pvn3d_kabsch_solver_cuda(m.as<float>(), 0, 8, p.as<float>(), 3, 9, R.as<float>(), t.as<float>(), nullptr,
                                g_stream);
  H.check(st == PVN3D_ERR_INVALID_ARGUMENT && std::string(pvn3d_last_error()).find("mismatched K") != std::string::npos,
          "Kabsch CUDA mismatched K: '%s'", pvn3d_last_error());
  st = pvn3d_kabsch_solver_cuda(m.as<float>(), 2, 9, p.as<float>(), 3, 9, R.as<float>(), t.as<float>(), nullptr,
                                g_stream);
  H.check(st == PVN3D_ERR_INVALID_ARGUMENT && std::string(pvn3d_last_error()).find("mismatched B") != std::string::npos,
          "Kabsch CUDA mismatched B: '%s'", pvn3d_last_error());
}

void test_pose() {
  struct P { uint32_t seed; int64_t B, K, N; double sigma, outl, angle; };
  const P ps[] = {{1, 2, 9, 300, 0.003, 0.2, M_PI - 1e-3}, {2, 3, 3, 200, 0.002, 0.3, -1}, {3, 1, 9, 3000, 0.004, 0.5, M_PI},
                  {4, 2, 4, 150, 0.001, 0.0, 0.5}};
  for (const P& p : ps) {
    VoteCase c = make_vote_case(p.seed, p.B, p.K, p.N, p.sigma, p.outl, 0.9, p.angle);
    if (p.seed == 2)
      for (int64_t n = 0; n < c.N; ++n) c.mask[1 * c.N + n] = 0.0f;  // an empty item
    const int64_t B = p.B, K = p.K;
    std::vector<float> R(B * 9), t(B * 3), kps(B * K * 3);
    std::vector<int64_t> inl(B);
    CK(pvn3d_pose_solve_cpu(c.votes.data(), c.mask.data(), 0, B, K, p.N, c.model.data(), 0, K, 0.08f, 300, 1, R.data(),
                            t.data(), kps.data(), inl.data()));
    Dev votes(c.votes), mask(c.mask), model(c.model), dR(B * 36), dt(B * 12), dk(B * K * 12), di(B * 8), de(16);
    const size_t wsb = pvn3d_pose_solve_cuda_workspace_bytes(B, K, p.N);
    Dev ws(wsb);
    CK(pvn3d_pose_solve_cuda(votes.as<float>(), mask.p, 0, B, K, p.N, model.as<float>(), 0, K, 0.08f, 300, 1,
                             dR.as<float>(), dt.as<float>(), dk.as<float>(), di.as<int64_t>(), de.as<int64_t>(), ws.p,
                             wsb, g_stream));
    const double d = std::max({max_diff(dR.get<float>(), R), max_diff(dt.get<float>(), t), max_diff(dk.get<float>(), kps)});
    H.check(d <= 1e-5, "pose seed %u: CUDA differs from CPU by %g", p.seed, d);
    H.check(di.get<int64_t>() == inl, "pose seed %u: inliers differ", p.seed);
    H.check(de.get<int64_t>()[0] == -1, "pose seed %u: no input error expected", p.seed);
    std::printf("  pose seed %u B=%lld K=%lld N=%lld: max |cuda-cpu| = %.3g\n", p.seed, (long long)B, (long long)K,
                (long long)p.N, d);
    // inliers = NULL and input_error = NULL are allowed.
    CK(pvn3d_pose_solve_cuda(votes.as<float>(), mask.p, 0, B, K, p.N, model.as<float>(), 0, K, 0.08f, 300, 1,
                             dR.as<float>(), dt.as<float>(), dk.as<float>(), nullptr, nullptr, ws.p, wsb, g_stream));
    H.check(max_diff(dR.get<float>(), R) <= 1e-5, "pose seed %u: NULL inliers/input_error", p.seed);
  }
  // Non-finite model: the report.
  VoteCase c = make_vote_case(9, 2, 9, 100, 0.003, 0.2, 0.9);
  c.model[7] = NAN;
  Dev votes(c.votes), model(c.model), dR(2 * 36), dt(2 * 12), dk(2 * 9 * 12), de(16);
  const size_t wsb = pvn3d_pose_solve_cuda_workspace_bytes(2, 9, 100);
  Dev ws(wsb);
  CK(pvn3d_pose_solve_cuda(votes.as<float>(), nullptr, 0, 2, 9, 100, model.as<float>(), 0, 9, 0.08f, 300, 1,
                           dR.as<float>(), dt.as<float>(), dk.as<float>(), nullptr, de.as<int64_t>(), ws.p, wsb,
                           g_stream));
  auto e = de.get<int64_t>();
  pvn3d_kabsch_error_describe("PVN3D_PoseSolve", e[0], e[1], 27, "kps");
  H.check(std::string(pvn3d_last_error()) == "PVN3D_PoseSolve: input model_kps holds a non-finite value (nan) at flat position 7",
          "pose CUDA NaN model: '%s'", pvn3d_last_error());
  H.check(std::isnan(dR.get<float>()[0]), "pose CUDA NaN model: NaN R");
  const int st = pvn3d_pose_solve_cuda(votes.as<float>(), nullptr, 0, 2, 9, 100, model.as<float>(), 0, 9, 0.08f, 300, 1,
                                       dR.as<float>(), dt.as<float>(), dk.as<float>(), nullptr, nullptr, ws.p, 16, g_stream);
  H.check(st == PVN3D_ERR_INVALID_ARGUMENT, "pose CUDA small workspace: status %d", st);
}

// ---------------------------------------------------------------------------------------------------
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <class F>
double time_ms(F&& f, int warm = 5, int reps = 50) {
  void *e0, *e1;
  CK(pvn3d_cuda_event_create(&e0));
  CK(pvn3d_cuda_event_create(&e1));
  for (int i = 0; i < warm; ++i) f();
  std::vector<double> v;
  for (int i = 0; i < reps; ++i) {
    CK(pvn3d_cuda_event_record(e0, g_stream));
    f();
    CK(pvn3d_cuda_event_record(e1, g_stream));
    CK(pvn3d_cuda_event_synchronize(e1));
    float ms;
    CK(pvn3d_cuda_event_elapsed_ms(&ms, e0, e1));
    v.push_back(ms);
  }
  pvn3d_cuda_event_destroy(e0);
  pvn3d_cuda_event_destroy(e1);
  return median(v);
}

int bench(const char* out_path) {
  std::string out;
  char line[512];
  auto emit = [&](const char* s) {
    std::printf("%s\n", s);
    out += s;
    out += "\n";
  };
  emit("# pose operators, CUDA events, median of 50 after 5 warm-ups; bandwidth 0.08, max_iter 300");
  struct S { const char* name; int64_t B, K, N; double sigma, outl, maskr; };
  const S ss[] = {{"pvn3d-like (sigma 1cm, 30% outliers)", 1, 9, 3000, 0.01, 0.3, 1.0},
                  {"pvn3d-like, B=4", 4, 9, 3000, 0.01, 0.3, 1.0},
                  {"clean (sigma 2mm, no outliers)", 1, 9, 3000, 0.002, 0.0, 1.0},
                  {"hard (sigma 3cm, 60% outliers)", 1, 9, 3000, 0.03, 0.6, 1.0},
                  {"pvn3d-like, N=12000", 1, 9, 12000, 0.01, 0.3, 1.0}};
  for (const S& s : ss) {
    VoteCase c = make_vote_case(77, s.B, s.K, s.N, s.sigma, s.outl, s.maskr);
    Dev votes(c.votes), mask(c.mask), model(c.model), kps(s.B * s.K * 12), inl(s.B * 8), R(s.B * 36), t(s.B * 12);
    const size_t wsb = pvn3d_pose_solve_cuda_workspace_bytes(s.B, s.K, s.N);
    Dev ws(wsb);
    for (int cf = 1; cf >= 0; --cf) {
      const double va = time_ms([&] {
        CK(pvn3d_vote_aggregate_cuda(votes.as<float>(), mask.p, 0, s.B, s.K, s.N, 0.08f, 300, cf, kps.as<float>(),
                                     inl.as<int64_t>(), ws.p, wsb, g_stream));
      });
      const double ps = time_ms([&] {
        CK(pvn3d_pose_solve_cuda(votes.as<float>(), mask.p, 0, s.B, s.K, s.N, model.as<float>(), 0, s.K, 0.08f, 300, cf,
                                 R.as<float>(), t.as<float>(), kps.as<float>(), inl.as<int64_t>(), nullptr, ws.p, wsb,
                                 g_stream));
      });
      std::vector<float> ck(s.B * s.K * 3);
      std::vector<int64_t> ci(s.B);
      const auto t0 = std::chrono::steady_clock::now();
      CK(pvn3d_vote_aggregate_cpu(c.votes.data(), c.mask.data(), 0, s.B, s.K, s.N, 0.08f, 300, cf, ck.data(), ci.data()));
      const double cpu = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      const double d = max_diff(kps.get<float>(), ck);
      std::snprintf(line, sizeof line,
                    "%-40s B=%lld K=%lld N=%lld center_filter=%d: vote_aggregate %.4f ms, pose_solve %.4f ms | "
                    "CPU vote_aggregate (%d threads, 1 run) %.1f ms | max |cuda-cpu| %.2g",
                    s.name, (long long)s.B, (long long)s.K, (long long)s.N, cf, va, ps, pvn3d_get_num_threads(), cpu, d);
      emit(line);
    }
  }
  // Kabsch alone.
  {
    std::vector<float> model(27), pred(64 * 27);
    std::mt19937 g(5);
    std::uniform_real_distribution<double> u(-0.1, 0.1);
    for (auto& v : model) v = (float)u(g);
    for (auto& v : pred) v = (float)u(g);
    Dev m(model), p(pred), R(64 * 36), t(64 * 12);
    for (int64_t B : {1, 64}) {
      const double k = time_ms([&] {
        CK(pvn3d_kabsch_solver_cuda(m.as<float>(), 0, 9, p.as<float>(), B, 9, R.as<float>(), t.as<float>(), nullptr,
                                    g_stream));
      });
      std::snprintf(line, sizeof line, "kabsch_solver B=%lld K=9: %.4f ms", (long long)B, k);
      emit(line);
    }
  }
  if (out_path) {
    FILE* f = std::fopen(out_path, "w");
    if (f) {
      std::fputs(out.c_str(), f);
      std::fclose(f);
    }
  }
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  int count = 0;
  if (pvn3d_cuda_device_count(&count) != PVN3D_OK || count == 0 || !pvn3d_built_with_cuda()) {
    std::printf("SKIPPED: no CUDA device\n");
    return 77;
  }
  CK(pvn3d_cuda_stream_create(&g_stream, 1));
  if (argc > 1 && std::strcmp(argv[1], "--bench") == 0) return bench(argc > 2 ? argv[2] : nullptr);
  test_vote_aggregate();
  test_kabsch();
  test_pose();
  pvn3d_cuda_stream_destroy(g_stream);
  return H.finish();
}
