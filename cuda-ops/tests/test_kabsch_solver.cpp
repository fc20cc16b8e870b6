// Native tests of PVN3D_KabschSolver's CPU kernel against Horn's quaternion method (reference header).
#include <cmath>
#include <string>
#include <vector>

#include "kabsch_solver/kabsch_solver.h"
#include "test_pose_solve_reference.h"

using namespace poseref;

namespace {
Harness H;

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
  ref_pose(ad.data(), bd.data(), K, Rr, tr);
  double e = 0;
  for (int i = 0; i < 9; ++i) e = std::max(e, std::fabs(R[i] - Rr[i]));
  for (int i = 0; i < 3; ++i) e = std::max(e, std::fabs(t[i] - tr[i]));
  H.check(e <= tol, "%s: R,t differ from the Horn reference by %g (tol %g)", name, e, tol);
  H.check(std::fabs(det3(R) - 1.0) < 1e-5, "%s: det R = %.9f, want +1", name, det3(R));
  H.check(orth_err(R) < 1e-5, "%s: R not orthonormal (%g)", name, orth_err(R));
}

void test_random_rotations() {
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
      H.check(st == PVN3D_OK, "kabsch K=%lld angle=%g: status %d (%s)", (long long)K, ang, st, pvn3d_last_error());
      for (int64_t b = 0; b < B; ++b) {
        double e = 0;
        for (int i = 0; i < 9; ++i) e = std::max(e, std::fabs(R[b * 9 + i] - Rt[b * 9 + i]));
        for (int i = 0; i < 3; ++i) e = std::max(e, std::fabs(t[b * 3 + i] - tt[b * 3 + i]) / 5.0);
        H.check(e < 2e-5, "kabsch exact K=%lld angle=%.9g item %lld: error vs truth %g", (long long)K, ang,
                (long long)b, e);
        compare_with_ref("kabsch exact vs ref", model.data(), &pred[b * K * 3], K, &R[b * 9], &t[b * 3], 1e-5 * 5);
      }
    }
  }
}

void test_noisy_batched_model() {
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
    H.check(st == PVN3D_OK, "kabsch batched model: status %d (%s)", st, pvn3d_last_error());
    for (int64_t b = 0; b < B; ++b)
      compare_with_ref("kabsch noisy batched", &model[b * K * 3], &pred[b * K * 3], K, &R[b * 9], &t[b * 3], 1e-5);
  }
}

void test_reflection() {
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
  H.check(st == PVN3D_OK, "kabsch reflection: status %d", st);
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
  H.check(res < 1e-5 && std::fabs(det3(R) - 1) < 1e-5, "kabsch planar mirror: residual %g det %g", res, det3(R));
}

void test_degenerate() {
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
  H.check(st == PVN3D_OK, "kabsch collinear: status %d", st);
  double res = 0;
  for (int64_t i = 0; i < K; ++i)
    for (int r = 0; r < 3; ++r) {
      const double p = R[r * 3] * model[i * 3] + R[r * 3 + 1] * model[i * 3 + 1] + R[r * 3 + 2] * model[i * 3 + 2] + t[r];
      res = std::max(res, std::fabs(p - pred[i * 3 + r]));
    }
  H.check(res < 1e-5, "kabsch collinear: residual %g", res);
  H.check(std::fabs(det3(R) - 1.0) < 1e-5 && orth_err(R) < 1e-5, "kabsch collinear: det %g orth %g", det3(R), orth_err(R));
  // Exactly axis-aligned collinear (rank-1 H with exact zeros).
  for (int64_t i = 0; i < K; ++i) {
    model[i * 3] = (float)i; model[i * 3 + 1] = 0; model[i * 3 + 2] = 0;
    pred[i * 3] = 0; pred[i * 3 + 1] = 2.0f * (float)i; pred[i * 3 + 2] = 1;  // scaled on purpose
  }
  st = pvn3d_kabsch_solver_cpu(model.data(), 0, K, pred.data(), 1, K, R, t);
  H.check(st == PVN3D_OK && std::fabs(det3(R) - 1.0) < 1e-6 && orth_err(R) < 1e-6,
          "kabsch axis collinear: det %g orth %g", det3(R), orth_err(R));
  H.check(std::fabs(R[3] - 1.0f) < 1e-6, "kabsch axis collinear: x must map to y, R[1][0] = %g", R[3]);
  // Coincident keypoints: R = I.
  std::vector<float> same(K * 3, 0.25f);
  st = pvn3d_kabsch_solver_cpu(same.data(), 0, K, pred.data(), 1, K, R, t);
  bool ident = st == PVN3D_OK;
  for (int i = 0; i < 9; ++i) ident = ident && R[i] == ((i % 4 == 0) ? 1.0f : 0.0f);
  H.check(ident, "kabsch coincident model: R must be I");
}

void test_errors() {
  std::vector<float> a(9 * 3, 0.1f), b(2 * 9 * 3, 0.2f), R(2 * 9), t(2 * 3);
  for (size_t i = 0; i < a.size(); ++i) a[i] = (float)(i % 7) * 0.01f;
  int st = pvn3d_kabsch_solver_cpu(a.data(), 0, 2, b.data(), 2, 2, R.data(), t.data());
  H.check(st == PVN3D_ERR_INVALID_ARGUMENT && std::string(pvn3d_last_error()).find("K (2") != std::string::npos,
          "K<3: status %d msg '%s'", st, pvn3d_last_error());
  st = pvn3d_kabsch_solver_cpu(a.data(), 0, 8, b.data(), 2, 9, R.data(), t.data());
  H.check(st == PVN3D_ERR_INVALID_ARGUMENT && std::string(pvn3d_last_error()).find("mismatched K") != std::string::npos,
          "mismatched K: status %d msg '%s'", st, pvn3d_last_error());
  st = pvn3d_kabsch_solver_cpu(a.data(), 3, 9, b.data(), 2, 9, R.data(), t.data());
  H.check(st == PVN3D_ERR_INVALID_ARGUMENT && std::string(pvn3d_last_error()).find("mismatched B") != std::string::npos,
          "mismatched B: status %d msg '%s'", st, pvn3d_last_error());
  st = pvn3d_kabsch_solver_cpu(a.data(), 0, 9, b.data(), 0, 9, R.data(), t.data());
  H.check(st == PVN3D_ERR_INVALID_ARGUMENT, "B=0: status %d", st);
  st = pvn3d_kabsch_solver_cpu(nullptr, 0, 9, b.data(), 2, 9, R.data(), t.data());
  H.check(st == PVN3D_ERR_INVALID_ARGUMENT && std::string(pvn3d_last_error()).find("model_kps is NULL") != std::string::npos,
          "NULL model: '%s'", pvn3d_last_error());
  std::vector<float> a2 = a;
  a2[13] = NAN;
  R.assign(R.size(), 42.0f);
  st = pvn3d_kabsch_solver_cpu(a2.data(), 0, 9, b.data(), 2, 9, R.data(), t.data());
  H.check(st == PVN3D_ERR_INVALID_ARGUMENT &&
              std::string(pvn3d_last_error()).find("input model_kps holds a non-finite value (nan) at flat position 13") !=
                  std::string::npos,
          "NaN model: '%s'", pvn3d_last_error());
  H.check(R[0] == 42.0f, "NaN model: nothing may be written");
  std::vector<float> b2 = b;
  b2[40] = INFINITY;
  st = pvn3d_kabsch_solver_cpu(a.data(), 0, 9, b2.data(), 2, 9, R.data(), t.data());
  H.check(st == PVN3D_ERR_INVALID_ARGUMENT &&
              std::string(pvn3d_last_error()).find("input pred_kps holds a non-finite value (inf) at flat position 40") !=
                  std::string::npos,
          "inf pred: '%s'", pvn3d_last_error());
  // The describe helper (the CUDA path's decoder) gives the same message.
  uint32_t bits;
  float inf = INFINITY;
  std::memcpy(&bits, &inf, 4);
  st = pvn3d_kabsch_error_describe(nullptr, 27 + 40, bits, 27, nullptr);
  H.check(st == PVN3D_ERR_INVALID_ARGUMENT &&
              std::string(pvn3d_last_error()) ==
                  "PVN3D_KabschSolver: input pred_kps holds a non-finite value (inf) at flat position 40",
          "describe: '%s'", pvn3d_last_error());
  H.check(pvn3d_kabsch_error_describe(nullptr, -1, -1, 27, nullptr) == PVN3D_OK, "describe(-1) must be OK");
}
}  // namespace

int main() {
  test_random_rotations();
  test_noisy_batched_model();
  test_reflection();
  test_degenerate();
  test_errors();
  return H.finish();
}
