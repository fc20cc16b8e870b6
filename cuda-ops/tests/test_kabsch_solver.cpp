// Tests of PVN3D_KabschSolver (kabsch_solver/), three ways: the CPU kernel against Horn's quaternion
// method (support/reference.cpp) and the true pose, at every angle up to 180 degrees, shared and batched
// models, noise, reflections, degenerate keypoints (collinear, coincident), non-finite input and errors;
// the CUDA kernel equal (bit for bit) to the CPU kernel on such cases, its non-finite report and shape
// errors; the CUDA entry point of a CPU-only library.
//
//   pvn3d_test_kabsch_solver   (support/test_env.h)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "harness.h"
#include "pvn3d_ops.h"
#include "reference.h"
#include "test_data.h"
#include "test_env.h"

using harness::max_diff;
using ref::det3;
using ref::orth_err;
using testdata::random_rotation;
using testenv::Dev;
using testenv::stream;

namespace {

std::vector<float> transform(const std::vector<float>& a, const double R[9], const double t[3], std::mt19937& g,
                             double noise) {
  std::normal_distribution<double> nd(0.0, 1.0);
  std::vector<float> b(a.size());
  for (size_t i = 0; i < a.size() / 3; ++i)
    for (int r = 0; r < 3; ++r)
      b[i * 3 + r] = (float)(R[r * 3] * a[i * 3] + R[r * 3 + 1] * a[i * 3 + 1] + R[r * 3 + 2] * a[i * 3 + 2] + t[r] +
                             noise * nd(g));
  return b;
}

// Compares the kernel's R,t with the reference on item b.
void compare_with_ref(const char* name, const float* a, const float* b, int64_t K, const float* R, const float* t,
                      double tol) {
  std::vector<double> ad(a, a + K * 3), bd(b, b + K * 3);
  double Rr[9], tr[3];
  ref::kabsch_solver(ad.data(), bd.data(), K, Rr, tr);
  double e = 0;
  for (int i = 0; i < 9; ++i) e = std::max(e, std::fabs(R[i] - Rr[i]));
  for (int i = 0; i < 3; ++i) e = std::max(e, std::fabs(t[i] - tr[i]));
  CHECK(e <= tol, "%s: R,t differ from the Horn reference by %g (tol %g)", name, e, tol);
  CHECK(std::fabs(det3(R) - 1.0) < 1e-5, "%s: det R = %.9f, want +1", name, det3(R));
  CHECK(orth_err(R) < 1e-5, "%s: R not orthonormal (%g)", name, orth_err(R));
}

struct KOut {
  std::vector<float> R, t;
  int64_t err[2];
};
KOut kabsch_cuda(const std::vector<float>& model, int64_t model_B, const std::vector<float>& pred, int64_t B, int64_t K) {
  Dev m(model), p(pred), R(B * 9 * 4), t(B * 3 * 4), e(16);
  CHECK_OK(pvn3d_kabsch_solver_cuda(m.as<float>(), model_B, K, p.as<float>(), B, K, R.as<float>(), t.as<float>(),
                                    e.as<int64_t>(), stream()));
  KOut o;
  o.R = R.get<float>();
  o.t = t.get<float>();
  auto ev = e.get<int64_t>();
  o.err[0] = ev[0];
  o.err[1] = ev[1];
  return o;
}

}  // namespace

// ---- CPU kernel == reference -------------------------------------------------------------------

TEST(kabsch_solver_random_rotations) {
  std::mt19937 g(1234);
  std::uniform_real_distribution<double> u(-0.2, 0.2);
  const double angles[] = {-1, -1, -1, 0.0, 1e-4, M_PI / 2, M_PI - 1e-3, M_PI - 1e-6, M_PI};
  for (int64_t K : {3, 4, 9}) {
    for (double ang : angles) {
      const int64_t B = 3;
      std::vector<float> model(K * 3);
      for (auto& m : model) m = (float)u(g);
      std::vector<float> pred(B * K * 3), R(B * 9), t(B * 3);
      std::vector<double> Rt(B * 9), tt(B * 3);
      for (int64_t b = 0; b < B; ++b) {
        random_rotation(g, &Rt[b * 9], ang);
        for (int i = 0; i < 3; ++i) tt[b * 3 + i] = u(g) * 5;
        auto p = transform(model, &Rt[b * 9], &tt[b * 3], g, 0.0);
        std::copy(p.begin(), p.end(), pred.begin() + b * K * 3);
      }
      const int st = pvn3d_kabsch_solver_cpu(model.data(), 0, K, pred.data(), B, K, R.data(), t.data());
      CHECK(st == PVN3D_OK, "kabsch K=%lld angle=%g: status %d (%s)", (long long)K, ang, st, pvn3d_last_error());
      for (int64_t b = 0; b < B; ++b) {
        double e = 0;
        for (int i = 0; i < 9; ++i) e = std::max(e, std::fabs(R[b * 9 + i] - Rt[b * 9 + i]));
        for (int i = 0; i < 3; ++i) e = std::max(e, std::fabs(t[b * 3 + i] - tt[b * 3 + i]) / 5.0);
        CHECK(e < 2e-5, "kabsch exact K=%lld angle=%.9g item %lld: error vs truth %g", (long long)K, ang,
              (long long)b, e);
        compare_with_ref("kabsch exact vs ref", model.data(), &pred[b * K * 3], K, &R[b * 9], &t[b * 3], 1e-5 * 5);
      }
    }
  }
}

TEST(kabsch_solver_noisy_batched_model) {
  std::mt19937 g(99);
  std::uniform_real_distribution<double> u(-0.1, 0.1);
  for (int64_t K : {3, 9}) {
    const int64_t B = 5;
    std::vector<float> model(B * K * 3), pred(B * K * 3), R(B * 9), t(B * 3);
    for (auto& m : model) m = (float)u(g);
    for (int64_t b = 0; b < B; ++b) {
      double Rt[9], tt[3] = {u(g), u(g), 0.7 + u(g)};
      random_rotation(g, Rt, b == 0 ? M_PI - 1e-4 : -1);
      std::vector<float> mb(model.begin() + b * K * 3, model.begin() + (b + 1) * K * 3);
      auto p = transform(mb, Rt, tt, g, 0.01);
      std::copy(p.begin(), p.end(), pred.begin() + b * K * 3);
    }
    const int st = pvn3d_kabsch_solver_cpu(model.data(), B, K, pred.data(), B, K, R.data(), t.data());
    CHECK(st == PVN3D_OK, "kabsch batched model: status %d (%s)", st, pvn3d_last_error());
    for (int64_t b = 0; b < B; ++b)
      compare_with_ref("kabsch noisy batched", &model[b * K * 3], &pred[b * K * 3], K, &R[b * 9], &t[b * 3], 1e-5);
  }
}

TEST(kabsch_solver_reflection) {
  // pred = mirror image of the model: the best proper rotation, never the reflection.
  std::mt19937 g(7);
  std::uniform_real_distribution<double> u(-0.1, 0.1);
  const int64_t K = 9;
  std::vector<float> model(K * 3), pred(K * 3);
  for (auto& m : model) m = (float)u(g);
  double Rt[9];
  random_rotation(g, Rt);
  for (int64_t i = 0; i < K; ++i) {
    float m[3] = {model[i * 3], model[i * 3 + 1], -model[i * 3 + 2]};  // reflect z
    for (int r = 0; r < 3; ++r) pred[i * 3 + r] = (float)(Rt[r * 3] * m[0] + Rt[r * 3 + 1] * m[1] + Rt[r * 3 + 2] * m[2]);
  }
  float R[9], t[3];
  const int st = pvn3d_kabsch_solver_cpu(model.data(), 0, K, pred.data(), 1, K, R, t);
  CHECK(st == PVN3D_OK, "kabsch reflection: status %d", st);
  compare_with_ref("kabsch reflection", model.data(), pred.data(), K, R, t, 1e-5);
  // Planar model (z = 0) mirrored: then the reflection is exactly a rotation by 180 degrees.
  for (int64_t i = 0; i < K; ++i) model[i * 3 + 2] = 0.0f;
  for (int64_t i = 0; i < K; ++i) {
    pred[i * 3] = model[i * 3];
    pred[i * 3 + 1] = -model[i * 3 + 1];
    pred[i * 3 + 2] = 0.0f;
  }
  pvn3d_kabsch_solver_cpu(model.data(), 0, K, pred.data(), 1, K, R, t);
  double res = 0;
  for (int64_t i = 0; i < K; ++i)
    for (int r = 0; r < 3; ++r) {
      const double p = R[r * 3] * model[i * 3] + R[r * 3 + 1] * model[i * 3 + 1] + R[r * 3 + 2] * model[i * 3 + 2] + t[r];
      res = std::max(res, std::fabs(p - pred[i * 3 + r]));
    }
  CHECK(res < 1e-5 && std::fabs(det3(R) - 1) < 1e-5, "kabsch planar mirror: residual %g det %g", res, det3(R));
}

TEST(kabsch_solver_degenerate) {
  // Collinear keypoints: R proper and maps the model line onto the predicted line.
  const int64_t K = 5;
  double Rt[9];
  std::mt19937 g(5);
  random_rotation(g, Rt, 2.0);
  const double tt[3] = {0.1, -0.2, 0.9};
  std::vector<float> model(K * 3);
  for (int64_t i = 0; i < K; ++i) {
    model[i * 3] = 0.03f * (float)i;
    model[i * 3 + 1] = 0.02f * (float)i;
    model[i * 3 + 2] = -0.01f * (float)i;
  }
  auto pred = transform(model, Rt, tt, g, 0.0);
  float R[9], t[3];
  int st = pvn3d_kabsch_solver_cpu(model.data(), 0, K, pred.data(), 1, K, R, t);
  CHECK(st == PVN3D_OK, "kabsch collinear: status %d", st);
  double res = 0;
  for (int64_t i = 0; i < K; ++i)
    for (int r = 0; r < 3; ++r) {
      const double p = R[r * 3] * model[i * 3] + R[r * 3 + 1] * model[i * 3 + 1] + R[r * 3 + 2] * model[i * 3 + 2] + t[r];
      res = std::max(res, std::fabs(p - pred[i * 3 + r]));
    }
  CHECK(res < 1e-5, "kabsch collinear: residual %g", res);
  CHECK(std::fabs(det3(R) - 1.0) < 1e-5 && orth_err(R) < 1e-5, "kabsch collinear: det %g orth %g", det3(R), orth_err(R));
  // Exactly axis-aligned collinear (rank-1 H with exact zeros).
  for (int64_t i = 0; i < K; ++i) {
    model[i * 3] = (float)i; model[i * 3 + 1] = 0; model[i * 3 + 2] = 0;
    pred[i * 3] = 0; pred[i * 3 + 1] = 2.0f * (float)i; pred[i * 3 + 2] = 1;  // scaled on purpose
  }
  st = pvn3d_kabsch_solver_cpu(model.data(), 0, K, pred.data(), 1, K, R, t);
  CHECK(st == PVN3D_OK && std::fabs(det3(R) - 1.0) < 1e-6 && orth_err(R) < 1e-6,
        "kabsch axis collinear: det %g orth %g", det3(R), orth_err(R));
  CHECK(std::fabs(R[3] - 1.0f) < 1e-6, "kabsch axis collinear: x must map to y, R[1][0] = %g", R[3]);
  // Coincident keypoints: R = I.
  std::vector<float> same(K * 3, 0.25f);
  st = pvn3d_kabsch_solver_cpu(same.data(), 0, K, pred.data(), 1, K, R, t);
  bool ident = st == PVN3D_OK;
  for (int i = 0; i < 9; ++i) ident = ident && R[i] == ((i % 4 == 0) ? 1.0f : 0.0f);
  CHECK(ident, "kabsch coincident model: R must be I");
  // Finite keypoints near the float32 limit: H's entries (about 1e77) made alpha * beta overflow to inf, every
  // Jacobi pair was skipped and R came out with det 0.31 under PVN3D_OK.
  for (float scale : {1e38f, 3e38f}) {
    const float m4[12] = {1, 0, 0, 0, 1, 0, 0, 0, 1, -1, -1, -1};
    float big_model[12], big_pred[12];
    for (int i = 0; i < 4; ++i) {  // a quarter turn about z
      big_model[i * 3] = scale * m4[i * 3];
      big_model[i * 3 + 1] = scale * m4[i * 3 + 1];
      big_model[i * 3 + 2] = scale * m4[i * 3 + 2];
      big_pred[i * 3] = -big_model[i * 3 + 1];
      big_pred[i * 3 + 1] = big_model[i * 3];
      big_pred[i * 3 + 2] = big_model[i * 3 + 2];
    }
    st = pvn3d_kabsch_solver_cpu(big_model, 0, 4, big_pred, 1, 4, R, t);
    CHECK(st == PVN3D_OK && std::fabs(det3(R) - 1.0) < 1e-6 && orth_err(R) < 1e-6, "kabsch at %g: det %g orth %g", (double)scale,
          det3(R), orth_err(R));
    CHECK(std::fabs(R[1] + 1.0f) < 1e-5 && std::fabs(R[3] - 1.0f) < 1e-5, "kabsch at %g: R = [%g %g; %g %g]", (double)scale,
          R[0], R[1], R[3], R[4]);
  }
}

TEST(kabsch_solver_errors) {
  std::vector<float> a(9 * 3, 0.1f), b(2 * 9 * 3, 0.2f), R(2 * 9), t(2 * 3);
  for (size_t i = 0; i < a.size(); ++i) a[i] = (float)(i % 7) * 0.01f;
  int st = pvn3d_kabsch_solver_cpu(a.data(), 0, 2, b.data(), 2, 2, R.data(), t.data());
  CHECK(st == PVN3D_ERR_INVALID_ARGUMENT && std::string(pvn3d_last_error()).find("K (2") != std::string::npos,
        "K<3: status %d msg '%s'", st, pvn3d_last_error());
  st = pvn3d_kabsch_solver_cpu(a.data(), 0, 8, b.data(), 2, 9, R.data(), t.data());
  CHECK(st == PVN3D_ERR_INVALID_ARGUMENT && std::string(pvn3d_last_error()).find("mismatched K") != std::string::npos,
        "mismatched K: status %d msg '%s'", st, pvn3d_last_error());
  st = pvn3d_kabsch_solver_cpu(a.data(), 3, 9, b.data(), 2, 9, R.data(), t.data());
  CHECK(st == PVN3D_ERR_INVALID_ARGUMENT && std::string(pvn3d_last_error()).find("mismatched B") != std::string::npos,
        "mismatched B: status %d msg '%s'", st, pvn3d_last_error());
  st = pvn3d_kabsch_solver_cpu(a.data(), 0, 9, b.data(), 0, 9, R.data(), t.data());
  CHECK(st == PVN3D_ERR_INVALID_ARGUMENT, "B=0: status %d", st);
  st = pvn3d_kabsch_solver_cpu(nullptr, 0, 9, b.data(), 2, 9, R.data(), t.data());
  CHECK(st == PVN3D_ERR_INVALID_ARGUMENT && std::string(pvn3d_last_error()).find("model_kps is NULL") != std::string::npos,
        "NULL model: '%s'", pvn3d_last_error());
  std::vector<float> a2 = a;
  a2[13] = NAN;
  R.assign(R.size(), 42.0f);
  st = pvn3d_kabsch_solver_cpu(a2.data(), 0, 9, b.data(), 2, 9, R.data(), t.data());
  CHECK(st == PVN3D_ERR_INVALID_ARGUMENT &&
            std::string(pvn3d_last_error()).find("input model_kps holds a non-finite value (nan) at flat position 13") !=
                std::string::npos,
        "NaN model: '%s'", pvn3d_last_error());
  CHECK(R[0] == 42.0f, "NaN model: nothing may be written");
  std::vector<float> b2 = b;
  b2[40] = INFINITY;
  st = pvn3d_kabsch_solver_cpu(a.data(), 0, 9, b2.data(), 2, 9, R.data(), t.data());
  CHECK(st == PVN3D_ERR_INVALID_ARGUMENT &&
            std::string(pvn3d_last_error()).find("input pred_kps holds a non-finite value (inf) at flat position 40") !=
                std::string::npos,
        "inf pred: '%s'", pvn3d_last_error());
  // An item whose keypoints are all NaN (an empty mask's, from VoteAggregate): NaN pose for it, no error.
  std::vector<float> b3 = b;
  for (int i = 27; i < 54; ++i) b3[i] = NAN;
  R.assign(R.size(), 42.0f);
  st = pvn3d_kabsch_solver_cpu(a.data(), 0, 9, b3.data(), 2, 9, R.data(), t.data());
  CHECK(st == PVN3D_OK, "all-NaN item: status %d '%s'", st, pvn3d_last_error());
  CHECK(std::isfinite(R[0]) && std::isfinite(t[0]) && std::isnan(R[9]) && std::isnan(R[17]) && std::isnan(t[3]) &&
            std::isnan(t[5]),
        "all-NaN item: item 0 solved, item 1 NaN");
  b3[27 + 7] = 1.0f;  // one finite value: no longer an empty mask's answer, an error again
  st = pvn3d_kabsch_solver_cpu(a.data(), 0, 9, b3.data(), 2, 9, R.data(), t.data());
  CHECK(st == PVN3D_ERR_INVALID_ARGUMENT &&
            std::string(pvn3d_last_error()).find("input pred_kps holds a non-finite value (nan) at flat position 27") !=
                std::string::npos,
        "partly NaN item: '%s'", pvn3d_last_error());
  // The describe helper (the CUDA path's decoder) gives the same message.
  uint32_t bits;
  float inf = INFINITY;
  std::memcpy(&bits, &inf, 4);
  st = pvn3d_kabsch_error_describe(nullptr, 27 + 40, bits, 27, nullptr);
  CHECK(st == PVN3D_ERR_INVALID_ARGUMENT &&
            std::string(pvn3d_last_error()) ==
                "PVN3D_KabschSolver: input pred_kps holds a non-finite value (inf) at flat position 40",
        "describe: '%s'", pvn3d_last_error());
  CHECK(pvn3d_kabsch_error_describe(nullptr, -1, -1, 27, nullptr) == PVN3D_OK, "describe(-1) must be OK");
}

// ---- CUDA kernel == CPU kernel ------------------------------------------------------------------

TEST(kabsch_solver_cuda_equals_cpu) {
  REQUIRE_CUDA();
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
        CHECK_OK(pvn3d_kabsch_solver_cpu(model.data(), batched ? B : 0, K, pred.data(), B, K, Rc.data(), tc.data()));
        KOut o = kabsch_cuda(model, batched ? B : 0, pred, B, K);
        const double d = std::max(max_diff(o.R, Rc), max_diff(o.t, tc));
        CHECK(d <= 1e-5, "Kabsch K=%lld angle=%g batched=%d: CUDA differs from CPU by %g", (long long)K, ang, batched, d);
        CHECK(o.err[0] == -1 && o.err[1] == -1, "Kabsch: input_error must be {-1,-1} for finite input");
        all_bitwise = all_bitwise && std::memcmp(o.R.data(), Rc.data(), Rc.size() * 4) == 0 &&
                      std::memcmp(o.t.data(), tc.data(), tc.size() * 4) == 0;
        ++cases;
      }
    }
  }
  std::printf("  Kabsch: %d random cases, CUDA bit-identical to CPU: %s\n", cases, all_bitwise ? "yes" : "no");
  CHECK(all_bitwise, "Kabsch: CUDA should be bit-identical to CPU (same double code, no FMA)");
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
    CHECK_OK(pvn3d_kabsch_solver_cpu(dd.a->data(), 0, K, dd.b->data(), 1, K, Rc.data(), tc.data()));
    KOut o = kabsch_cuda(*dd.a, 0, *dd.b, 1, K);
    CHECK(std::memcmp(o.R.data(), Rc.data(), 36) == 0 && std::memcmp(o.t.data(), tc.data(), 12) == 0,
          "Kabsch %s: CUDA bit-identical to CPU", dd.name);
    CHECK(std::fabs(det3(o.R.data()) - 1) < 1e-5, "Kabsch %s: CUDA det = %g", dd.name, det3(o.R.data()));
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
  CHECK(cst == PVN3D_ERR_INVALID_ARGUMENT && gst == cst && cmsg == pvn3d_last_error(),
        "Kabsch non-finite: CUDA report '%s' vs CPU '%s'", pvn3d_last_error(), cmsg.c_str());
  CHECK(std::isnan(o.R[9]) && std::isnan(o.t[3]) && std::isfinite(o.R[0]) && std::isfinite(o.R[18]),
        "Kabsch non-finite: NaN pose for item 1 only");
  // An item all NaN (an empty mask's keypoints): NaN pose for it and no report, as on the CPU.
  std::vector<float> empty_item = pred;
  empty_item[27 + 5] = (float)u(g);
  for (int i = 54; i < 81; ++i) empty_item[i] = NAN;  // item 2
  CHECK_OK(pvn3d_kabsch_solver_cpu(model.data(), 0, 9, empty_item.data(), 3, 9, Rc.data(), tc.data()));
  o = kabsch_cuda(model, 0, empty_item, 3, 9);
  CHECK(o.err[0] == -1, "Kabsch all-NaN item: no CUDA report, got position %lld", (long long)o.err[0]);
  CHECK(std::memcmp(o.R.data(), Rc.data(), 18 * 4) == 0 && std::isnan(o.R[18]) && std::isnan(o.t[6]) &&
            std::isnan(Rc[18]) && std::isnan(tc[6]),
        "Kabsch all-NaN item: items 0 and 1 bit-identical to the CPU, item 2 NaN on both");
  model[4] = INFINITY;
  o = kabsch_cuda(model, 0, pred, 3, 9);
  pvn3d_kabsch_error_describe(nullptr, o.err[0], o.err[1], 27, nullptr);
  CHECK(std::string(pvn3d_last_error()) ==
            "PVN3D_KabschSolver: input model_kps holds a non-finite value (inf) at flat position 4",
        "Kabsch non-finite model: '%s'", pvn3d_last_error());
  // Shape errors on the CUDA entry point.
  Dev m(model), p(pred), R(27 * 4), t(9 * 4);
  int st = pvn3d_kabsch_solver_cuda(m.as<float>(), 0, 9, p.as<float>(), 3, 2, R.as<float>(), t.as<float>(), nullptr,
                                    stream());
  CHECK(st == PVN3D_ERR_INVALID_ARGUMENT, "Kabsch CUDA K<3: status %d", st);
  st = pvn3d_kabsch_solver_cuda(m.as<float>(), 0, 8, p.as<float>(), 3, 9, R.as<float>(), t.as<float>(), nullptr,
                                stream());
  CHECK(st == PVN3D_ERR_INVALID_ARGUMENT && std::string(pvn3d_last_error()).find("mismatched K") != std::string::npos,
        "Kabsch CUDA mismatched K: '%s'", pvn3d_last_error());
  st = pvn3d_kabsch_solver_cuda(m.as<float>(), 2, 9, p.as<float>(), 3, 9, R.as<float>(), t.as<float>(), nullptr,
                                stream());
  CHECK(st == PVN3D_ERR_INVALID_ARGUMENT && std::string(pvn3d_last_error()).find("mismatched B") != std::string::npos,
        "Kabsch CUDA mismatched B: '%s'", pvn3d_last_error());
}

// ---- a CPU-only library -------------------------------------------------------------------------

TEST(kabsch_solver_cuda_entry_point_in_cpu_only_build) {
  if (pvn3d_built_with_cuda()) SKIP("library built with CUDA (the CUDA tests above cover the entry point)");
  float a[9] = {0}, R[9], t[3];
  CHECK(pvn3d_kabsch_solver_cuda(a, 0, 3, a, 1, 3, R, t, nullptr, nullptr) == PVN3D_ERR_NO_CUDA, "kabsch_solver");
  CHECK(harness::contains(pvn3d_last_error(), "pvn3d_kabsch_solver_cuda: built without CUDA"), "'%s'",
        pvn3d_last_error());
}

int main(int argc, char** argv) { return testenv::run(argc, argv); }
