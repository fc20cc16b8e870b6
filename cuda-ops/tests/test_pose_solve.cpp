// Native tests of PVN3D_PoseSolve's CPU kernel: against the two operators it fuses (bitwise), against
// the reference (mean shift in double + Horn's method) and against the true pose.
#include <cmath>
#include <string>
#include <vector>

#include "common/status.h"
#include "kabsch_solver/kabsch_solver.h"
#include "pose_solve/pose_solve.h"
#include "vote_aggregate/vote_aggregate.h"
#include "test_pose_solve_reference.h"

using namespace poseref;

namespace {
Harness H;

void test_pipeline() {
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
    H.check(st == PVN3D_OK, "pose seed %u: status %d (%s)", p.seed, st, pvn3d_last_error());
    // == VoteAggregate then KabschSolver, bitwise.
    std::vector<float> R2(B * 9), t2(B * 3), kps2(B * K * 3);
    std::vector<int64_t> inl2(B);
    pvn3d_vote_aggregate_cpu(c.votes.data(), c.mask.data(), PVN3D_MASK_FLOAT32, B, K, p.N, 0.08f, 300, 1, kps2.data(),
                             inl2.data());
    pvn3d_kabsch_solver_cpu(c.model.data(), 0, K, kps2.data(), B, K, R2.data(), t2.data());
    H.check(max_diff(kps, kps2) == 0.0 && max_diff(R, R2) == 0.0 && max_diff(t, t2) == 0.0 && inl == inl2,
            "pose seed %u: fused == VoteAggregate + KabschSolver (bitwise)", p.seed);
    // Reference: mean shift in double then Horn.
    RefVA r = ref_vote_aggregate(c.votes, c.mask.data(), B, K, p.N, 0.08f, 300, 1);
    for (int64_t b = 0; b < B; ++b) {
      std::vector<double> a(c.model.begin(), c.model.end());
      double Rr[9], tr[3];
      ref_pose(a.data(), &r.kps[b * K * 3], K, Rr, tr);
      double e = 0, et = 0;
      for (int i = 0; i < 9; ++i) e = std::max(e, std::fabs(R[b * 9 + i] - Rr[i]));
      for (int i = 0; i < 3; ++i) e = std::max(e, std::fabs(t[b * 3 + i] - tr[i]));
      H.check(e < 1e-3, "pose seed %u item %lld: differs from the reference by %g", p.seed, (long long)b, e);
      for (int i = 0; i < 9; ++i) et = std::max(et, std::fabs(R[b * 9 + i] - c.Rtrue[b * 9 + i]));
      for (int i = 0; i < 3; ++i) et = std::max(et, std::fabs(t[b * 3 + i] - c.ttrue[b * 3 + i]));
      H.check(et < 0.05, "pose seed %u item %lld: %g from the true pose", p.seed, (long long)b, et);
      H.check(std::fabs(det3(&R[b * 9]) - 1) < 1e-5, "pose seed %u: det R = %g", p.seed, det3(&R[b * 9]));
    }
  }
}

void test_empty_item_and_optional_inliers() {
  VoteCase c = make_vote_case(9, 3, 9, 120, 0.003, 0.2, 0.9);
  for (int64_t n = 0; n < c.N; ++n) c.mask[2 * c.N + n] = 0.0f;
  std::vector<float> R(27), t(9), kps(81);
  int st = pvn3d_pose_solve_cpu(c.votes.data(), c.mask.data(), 0, 3, 9, c.N, c.model.data(), 0, 9, 0.08f, 300, 1,
                                R.data(), t.data(), kps.data(), nullptr);
  H.check(st == PVN3D_OK, "pose empty item: status %d (%s)", st, pvn3d_last_error());
  bool ok = true;
  for (int i = 0; i < 9; ++i) ok = ok && std::isnan(R[18 + i]);
  for (int i = 0; i < 3; ++i) ok = ok && std::isnan(t[6 + i]);
  for (int i = 0; i < 18; ++i) ok = ok && std::isfinite(R[i]);
  H.check(ok, "pose empty item: NaN pose for it, finite for the others");
}

void test_errors() {
  VoteCase c = make_vote_case(10, 2, 9, 20, 0.003, 0.0, 1.0);
  std::vector<float> R(18), t(6), kps(54);
  std::vector<int64_t> inl(2);
  auto has = [](const char* s) { return std::string(pvn3d_last_error()).find(s) != std::string::npos; };
  int st = pvn3d_pose_solve_cpu(c.votes.data(), nullptr, 0, 2, 2, 20, c.model.data(), 0, 2, 0.08f, 300, 1, R.data(),
                                t.data(), kps.data(), inl.data());
  H.check(st == PVN3D_ERR_INVALID_ARGUMENT && has("PVN3D_PoseSolve: K (2"), "pose K<3: '%s'", pvn3d_last_error());
  st = pvn3d_pose_solve_cpu(c.votes.data(), nullptr, 0, 2, 9, 20, c.model.data(), 0, 8, 0.08f, 300, 1, R.data(), t.data(),
                            kps.data(), inl.data());
  H.check(st == PVN3D_ERR_INVALID_ARGUMENT && has("mismatched K"), "pose mismatched K: '%s'", pvn3d_last_error());
  st = pvn3d_pose_solve_cpu(c.votes.data(), nullptr, 0, 2, 9, 20, c.model.data(), 3, 9, 0.08f, 300, 1, R.data(), t.data(),
                            kps.data(), inl.data());
  H.check(st == PVN3D_ERR_INVALID_ARGUMENT && has("mismatched B"), "pose mismatched B: '%s'", pvn3d_last_error());
  std::vector<float> bad = c.model;
  bad[5] = NAN;
  st = pvn3d_pose_solve_cpu(c.votes.data(), nullptr, 0, 2, 9, 20, bad.data(), 0, 9, 0.08f, 300, 1, R.data(), t.data(),
                            kps.data(), inl.data());
  H.check(st == PVN3D_ERR_INVALID_ARGUMENT && has("PVN3D_PoseSolve: input model_kps holds a non-finite value (nan) at flat position 5"),
          "pose NaN model: '%s'", pvn3d_last_error());
  st = pvn3d_pose_solve_cpu(c.votes.data(), nullptr, 0, 2, 9, 20, c.model.data(), 0, 9, -0.08f, 300, 1, R.data(),
                            t.data(), kps.data(), inl.data());
  H.check(st == PVN3D_ERR_INVALID_ARGUMENT && has("bandwidth"), "pose bad bandwidth: '%s'", pvn3d_last_error());
  st = pvn3d_pose_solve_cpu(c.votes.data(), nullptr, 0, 2, 9, 20, c.model.data(), 0, 9, 0.08f, 300, 1, nullptr, t.data(),
                            kps.data(), inl.data());
  H.check(st == PVN3D_ERR_INVALID_ARGUMENT && has("R is NULL"), "pose NULL R: '%s'", pvn3d_last_error());
}
}  // namespace

int main() {
  test_pipeline();
  test_empty_item_and_optional_inliers();
  test_errors();
  return H.finish();
}
