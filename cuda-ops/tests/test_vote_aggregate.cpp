// Tests of PVN3D_VoteAggregate (vote_aggregate/), three ways: the CPU kernel against the reference mean
// shift (support/reference.cpp, in double) and against the true keypoints, masks (float, bool, NULL,
// empty items, N = 0), non-finite votes, max_iter 0, one point, cluster ties, the centre filter, thread
// counts, settled modes skipped (bit for bit the same as computing every mode), errors; the CUDA kernel equal to the CPU kernel on every such case and at PVN3D's sizes, plus
// its errors; the CUDA entry point of a CPU-only library.
//
//   pvn3d_test_vote_aggregate   (support/test_env.h)
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
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
using testdata::make_vote_case;
using testdata::VoteCase;
using testenv::Dev;
using testenv::stream;

namespace {

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
  CHECK(o.st == PVN3D_OK, "%s: status %d (%s)", name, o.st, pvn3d_last_error());
  ref::VoteAggregateResult r = ref::vote_aggregate(c.votes, mask, c.B, c.K, c.N, bw, iters, cf);
  double e = 0;
  bool nan_ok = true;
  for (size_t i = 0; i < o.kps.size(); ++i) {
    if (std::isnan(r.kps[i]) || std::isnan(o.kps[i])) {
      nan_ok = nan_ok && std::isnan(r.kps[i]) && std::isnan(o.kps[i]);
      continue;
    }
    e = std::max(e, std::fabs(o.kps[i] - r.kps[i]));
  }
  CHECK(nan_ok, "%s: NaN pattern differs from the reference", name);
  CHECK(e <= tol, "%s: kps differ from the reference by %g (tol %g)", name, e, tol);
  bool inl_ok = true;
  for (int64_t b = 0; b < c.B; ++b) inl_ok = inl_ok && o.inl[b] == r.inliers[b];
  CHECK(inl_ok, "%s: inliers differ (%lld vs ref %lld)", name, (long long)o.inl[0], (long long)r.inliers[0]);
}

struct VAOut {
  std::vector<float> kps;
  std::vector<int64_t> inl;
};

VAOut va_cpu(const VoteCase& c, const void* mask, int dtype, float bw, int64_t it, int cf) {
  VAOut o;
  o.kps.resize(c.B * c.K * 3);
  o.inl.resize(c.B);
  CHECK_OK(pvn3d_vote_aggregate_cpu(c.votes.data(), mask, dtype, c.B, c.K, c.N, bw, it, cf, o.kps.data(), o.inl.data()));
  return o;
}

VAOut va_cuda(const VoteCase& c, const void* mask_host, size_t mask_bytes, int dtype, float bw, int64_t it, int cf) {
  Dev votes(std::max<size_t>(4, c.votes.size() * sizeof(float)));
  if (!c.votes.empty()) CHECK_OK(pvn3d_cuda_memcpy_h2d_async(votes.p, c.votes.data(), c.votes.size() * 4, stream()));
  Dev mask(std::max<size_t>(4, mask_bytes));
  if (mask_host) CHECK_OK(pvn3d_cuda_memcpy_h2d_async(mask.p, mask_host, mask_bytes, stream()));
  Dev kps(c.B * c.K * 3 * sizeof(float)), inl(c.B * sizeof(int64_t));
  const size_t wsb = pvn3d_vote_aggregate_cuda_workspace_bytes(c.B, c.K, c.N);
  Dev ws(wsb);
  CHECK_OK(pvn3d_vote_aggregate_cuda(votes.as<float>(), mask_host ? mask.p : nullptr, dtype, c.B, c.K, c.N, bw, it, cf,
                                     kps.as<float>(), inl.as<int64_t>(), ws.p, wsb, stream()));
  VAOut o;
  o.kps = kps.get<float>();
  o.inl = inl.get<int64_t>();
  return o;
}

void compare_va(const char* name, const VoteCase& c, const float* mask, float bw, int64_t it, int cf) {
  VAOut a = va_cpu(c, mask, PVN3D_MASK_FLOAT32, bw, it, cf);
  VAOut g = va_cuda(c, mask, mask ? c.B * c.N * sizeof(float) : 0, PVN3D_MASK_FLOAT32, bw, it, cf);
  const double d = max_diff(g.kps, a.kps);
  CHECK(d <= 1e-5, "%s: CUDA kps differ from CPU by %g (rel, tol 1e-5)", name, d);
  CHECK(g.inl == a.inl, "%s: CUDA inliers differ from CPU (%lld vs %lld)", name, (long long)g.inl[0],
        (long long)a.inl[0]);
  std::printf("  %-44s max |cuda-cpu| = %.3g\n", name, d);
}

}  // namespace

// ---- CPU kernel == reference -------------------------------------------------------------------

TEST(vote_aggregate_vs_reference) {
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

TEST(vote_aggregate_accuracy_vs_truth) {
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
  CHECK(e < 0.004, "VA truth: keypoints are %g from the true keypoints with 30%% outliers", e);
}

TEST(vote_aggregate_empty_and_masks) {
  VoteCase c = make_vote_case(31, 3, 9, 100, 0.005, 0.2, 0.9);
  for (int64_t n = 0; n < c.N; ++n) c.mask[1 * c.N + n] = 0.0f;  // item 1 empty
  Out o = run_cpu(c, c.mask.data(), PVN3D_MASK_FLOAT32, 0.08f, 300, 1);
  CHECK(o.st == PVN3D_OK, "VA empty item: status %d", o.st);
  bool nan = true, finite = true;
  for (int64_t k = 0; k < c.K; ++k)
    for (int r = 0; r < 3; ++r) {
      nan = nan && std::isnan(o.kps[(1 * c.K + k) * 3 + r]);
      finite = finite && std::isfinite(o.kps[(0 * c.K + k) * 3 + r]) && std::isfinite(o.kps[(2 * c.K + k) * 3 + r]);
    }
  CHECK(nan && o.inl[1] == 0, "VA empty item: NaN keypoints and 0 inliers (inliers %lld)", (long long)o.inl[1]);
  CHECK(finite && o.inl[0] > 0 && o.inl[2] > 0, "VA empty item: the other items are finite");
  // All empty, and N = 0.
  std::vector<float> zero(c.B * c.N, 0.0f);
  Out z = run_cpu(c, zero.data(), PVN3D_MASK_FLOAT32, 0.08f, 300, 1);
  bool allnan = z.st == PVN3D_OK;
  for (float v : z.kps) allnan = allnan && std::isnan(v);
  for (int64_t v : z.inl) allnan = allnan && v == 0;
  CHECK(allnan, "VA all-empty mask: NaN everywhere and 0 inliers");
  VoteCase e0 = c;
  e0.N = 0;
  e0.votes.clear();
  Out z0 = run_cpu(e0, nullptr, PVN3D_MASK_FLOAT32, 0.08f, 300, 0);
  CHECK(z0.st == PVN3D_OK && std::isnan(z0.kps[0]) && z0.inl[0] == 0, "VA N=0: status %d", z0.st);
  // Bool mask == float mask; NULL mask == all-ones mask.
  std::vector<uint8_t> bm(c.mask.size());
  for (size_t i = 0; i < bm.size(); ++i) bm[i] = c.mask[i] != 0.0f;
  Out ob = run_cpu(c, bm.data(), PVN3D_MASK_BOOL, 0.08f, 300, 1);
  CHECK(ob.kps == o.kps || max_diff(ob.kps, o.kps) == 0.0, "VA bool mask == float mask");
  CHECK(ob.inl == o.inl, "VA bool mask inliers");
  std::vector<float> ones(c.B * c.N, 1.0f);
  Out o1 = run_cpu(c, ones.data(), PVN3D_MASK_FLOAT32, 0.08f, 300, 0);
  Out on = run_cpu(c, nullptr, PVN3D_MASK_FLOAT32, 0.08f, 300, 0);
  CHECK(max_diff(o1.kps, on.kps) == 0.0 && o1.inl == on.inl && on.inl[0] == c.N, "VA NULL mask == all ones");
}

TEST(vote_aggregate_nonfinite_votes_dropped) {
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
  CHECK(od.st == PVN3D_OK && max_diff(od.kps, om.kps) == 0.0 && od.inl == om.inl,
        "VA non-finite votes: the point is treated as unmasked");
  compare_ref("VA non-finite votes vs ref", d, d.mask.data(), 0.08f, 300, 1, 5e-5);
}

TEST(vote_aggregate_special_cases) {
  // max_iter = 0: the answer is the chosen vote itself.
  VoteCase c = make_vote_case(51, 1, 3, 80, 0.01, 0.3, 1.0);
  Out o = run_cpu(c, nullptr, PVN3D_MASK_FLOAT32, 0.08f, 0, 0);
  ref::VoteAggregateResult r = ref::vote_aggregate(c.votes, nullptr, 1, 3, 80, 0.08f, 0, 0);
  bool ok = o.st == PVN3D_OK;
  for (int64_t k = 0; k < 3; ++k)
    for (int d = 0; d < 3; ++d) ok = ok && o.kps[k * 3 + d] == c.votes[(k * 80 + r.best[k]) * 3 + d];
  CHECK(ok, "VA max_iter=0: the chosen vote itself");
  // One point.
  VoteCase one = make_vote_case(52, 1, 9, 1, 0.0, 0.0, 1.0);
  Out o1 = run_cpu(one, nullptr, PVN3D_MASK_FLOAT32, 0.08f, 300, 1);
  CHECK(o1.st == PVN3D_OK && max_diff(o1.kps, one.votes) == 0.0 && o1.inl[0] == 1, "VA one point: kps = its votes");
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
  CHECK(std::fabs(big.kps[0] - 1.0f) < 0.01f, "VA two clusters: the bigger (x=1) wins, got x=%g", big.kps[0]);
  for (int64_t n = 0; n < N; ++n) fill(n, (n % 2) ? 0.0 : 1.0);  // 15 / 15, index 0 at x=1
  Out tie = run_cpu(t, nullptr, PVN3D_MASK_FLOAT32, 0.08f, 300, 0);
  CHECK(std::fabs(tie.kps[0] - 1.0f) < 0.01f, "VA tie: the cluster of the lowest index (x=1) wins, got x=%g",
        tie.kps[0]);
  // Centre filter: points whose centre vote is an outlier are left out of the other rows.
  VoteCase f = make_vote_case(61, 1, 2, 100, 0.003, 0.0, 1.0);
  for (int64_t n = 0; n < 30; ++n) f.votes[((0 * 2 + 1) * 100 + n) * 3] += 0.5f;  // 30 centre votes far away
  Out of = run_cpu(f, nullptr, PVN3D_MASK_FLOAT32, 0.08f, 300, 1);
  CHECK(of.inl[0] == 70, "VA centre filter: 70 points used, got %lld", (long long)of.inl[0]);
  compare_ref("VA centre filter vs ref", f, nullptr, 0.08f, 300, 1, 5e-5);
  // Thread count does not change the answer (bitwise).
  VoteCase big2 = make_vote_case(71, 2, 9, 400, 0.01, 0.4, 0.9);
  const int saved = pvn3d_get_num_threads();
  pvn3d_set_num_threads(1);
  Out s1 = run_cpu(big2, big2.mask.data(), PVN3D_MASK_FLOAT32, 0.08f, 300, 1);
  pvn3d_set_num_threads(saved > 1 ? saved : 3);
  Out s2 = run_cpu(big2, big2.mask.data(), PVN3D_MASK_FLOAT32, 0.08f, 300, 1);
  pvn3d_set_num_threads(0);
  CHECK(max_diff(s1.kps, s2.kps) == 0.0 && s1.inl == s2.inl, "VA 1 thread == many threads (bitwise)");
}

TEST(vote_aggregate_settled_modes_skip_exactly) {
  // The CPU kernel stops computing a mode once a shift leaves it where it was, bit for bit; with
  // PVN3D_MEAN_SHIFT=every-mode it computes every mode in every iteration. Both must give the same bits:
  // outlier-laden votes (slow modes keep the task iterating long after the clusters settled, many to
  // max_iter), small and large bandwidths, iteration caps that stop mid-way, both filter modes, bool masks.
  struct P { uint32_t seed; int64_t B, K, N; double sigma, outl, maskr; float bw; int64_t iters; };
  const P ps[] = {{91, 2, 9, 400, 0.01, 0.5, 0.9, 0.08f, 300}, {92, 1, 9, 700, 0.02, 0.7, 1.0, 0.02f, 300},
                  {93, 3, 4, 300, 0.005, 0.3, 0.8, 0.05f, 7},   {94, 2, 9, 500, 0.03, 0.6, 0.95, 0.08f, 40},
                  {95, 1, 3, 64, 0.0, 0.0, 1.0, 0.08f, 300}};
  int compared = 0;
  for (const P& p : ps) {
    VoteCase c = make_vote_case(p.seed, p.B, p.K, p.N, p.sigma, p.outl, p.maskr);
    std::vector<uint8_t> bmask(c.mask.size());
    for (size_t i = 0; i < bmask.size(); ++i) bmask[i] = c.mask[i] != 0.0f;
    for (int cf = 0; cf <= 1; ++cf) {
      for (int dtype : {PVN3D_MASK_FLOAT32, PVN3D_MASK_BOOL}) {
        const void* mask = dtype == PVN3D_MASK_BOOL ? static_cast<const void*>(bmask.data()) : c.mask.data();
        setenv("PVN3D_MEAN_SHIFT", "every-mode", 1);
        Out every = run_cpu(c, mask, dtype, p.bw, p.iters, cf);
        unsetenv("PVN3D_MEAN_SHIFT");
        Out skip = run_cpu(c, mask, dtype, p.bw, p.iters, cf);
        CHECK(every.st == PVN3D_OK && skip.st == PVN3D_OK, "VA settled seed=%u: status %d / %d", p.seed, every.st,
              skip.st);
        CHECK(std::memcmp(every.kps.data(), skip.kps.data(), every.kps.size() * sizeof(float)) == 0 &&
                  every.inl == skip.inl,
              "VA settled seed=%u cf=%d dtype=%d: skipping settled modes changed the answer (max |d| %g)", p.seed, cf,
              dtype, max_diff(every.kps, skip.kps));
        ++compared;
      }
    }
  }
  std::printf("  %d cases: every mode == settled modes skipped, bit for bit\n", compared);
}

TEST(vote_aggregate_errors) {
  VoteCase c = make_vote_case(81, 1, 9, 10, 0.01, 0.0, 1.0);
  float kps[27];
  int64_t inl[1];
  auto st = [&](float bw, int64_t it, int cf, int dtype, int64_t K) {
    return pvn3d_vote_aggregate_cpu(c.votes.data(), c.mask.data(), dtype, 1, K, 10, bw, it, cf, kps, inl);
  };
  auto has = [](const char* s) { return std::string(pvn3d_last_error()).find(s) != std::string::npos; };
  CHECK(st(0.0f, 300, 1, 0, 9) == PVN3D_ERR_INVALID_ARGUMENT && has("bandwidth"), "bandwidth 0: '%s'", pvn3d_last_error());
  CHECK(st(-1.0f, 300, 1, 0, 9) == PVN3D_ERR_INVALID_ARGUMENT, "bandwidth < 0");
  CHECK(st(NAN, 300, 1, 0, 9) == PVN3D_ERR_INVALID_ARGUMENT && has("bandwidth"), "bandwidth NaN");
  // its square is a subnormal float above 0, but -0.5/bw^2 is -inf: a vote's weight of itself was 0 * -inf = NaN
  for (float tiny : {3e-22f, 4.5e-20f, 6e-20f, 1.08e-19f}) {  // the CUDA kernel's constants overflowed up to ~6.5e-20
    CHECK(st(tiny, 300, 1, 0, 9) == PVN3D_ERR_INVALID_ARGUMENT && has("squared leaves the float32 range"), "bandwidth %g: '%s'",
          (double)tiny, pvn3d_last_error());
  }
  CHECK(st(1.1e-19f, 300, 1, 0, 9) == PVN3D_OK, "bandwidth 1.1e-19 (its square is a normal float): '%s'", pvn3d_last_error());
  CHECK(st(0.08f, -1, 1, 0, 9) == PVN3D_ERR_INVALID_ARGUMENT && has("max_iter"), "max_iter -1: '%s'", pvn3d_last_error());
  CHECK(st(0.08f, 300, 2, 0, 9) == PVN3D_ERR_INVALID_ARGUMENT && has("center_filter"), "center_filter 2");
  CHECK(st(0.08f, 300, 1, 5, 9) == PVN3D_ERR_INVALID_ARGUMENT && has("mask_dtype"), "mask_dtype 5");
  CHECK(st(0.08f, 300, 1, 0, 0) == PVN3D_ERR_INVALID_ARGUMENT && has("K must be >= 1"), "K 0: '%s'", pvn3d_last_error());
  CHECK(pvn3d_vote_aggregate_cpu(c.votes.data(), nullptr, 0, 1, 9, 10, 0.08f, 300, 1, nullptr, inl) ==
            PVN3D_ERR_INVALID_ARGUMENT && has("kps is NULL"), "NULL kps");
  CHECK(pvn3d_vote_aggregate_cpu(nullptr, nullptr, 0, 1, 9, 10, 0.08f, 300, 1, kps, inl) == PVN3D_ERR_INVALID_ARGUMENT &&
            has("votes is NULL"), "NULL votes");
  CHECK(pvn3d_vote_aggregate_cpu(c.votes.data(), nullptr, 0, 0, 9, 10, 0.08f, 300, 1, kps, inl) ==
            PVN3D_ERR_INVALID_ARGUMENT && has("B must be >= 1"), "B 0");
  CHECK(pvn3d_vote_aggregate_cpu(c.votes.data(), nullptr, 0, 1, 9, -1, 0.08f, 300, 1, kps, inl) ==
            PVN3D_ERR_INVALID_ARGUMENT, "N -1");
  CHECK(pvn3d_vote_aggregate_cpu(c.votes.data(), nullptr, 0, 1, 9, int64_t{1} << 40, 0.08f, 300, 1, kps, inl) ==
            PVN3D_ERR_INVALID_ARGUMENT, "N 2^40");
  // Sizes whose scratch cannot be allocated: an error status, not a C++ exception ending the process.
  // Where the kernel always overcommits (vm.overcommit_memory = 1, as on the GPU machine) a 24 TB
  // allocation succeeds and filling it brought the OOM killer; the address space is capped here so that
  // the allocation fails on every machine, as it does under the default heuristic.
  struct rlimit old_as;
  getrlimit(RLIMIT_AS, &old_as);
  long pages = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld", &pages) != 1) pages = 0;
    std::fclose(f);
  }
  struct rlimit capped = old_as;
  capped.rlim_cur = static_cast<rlim_t>(pages) * static_cast<rlim_t>(sysconf(_SC_PAGESIZE)) + (rlim_t{4} << 30);
  if (old_as.rlim_cur != RLIM_INFINITY && old_as.rlim_cur < capped.rlim_cur) capped.rlim_cur = old_as.rlim_cur;
  setrlimit(RLIMIT_AS, &capped);
  const int va_status = pvn3d_vote_aggregate_cpu(nullptr, nullptr, 0, int64_t{1} << 40, 1, 0, 0.08f, 10, 1, kps, inl);
  const std::string va_message = pvn3d_last_error();
  float R[9], t[3];
  const int ps_status =
      pvn3d_pose_solve_cpu(nullptr, nullptr, 0, int64_t{1} << 40, 3, 0, kps, 0, 3, 0.08f, 10, 1, R, t, kps, inl);
  const std::string ps_message = pvn3d_last_error();
  setrlimit(RLIMIT_AS, &old_as);
  CHECK(va_status == PVN3D_ERR_OUT_OF_MEMORY && va_message.find("out of host memory") != std::string::npos,
        "B 2^40: '%s'", va_message.c_str());
  CHECK(ps_status == PVN3D_ERR_OUT_OF_MEMORY, "pose solve B 2^40: '%s'", ps_message.c_str());
}

// ---- CUDA kernel == CPU kernel ------------------------------------------------------------------

TEST(vote_aggregate_cuda_equals_cpu) {
  REQUIRE_CUDA();
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
  // The benchmark's scenes at the sizes of perf-targets.md (9 x 3000 votes and one frame of the full-size
  // model, 9 x 6443), PVN3D-like: votes within ~1 cm of the keypoints, 30% outliers. The CPU kernel takes
  // seconds at 6443 votes, so that size runs once, with the centre filter PVN3D uses.
  {
    VoteCase r = make_vote_case(77, 1, 9, 3000, 0.01, 0.3, 1.0);
    compare_va("VA pvn3d-like 9x3000 cf=1", r, r.mask.data(), 0.08f, 300, 1);
    compare_va("VA pvn3d-like 9x3000 cf=0", r, r.mask.data(), 0.08f, 300, 0);
    VoteCase f = make_vote_case(77, 1, 9, 6443, 0.01, 0.3, 1.0);
    compare_va("VA pvn3d-like 9x6443 cf=1", f, f.mask.data(), 0.08f, 300, 1);
  }
  // Run to run the CUDA answer is the same, bit for bit (the order of the modes in the active lists,
  // which atomics decide, does not enter any mode's sums).
  {
    VoteCase r = make_vote_case(7, 2, 9, 1500, 0.01, 0.3, 0.95);
    VAOut g1 = va_cuda(r, r.mask.data(), r.mask.size() * 4, PVN3D_MASK_FLOAT32, 0.08f, 300, 1);
    VAOut g2 = va_cuda(r, r.mask.data(), r.mask.size() * 4, PVN3D_MASK_FLOAT32, 0.08f, 300, 1);
    CHECK(g1.kps.size() == g2.kps.size() && std::memcmp(g1.kps.data(), g2.kps.data(), g1.kps.size() * 4) == 0 &&
              g1.inl == g2.inl,
          "VA CUDA run to run: bitwise the same");
  }
  VoteCase c = make_vote_case(11, 2, 4, 300, 0.03, 0.5, 0.9);
  compare_va("VA bw=0.02", c, c.mask.data(), 0.02f, 300, 1);
  compare_va("VA max_iter=3", c, c.mask.data(), 0.05f, 3, 1);
  compare_va("VA max_iter=1", c, c.mask.data(), 0.08f, 1, 0);
  compare_va("VA max_iter=0", c, c.mask.data(), 0.05f, 0, 1);
  compare_va("VA NULL mask", c, nullptr, 0.08f, 300, 1);
  // Bool mask.
  {
    std::vector<uint8_t> bm(c.mask.size());
    for (size_t i = 0; i < bm.size(); ++i) bm[i] = c.mask[i] != 0.0f;
    VAOut a = va_cpu(c, c.mask.data(), PVN3D_MASK_FLOAT32, 0.08f, 300, 1);
    VAOut g = va_cuda(c, bm.data(), bm.size(), PVN3D_MASK_BOOL, 0.08f, 300, 1);
    CHECK(max_diff(g.kps, a.kps) <= 1e-5 && g.inl == a.inl, "VA bool mask on CUDA == float mask on CPU");
  }
  // Empty items, all-empty, N = 0.
  VoteCase e = make_vote_case(31, 3, 9, 100, 0.005, 0.2, 0.9);
  for (int64_t n = 0; n < e.N; ++n) e.mask[1 * e.N + n] = 0.0f;
  compare_va("VA one empty item", e, e.mask.data(), 0.08f, 300, 1);
  {
    VAOut g = va_cuda(e, e.mask.data(), e.mask.size() * 4, 0, 0.08f, 300, 1);
    bool ok = g.inl[1] == 0;
    for (int i = 0; i < 27; ++i) ok = ok && std::isnan(g.kps[27 + i]);
    CHECK(ok, "VA CUDA empty item: NaN and 0 inliers");
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
    CHECK(ok, "VA CUDA N=0: NaN and 0 inliers");
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
  // K = 1 with and without the filter; many tasks (12 x 9 = 108, more than a block holds at once).
  VoteCase k1 = make_vote_case(53, 2, 1, 120, 0.01, 0.3, 1.0);
  compare_va("VA K=1 cf=1", k1, nullptr, 0.08f, 300, 1);
  compare_va("VA K=1 cf=0", k1, nullptr, 0.08f, 300, 0);
  VoteCase many = make_vote_case(78, 12, 9, 60, 0.01, 0.3, 0.9);
  compare_va("VA B=12 (108 tasks)", many, many.mask.data(), 0.08f, 300, 1);
  // Centre filter leaving points out: 30 of 100 centre votes far away.
  VoteCase fl = make_vote_case(61, 1, 2, 100, 0.003, 0.0, 1.0);
  for (int64_t n = 0; n < 30; ++n) fl.votes[((0 * 2 + 1) * 100 + n) * 3] += 0.5f;
  compare_va("VA centre filter 70/100", fl, nullptr, 0.08f, 300, 1);
  // Errors on the CUDA entry point.
  {
    Dev kps(27 * 4), inl(8);
    const size_t wsb = pvn3d_vote_aggregate_cuda_workspace_bytes(1, 9, 10);
    Dev ws(wsb), votes(1 * 9 * 10 * 3 * 4);
    int st = pvn3d_vote_aggregate_cuda(votes.as<float>(), nullptr, 0, 1, 9, 10, 0.08f, 300, 1, kps.as<float>(),
                                       inl.as<int64_t>(), ws.p, wsb - 1, stream());
    CHECK(st == PVN3D_ERR_INVALID_ARGUMENT && std::string(pvn3d_last_error()).find("workspace_bytes") != std::string::npos,
          "VA CUDA small workspace: '%s'", pvn3d_last_error());
    st = pvn3d_vote_aggregate_cuda(votes.as<float>(), nullptr, 0, 1, 9, 10, 0.0f, 300, 1, kps.as<float>(),
                                   inl.as<int64_t>(), ws.p, wsb, stream());
    CHECK(st == PVN3D_ERR_INVALID_ARGUMENT && std::string(pvn3d_last_error()).find("bandwidth") != std::string::npos,
          "VA CUDA bandwidth 0: '%s'", pvn3d_last_error());
  }
}

// ---- a CPU-only library -------------------------------------------------------------------------

TEST(vote_aggregate_cuda_entry_point_in_cpu_only_build) {
  if (pvn3d_built_with_cuda()) SKIP("library built with CUDA (the CUDA tests above cover the entry point)");
  float votes[27] = {0}, kps[27];
  int64_t inl[1];
  CHECK(pvn3d_vote_aggregate_cuda(votes, nullptr, 0, 1, 9, 1, 0.08f, 300, 1, kps, inl, nullptr, 0, nullptr) ==
            PVN3D_ERR_NO_CUDA,
        "vote_aggregate");
  CHECK(harness::contains(pvn3d_last_error(), "pvn3d_vote_aggregate_cuda: built without CUDA"), "'%s'",
        pvn3d_last_error());
  CHECK(pvn3d_vote_aggregate_cuda_workspace_bytes(1, 9, 3000) == 0, "workspace");
}

int main(int argc, char** argv) { return testenv::run(argc, argv); }
