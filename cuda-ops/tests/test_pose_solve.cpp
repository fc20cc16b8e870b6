// Tests of PVN3D_PoseSolve (pose_solve/), three ways: the CPU kernel against the two operators it fuses
// (bitwise), against the reference (mean shift in double + Horn's method, support/reference.cpp) and
// against the true pose, an empty item, optional inliers, errors; the CUDA kernel equal to the CPU kernel,
// with NULL inliers / input_error, its non-finite report and workspace error; the CUDA entry point of a
// CPU-only library.
//
//   pvn3d_test_pose_solve   (support/test_env.h)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "harness.h"
#include "pvn3d_ops.h"
#include "reference.h"
#include "test_data.h"
#include "test_env.h"

using harness::max_diff;
using ref::det3;
using testdata::make_vote_case;
using testdata::VoteCase;
using testenv::Dev;
using testenv::stream;

namespace {





}  // namespace

// ---- CPU kernel == reference -------------------------------------------------------------------

TEST(pose_solve_pipeline) {
  struct P { uint32_t seed; int64_t B, K, N; double sigma, outl, angle; };
  const P ps[] = {{1, 2, 9, 300, 0.003, 0.2, M_PI - 1e-3}, {2, 3, 3, 200, 0.002, 0.3, -1}, {3, 1, 9, 500, 0.004, 0.5, M_PI},
                  {4, 2, 4, 150, 0.001, 0.0, 0.5}};
  for (const P& p : ps) {
    VoteCase c = make_vote_case(p.seed, p.B, p.K, p.N, p.sigma, p.outl, 0.9, p.angle);
    const int64_t B = p.B, K = p.K;
    std::vector<float> R(B * 9), t(B * 3), kps(B * K * 3);
    std::vector<int64_t> inl(B);
    int st = pvn3d_pose_solve_cpu(c.votes.data(), c.mask.data(), PVN3D_MASK_FLOAT32, B, K, p.N, c.model.data(), 0, K,
                                  0.08f, 300, 1, R.data(), t.data(), kps.data(), inl.data());
    CHECK(st == PVN3D_OK, "pose seed %u: status %d (%s)", p.seed, st, pvn3d_last_error());
    // == VoteAggregate then KabschSolver, bitwise.
    std::vector<float> R2(B * 9), t2(B * 3), kps2(B * K * 3);
    std::vector<int64_t> inl2(B);
    pvn3d_vote_aggregate_cpu(c.votes.data(), c.mask.data(), PVN3D_MASK_FLOAT32, B, K, p.N, 0.08f, 300, 1, kps2.data(),
                             inl2.data());
    pvn3d_kabsch_solver_cpu(c.model.data(), 0, K, kps2.data(), B, K, R2.data(), t2.data());
    CHECK(max_diff(kps, kps2) == 0.0 && max_diff(R, R2) == 0.0 && max_diff(t, t2) == 0.0 && inl == inl2,
          "pose seed %u: fused == VoteAggregate + KabschSolver (bitwise)", p.seed);
    // Reference: mean shift in double then Horn.
    ref::VoteAggregateResult r = ref::vote_aggregate(c.votes, c.mask.data(), B, K, p.N, 0.08f, 300, 1);
    for (int64_t b = 0; b < B; ++b) {
      std::vector<double> a(c.model.begin(), c.model.end());
      double Rr[9], tr[3];
      ref::kabsch_solver(a.data(), &r.kps[b * K * 3], K, Rr, tr);
      double e = 0, et = 0;
      for (int i = 0; i < 9; ++i) e = std::max(e, std::fabs(R[b * 9 + i] - Rr[i]));
      for (int i = 0; i < 3; ++i) e = std::max(e, std::fabs(t[b * 3 + i] - tr[i]));
      CHECK(e < 1e-3, "pose seed %u item %lld: differs from the reference by %g", p.seed, (long long)b, e);
      for (int i = 0; i < 9; ++i) et = std::max(et, std::fabs(R[b * 9 + i] - c.Rtrue[b * 9 + i]));
      for (int i = 0; i < 3; ++i) et = std::max(et, std::fabs(t[b * 3 + i] - c.ttrue[b * 3 + i]));
      CHECK(et < 0.05, "pose seed %u item %lld: %g from the true pose", p.seed, (long long)b, et);
      CHECK(std::fabs(det3(&R[b * 9]) - 1) < 1e-5, "pose seed %u: det R = %g", p.seed, det3(&R[b * 9]));
    }
  }
}

TEST(pose_solve_empty_item_and_optional_inliers) {
  VoteCase c = make_vote_case(9, 3, 9, 120, 0.003, 0.2, 0.9);
  for (int64_t n = 0; n < c.N; ++n) c.mask[2 * c.N + n] = 0.0f;
  std::vector<float> R(27), t(9), kps(81);
  int st = pvn3d_pose_solve_cpu(c.votes.data(), c.mask.data(), 0, 3, 9, c.N, c.model.data(), 0, 9, 0.08f, 300, 1,
                                R.data(), t.data(), kps.data(), nullptr);
  CHECK(st == PVN3D_OK, "pose empty item: status %d (%s)", st, pvn3d_last_error());
  bool ok = true;
  for (int i = 0; i < 9; ++i) ok = ok && std::isnan(R[18 + i]);
  for (int i = 0; i < 3; ++i) ok = ok && std::isnan(t[6 + i]);
  for (int i = 0; i < 18; ++i) ok = ok && std::isfinite(R[i]);
  CHECK(ok, "pose empty item: NaN pose for it, finite for the others");
}

TEST(pose_solve_errors) {
  VoteCase c = make_vote_case(10, 2, 9, 20, 0.003, 0.0, 1.0);
  std::vector<float> R(18), t(6), kps(54);
  std::vector<int64_t> inl(2);
  auto has = [](const char* s) { return std::string(pvn3d_last_error()).find(s) != std::string::npos; };
  int st = pvn3d_pose_solve_cpu(c.votes.data(), nullptr, 0, 2, 2, 20, c.model.data(), 0, 2, 0.08f, 300, 1, R.data(),
                                t.data(), kps.data(), inl.data());
  CHECK(st == PVN3D_ERR_INVALID_ARGUMENT && has("PVN3D_PoseSolve: K (2"), "pose K<3: '%s'", pvn3d_last_error());
  st = pvn3d_pose_solve_cpu(c.votes.data(), nullptr, 0, 2, 9, 20, c.model.data(), 0, 8, 0.08f, 300, 1, R.data(), t.data(),
                            kps.data(), inl.data());
  CHECK(st == PVN3D_ERR_INVALID_ARGUMENT && has("mismatched K"), "pose mismatched K: '%s'", pvn3d_last_error());
  st = pvn3d_pose_solve_cpu(c.votes.data(), nullptr, 0, 2, 9, 20, c.model.data(), 3, 9, 0.08f, 300, 1, R.data(), t.data(),
                            kps.data(), inl.data());
  CHECK(st == PVN3D_ERR_INVALID_ARGUMENT && has("mismatched B"), "pose mismatched B: '%s'", pvn3d_last_error());
  std::vector<float> bad = c.model;
  bad[5] = NAN;
  st = pvn3d_pose_solve_cpu(c.votes.data(), nullptr, 0, 2, 9, 20, bad.data(), 0, 9, 0.08f, 300, 1, R.data(), t.data(),
                            kps.data(), inl.data());
  CHECK(st == PVN3D_ERR_INVALID_ARGUMENT && has("PVN3D_PoseSolve: input model_kps holds a non-finite value (nan) at flat position 5"),
        "pose NaN model: '%s'", pvn3d_last_error());
  st = pvn3d_pose_solve_cpu(c.votes.data(), nullptr, 0, 2, 9, 20, c.model.data(), 0, 9, -0.08f, 300, 1, R.data(),
                            t.data(), kps.data(), inl.data());
  CHECK(st == PVN3D_ERR_INVALID_ARGUMENT && has("bandwidth"), "pose bad bandwidth: '%s'", pvn3d_last_error());
  st = pvn3d_pose_solve_cpu(c.votes.data(), nullptr, 0, 2, 9, 20, c.model.data(), 0, 9, 0.08f, 300, 1, nullptr, t.data(),
                            kps.data(), inl.data());
  CHECK(st == PVN3D_ERR_INVALID_ARGUMENT && has("R is NULL"), "pose NULL R: '%s'", pvn3d_last_error());
}

// ---- CUDA kernel == CPU kernel ------------------------------------------------------------------

TEST(pose_solve_cuda_equals_cpu) {
  REQUIRE_CUDA();
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
    CHECK_OK(pvn3d_pose_solve_cpu(c.votes.data(), c.mask.data(), 0, B, K, p.N, c.model.data(), 0, K, 0.08f, 300, 1, R.data(),
                                  t.data(), kps.data(), inl.data()));
    Dev votes(c.votes), mask(c.mask), model(c.model), dR(B * 36), dt(B * 12), dk(B * K * 12), di(B * 8), de(16);
    const size_t wsb = pvn3d_pose_solve_cuda_workspace_bytes(B, K, p.N);
    Dev ws(wsb);
    CHECK_OK(pvn3d_pose_solve_cuda(votes.as<float>(), mask.p, 0, B, K, p.N, model.as<float>(), 0, K, 0.08f, 300, 1,
                                   dR.as<float>(), dt.as<float>(), dk.as<float>(), di.as<int64_t>(), de.as<int64_t>(), ws.p,
                                   wsb, stream()));
    const double d = std::max({max_diff(dR.get<float>(), R), max_diff(dt.get<float>(), t), max_diff(dk.get<float>(), kps)});
    CHECK(d <= 1e-5, "pose seed %u: CUDA differs from CPU by %g", p.seed, d);
    CHECK(di.get<int64_t>() == inl, "pose seed %u: inliers differ", p.seed);
    CHECK(de.get<int64_t>()[0] == -1, "pose seed %u: no input error expected", p.seed);
    std::printf("  pose seed %u B=%lld K=%lld N=%lld: max |cuda-cpu| = %.3g\n", p.seed, (long long)B, (long long)K,
                (long long)p.N, d);
    // inliers = NULL and input_error = NULL are allowed.
    CHECK_OK(pvn3d_pose_solve_cuda(votes.as<float>(), mask.p, 0, B, K, p.N, model.as<float>(), 0, K, 0.08f, 300, 1,
                                   dR.as<float>(), dt.as<float>(), dk.as<float>(), nullptr, nullptr, ws.p, wsb, stream()));
    CHECK(max_diff(dR.get<float>(), R) <= 1e-5, "pose seed %u: NULL inliers/input_error", p.seed);
  }
  // One frame of the full-size model: 12288 points of which ~6443 are masked (the object), PVN3D-like
  // votes (within ~1 cm, 30% outliers), center_filter 1. The CPU side takes seconds: once.
  {
    const int64_t B = 1, K = 9, N = 12288;
    VoteCase f = make_vote_case(77, B, K, N, 0.01, 0.3, 6443.0 / 12288.0);
    std::vector<float> R(9), t(3), kps(K * 3);
    std::vector<int64_t> inl(1);
    CHECK_OK(pvn3d_pose_solve_cpu(f.votes.data(), f.mask.data(), 0, B, K, N, f.model.data(), 0, K, 0.08f, 300, 1, R.data(),
                                  t.data(), kps.data(), inl.data()));
    Dev votes(f.votes), mask(f.mask), model(f.model), dR(36), dt(12), dk(K * 12), di(8);
    const size_t wsb = pvn3d_pose_solve_cuda_workspace_bytes(B, K, N);
    Dev ws(wsb);
    CHECK_OK(pvn3d_pose_solve_cuda(votes.as<float>(), mask.p, 0, B, K, N, model.as<float>(), 0, K, 0.08f, 300, 1,
                                   dR.as<float>(), dt.as<float>(), dk.as<float>(), di.as<int64_t>(), nullptr, ws.p, wsb,
                                   stream()));
    const double d = std::max({max_diff(dR.get<float>(), R), max_diff(dt.get<float>(), t), max_diff(dk.get<float>(), kps)});
    CHECK(d <= 1e-5, "pose frame 12288/~6443: CUDA differs from CPU by %g", d);
    CHECK(di.get<int64_t>() == inl, "pose frame 12288/~6443: inliers differ");
    std::printf("  pose frame N=%lld (%lld inliers): max |cuda-cpu| = %.3g\n", (long long)N, (long long)inl[0], d);
  }
  // Non-finite model: the report.
  VoteCase c = make_vote_case(9, 2, 9, 100, 0.003, 0.2, 0.9);
  c.model[7] = NAN;
  Dev votes(c.votes), model(c.model), dR(2 * 36), dt(2 * 12), dk(2 * 9 * 12), de(16);
  const size_t wsb = pvn3d_pose_solve_cuda_workspace_bytes(2, 9, 100);
  Dev ws(wsb);
  CHECK_OK(pvn3d_pose_solve_cuda(votes.as<float>(), nullptr, 0, 2, 9, 100, model.as<float>(), 0, 9, 0.08f, 300, 1,
                                 dR.as<float>(), dt.as<float>(), dk.as<float>(), nullptr, de.as<int64_t>(), ws.p, wsb,
                                 stream()));
  auto e = de.get<int64_t>();
  pvn3d_kabsch_error_describe("PVN3D_PoseSolve", e[0], e[1], 27, "kps");
  CHECK(std::string(pvn3d_last_error()) == "PVN3D_PoseSolve: input model_kps holds a non-finite value (nan) at flat position 7",
        "pose CUDA NaN model: '%s'", pvn3d_last_error());
  CHECK(std::isnan(dR.get<float>()[0]), "pose CUDA NaN model: NaN R");
  const int st = pvn3d_pose_solve_cuda(votes.as<float>(), nullptr, 0, 2, 9, 100, model.as<float>(), 0, 9, 0.08f, 300, 1,
                                       dR.as<float>(), dt.as<float>(), dk.as<float>(), nullptr, nullptr, ws.p, 16, stream());
  CHECK(st == PVN3D_ERR_INVALID_ARGUMENT, "pose CUDA small workspace: status %d", st);
}

// ---- a CPU-only library -------------------------------------------------------------------------

TEST(pose_solve_cuda_entry_point_in_cpu_only_build) {
  if (pvn3d_built_with_cuda()) SKIP("library built with CUDA (the CUDA tests above cover the entry point)");
  float votes[27] = {0}, model[9] = {0}, R[9], t[3], kps[9];
  CHECK(pvn3d_pose_solve_cuda(votes, nullptr, 0, 1, 3, 3, model, 0, 3, 0.08f, 300, 1, R, t, kps, nullptr, nullptr,
                              nullptr, 0, nullptr) == PVN3D_ERR_NO_CUDA,
        "pose_solve");
  CHECK(harness::contains(pvn3d_last_error(), "pvn3d_pose_solve_cuda: built without CUDA"), "'%s'", pvn3d_last_error());
  CHECK(pvn3d_pose_solve_cuda_workspace_bytes(1, 9, 3000) == 0, "workspace");
}

int main(int argc, char** argv) { return testenv::run(argc, argv); }
