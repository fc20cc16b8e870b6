// Tests of PVN3D_BallQuery (ball_query/), three ways: the CPU kernel against the naive reference
// (support/reference.cpp) on random clouds and the Stanford bunny, the fill rule, the strict radius
// and errors; the CUDA kernel equal to the CPU kernel (PVN3D's radii and nsamples, N = 0, the bunny);
// the CUDA entry point of a CPU-only library.
//
//   pvn3d_test_ball_query [--bunny <bunny_positions.txt>]   (support/test_env.h; PVN3D_TEST_SMALL=1
//   leaves out the CUDA cases above 4M point pairs)
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "harness.h"
#include "pvn3d_ops.h"
#include "reference.h"
#include "test_data.h"
#include "test_env.h"

using harness::contains;
using harness::same_values;
using testdata::Rng;
using testenv::Dev;
using testenv::ok;
using testenv::single_and_default_threads;

namespace {

std::vector<int64_t> ball(const std::vector<float>& xyz, const std::vector<float>& centres, int64_t B, int64_t N,
                          int64_t M, float r, int64_t S) {
  std::vector<int64_t> out(static_cast<size_t>(B * M * S), -7);
  const pvn3d_status s = pvn3d_ball_query_cpu(B, N, M, r, S, xyz.data(), centres.data(), out.data());
  CHECK(s == PVN3D_OK, "ball query: %s %s", pvn3d_status_name(s), pvn3d_last_error());
  return out;
}

void compare_ball(const std::vector<float>& xyz, const std::vector<float>& c, int64_t B, int64_t N, int64_t M, float r,
                  int64_t S, const char* what) {
  std::vector<int64_t> want(static_cast<size_t>(B * M * S));
  ok(pvn3d_ball_query_cpu(B, N, M, r, S, xyz.data(), c.data(), want.data()), "ball cpu");
  Dev<float> dx(xyz), dc(c);
  Dev<int64_t> di(want.size());
  di.fill(0xAB);
  ok(pvn3d_ball_query_cuda(B, N, M, r, S, dx.p, dc.p, di.p, testenv::stream()), what);
  same_values(what, di.get(), want);
}

}  // namespace

// ---- CPU kernel == reference -------------------------------------------------------------------

TEST(ball_query_vs_reference) {
  Rng rng(6);
  struct Case { int64_t B, N, M; float r; int64_t S; };
  for (const Case& c : {Case{1, 1000, 100, 0.05f, 16}, Case{2, 3000, 257, 0.0175f, 16}, Case{2, 3000, 257, 0.025f, 32},
                        Case{3, 500, 64, 0.3f, 8}, Case{1, 2000, 50, 10.f, 64}, Case{1, 700, 33, 1e-4f, 4},
                        Case{2, 1234, 99, 0.1f, 1}}) {
    const auto xyz = testdata::random_cloud(rng, c.B, c.N, 0.f, 0.5f);
    const auto centres = testdata::centres_from(rng, xyz, c.B, c.N, c.M, 0.01f);
    const auto want = ref::ball_query(xyz, centres, c.B, c.N, c.M, c.r, c.S);
    single_and_default_threads([&] { same_values("ball query", ball(xyz, centres, c.B, c.N, c.M, c.r, c.S), want); });
  }
}

TEST(ball_query_fill_rule_and_strictness) {
  // Points 1 and 3 lie in the ball around the origin-free centre (5,5,5); 0 and 2 do not.
  const std::vector<float> xyz = {9, 9, 9, 5.1f, 5, 5, 0, 0, 0, 5, 5.2f, 5};
  const std::vector<float> centre = {5, 5, 5};
  same_values("fill", ball(xyz, centre, 1, 4, 1, 0.5f, 4), std::vector<int64_t>{1, 3, 1, 1});
  same_values("nsample 1", ball(xyz, centre, 1, 4, 1, 0.5f, 1), std::vector<int64_t>{1});
  same_values("no hit", ball(xyz, {100, 100, 100}, 1, 4, 1, 0.5f, 3), std::vector<int64_t>{0, 0, 0});
  // Exactly at the radius (0.5^2 == 0.25 exactly) is outside; just inside is in.
  const std::vector<float> edge = {0.5f, 0, 0, 0, 0.25f, 0};
  same_values("strict <", ball(edge, {0, 0, 0}, 1, 2, 1, 0.5f, 2), std::vector<int64_t>{1, 1});
  same_values("N = 0", ball({}, centre, 1, 0, 1, 0.5f, 2), std::vector<int64_t>{0, 0});
  // More hits than slots: the first nsample in index order.
  std::vector<float> many(3 * 40, 1.f);
  same_values("first nsample", ball(many, {1, 1, 1}, 1, 40, 1, 0.1f, 5), std::vector<int64_t>{0, 1, 2, 3, 4});
}

TEST(ball_query_errors) {
  float p[3] = {0, 0, 0};
  int64_t idx[4];
  CHECK(pvn3d_ball_query_cpu(1, 1, 1, 0.f, 2, p, p, idx) == PVN3D_ERR_INVALID_ARGUMENT &&
            contains(pvn3d_last_error(), "PVN3D_BallQuery: radius must be > 0, got 0"),
        "radius 0: '%s'", pvn3d_last_error());
  CHECK(pvn3d_ball_query_cpu(1, 1, 1, -1.f, 2, p, p, idx) == PVN3D_ERR_INVALID_ARGUMENT, "radius < 0");
  CHECK(pvn3d_ball_query_cpu(1, 1, 1, std::nanf(""), 2, p, p, idx) == PVN3D_ERR_INVALID_ARGUMENT, "radius NaN");
  CHECK(pvn3d_ball_query_cpu(1, 1, 1, 1.f, 0, p, p, idx) == PVN3D_ERR_INVALID_ARGUMENT &&
            contains(pvn3d_last_error(), "nsample must be >= 1, got 0"),
        "nsample 0: '%s'", pvn3d_last_error());
  CHECK(pvn3d_ball_query_cpu(1, 1, 0, 1.f, 2, p, p, idx) == PVN3D_OK, "M = 0");
  CHECK(pvn3d_ball_query_cpu(1, 1, 1, 1.f, 2, p, nullptr, idx) == PVN3D_ERR_INVALID_ARGUMENT, "null centres");
  // Sizes whose scratch cannot be allocated: an error status, not a C++ exception ending the process.
  CHECK(pvn3d_ball_query_cpu(int64_t{1} << 20, int64_t{1} << 40, 1, 0.1f, 1, p, p, idx) == PVN3D_ERR_OUT_OF_MEMORY &&
            contains(pvn3d_last_error(), "out of host memory"),
        "B*N = 2^60: '%s'", pvn3d_last_error());
}

// The Stanford bunny scene (support/test_data.h): the neighbourhoods of the FPS centres, the third
// stage of the PointNet++-like chain (inputs from the reference chain, support/reference.h).
TEST(ball_query_bunny) {
  std::vector<float> bunny;
  LOAD_BUNNY_OR_SKIP(bunny);
  const testdata::BunnyScene sc = testdata::bunny_scene(bunny);
  const ref::Chain ch = ref::pointnet_chain(sc.xyz, sc.features, sc.N, sc.C, sc.npoint, sc.radius, sc.S);
  const auto nbr = ball(sc.xyz, ch.centres, sc.B, sc.N, sc.npoint, sc.radius, sc.S);
  same_values("bunny ball query", nbr, ref::ball_query(sc.xyz, ch.centres, sc.B, sc.N, sc.npoint, sc.radius, sc.S));
  // Every centre is a bunny vertex, so its ball holds at least itself.
  bool self_hit = true;
  for (int64_t j = 0; j < sc.npoint; ++j)
    self_hit &= nbr[static_cast<size_t>(j * sc.S)] <= ch.centres_idx[static_cast<size_t>(j)];
  CHECK(self_hit, "a centre's first neighbour comes after the centre itself");
}

// ---- CUDA kernel == CPU kernel ------------------------------------------------------------------

TEST(ball_query_cuda_equals_cpu) {
  REQUIRE_CUDA();
  Rng rng(103);
  struct Case { int64_t B, N, M; float r; int64_t S; };
  for (const Case& c : {Case{1, 12288, 2048, 0.0175f, 16}, Case{1, 12288, 2048, 0.025f, 32}, Case{2, 5000, 1001, 0.05f, 32},
                        Case{3, 777, 13, 0.2f, 16}, Case{1, 3000, 100, 10.f, 64}, Case{1, 4097, 33, 1e-4f, 4},
                        Case{2, 1, 5, 0.1f, 3}, Case{1, 2049, 64, 0.08f, 1}, Case{1, 6000, 40, 0.3f, 100},
                        Case{5, 2001, 1717, 0.06f, 16}, Case{2, 9000, 4300, 0.04f, 32}}) {
    if (testenv::small() && c.B * c.N * c.M > 4000000) continue;
    const auto xyz = testdata::random_cloud(rng, c.B, c.N, 0.f, 0.5f);
    const auto centres = testdata::centres_from(rng, xyz, c.B, c.N, c.M, 0.01f);
    char what[96];
    std::snprintf(what, sizeof what, "ball B=%lld N=%lld M=%lld r=%g S=%lld", (long long)c.B, (long long)c.N,
                  (long long)c.M, c.r, (long long)c.S);
    compare_ball(xyz, centres, c.B, c.N, c.M, c.r, c.S, what);
  }
  compare_ball({9, 9, 9, 5.1f, 5, 5, 0, 0, 0, 5, 5.2f, 5}, {5, 5, 5}, 1, 4, 1, 0.5f, 4, "ball fill rule");
  compare_ball({0.5f, 0, 0, 0, 0.25f, 0}, {0, 0, 0}, 1, 2, 1, 0.5f, 2, "ball strict <");
  // N = 0: all zeros.
  Dev<float> c(std::vector<float>{1, 2, 3});
  Dev<int64_t> i(4);
  i.fill(0xAB);
  ok(pvn3d_ball_query_cuda(1, 0, 1, 0.5f, 4, nullptr, c.p, i.p, testenv::stream()), "ball N = 0");
  same_values("ball N = 0", i.get(), std::vector<int64_t>(4, 0));
  CHECK(pvn3d_ball_query_cuda(1, 1, 1, 0.f, 4, c.p, c.p, i.p, testenv::stream()) == PVN3D_ERR_INVALID_ARGUMENT,
        "radius 0");
}

TEST(ball_query_cuda_bunny) {
  REQUIRE_CUDA();
  std::vector<float> bunny;
  LOAD_BUNNY_OR_SKIP(bunny);
  const int64_t N = static_cast<int64_t>(bunny.size() / 3);
  std::vector<int64_t> pick(512);
  ok(pvn3d_furthest_point_sample_cpu(1, N, 512, bunny.data(), pick.data()), "bunny fps cpu");
  std::vector<float> centres;
  for (int64_t i : pick) centres.insert(centres.end(), bunny.begin() + 3 * i, bunny.begin() + 3 * i + 3);
  compare_ball(bunny, centres, 1, N, 512, 0.02f, 16, "bunny ball");
}

// ---- a CPU-only library -------------------------------------------------------------------------

TEST(ball_query_cuda_entry_point_in_cpu_only_build) {
  if (pvn3d_built_with_cuda()) SKIP("library built with CUDA (the CUDA tests above cover the entry point)");
  int64_t idx[4] = {0};
  float xyz[12] = {0};
  CHECK(pvn3d_ball_query_cuda(1, 4, 1, 1.f, 2, xyz, xyz, idx, nullptr) == PVN3D_ERR_NO_CUDA, "ball");
}

int main(int argc, char** argv) { return testenv::run(argc, argv); }
