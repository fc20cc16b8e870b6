// Native tests of the CPU kernels: each against the naive reference (reference.cpp) on random
// clouds and on the Stanford bunny, plus the edge cases and errors of spec/ops.md.
//
//   pvn3d_test_cpu [--bunny <bunny_positions.txt>]
// Exit 0 when every test passed or was skipped, 1 otherwise. With PVN3D_REQUIRE_BUNNY=1 a missing
// bunny file fails the bunny test instead of skipping it.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "harness.h"
#include "pvn3d_ops.h"
#include "reference.h"
#include "test_data.h"

using harness::same_values;
using testdata::Rng;

namespace {

std::string g_bunny_path;

bool contains(const char* haystack, const char* needle) { return std::strstr(haystack, needle) != nullptr; }

std::vector<int64_t> fps(const std::vector<float>& xyz, int64_t B, int64_t N, int64_t npoint) {
  std::vector<int64_t> out(static_cast<size_t>(B * npoint), -7);
  const pvn3d_status s = pvn3d_furthest_point_sample_cpu(B, N, npoint, xyz.data(), out.data());
  CHECK(s == PVN3D_OK, "fps B=%lld N=%lld npoint=%lld: %s %s", (long long)B, (long long)N, (long long)npoint,
        pvn3d_status_name(s), pvn3d_last_error());
  return out;
}

std::vector<int64_t> ball(const std::vector<float>& xyz, const std::vector<float>& centres, int64_t B, int64_t N,
                          int64_t M, float r, int64_t S) {
  std::vector<int64_t> out(static_cast<size_t>(B * M * S), -7);
  const pvn3d_status s = pvn3d_ball_query_cpu(B, N, M, r, S, xyz.data(), centres.data(), out.data());
  CHECK(s == PVN3D_OK, "ball query: %s %s", pvn3d_status_name(s), pvn3d_last_error());
  return out;
}

void nn3(const std::vector<float>& unknown, const std::vector<float>& known, int64_t B, int64_t n, int64_t m,
         std::vector<float>* d, std::vector<int64_t>* i) {
  d->assign(static_cast<size_t>(B * n * 3), -7.f);
  i->assign(static_cast<size_t>(B * n * 3), -7);
  const pvn3d_status s = pvn3d_three_nn_cpu(B, n, m, unknown.data(), known.data(), d->data(), i->data());
  CHECK(s == PVN3D_OK, "three_nn: %s %s", pvn3d_status_name(s), pvn3d_last_error());
}

// Runs f() with 1 thread and with the default, restoring the default.
template <class F>
void single_and_default_threads(F f) {
  pvn3d_set_num_threads(1);
  f();
  pvn3d_set_num_threads(0);
  f();
}

}  // namespace

// ---------------------------------------------------------------------------------------------
TEST(library_info) {
  CHECK(std::strlen(pvn3d_version()) >= 5, "version '%s'", pvn3d_version());
  CHECK(pvn3d_built_with_cuda() == 0 || pvn3d_built_with_cuda() == 1, "built_with_cuda %d", pvn3d_built_with_cuda());
  CHECK(std::strcmp(pvn3d_status_name(PVN3D_ERR_INDEX_OUT_OF_RANGE), "PVN3D_ERR_INDEX_OUT_OF_RANGE") == 0, "name");
  pvn3d_set_num_threads(3);
  CHECK(pvn3d_get_num_threads() == 3, "threads %d", pvn3d_get_num_threads());
  pvn3d_set_num_threads(0);
  CHECK(pvn3d_get_num_threads() >= 1, "default threads %d", pvn3d_get_num_threads());
  pvn3d_clear_error();
  CHECK(pvn3d_last_error()[0] == '\0', "cleared error '%s'", pvn3d_last_error());
}

TEST(cpu_only_build_cuda_entry_points) {
  if (pvn3d_built_with_cuda()) SKIP("library built with CUDA (the CUDA test program covers these)");
  int count = -1;
  CHECK(pvn3d_cuda_device_count(&count) == PVN3D_OK && count == 0, "device count %d", count);
  void* p = nullptr;
  CHECK(pvn3d_cuda_malloc(&p, 16) == PVN3D_ERR_NO_CUDA, "malloc status");
  CHECK(contains(pvn3d_last_error(), "built without CUDA"), "message '%s'", pvn3d_last_error());
  int64_t idx[4] = {0};
  float xyz[12] = {0};
  CHECK(pvn3d_furthest_point_sample_cuda(1, 4, 2, xyz, idx, nullptr, 0, nullptr) == PVN3D_ERR_NO_CUDA, "fps");
  CHECK(contains(pvn3d_last_error(), "pvn3d_furthest_point_sample_cuda: built without CUDA"), "'%s'", pvn3d_last_error());
  CHECK(pvn3d_gather_points_cuda(1, 1, 4, 1, xyz, idx, xyz, nullptr, nullptr) == PVN3D_ERR_NO_CUDA, "gather");
  CHECK(pvn3d_ball_query_cuda(1, 4, 1, 1.f, 2, xyz, xyz, idx, nullptr) == PVN3D_ERR_NO_CUDA, "ball");
  CHECK(pvn3d_group_points_cuda(1, 1, 4, 1, 1, xyz, idx, xyz, nullptr, nullptr) == PVN3D_ERR_NO_CUDA, "group");
  CHECK(pvn3d_three_nn_cuda(1, 1, 3, xyz, xyz, xyz, idx, nullptr) == PVN3D_ERR_NO_CUDA, "three_nn");
  CHECK(pvn3d_three_interpolate_cuda(1, 1, 3, 1, xyz, idx, xyz, xyz, nullptr, nullptr) == PVN3D_ERR_NO_CUDA, "interp");
  CHECK(pvn3d_cuda_stream_create(&p, 1) == PVN3D_ERR_NO_CUDA, "stream");
  CHECK(pvn3d_furthest_point_sample_cuda_workspace_bytes(1, 20000, 10) == 0, "workspace");
}

// ---------------------------------------------------------------------------------------------
TEST(fps_random_vs_reference) {
  Rng rng(1);
  struct Size { int64_t B, N, npoint; };
  for (const Size& z : {Size{1, 1, 1}, Size{1, 100, 10}, Size{2, 1000, 200}, Size{3, 3000, 512}, Size{1, 20000, 300},
                        Size{2, 9000, 64}}) {
    const auto xyz = testdata::random_cloud(rng, z.B, z.N, -0.25f, 0.25f);
    const auto want = ref::furthest_point_sample(xyz, z.B, z.N, z.npoint);
    single_and_default_threads([&] { same_values("fps idx", fps(xyz, z.B, z.N, z.npoint), want); });
  }
}

TEST(fps_padding_points) {
  Rng rng(2);
  const int64_t B = 2, N = 4000, npoint = 700;
  auto xyz = testdata::random_cloud(rng, B, N, -0.5f, 0.5f);
  std::vector<bool> pad(static_cast<size_t>(B * N), false);
  for (int64_t i = 0; i < B * N; ++i) {
    if (i % N == 0) continue;
    const uint64_t r = rng.next() % 10;
    if (r < 3) {  // zeros, and tiny non-zero norms (0.01^2*3 = 3e-4 <= 1e-3): both padding
      const float v = r == 0 ? 0.f : 0.01f;
      xyz[3 * i] = xyz[3 * i + 1] = xyz[3 * i + 2] = v;
      pad[static_cast<size_t>(i)] = true;
    }
  }
  const auto want = ref::furthest_point_sample(xyz, B, N, npoint);
  single_and_default_threads([&] {
    const auto got = fps(xyz, B, N, npoint);
    same_values("fps idx", got, want);
    bool any_pad = false;
    for (int64_t b = 0; b < B; ++b)
      for (int64_t s = 1; s < npoint; ++s) any_pad |= pad[static_cast<size_t>(b * N + got[static_cast<size_t>(b * npoint + s)])];
    CHECK(!any_pad, "a padding point was picked after the first step");
  });
  // Only padding: every pick is 0. Only point 0 real: every pick 0 too. Only point 5 real: 0, 5, 5, ...
  std::vector<float> zeros(3 * 64, 0.f);
  same_values("all padding", fps(zeros, 1, 64, 10), std::vector<int64_t>(10, 0));
  auto one = zeros;
  one[0] = 1.f;
  same_values("only point 0", fps(one, 1, 64, 10), std::vector<int64_t>(10, 0));
  auto five = zeros;
  five[15] = 1.f;
  std::vector<int64_t> want5(10, 5);
  want5[0] = 0;
  same_values("only point 5", fps(five, 1, 64, 10), want5);
  // The padding threshold is |p|^2 <= 1e-3 (compared in double): just above is a candidate.
  auto edge = zeros;
  edge[3 * 7] = 0.0316f;  // 0.0316^2 = 9.99e-4: padding
  edge[3 * 9] = 0.0317f;  // 1.005e-3: candidate
  same_values("padding threshold", fps(edge, 1, 64, 3), std::vector<int64_t>{0, 9, 9});
}

TEST(fps_ties_pick_lowest_index) {
  // p0=(1,1,1); p1, p2 both at distance 1 from p0; p3 duplicates p0.
  const std::vector<float> xyz = {1, 1, 1, 2, 1, 1, 0, 1, 1, 1, 1, 1};
  same_values("ties", fps(xyz, 1, 4, 4), std::vector<int64_t>{0, 1, 2, 0});
  same_values("reference agrees", ref::furthest_point_sample(xyz, 1, 4, 4), std::vector<int64_t>{0, 1, 2, 0});
  // Many duplicates at equal distance: lowest index first every time.
  std::vector<float> dup;
  for (int i = 0; i < 50; ++i) {
    const float v = (i % 2 == 0) ? 1.f : 3.f;
    dup.insert(dup.end(), {v, 1.f, 1.f});
  }
  same_values("duplicates", fps(dup, 1, 50, 3), std::vector<int64_t>{0, 1, 0});
}

TEST(fps_n_equals_npoint_is_a_permutation) {
  Rng rng(3);
  const int64_t N = 777;
  const auto xyz = testdata::random_cloud(rng, 2, N, 0.1f, 0.6f);
  const auto got = fps(xyz, 2, N, N);
  same_values("fps idx", got, ref::furthest_point_sample(xyz, 2, N, N));
  for (int b = 0; b < 2; ++b) {
    std::vector<int64_t> s(got.begin() + b * N, got.begin() + (b + 1) * N);
    std::sort(s.begin(), s.end());
    bool perm = true;
    for (int64_t i = 0; i < N; ++i) perm &= s[static_cast<size_t>(i)] == i;
    CHECK(perm, "batch %d is not a permutation of 0..N-1", b);
  }
}

TEST(fps_errors) {
  float xyz[12] = {1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4};
  int64_t idx[8];
  pvn3d_status s = pvn3d_furthest_point_sample_cpu(1, 4, 5, xyz, idx);
  CHECK(s == PVN3D_ERR_INVALID_ARGUMENT, "npoint > N: %s", pvn3d_status_name(s));
  CHECK(contains(pvn3d_last_error(), "PVN3D_FurthestPointSample") && contains(pvn3d_last_error(), "npoint (5)") &&
            contains(pvn3d_last_error(), "N (4)"),
        "message '%s'", pvn3d_last_error());
  s = pvn3d_furthest_point_sample_cpu(1, 4, 0, xyz, idx);
  CHECK(s == PVN3D_ERR_INVALID_ARGUMENT && contains(pvn3d_last_error(), "npoint"), "npoint 0: '%s'", pvn3d_last_error());
  s = pvn3d_furthest_point_sample_cpu(1, 0, 1, xyz, idx);
  CHECK(s == PVN3D_ERR_INVALID_ARGUMENT, "N = 0 < npoint");
  s = pvn3d_furthest_point_sample_cpu(-1, 4, 1, xyz, idx);
  CHECK(s == PVN3D_ERR_INVALID_ARGUMENT && contains(pvn3d_last_error(), "B must be >= 0"), "B<0: '%s'", pvn3d_last_error());
  s = pvn3d_furthest_point_sample_cpu(1, 4, 2, nullptr, idx);
  CHECK(s == PVN3D_ERR_INVALID_ARGUMENT && contains(pvn3d_last_error(), "xyz is NULL"), "null xyz: '%s'", pvn3d_last_error());
  s = pvn3d_furthest_point_sample_cpu(1, 4, 2, xyz, nullptr);
  CHECK(s == PVN3D_ERR_INVALID_ARGUMENT && contains(pvn3d_last_error(), "idx is NULL"), "null idx");
  s = pvn3d_furthest_point_sample_cpu(0, 4, 2, nullptr, nullptr);
  CHECK(s == PVN3D_OK, "B = 0 is empty work: %s", pvn3d_last_error());
  s = pvn3d_furthest_point_sample_cpu(INT64_MAX / 2, INT64_MAX / 2, 1, xyz, idx);
  CHECK(s == PVN3D_ERR_INVALID_ARGUMENT && contains(pvn3d_last_error(), "2^63-1"), "overflow: '%s'", pvn3d_last_error());
}

// ---------------------------------------------------------------------------------------------
TEST(gather_points_vs_reference) {
  Rng rng(4);
  const int64_t B = 2, C = 5, N = 300, M = 77;
  const auto f = testdata::random_floats(rng, B * C * N, -1.f, 1.f);
  const auto idx = testdata::random_indices(rng, B * M, N);
  single_and_default_threads([&] {
    std::vector<float> out(static_cast<size_t>(B * C * M), -7.f);
    CHECK(pvn3d_gather_points_cpu(B, C, N, M, f.data(), idx.data(), out.data()) == PVN3D_OK, "%s", pvn3d_last_error());
    same_values("gather", out, ref::gather_points(f, idx, B, C, N, M));
  });
}

TEST(gather_points_bad_indices) {
  Rng rng(5);
  const int64_t B = 2, C = 3, N = 50, M = 20;
  const auto f = testdata::random_floats(rng, B * C * N, -1.f, 1.f);
  auto idx = testdata::random_indices(rng, B * M, N);
  idx[33] = -1;
  idx[13] = N;  // the first bad one
  std::vector<float> out(static_cast<size_t>(B * C * M), -7.f);
  const pvn3d_status s = pvn3d_gather_points_cpu(B, C, N, M, f.data(), idx.data(), out.data());
  CHECK(s == PVN3D_ERR_INDEX_OUT_OF_RANGE, "status %s", pvn3d_status_name(s));
  CHECK(std::strcmp(pvn3d_last_error(),
                    "PVN3D_GatherPoints: input idx holds index 50 at flat position 13, outside [0, 50)") == 0,
        "message '%s'", pvn3d_last_error());
  CHECK(std::all_of(out.begin(), out.end(), [](float v) { return v == -7.f; }), "output was written");
  // The lowest position wins also when it lies in a later parallel range.
  std::vector<int64_t> big(300000, 0);
  big[250000] = 1000;
  big[170001] = -5;
  std::vector<float> fb(4, 1.f), ob(big.size());
  CHECK(pvn3d_gather_points_cpu(1, 1, 4, static_cast<int64_t>(big.size()), fb.data(), big.data(), ob.data()) ==
            PVN3D_ERR_INDEX_OUT_OF_RANGE,
        "big");
  CHECK(contains(pvn3d_last_error(), "index -5 at flat position 170001"), "message '%s'", pvn3d_last_error());
  // The same message as the CUDA report helper gives.
  CHECK(pvn3d_index_error_describe("PVN3D_GatherPoints", "idx", 13, 50, 50) == PVN3D_ERR_INDEX_OUT_OF_RANGE, "describe");
  CHECK(std::strcmp(pvn3d_last_error(),
                    "PVN3D_GatherPoints: input idx holds index 50 at flat position 13, outside [0, 50)") == 0,
        "describe message '%s'", pvn3d_last_error());
  CHECK(pvn3d_index_error_describe("x", "y", -1, -1, 5) == PVN3D_OK, "describe none");
}

TEST(gather_points_sizes) {
  float f[4] = {1, 2, 3, 4}, out[4];
  int64_t idx[2] = {0, 1};
  CHECK(pvn3d_gather_points_cpu(1, 0, 4, 2, f, idx, out) == PVN3D_OK, "C = 0");
  CHECK(pvn3d_gather_points_cpu(1, 1, 4, 0, f, idx, out) == PVN3D_OK, "M = 0");
  CHECK(pvn3d_gather_points_cpu(1, 1, 4, 2, nullptr, nullptr, nullptr) == PVN3D_ERR_INVALID_ARGUMENT &&
            contains(pvn3d_last_error(), "features is NULL"),
        "null: '%s'", pvn3d_last_error());
  CHECK(pvn3d_gather_points_cpu(1, -2, 4, 2, f, idx, out) == PVN3D_ERR_INVALID_ARGUMENT &&
            contains(pvn3d_last_error(), "C must be >= 0, got -2"),
        "C < 0: '%s'", pvn3d_last_error());
  CHECK(pvn3d_gather_points_cpu(1, 1, 0, 2, f, idx, out) == PVN3D_ERR_INDEX_OUT_OF_RANGE, "N = 0, M > 0");
  CHECK(pvn3d_gather_points_cpu(1, 1, 4, 2, f, idx, out) == PVN3D_OK && out[0] == 1.f && out[1] == 2.f, "tiny");
}

// ---------------------------------------------------------------------------------------------
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
}

// ---------------------------------------------------------------------------------------------
TEST(group_points_vs_reference) {
  Rng rng(7);
  const int64_t B = 2, C = 6, N = 500, M = 64, S = 16;
  const auto f = testdata::random_floats(rng, B * C * N, -1.f, 1.f);
  const auto idx = testdata::random_indices(rng, B * M * S, N);
  single_and_default_threads([&] {
    std::vector<float> out(static_cast<size_t>(B * C * M * S), -7.f);
    CHECK(pvn3d_group_points_cpu(B, C, N, M, S, f.data(), idx.data(), out.data()) == PVN3D_OK, "%s", pvn3d_last_error());
    same_values("group", out, ref::group_points(f, idx, B, C, N, M, S));
  });
}

TEST(group_points_bad_indices) {
  Rng rng(8);
  const int64_t B = 2, C = 2, N = 30, M = 4, S = 8;
  const auto f = testdata::random_floats(rng, B * C * N, -1.f, 1.f);
  auto idx = testdata::random_indices(rng, B * M * S, N);
  idx[(1 * M + 2) * S + 5] = 31;
  std::vector<float> out(static_cast<size_t>(B * C * M * S));
  CHECK(pvn3d_group_points_cpu(B, C, N, M, S, f.data(), idx.data(), out.data()) == PVN3D_ERR_INDEX_OUT_OF_RANGE, "status");
  CHECK(std::strcmp(pvn3d_last_error(), "PVN3D_GroupPoints: input idx holds index 31 at flat position 53, outside [0, 30)") == 0,
        "message '%s'", pvn3d_last_error());
  CHECK(pvn3d_group_points_cpu(1, 1, 30, 1, -1, f.data(), idx.data(), out.data()) == PVN3D_ERR_INVALID_ARGUMENT &&
            contains(pvn3d_last_error(), "S must be >= 0"),
        "S < 0");
  CHECK(pvn3d_group_points_cpu(1, 1, 30, 1, 0, f.data(), idx.data(), out.data()) == PVN3D_OK, "S = 0");
}

// ---------------------------------------------------------------------------------------------
TEST(three_nn_vs_reference) {
  Rng rng(9);
  struct Case { int64_t B, n, m; };
  for (const Case& c : {Case{1, 100, 3}, Case{1, 1000, 200}, Case{2, 3000, 700}, Case{3, 257, 129}, Case{1, 50, 5000}}) {
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
  float p[9] = {0};
  int64_t idx[3];
  CHECK(pvn3d_three_nn_cpu(1, 1, 2, p, p, p, idx) == PVN3D_ERR_INVALID_ARGUMENT &&
            contains(pvn3d_last_error(), "PVN3D_ThreeNN: m (the number of known points) must be >= 3, got 2"),
        "m < 3: '%s'", pvn3d_last_error());
  CHECK(pvn3d_three_nn_cpu(1, 0, 2, p, p, p, idx) == PVN3D_ERR_INVALID_ARGUMENT, "m < 3 even with n = 0");
  CHECK(pvn3d_three_nn_cpu(1, 0, 3, p, p, p, idx) == PVN3D_OK, "n = 0");
  CHECK(pvn3d_three_nn_cpu(1, 1, 3, p, p, nullptr, idx) == PVN3D_ERR_INVALID_ARGUMENT, "null dist2");
}

// ---------------------------------------------------------------------------------------------
TEST(three_interpolate_vs_reference) {
  Rng rng(10);
  const int64_t B = 2, C = 7, m = 300, n = 1000;
  const auto f = testdata::random_floats(rng, B * C * m, -2.f, 2.f);
  const auto idx = testdata::random_indices(rng, B * n * 3, m);
  const auto w = testdata::random_weights(rng, B, n);
  single_and_default_threads([&] {
    std::vector<float> out(static_cast<size_t>(B * C * n), -7.f);
    CHECK(pvn3d_three_interpolate_cpu(B, C, m, n, f.data(), idx.data(), w.data(), out.data()) == PVN3D_OK, "%s",
          pvn3d_last_error());
    same_values("interpolate", out, ref::three_interpolate(f, idx, w, B, C, m, n));
  });
}

TEST(three_interpolate_bad_indices) {
  Rng rng(11);
  const int64_t B = 2, C = 3, m = 10, n = 20;
  const auto f = testdata::random_floats(rng, B * C * m, -2.f, 2.f);
  auto idx = testdata::random_indices(rng, B * n * 3, m);
  const auto w = testdata::random_weights(rng, B, n);
  idx[(1 * n + 4) * 3 + 2] = 10;
  std::vector<float> out(static_cast<size_t>(B * C * n));
  CHECK(pvn3d_three_interpolate_cpu(B, C, m, n, f.data(), idx.data(), w.data(), out.data()) == PVN3D_ERR_INDEX_OUT_OF_RANGE,
        "status");
  CHECK(std::strcmp(pvn3d_last_error(),
                    "PVN3D_ThreeInterpolate: input idx holds index 10 at flat position 74, outside [0, 10)") == 0,
        "message '%s'", pvn3d_last_error());
  CHECK(pvn3d_three_interpolate_cpu(B, C, m, n, f.data(), idx.data(), nullptr, out.data()) == PVN3D_ERR_INVALID_ARGUMENT &&
            contains(pvn3d_last_error(), "weight is NULL"),
        "null weight");
  CHECK(pvn3d_three_interpolate_cpu(B, 0, m, n, f.data(), idx.data(), w.data(), out.data()) == PVN3D_OK, "C = 0");
}

// ---------------------------------------------------------------------------------------------
// The Stanford bunny through a PointNet++-like chain: FPS -> BallQuery -> GroupPoints, GatherPoints,
// ThreeNN back to all points -> ThreeInterpolate; every stage against the reference. Also with
// padding rows appended (zeros), as a depth crop would give.
TEST(bunny_pipeline) {
  std::vector<float> bunny;
  std::string why;
  if (!testdata::load_bunny(g_bunny_path, &bunny, &why)) {
    if (testdata::bunny_required()) {
      CHECK(false, "PVN3D_REQUIRE_BUNNY=1 but the bunny is missing: %s", why.c_str());
      return;
    }
    SKIP("bunny data missing: " + why);
  }
  const int64_t N0 = static_cast<int64_t>(bunny.size() / 3);
  CHECK(N0 == 1839, "bunny has %lld vertices, expected 1839", (long long)N0);
  std::vector<float> xyz = bunny;
  xyz.resize(xyz.size() + 3 * 161, 0.f);  // padding tail: N = 2000
  const int64_t B = 1, N = N0 + 161, npoint = 512, S = 16, C = 4;
  const float radius = 0.02f;

  const auto centres_idx = fps(xyz, B, N, npoint);
  same_values("bunny fps", centres_idx, ref::furthest_point_sample(xyz, B, N, npoint));
  bool no_padding = std::all_of(centres_idx.begin() + 1, centres_idx.end(), [&](int64_t i) { return i < N0; });
  CHECK(no_padding, "FPS picked a padding row of the bunny");

  // features: xyz transposed to [B, 3, N] plus a constant channel
  std::vector<float> feats(static_cast<size_t>(C * N));
  for (int64_t i = 0; i < N; ++i) {
    for (int k = 0; k < 3; ++k) feats[static_cast<size_t>(k * N + i)] = xyz[static_cast<size_t>(3 * i + k)];
    feats[static_cast<size_t>(3 * N + i)] = 1.f;
  }
  std::vector<float> gathered(static_cast<size_t>(C * npoint));
  CHECK(pvn3d_gather_points_cpu(B, C, N, npoint, feats.data(), centres_idx.data(), gathered.data()) == PVN3D_OK, "gather");
  same_values("bunny gather", gathered, ref::gather_points(feats, centres_idx, B, C, N, npoint));
  std::vector<float> centres(static_cast<size_t>(3 * npoint));
  for (int64_t j = 0; j < npoint; ++j)
    for (int k = 0; k < 3; ++k) centres[static_cast<size_t>(3 * j + k)] = gathered[static_cast<size_t>(k * npoint + j)];

  const auto nbr = ball(xyz, centres, B, N, npoint, radius, S);
  same_values("bunny ball query", nbr, ref::ball_query(xyz, centres, B, N, npoint, radius, S));
  // Every centre is a bunny vertex, so its ball holds at least itself.
  bool self_hit = true;
  for (int64_t j = 0; j < npoint; ++j) self_hit &= nbr[static_cast<size_t>(j * S)] <= centres_idx[static_cast<size_t>(j)];
  CHECK(self_hit, "a centre's first neighbour comes after the centre itself");

  std::vector<float> grouped(static_cast<size_t>(C * npoint * S));
  CHECK(pvn3d_group_points_cpu(B, C, N, npoint, S, feats.data(), nbr.data(), grouped.data()) == PVN3D_OK, "group");
  same_values("bunny group", grouped, ref::group_points(feats, nbr, B, C, N, npoint, S));

  std::vector<float> d;
  std::vector<int64_t> i3;
  nn3(xyz, centres, B, N, npoint, &d, &i3);
  std::vector<float> wd;
  std::vector<int64_t> wi;
  ref::three_nn(xyz, centres, B, N, npoint, &wd, &wi);
  same_values("bunny three_nn idx", i3, wi);
  same_values("bunny three_nn dist2", d, wd);

  std::vector<float> w(d.size());
  for (int64_t j = 0; j < N; ++j) {
    float r[3], s = 0;
    for (int k = 0; k < 3; ++k) s += (r[k] = 1.f / (std::sqrt(d[static_cast<size_t>(3 * j + k)]) + 1e-8f));
    for (int k = 0; k < 3; ++k) w[static_cast<size_t>(3 * j + k)] = r[k] / s;
  }
  std::vector<float> centre_feats(gathered);
  std::vector<float> up(static_cast<size_t>(C * N));
  CHECK(pvn3d_three_interpolate_cpu(B, C, npoint, N, centre_feats.data(), i3.data(), w.data(), up.data()) == PVN3D_OK,
        "interpolate");
  same_values("bunny interpolate", up, ref::three_interpolate(centre_feats, i3, w, B, C, npoint, N));
  // The constant channel interpolates to ~1 everywhere.
  bool ones = true;
  for (int64_t j = 0; j < N; ++j) ones &= std::fabs(up[static_cast<size_t>(3 * N + j)] - 1.f) < 1e-5f;
  CHECK(ones, "constant channel not preserved");
}

int main(int argc, char** argv) {
  g_bunny_path = testdata::bunny_path(argc, argv);
  std::printf("pvn3d_test_cpu: libpvn3d_ops %s, CUDA %s, %d threads, bunny '%s'\n", pvn3d_version(),
              pvn3d_built_with_cuda() ? "on" : "off", pvn3d_get_num_threads(), g_bunny_path.c_str());
  return harness::run_all();
}
