// Tests of PVN3D_FurthestPointSample (furthest_point_sample/), three ways: the CPU kernel against the
// naive reference (support/reference.cpp) on random clouds, padding points, ties and the Stanford bunny,
// plus its errors; the CUDA kernel equal to the CPU kernel (every launch variant), plus its errors; the
// CUDA entry point of a CPU-only library.
//
//   pvn3d_test_furthest_point_sample [--bunny <bunny_positions.txt>]   (support/test_env.h)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
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

std::vector<int64_t> fps(const std::vector<float>& xyz, int64_t B, int64_t N, int64_t npoint) {
  std::vector<int64_t> out(static_cast<size_t>(B * npoint), -7);
  const pvn3d_status s = pvn3d_furthest_point_sample_cpu(B, N, npoint, xyz.data(), out.data());
  CHECK(s == PVN3D_OK, "fps B=%lld N=%lld npoint=%lld: %s %s", (long long)B, (long long)N, (long long)npoint,
        pvn3d_status_name(s), pvn3d_last_error());
  return out;
}

void compare_fps(const std::vector<float>& xyz, int64_t B, int64_t N, int64_t npoint, const char* what) {
  std::vector<int64_t> want(static_cast<size_t>(B * npoint));
  ok(pvn3d_furthest_point_sample_cpu(B, N, npoint, xyz.data(), want.data()), "fps cpu");
  Dev<float> dx(xyz);
  Dev<int64_t> di(static_cast<size_t>(B * npoint));
  const size_t ws = pvn3d_furthest_point_sample_cuda_workspace_bytes(B, N, npoint);
  Dev<unsigned char> dw(ws);
  ok(pvn3d_furthest_point_sample_cuda(B, N, npoint, dx.p, di.p, dw.p, ws, testenv::stream()), what);
  same_values(what, di.get(), want);
}

}  // namespace

// ---- CPU kernel == reference -------------------------------------------------------------------

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
  // Sizes whose scratch cannot be allocated: an error status, not a C++ exception ending the process.
  s = pvn3d_furthest_point_sample_cpu(1, int64_t{1} << 60, 2, xyz, idx);
  CHECK(s == PVN3D_ERR_OUT_OF_MEMORY && contains(pvn3d_last_error(), "out of host memory"), "N 2^60: '%s'", pvn3d_last_error());
}

// Batches on any number of threads: B = 2..8 elements on 1, 2, 3 and 8 threads give the indices of
// the sequential path (1 thread), which agree with the reference. N = 16500 lets the kernel split an
// element over a team of up to 4 threads (>= 4096 points each: B = 2 on 8 threads), N = 9000 over 2
// (B = 2..4 on 8 threads, B = 1 on 2 and 3), so chunk boundaries fall inside the clouds. The clouds
// sit on a coarse lattice (4^3 positions), so exact ties are everywhere, across chunks too, and once
// every position is picked all running distances are 0: the picks are then the lowest candidate index.
// About a quarter of the points are padding (zeros or norms <= 1e-3), point 0 of one element is
// padding, one element is padding only, and in another only the last chunk holds candidates.
TEST(fps_batches_on_any_thread_count) {
  Rng rng(4);
  for (int64_t N : {9000, 16500}) {
    const int64_t Bmax = 8, npoint = 80;  // 64 lattice positions, then the all-zero phase
    std::vector<float> xyz(static_cast<size_t>(Bmax * N * 3));
    for (int64_t i = 0; i < Bmax * N; ++i) {
      float* p = &xyz[static_cast<size_t>(3 * i)];
      const uint64_t r = rng.next() % 8;
      if (r < 2) {
        p[0] = p[1] = p[2] = r == 0 ? 0.f : 0.01f;  // padding
      } else {
        for (int d = 0; d < 3; ++d) p[d] = 0.125f * static_cast<float>(1 + rng.below(4));
      }
    }
    auto point = [&](int64_t b, int64_t i) { return &xyz[static_cast<size_t>(3 * (b * N + i))]; };
    point(1, 0)[0] = point(1, 0)[1] = point(1, 0)[2] = 0.f;                       // element 1: point 0 is padding
    for (int64_t i = 0; i < N; ++i) point(2, i)[0] = point(2, i)[1] = point(2, i)[2] = 0.f;  // element 2: all padding
    for (int64_t i = 0; i < N - N / 5; ++i) point(3, i)[0] = point(3, i)[1] = point(3, i)[2] = 0.01f;  // 3: tail only
    // The sequential path (1 thread) on all 8 elements, against the reference; an element's picks do not
    // depend on the others, so the first B elements' picks are the answer for every B.
    pvn3d_set_num_threads(1);
    const auto all = fps(xyz, Bmax, N, npoint);
    same_values("sequential path vs reference", all, ref::furthest_point_sample(xyz, Bmax, N, npoint));
    for (int64_t B = 2; B <= Bmax; ++B) {
      const std::vector<float> cloud(xyz.begin(), xyz.begin() + B * N * 3);
      const std::vector<int64_t> want(all.begin(), all.begin() + B * npoint);
      for (int threads : {2, 3, 8}) {
        pvn3d_set_num_threads(threads);
        char what[96];
        std::snprintf(what, sizeof what, "fps B=%lld N=%lld on %d threads", (long long)B, (long long)N, threads);
        same_values(what, fps(cloud, B, N, npoint), want);
      }
      pvn3d_set_num_threads(0);
    }
    // One element on 2, 3 and 8 threads: a team of 2 (N = 9000) or up to 4 (N = 16500).
    const std::vector<float> one(xyz.begin(), xyz.begin() + N * 3);
    const std::vector<int64_t> want1(all.begin(), all.begin() + npoint);
    for (int threads : {2, 3, 8}) {
      pvn3d_set_num_threads(threads);
      same_values("fps B=1 on a team", fps(one, 1, N, npoint), want1);
    }
    pvn3d_set_num_threads(0);
    // Only the tail of element 3 holds candidates; every lattice point is picked before npoint.
    const std::vector<float> tail(xyz.begin() + 3 * N * 3, xyz.begin() + 4 * N * 3);
    pvn3d_set_num_threads(8);
    const auto got = fps(tail, 1, N, npoint);
    pvn3d_set_num_threads(0);
    bool in_tail = true;
    for (int64_t s = 1; s < npoint; ++s) in_tail &= got[static_cast<size_t>(s)] >= N - N / 5;
    CHECK(in_tail, "element 3: a pick outside the last fifth (its only candidates)");
  }
}

// Two callers at once (the kernel keeps no state between calls; each call brings its own teams).
TEST(fps_concurrent_callers) {
  Rng rng(5);
  const int64_t B = 3, N = 9000, npoint = 100;
  const auto xyz = testdata::random_cloud(rng, B, N, -0.5f, 0.5f);
  pvn3d_set_num_threads(1);
  const auto want = fps(xyz, B, N, npoint);
  pvn3d_set_num_threads(4);
  std::vector<int64_t> got[2] = {std::vector<int64_t>(want.size(), -7), std::vector<int64_t>(want.size(), -7)};
  pvn3d_status st[2];
  // The harness's counters are not thread-safe: both callers only call the kernel, the checks follow.
  auto call = [&](int c) { st[c] = pvn3d_furthest_point_sample_cpu(B, N, npoint, xyz.data(), got[c].data()); };
  std::thread other(call, 1);
  call(0);
  other.join();
  pvn3d_set_num_threads(0);
  CHECK(st[0] == PVN3D_OK && st[1] == PVN3D_OK, "statuses %s, %s", pvn3d_status_name(st[0]), pvn3d_status_name(st[1]));
  same_values("caller 0", got[0], want);
  same_values("caller 1", got[1], want);
}

// The Stanford bunny with padding rows appended (zeros), as a depth crop would give: the first stage of
// the PointNet++-like chain (support/test_data.h, BunnyScene).
TEST(fps_bunny) {
  std::vector<float> bunny;
  LOAD_BUNNY_OR_SKIP(bunny);
  const testdata::BunnyScene sc = testdata::bunny_scene(bunny);
  CHECK(sc.N0 == 1839, "bunny has %lld vertices, expected 1839", (long long)sc.N0);
  const auto centres_idx = fps(sc.xyz, sc.B, sc.N, sc.npoint);
  same_values("bunny fps", centres_idx, ref::furthest_point_sample(sc.xyz, sc.B, sc.N, sc.npoint));
  bool no_padding = std::all_of(centres_idx.begin() + 1, centres_idx.end(), [&](int64_t i) { return i < sc.N0; });
  CHECK(no_padding, "FPS picked a padding row of the bunny");
}

// ---- CUDA kernel == CPU kernel ------------------------------------------------------------------

TEST(fps_cuda_equals_cpu) {
  REQUIRE_CUDA();
  Rng rng(101);
  struct Size { int64_t B, N, npoint; };
  // Covers every register template (1, 2, 4, 8, 12 points per thread) and its limit 12288, the
  // registers + shared-memory variant (12288 < N <= 16384), the global-memory path (N > 16384,
  // workspace), B > 1 and N == npoint.
  for (const Size& z : {Size{1, 1, 1}, Size{1, 100, 10}, Size{2, 1000, 200}, Size{3, 2048, 512}, Size{2, 4000, 300},
                        Size{1, 8192, 1024}, Size{1, 12288, 2048}, Size{2, 12289, 300}, Size{2, 16384, 700},
                        Size{1, 16385, 400}, Size{1, 20000, 1000}, Size{4, 3000, 3000}}) {
    const auto xyz = testdata::random_cloud(rng, z.B, z.N, 0.f, 0.5f);
    char what[96];
    std::snprintf(what, sizeof what, "fps B=%lld N=%lld npoint=%lld", (long long)z.B, (long long)z.N, (long long)z.npoint);
    compare_fps(xyz, z.B, z.N, z.npoint, what);
  }
}

TEST(fps_cuda_padding_and_ties) {
  REQUIRE_CUDA();
  Rng rng(102);
  for (int64_t N : {64, 5000, 16000, 17000}) {
    auto xyz = testdata::random_cloud(rng, 2, N, -0.5f, 0.5f);
    for (int64_t i = 1; i < 2 * N; ++i)
      if (rng.next() % 3 == 0) xyz[3 * i] = xyz[3 * i + 1] = xyz[3 * i + 2] = (i % 2) ? 0.f : 0.01f;
    compare_fps(xyz, 2, N, std::min<int64_t>(N, 600), "fps padding");
  }
  compare_fps(std::vector<float>(3 * 100, 0.f), 1, 100, 20, "fps all padding");
  compare_fps(std::vector<float>(3 * 20000, 0.f), 1, 20000, 20, "fps all padding (global path)");
  compare_fps({1, 1, 1, 2, 1, 1, 0, 1, 1, 1, 1, 1}, 1, 4, 4, "fps ties");
  std::vector<float> dup;
  for (int i = 0; i < 3000; ++i) dup.insert(dup.end(), {(i % 3) ? 1.f : 2.f, 1.f, (i % 5) ? 1.f : 0.5f});
  compare_fps(dup, 1, 3000, 50, "fps many duplicates");
}

// The launcher's choice of kernel, forced through PVN3D_FPS_CLUSTER (read at every launch): "0" the
// single-block kernels at every N, "2"/"4"/"8" the thread-block-cluster kernel (sm_90) with at most that
// many blocks at every N <= 32768 (on an older GPU the launcher falls back to a single block, and the
// comparison still holds). Covers: every cluster template (4..32 points per thread), N not a multiple
// of 1024 or of the block size, npoint = 1, npoint = N, B > 1 (several clusters), padding, ties across
// warps and blocks (a lattice with duplicates), a cloud whose only candidates are padding.
namespace {

struct EnvGuard {
  explicit EnvGuard(const char* v) {
    if (v) setenv("PVN3D_FPS_CLUSTER", v, 1);
    else unsetenv("PVN3D_FPS_CLUSTER");
  }
  ~EnvGuard() { unsetenv("PVN3D_FPS_CLUSTER"); }
};

std::vector<float> lattice_cloud(int64_t B, int64_t N) {  // many exactly equal distances, duplicates
  std::vector<float> xyz(static_cast<size_t>(B * N * 3));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < N; ++i) {
      const int64_t j = (i * 7 + b) % 97;  // every point repeats about N/97 times
      float* q = &xyz[static_cast<size_t>((b * N + i) * 3)];
      q[0] = 0.25f * static_cast<float>(j % 5);
      q[1] = 0.25f * static_cast<float>((j / 5) % 4) + 0.5f;
      q[2] = 0.125f * static_cast<float>(j / 20) + 0.5f;
    }
  return xyz;
}

}  // namespace

TEST(fps_cuda_every_kernel_choice) {
  REQUIRE_CUDA();
  struct Size { int64_t B, N, npoint; };
  const Size sizes[] = {{1, 5, 5},       {2, 1000, 1000}, {1, 3000, 1},    {3, 4097, 333},  {1, 8191, 1200},
                        {1, 12288, 2048}, {2, 12289, 500}, {1, 16384, 4096}, {8, 16384, 300}, {1, 16385, 300},
                        {2, 24576, 257},  {1, 30001, 400}, {1, 32768, 200},  {1, 33000, 64}};
  // PVN3D_TEST_SMALL (compute-sanitizer racecheck): every kernel and size still runs, with at most 64
  // picks.
  const int64_t max_picks = testenv::small() ? 64 : INT64_MAX;
  for (const char* mode : {"0", "2", "4", "8", static_cast<const char*>(nullptr)}) {
    EnvGuard env(mode);
    Rng rng(303);
    for (Size z : sizes) {
      z.npoint = std::min(z.npoint, max_picks);
      const auto xyz = testdata::random_cloud(rng, z.B, z.N, 0.f, 0.5f);
      char what[128];
      std::snprintf(what, sizeof what, "fps PVN3D_FPS_CLUSTER=%s B=%lld N=%lld npoint=%lld", mode ? mode : "(unset)",
                    (long long)z.B, (long long)z.N, (long long)z.npoint);
      compare_fps(xyz, z.B, z.N, z.npoint, what);
    }
    // Ties everywhere (equal distances in different warps and blocks; duplicates of picked points).
    for (Size z : {Size{1, 12288, 150}, Size{2, 9000, 120}, Size{1, 20000, 100}}) {
      z.npoint = std::min(z.npoint, max_picks);
      char what[128];
      std::snprintf(what, sizeof what, "fps lattice PVN3D_FPS_CLUSTER=%s B=%lld N=%lld", mode ? mode : "(unset)",
                    (long long)z.B, (long long)z.N);
      compare_fps(lattice_cloud(z.B, z.N), z.B, z.N, z.npoint, what);
    }
    // Padding: a third of the points at (almost) the origin, and the first point among them.
    {
      const int64_t B = 2, N = 14000;
      auto xyz = testdata::random_cloud(rng, B, N, -0.5f, 0.5f);
      for (int64_t i = 0; i < B * N; ++i)
        if (i % N == 0 || rng.next() % 3 == 0) xyz[3 * i] = xyz[3 * i + 1] = xyz[3 * i + 2] = (i % 2) ? 0.f : 0.01f;
      compare_fps(xyz, B, N, std::min<int64_t>(900, max_picks), mode ? "fps padding (forced mode)" : "fps padding (auto)");
    }
    // Only padding, and padding but for one point: every pick after the first is 0, or that point.
    {
      const int64_t N = 9000;
      std::vector<float> xyz(static_cast<size_t>(3 * N), 0.f);
      compare_fps(xyz, 1, N, 40, "fps all padding (cluster sizes)");
      xyz[3 * 7001] = 0.3f;
      compare_fps(xyz, 1, N, 40, "fps one candidate (cluster sizes)");
    }
  }
}

TEST(fps_cuda_errors) {
  REQUIRE_CUDA();
  void* stream = testenv::stream();
  Dev<float> x(static_cast<size_t>(3 * 20000));
  Dev<int64_t> i(16);
  CHECK(pvn3d_furthest_point_sample_cuda(1, 4, 5, x.p, i.p, nullptr, 0, stream) == PVN3D_ERR_INVALID_ARGUMENT &&
            std::strstr(pvn3d_last_error(), "npoint (5) must be <= N (4)") != nullptr,
        "npoint > N: '%s'", pvn3d_last_error());
  const size_t ws = pvn3d_furthest_point_sample_cuda_workspace_bytes(1, 20000, 10);
  CHECK(ws == 20000 * 4, "workspace bytes %zu", ws);
  CHECK(pvn3d_furthest_point_sample_cuda_workspace_bytes(1, 16384, 10) == 0, "no workspace on chip");
  CHECK(pvn3d_furthest_point_sample_cuda_workspace_bytes(3, 16385, 10) == 3 * 16385 * 4, "workspace B=3");
  CHECK(pvn3d_furthest_point_sample_cuda(1, 20000, 10, x.p, i.p, nullptr, 0, stream) == PVN3D_ERR_INVALID_ARGUMENT &&
            std::strstr(pvn3d_last_error(), "workspace_bytes (0)") != nullptr,
        "small workspace: '%s'", pvn3d_last_error());
  CHECK(pvn3d_furthest_point_sample_cuda(1, 20000, 10, x.p, i.p, nullptr, ws, stream) == PVN3D_ERR_INVALID_ARGUMENT &&
            std::strstr(pvn3d_last_error(), "workspace is NULL") != nullptr,
        "null workspace: '%s'", pvn3d_last_error());
  CHECK(pvn3d_furthest_point_sample_cuda(0, 4, 2, nullptr, nullptr, nullptr, 0, stream) == PVN3D_OK, "B = 0");
}

TEST(fps_cuda_bunny) {
  REQUIRE_CUDA();
  std::vector<float> bunny;
  LOAD_BUNNY_OR_SKIP(bunny);
  const int64_t N = static_cast<int64_t>(bunny.size() / 3);
  compare_fps(bunny, 1, N, 512, "bunny fps");
}

// ---- a CPU-only library -------------------------------------------------------------------------

TEST(fps_cuda_entry_point_in_cpu_only_build) {
  if (pvn3d_built_with_cuda()) SKIP("library built with CUDA (the CUDA tests above cover the entry point)");
  int64_t idx[4] = {0};
  float xyz[12] = {0};
  CHECK(pvn3d_furthest_point_sample_cuda(1, 4, 2, xyz, idx, nullptr, 0, nullptr) == PVN3D_ERR_NO_CUDA, "fps");
  CHECK(contains(pvn3d_last_error(), "pvn3d_furthest_point_sample_cuda: built without CUDA"), "'%s'", pvn3d_last_error());
  CHECK(pvn3d_furthest_point_sample_cuda_workspace_bytes(1, 20000, 10) == 0, "workspace");
}

int main(int argc, char** argv) { return testenv::run(argc, argv); }
