// Tests of PVN3D_ThreeNN (three_nn/), three ways: the CPU kernel against the naive reference
// (support/reference.cpp) on random clouds and the Stanford bunny, ties, sizes and errors; the CUDA
// kernel equal to the CPU kernel (exact indices, distances within 1e-5 relative; ties across the
// kernel's partitions, the bunny); the CUDA entry point of a CPU-only library.
//
//   pvn3d_test_three_nn [--bunny <bunny_positions.txt>]   (support/test_env.h; PVN3D_TEST_SMALL=1
//   leaves out the CUDA cases above 4M point pairs)
#include <cstdio>
#include <string>
#include <limits>
#include <vector>

#include "harness.h"
#include "pvn3d_ops.h"
#include "reference.h"
#include "test_data.h"
#include "test_env.h"

using harness::close_values;
using harness::contains;
using harness::same_values;
using testdata::Rng;
using testenv::Dev;
using testenv::kRel;
using testenv::ok;
using testenv::single_and_default_threads;

namespace {

void nn3(const std::vector<float>& unknown, const std::vector<float>& known, int64_t B, int64_t n, int64_t m,
         std::vector<float>* d, std::vector<int64_t>* i) {
  d->assign(static_cast<size_t>(B * n * 3), -7.f);
  i->assign(static_cast<size_t>(B * n * 3), -7);
  const pvn3d_status s = pvn3d_three_nn_cpu(B, n, m, unknown.data(), known.data(), d->data(), i->data());
  CHECK(s == PVN3D_OK, "three_nn: %s %s", pvn3d_status_name(s), pvn3d_last_error());
}

void compare_three_nn(const std::vector<float>& u, const std::vector<float>& k, int64_t B, int64_t n, int64_t m,
                      const char* what) {
  std::vector<float> wd(static_cast<size_t>(B * n * 3));
  std::vector<int64_t> wi(wd.size());
  ok(pvn3d_three_nn_cpu(B, n, m, u.data(), k.data(), wd.data(), wi.data()), "three_nn cpu");
  Dev<float> du(u), dk(k), dd(wd.size());
  Dev<int64_t> di(wi.size());
  ok(pvn3d_three_nn_cuda(B, n, m, du.p, dk.p, dd.p, di.p, testenv::stream()), what);
  same_values(what, di.get(), wi);
  close_values(what, dd.get(), wd, kRel);
}

}  // namespace

// ---- CPU kernel == reference -------------------------------------------------------------------

TEST(three_nn_vs_reference) {
  Rng rng(9);
  struct Case { int64_t B, n, m; };
  // The kernel's chunks of 4096 known points and blocks of 32 (three_nn_cpu.cpp): one and two chunks, a last
  // chunk of fewer than three blocks (4100), fewer than three blocks in all (3, 64), three blocks (96).
  for (const Case& c : {Case{1, 100, 3}, Case{1, 1000, 200}, Case{2, 3000, 700}, Case{3, 257, 129}, Case{1, 50, 5000},
                        Case{2, 64, 4100}, Case{1, 300, 64}, Case{2, 300, 96}}) {
    const auto unknown = testdata::random_cloud(rng, c.B, c.n, 0.f, 0.5f);
    const auto known = testdata::random_cloud(rng, c.B, c.m, 0.f, 0.5f);
    std::vector<float> wd;
    std::vector<int64_t> wi;
    ref::three_nn(unknown, known, c.B, c.n, c.m, &wd, &wi);
    single_and_default_threads([&] {
      std::vector<float> d;
      std::vector<int64_t> i;
      nn3(unknown, known, c.B, c.n, c.m, &d, &i);
      same_values("three_nn idx", i, wi);
      same_values("three_nn dist2", d, wd);
    });
  }
}

TEST(three_nn_ties_and_sizes) {
  // Distances from the origin: 1, 1, 4, 1, 1 -> the three earliest of the ties.
  const std::vector<float> known = {1, 0, 0, 0, 1, 0, 2, 0, 0, -1, 0, 0, 0, 0, 1};
  std::vector<float> d;
  std::vector<int64_t> i;
  nn3({0, 0, 0}, known, 1, 1, 5, &d, &i);
  same_values("tie idx", i, std::vector<int64_t>{0, 1, 3});
  same_values("tie dist2", d, std::vector<float>{1, 1, 1});
  // Exactly three known points, given far-to-near.
  nn3({0, 0, 0}, {3, 0, 0, 2, 0, 0, 1, 0, 0}, 1, 1, 3, &d, &i);
  same_values("m = 3 idx", i, std::vector<int64_t>{2, 1, 0});
  same_values("m = 3 dist2", d, std::vector<float>{1, 4, 9});
  // Many exact ties, also at the bound the kernel takes from its blocks' minima: a lattice of duplicates
  // (12 distinct points, each 50 times over 600 known points), against the naive reference.
  std::vector<float> lattice;
  for (int p = 0; p < 600; ++p) lattice.insert(lattice.end(), {float(p % 4) * 0.25f, float(p % 3) * 0.25f, 0.f});
  Rng rng(10);
  const auto probes = testdata::random_cloud(rng, 1, 200, 0.f, 0.75f);
  std::vector<float> wd;
  std::vector<int64_t> wi;
  ref::three_nn(probes, lattice, 1, 200, 600, &wd, &wi);
  nn3(probes, lattice, 1, 200, 600, &d, &i);
  same_values("lattice ties idx", i, wi);
  same_values("lattice ties dist2", d, wd);
  float p[9] = {0};
  int64_t idx[3];
  CHECK(pvn3d_three_nn_cpu(1, 1, 2, p, p, p, idx) == PVN3D_ERR_INVALID_ARGUMENT &&
            contains(pvn3d_last_error(), "PVN3D_ThreeNN: m (the number of known points) must be >= 3, got 2"),
        "m < 3: '%s'", pvn3d_last_error());
  CHECK(pvn3d_three_nn_cpu(1, 0, 2, p, p, p, idx) == PVN3D_ERR_INVALID_ARGUMENT, "m < 3 even with n = 0");
  CHECK(pvn3d_three_nn_cpu(1, 0, 3, p, p, p, idx) == PVN3D_OK, "n = 0");
  CHECK(pvn3d_three_nn_cpu(1, 1, 3, p, p, nullptr, idx) == PVN3D_ERR_INVALID_ARGUMENT, "null dist2");
  // Sizes whose scratch cannot be allocated: an error status, not a C++ exception ending the process.
  CHECK(pvn3d_three_nn_cpu(int64_t{1} << 20, 1, int64_t{1} << 40, p, p, p, idx) == PVN3D_ERR_OUT_OF_MEMORY &&
            contains(pvn3d_last_error(), "out of host memory"),
        "B*m = 2^60: '%s'", pvn3d_last_error());
}

// The Stanford bunny scene (support/test_data.h): every point's three nearest FPS centres, the stage
// before the feature propagation of the PointNet++-like chain (inputs from the reference chain,
// support/reference.h).
TEST(three_nn_bunny) {
  std::vector<float> bunny;
  LOAD_BUNNY_OR_SKIP(bunny);
  const testdata::BunnyScene sc = testdata::bunny_scene(bunny);
  const ref::Chain ch = ref::pointnet_chain(sc.xyz, sc.features, sc.N, sc.C, sc.npoint, sc.radius, sc.S);
  std::vector<float> d;
  std::vector<int64_t> i3;
  nn3(sc.xyz, ch.centres, sc.B, sc.N, sc.npoint, &d, &i3);
  std::vector<float> wd;
  std::vector<int64_t> wi;
  ref::three_nn(sc.xyz, ch.centres, sc.B, sc.N, sc.npoint, &wd, &wi);
  same_values("bunny three_nn idx", i3, wi);
  same_values("bunny three_nn dist2", d, wd);
}

// ---- CUDA kernel == CPU kernel ------------------------------------------------------------------

TEST(three_nn_cuda_equals_cpu) {
  REQUIRE_CUDA();
  Rng rng(104);
  struct Case { int64_t B, n, m; };
  for (const Case& c : {Case{1, 12288, 2048}, Case{2, 5000, 3}, Case{3, 1000, 4097}, Case{1, 33, 9000}, Case{2, 100, 7},
                       Case{8, 9000, 1000} /* G = 8 */, Case{3, 15000, 700} /* G = 16 */, Case{1, 130, 2050}}) {
    if (testenv::small() && c.B * c.n * c.m > 4000000) continue;
    const auto u = testdata::random_cloud(rng, c.B, c.n, 0.f, 0.5f);
    const auto k = testdata::random_cloud(rng, c.B, c.m, 0.f, 0.5f);
    char what[96];
    std::snprintf(what, sizeof what, "three_nn B=%lld n=%lld m=%lld", (long long)c.B, (long long)c.n, (long long)c.m);
    compare_three_nn(u, k, c.B, c.n, c.m, what);
  }
  compare_three_nn({0, 0, 0}, {1, 0, 0, 0, 1, 0, 2, 0, 0, -1, 0, 0, 0, 0, 1}, 1, 1, 5, "three_nn ties");
  // Many exact ties spread over the groups' strided partitions and tiles: a lattice of duplicates.
  std::vector<float> lattice;
  for (int i = 0; i < 5000; ++i) lattice.insert(lattice.end(), {float(i % 4) * 0.25f, float(i % 3) * 0.25f, 0.f});
  compare_three_nn(testdata::random_cloud(rng, 1, 300, 0.f, 0.75f), lattice, 1, 300, 5000, "three_nn lattice ties");
  // Known points at infinity or NaN are never taken (their distance is +inf or NaN), by the lanes nor by the
  // group's shared bound; every 7th here, spread over the lanes and both tiles.
  auto odd = testdata::random_cloud(rng, 1, 3000, 0.f, 0.5f);
  for (size_t p = 0; p < 3000; p += 7) odd[3 * p + p % 3] = p % 2 ? std::numeric_limits<float>::infinity()
                                                                   : std::numeric_limits<float>::quiet_NaN();
  compare_three_nn(testdata::random_cloud(rng, 1, 2000, 0.f, 0.5f), odd, 1, 2000, 3000, "three_nn non-finite known points");
  Dev<float> p(9);
  Dev<int64_t> i(3);
  CHECK(pvn3d_three_nn_cuda(1, 1, 2, p.p, p.p, p.p, i.p, testenv::stream()) == PVN3D_ERR_INVALID_ARGUMENT, "m < 3");
}

TEST(three_nn_cuda_bunny) {
  REQUIRE_CUDA();
  std::vector<float> bunny;
  LOAD_BUNNY_OR_SKIP(bunny);
  const int64_t N = static_cast<int64_t>(bunny.size() / 3);
  std::vector<int64_t> pick(512);
  ok(pvn3d_furthest_point_sample_cpu(1, N, 512, bunny.data(), pick.data()), "bunny fps cpu");
  std::vector<float> centres;
  for (int64_t i : pick) centres.insert(centres.end(), bunny.begin() + 3 * i, bunny.begin() + 3 * i + 3);
  compare_three_nn(bunny, centres, 1, N, 512, "bunny three_nn");
}

// ---- a CPU-only library -------------------------------------------------------------------------

TEST(three_nn_cuda_entry_point_in_cpu_only_build) {
  if (pvn3d_built_with_cuda()) SKIP("library built with CUDA (the CUDA tests above cover the entry point)");
  int64_t idx[4] = {0};
  float xyz[12] = {0};
  CHECK(pvn3d_three_nn_cuda(1, 1, 3, xyz, xyz, xyz, idx, nullptr) == PVN3D_ERR_NO_CUDA, "three_nn");
}

int main(int argc, char** argv) { return testenv::run(argc, argv); }
