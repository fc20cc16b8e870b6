// Native tests of PVN3D_VoteAggregate's CPU kernel against the reference (test_pose_solve_reference.h).
#include <cmath>
#include <string>
#include <vector>

#include "common/status.h"
#include "vote_aggregate/vote_aggregate.h"
#include "test_pose_solve_reference.h"

using namespace poseref;

namespace {
Harness H;

struct Out {
  std::vector<float> kps;
  std::vector<int64_t> inl;
  int st = 0;
};

Out run_cpu(const VoteCase& c, const void* mask, int dtype, float bw, int64_t iters, int cf) {
  Out o;
  o.kps.assign(c.B * c.K * 3, -7.0f);
  o.inl.assign(c.B, -7);
  o.st = pvn3d_vote_aggregate_cpu(c.votes.data(), mask, dtype, c.B, c.K, c.N, bw, iters, cf, o.kps.data(), o.inl.data());
  return o;
}

void compare_ref(const char* name, const VoteCase& c, const float* mask, float bw, int64_t iters, int cf, double tol) {
  Out o = run_cpu(c, mask, PVN3D_MASK_FLOAT32, bw, iters, cf);
  H.check(o.st == PVN3D_OK, "%s: status %d (%s)", name, o.st, pvn3d_last_error());
  RefVA r = ref_vote_aggregate(c.votes, mask, c.B, c.K, c.N, bw, iters, cf);
  double e = 0;
  bool nan_ok = true;
  for (size_t i = 0; i < o.kps.size(); ++i) {
    if (std::isnan(r.kps[i]) || std::isnan(o.kps[i])) {
      nan_ok = nan_ok && std::isnan(r.kps[i]) && std::isnan(o.kps[i]);
      continue;
    }
    e = std::max(e, std::fabs(o.kps[i] - r.kps[i]));
  }
  H.check(nan_ok, "%s: NaN pattern differs from the reference", name);
  H.check(e <= tol, "%s: kps differ from the reference by %g (tol %g)", name, e, tol);
  bool inl_ok = true;
  for (int64_t b = 0; b < c.B; ++b) inl_ok = inl_ok && o.inl[b] == r.inliers[b];
  H.check(inl_ok, "%s: inliers differ (%lld vs ref %lld)", name, (long long)o.inl[0], (long long)r.inliers[0]);
}

void test_against_reference() {
  // B>1, K=3 and K=9, noisy and outlier-laden, both filter modes.
  struct P { uint32_t seed; int64_t B, K, N; double sigma, outl, maskr; };
  const P ps[] = {{1, 2, 9, 300, 0.005, 0.2, 0.8}, {2, 3, 3, 250, 0.01, 0.4, 0.9}, {3, 1, 9, 400, 0.002, 0.0, 1.0},
                  {4, 2, 9, 200, 0.02, 0.6, 0.7}, {5, 1, 3, 64, 0.03, 0.3, 0.5}};
  for (const P& p : ps) {
    VoteCase c = make_vote_case(p.seed, p.B, p.K, p.N, p.sigma, p.outl, p.maskr);
    for (int cf = 0; cf <= 1; ++cf) {
      char name[128];
      std::snprintf(name, sizeof name, "VA seed=%u B=%lld K=%lld N=%lld cf=%d", p.seed, (long long)p.B, (long long)p.K,
                    (long long)p.N, cf);
      compare_ref(name, c, c.mask.data(), 0.08f, 300, cf, 5e-5);
    }
  }
  // Small bandwidth: many clusters, more iterations.
  VoteCase c = make_vote_case(11, 2, 4, 300, 0.03, 0.5, 0.9);
  compare_ref("VA bw=0.02", c, c.mask.data(), 0.02f, 300, 1, 5e-5);
  compare_ref("VA max_iter=3", c, c.mask.data(), 0.05f, 3, 1, 5e-5);
}

void test_accuracy_vs_truth() {
  VoteCase c = make_vote_case(21, 2, 9, 500, 0.004, 0.3, 0.9);
  Out o = run_cpu(c, c.mask.data(), PVN3D_MASK_FLOAT32, 0.08f, 300, 1);
  double e = 0;
  for (int64_t b = 0; b < c.B; ++b)
    for (int64_t k = 0; k < c.K; ++k)
      for (int r = 0; r < 3; ++r) {
        const double* R = &c.Rtrue[b * 9];
        const double p = R[r * 3] * c.model[k * 3] + R[r * 3 + 1] * c.model[k * 3 + 1] + R[r * 3 + 2] * c.model[k * 3 + 2] +
                         c.ttrue[b * 3 + r];
        e = std::max(e, std::fabs(p - o.kps[(b * c.K + k) * 3 + r]));
      }
  H.check(e < 0.004, "VA truth: keypoints are %g from the true keypoints with 30%% outliers", e);
}

void test_empty_and_masks() {
  VoteCase c = make_vote_case(31, 3, 9, 100, 0.005, 0.2, 0.9);
  for (int64_t n = 0; n < c.N; ++n) c.mask[1 * c.N + n] = 0.0f;  // item 1 empty
  Out o = run_cpu(c, c.mask.data(), PVN3D_MASK_FLOAT32, 0.08f, 300, 1);
  H.check(o.st == PVN3D_OK, "VA empty item: status %d", o.st);
  bool nan = true, finite = true;
  for (int64_t k = 0; k < c.K; ++k)
    for (int r = 0; r < 3; ++r) {
      nan = nan && std::isnan(o.kps[(1 * c.K + k) * 3 + r]);
      finite = finite && std::isfinite(o.kps[(0 * c.K + k) * 3 + r]) && std::isfinite(o.kps[(2 * c.K + k) * 3 + r]);
    }
  H.check(nan && o.inl[1] == 0, "VA empty item: NaN keypoints and 0 inliers (inliers %lld)", (long long)o.inl[1]);
  H.check(finite && o.inl[0] > 0 && o.inl[2] > 0, "VA empty item: the other items are finite");
  // All empty, and N = 0.
  std::vector<float> zero(c.B * c.N, 0.0f);
  Out z = run_cpu(c, zero.data(), PVN3D_MASK_FLOAT32, 0.08f, 300, 1);
  bool allnan = z.st == PVN3D_OK;
  for (float v : z.kps) allnan = allnan && std::isnan(v);
  for (int64_t v : z.inl) allnan = allnan && v == 0;
  H.check(allnan, "VA all-empty mask: NaN everywhere and 0 inliers");
  VoteCase e0 = c;
  e0.N = 0;
  e0.votes.clear();
  Out z0 = run_cpu(e0, nullptr, PVN3D_MASK_FLOAT32, 0.08f, 300, 0);
  H.check(z0.st == PVN3D_OK && std::isnan(z0.kps[0]) && z0.inl[0] == 0, "VA N=0: status %d", z0.st);
  // Bool mask == float mask; NULL mask == all-ones mask.
  std::vector<uint8_t> bm(c.mask.size());
  for (size_t i = 0; i < bm.size(); ++i) bm[i] = c.mask[i] != 0.0f;
  Out ob = run_cpu(c, bm.data(), PVN3D_MASK_BOOL, 0.08f, 300, 1);
  H.check(ob.kps == o.kps || max_diff(ob.kps, o.kps) == 0.0, "VA bool mask == float mask");
  H.check(ob.inl == o.inl, "VA bool mask inliers");
  std::vector<float> ones(c.B * c.N, 1.0f);
  Out o1 = run_cpu(c, ones.data(), PVN3D_MASK_FLOAT32, 0.08f, 300, 0);
  Out on = run_cpu(c, nullptr, PVN3D_MASK_FLOAT32, 0.08f, 300, 0);
  H.check(max_diff(o1.kps, on.kps) == 0.0 && o1.inl == on.inl && on.inl[0] == c.N, "VA NULL mask == all ones");
}

void test_nonfinite_votes_dropped() {
  VoteCase c = make_vote_case(41, 2, 9, 150, 0.005, 0.2, 1.0);
  VoteCase d = c;
  // Point 3 of item 0 gets a NaN vote for keypoint 4, point 7 of item 1 an inf for keypoint 8 (centre).
  d.votes[((0 * c.K + 4) * c.N + 3) * 3 + 1] = NAN;
  d.votes[((1 * c.K + 8) * c.N + 7) * 3 + 0] = INFINITY;
  VoteCase m = c;
  m.mask[0 * c.N + 3] = 0.0f;
  m.mask[1 * c.N + 7] = 0.0f;
  Out od = run_cpu(d, d.mask.data(), PVN3D_MASK_FLOAT32, 0.08f, 300, 1);
  Out om = run_cpu(m, m.mask.data(), PVN3D_MASK_FLOAT32, 0.08f, 300, 1);
  H.check(od.st == PVN3D_OK && max_diff(od.kps, om.kps) == 0.0 && od.inl == om.inl,
          "VA non-finite votes: the point is treated as unmasked");
  compare_ref("VA non-finite votes vs ref", d, d.mask.data(), 0.08f, 300, 1, 5e-5);
}

void test_special_cases() {
  // max_iter = 0: the answer is the chosen vote itself.
  VoteCase c = make_vote_case(51, 1, 3, 80, 0.01, 0.3, 1.0);
  Out o = run_cpu(c, nullptr, PVN3D_MASK_FLOAT32, 0.08f, 0, 0);
  RefVA r = ref_vote_aggregate(c.votes, nullptr, 1, 3, 80, 0.08f, 0, 0);
  bool ok = o.st == PVN3D_OK;
  for (int64_t k = 0; k < 3; ++k)
    for (int d = 0; d < 3; ++d) ok = ok && o.kps[k * 3 + d] == c.votes[(k * 80 + r.best[k]) * 3 + d];
  H.check(ok, "VA max_iter=0: the chosen vote itself");
  // One point.
  VoteCase one = make_vote_case(52, 1, 9, 1, 0.0, 0.0, 1.0);
  Out o1 = run_cpu(one, nullptr, PVN3D_MASK_FLOAT32, 0.08f, 300, 1);
  H.check(o1.st == PVN3D_OK && max_diff(o1.kps, one.votes) == 0.0 && o1.inl[0] == 1, "VA one point: kps = its votes");
  // Two well separated clusters: the bigger one wins; equal sizes: the one holding the lowest index.
  const int64_t N = 30;
  VoteCase t;
  t.B = 1; t.K = 1; t.N = N;
  t.votes.resize(N * 3);
  std::mt19937 g(3);
  std::normal_distribution<double> nd(0, 0.003);
  auto fill = [&](int64_t n, double x) {
    t.votes[n * 3] = (float)(x + nd(g));
    t.votes[n * 3 + 1] = (float)nd(g);
    t.votes[n * 3 + 2] = (float)nd(g);
  };
  for (int64_t n = 0; n < N; ++n) fill(n, n < 12 ? 0.0 : 1.0);  // 12 near x=0 then 18 near x=1
  Out big = run_cpu(t, nullptr, PVN3D_MASK_FLOAT32, 0.08f, 300, 0);
  H.check(std::fabs(big.kps[0] - 1.0f) < 0.01f, "VA two clusters: the bigger (x=1) wins, got x=%g", big.kps[0]);
  for (int64_t n = 0; n < N; ++n) fill(n, (n % 2) ? 0.0 : 1.0);  // 15 / 15, index 0 at x=1
  Out tie = run_cpu(t, nullptr, PVN3D_MASK_FLOAT32, 0.08f, 300, 0);
  H.check(std::fabs(tie.kps[0] - 1.0f) < 0.01f, "VA tie: the cluster of the lowest index (x=1) wins, got x=%g",
          tie.kps[0]);
  // Centre filter: points whose centre vote is an outlier are left out of the other rows.
  VoteCase f = make_vote_case(61, 1, 2, 100, 0.003, 0.0, 1.0);
  for (int64_t n = 0; n < 30; ++n) f.votes[((0 * 2 + 1) * 100 + n) * 3] += 0.5f;  // 30 centre votes far away
  Out of = run_cpu(f, nullptr, PVN3D_MASK_FLOAT32, 0.08f, 300, 1);
  H.check(of.inl[0] == 70, "VA centre filter: 70 points used, got %lld", (long long)of.inl[0]);
  compare_ref("VA centre filter vs ref", f, nullptr, 0.08f, 300, 1, 5e-5);
  // Thread count does not change the answer (bitwise).
  VoteCase big2 = make_vote_case(71, 2, 9, 400, 0.01, 0.4, 0.9);
  const int saved = pvn3d_get_num_threads();
  pvn3d_set_num_threads(1);
  Out s1 = run_cpu(big2, big2.mask.data(), PVN3D_MASK_FLOAT32, 0.08f, 300, 1);
  pvn3d_set_num_threads(saved > 1 ? saved : 3);
  Out s2 = run_cpu(big2, big2.mask.data(), PVN3D_MASK_FLOAT32, 0.08f, 300, 1);
  pvn3d_set_num_threads(0);
  H.check(max_diff(s1.kps, s2.kps) == 0.0 && s1.inl == s2.inl, "VA 1 thread == many threads (bitwise)");
}

void test_errors() {
  VoteCase c = make_vote_case(81, 1, 9, 10, 0.01, 0.0, 1.0);
  float kps[27];
  int64_t inl[1];
  auto st = [&](float bw, int64_t it, int cf, int dtype, int64_t K) {
    return pvn3d_vote_aggregate_cpu(c.votes.data(), c.mask.data(), dtype, 1, K, 10, bw, it, cf, kps, inl);
  };
  auto has = [](const char* s) { return std::string(pvn3d_last_error()).find(s) != std::string::npos; };
  H.check(st(0.0f, 300, 1, 0, 9) == PVN3D_ERR_INVALID_ARGUMENT && has("bandwidth"), "bandwidth 0: '%s'", pvn3d_last_error());
  H.check(st(-1.0f, 300, 1, 0, 9) == PVN3D_ERR_INVALID_ARGUMENT, "bandwidth < 0");
  H.check(st(NAN, 300, 1, 0, 9) == PVN3D_ERR_INVALID_ARGUMENT && has("bandwidth"), "bandwidth NaN");
  H.check(st(0.08f, -1, 1, 0, 9) == PVN3D_ERR_INVALID_ARGUMENT && has("max_iter"), "max_iter -1: '%s'", pvn3d_last_error());
  H.check(st(0.08f, 300, 2, 0, 9) == PVN3D_ERR_INVALID_ARGUMENT && has("center_filter"), "center_filter 2");
  H.check(st(0.08f, 300, 1, 5, 9) == PVN3D_ERR_INVALID_ARGUMENT && has("mask_dtype"), "mask_dtype 5");
  H.check(st(0.08f, 300, 1, 0, 0) == PVN3D_ERR_INVALID_ARGUMENT && has("K must be >= 1"), "K 0: '%s'", pvn3d_last_error());
  H.check(pvn3d_vote_aggregate_cpu(c.votes.data(), nullptr, 0, 1, 9, 10, 0.08f, 300, 1, nullptr, inl) ==
              PVN3D_ERR_INVALID_ARGUMENT && has("kps is NULL"), "NULL kps");
  H.check(pvn3d_vote_aggregate_cpu(nullptr, nullptr, 0, 1, 9, 10, 0.08f, 300, 1, kps, inl) == PVN3D_ERR_INVALID_ARGUMENT &&
              has("votes is NULL"), "NULL votes");
  H.check(pvn3d_vote_aggregate_cpu(c.votes.data(), nullptr, 0, 0, 9, 10, 0.08f, 300, 1, kps, inl) ==
              PVN3D_ERR_INVALID_ARGUMENT && has("B must be >= 1"), "B 0");
  H.check(pvn3d_vote_aggregate_cpu(c.votes.data(), nullptr, 0, 1, 9, -1, 0.08f, 300, 1, kps, inl) ==
              PVN3D_ERR_INVALID_ARGUMENT, "N -1");
  H.check(pvn3d_vote_aggregate_cpu(c.votes.data(), nullptr, 0, 1, 9, int64_t{1} << 40, 0.08f, 300, 1, kps, inl) ==
              PVN3D_ERR_INVALID_ARGUMENT, "N 2^40");
}
}  // namespace

int main() {
  test_against_reference();
  test_accuracy_vs_truth();
  test_empty_and_masks();
  test_nonfinite_votes_dropped();
  test_special_cases();
  test_errors();
  return H.finish();
}
