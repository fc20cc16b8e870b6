// Tests of PVN3D_GatherPoints (gather_points/), three ways: the CPU kernel against the naive reference
// (support/reference.cpp) on random input and the Stanford bunny, bad indices (the first one reported,
// nothing written), sizes and errors, the index check of an empty output (C == 0); the CUDA kernel equal
// to the CPU kernel (staged and direct kernels), its index-error report (pinned copy + event, reset on
// reuse, NULL report), the check-only launch of an empty output; the CUDA entry point of a CPU-only
// library.
//
//   pvn3d_test_gather_points [--bunny <bunny_positions.txt>]   (support/test_env.h)
#include <algorithm>
#include <cstring>
#include <string>
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
using testenv::IndexError;
using testenv::kRel;
using testenv::ok;
using testenv::single_and_default_threads;

namespace {

// shift > 0: every device pointer sits `shift` elements past a 256-byte boundary (not 16-byte aligned).
void compare_gather(const std::vector<float>& f, const std::vector<int64_t>& idx, int64_t B, int64_t C, int64_t N,
                    int64_t M, const char* what, size_t shift = 0) {
  std::vector<float> want(static_cast<size_t>(B * C * M));
  ok(pvn3d_gather_points_cpu(B, C, N, M, f.data(), idx.data(), want.data()), "gather cpu");
  std::vector<float> fs(shift, 0.f);
  std::vector<int64_t> is(shift, 0);
  fs.insert(fs.end(), f.begin(), f.end());
  is.insert(is.end(), idx.begin(), idx.end());
  Dev<float> df(fs), dout(want.size() + shift);
  Dev<int64_t> di(is);
  IndexError err;
  ok(pvn3d_gather_points_cuda(B, C, N, M, df.p + shift, di.p + shift, dout.p + shift, err.dev.p, testenv::stream()), what);
  err.read();
  CHECK(err.host[0] == -1 && err.host[1] == -1, "%s: index_error words {%lld, %lld} on good input", what,
        (long long)err.host[0], (long long)err.host[1]);
  auto got = dout.get();
  got.erase(got.begin(), got.begin() + static_cast<std::ptrdiff_t>(shift));
  same_values(what, got, want);
}

}  // namespace

// ---- CPU kernel == reference -------------------------------------------------------------------

TEST(gather_points_vs_reference) {
  Rng rng(4);
  // The kernel takes 4 rows at a time up to N = 1024 and 2 above, the rest one by one (common/gather_cpu.h):
  // these channel counts cover whole groups, remainders, or both.
  struct Size { int64_t B, C, N, M; };
  for (const Size s : {Size{2, 5, 300, 77}, Size{1, 4, 1024, 50}, Size{2, 7, 1500, 90}, Size{1, 3, 2000, 31},
                       Size{3, 1, 10, 4}, Size{1, 2, 1025, 1025}, Size{2, 7, 300, 60},
                       Size{1, 3, 2000, 20000}}) {  // the last: few long rows, also cut along M
    const auto f = testdata::random_floats(rng, s.B * s.C * s.N, -1.f, 1.f);
    const auto idx = testdata::random_indices(rng, s.B * s.M, s.N);
    single_and_default_threads([&] {
      std::vector<float> out(static_cast<size_t>(s.B * s.C * s.M), -7.f);
      CHECK(pvn3d_gather_points_cpu(s.B, s.C, s.N, s.M, f.data(), idx.data(), out.data()) == PVN3D_OK, "%s",
            pvn3d_last_error());
      same_values("gather", out, ref::gather_points(f, idx, s.B, s.C, s.N, s.M));
    });
  }
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

// An empty output still validates a non-empty idx (spec/ops.md: an index outside [0, N) is an error):
// with C == 0 the first bad index is reported as with C > 0, N == 0 makes every index bad, and idx must
// be given; features and out may be NULL. With idx empty too (B == 0 or M == 0) no pointer is needed.
TEST(gather_points_empty_output_checks_indices) {
  const int64_t B = 2, N = 5, M = 3;
  std::vector<int64_t> idx = {0, 4, 1, 2, 3, 0};
  CHECK(pvn3d_gather_points_cpu(B, 0, N, M, nullptr, idx.data(), nullptr) == PVN3D_OK, "C = 0, good: '%s'",
        pvn3d_last_error());
  idx[5] = -2;
  idx[4] = N;  // the first bad one
  CHECK(pvn3d_gather_points_cpu(B, 0, N, M, nullptr, idx.data(), nullptr) == PVN3D_ERR_INDEX_OUT_OF_RANGE, "C = 0, bad");
  CHECK(std::strcmp(pvn3d_last_error(),
                    "PVN3D_GatherPoints: input idx holds index 5 at flat position 4, outside [0, 5)") == 0,
        "message '%s'", pvn3d_last_error());
  CHECK(pvn3d_gather_points_cpu(B, 0, 0, M, nullptr, idx.data(), nullptr) == PVN3D_ERR_INDEX_OUT_OF_RANGE &&
            std::strcmp(pvn3d_last_error(),
                        "PVN3D_GatherPoints: input idx holds index 0 at flat position 0, outside [0, 0)") == 0,
        "C = 0, N = 0: '%s'", pvn3d_last_error());
  std::vector<float> out(static_cast<size_t>(B * 2 * M), -7.f);
  CHECK(pvn3d_gather_points_cpu(B, 2, 0, M, nullptr, idx.data(), out.data()) == PVN3D_ERR_INDEX_OUT_OF_RANGE &&
            std::all_of(out.begin(), out.end(), [](float v) { return v == -7.f; }),
        "N = 0, features empty and NULL: '%s'", pvn3d_last_error());
  CHECK(pvn3d_gather_points_cpu(B, 0, N, M, nullptr, nullptr, nullptr) == PVN3D_ERR_INVALID_ARGUMENT &&
            contains(pvn3d_last_error(), "idx is NULL"),
        "C = 0, idx NULL: '%s'", pvn3d_last_error());
  CHECK(pvn3d_gather_points_cpu(0, 4, N, M, nullptr, nullptr, nullptr) == PVN3D_OK, "B = 0: '%s'", pvn3d_last_error());
  CHECK(pvn3d_gather_points_cpu(B, 4, N, 0, nullptr, nullptr, nullptr) == PVN3D_OK, "M = 0: '%s'", pvn3d_last_error());
  // The parallel scan: the lowest position wins also when it lies in a later range.
  std::vector<int64_t> big(300000, 0);
  big[250000] = 1000;
  big[170001] = -5;
  single_and_default_threads([&] {
    CHECK(pvn3d_gather_points_cpu(1, 0, 4, static_cast<int64_t>(big.size()), nullptr, big.data(), nullptr) ==
                  PVN3D_ERR_INDEX_OUT_OF_RANGE &&
              contains(pvn3d_last_error(), "index -5 at flat position 170001"),
          "big, C = 0: '%s'", pvn3d_last_error());
  });
}

// The Stanford bunny scene (support/test_data.h): the FPS centres' features, the second stage of the
// PointNet++-like chain (inputs from the reference chain, support/reference.h).
TEST(gather_points_bunny) {
  std::vector<float> bunny;
  LOAD_BUNNY_OR_SKIP(bunny);
  const testdata::BunnyScene sc = testdata::bunny_scene(bunny);
  const ref::Chain ch = ref::pointnet_chain(sc.xyz, sc.features, sc.N, sc.C, sc.npoint, sc.radius, sc.S);
  std::vector<float> gathered(static_cast<size_t>(sc.C * sc.npoint));
  CHECK(pvn3d_gather_points_cpu(sc.B, sc.C, sc.N, sc.npoint, sc.features.data(), ch.centres_idx.data(),
                                gathered.data()) == PVN3D_OK,
        "gather");
  same_values("bunny gather", gathered, ref::gather_points(sc.features, ch.centres_idx, sc.B, sc.C, sc.N, sc.npoint));
}

// ---- CUDA kernel == CPU kernel ------------------------------------------------------------------

TEST(gather_points_cuda_equals_cpu) {
  REQUIRE_CUDA();
  Rng rng(105);
  {
    const int64_t B = 3, C = 19, N = 1000, M = 333;
    compare_gather(testdata::random_floats(rng, B * C * N, -1, 1), testdata::random_indices(rng, B * M, N), B, C, N, M,
                   "gather");
  }
  {
    const int64_t B = 2, C = 5, N = 13000, M = 700;
    compare_gather(testdata::random_floats(rng, B * C * N, -1, 1), testdata::random_indices(rng, B * M, N), B, C, N, M,
                   "gather direct");
  }
  {
    const int64_t B = 1, C = 300, N = 64, M = 5000;  // many short rows
    compare_gather(testdata::random_floats(rng, B * C * N, -1, 1), testdata::random_indices(rng, B * M, N), B, C, N, M,
                   "gather, many short rows");
  }
  // The staged kernel's variants (N <= 4 M): 4 positions a thread, several chunks (the benchmark's
  // shape with B = 2, C = 64); one position a thread (M odd; misaligned pointers, plain-load staging);
  // fewer units than threads (threads share a unit's rows).
  struct Size { int64_t B, C, N, M; size_t shift; const char* what; };
  for (const Size& z : {Size{2, 64, 4096, 1024, 0, "gather staged, float4"}, Size{3, 33, 2000, 999, 0, "gather staged, M odd"},
                        Size{2, 17, 1001, 1000, 1, "gather staged, misaligned"}, Size{2, 70, 30, 8, 0, "gather staged, M = 8"},
                        Size{1, 5, 3, 1, 0, "gather staged, M = 1"}}) {
    compare_gather(testdata::random_floats(rng, z.B * z.C * z.N, -1, 1), testdata::random_indices(rng, z.B * z.M, z.N), z.B,
                   z.C, z.N, z.M, z.what, z.shift);
  }
}

TEST(gather_points_cuda_index_errors) {
  REQUIRE_CUDA();
  void* stream = testenv::stream();
  Rng rng(106);
  // Two bad indices; the report names the lower position, as the CPU does.
  {
    const int64_t B = 2, C = 20, N = 64, M = 500;
    const auto f = testdata::random_floats(rng, B * C * N, -1, 1);
    auto idx = testdata::random_indices(rng, B * M, N);
    idx[777] = -3;
    idx[612] = N + 5;
    std::vector<float> host_out(static_cast<size_t>(B * C * M));
    CHECK(pvn3d_gather_points_cpu(B, C, N, M, f.data(), idx.data(), host_out.data()) == PVN3D_ERR_INDEX_OUT_OF_RANGE, "cpu");
    const std::string cpu_msg = pvn3d_last_error();
    Dev<float> df(f), dout(host_out.size());
    Dev<int64_t> di(idx);
    IndexError err;
    ok(pvn3d_gather_points_cuda(B, C, N, M, df.p, di.p, dout.p, err.dev.p, stream), "gather launch");
    err.read();
    CHECK(err.position == 612 && err.value == N + 5, "gather report {%lld, %lld}", (long long)err.position,
          (long long)err.value);
    CHECK(pvn3d_index_error_describe("PVN3D_GatherPoints", "idx", err.position, err.value, N) == PVN3D_ERR_INDEX_OUT_OF_RANGE &&
              cpu_msg == pvn3d_last_error(),
          "describe '%s' vs cpu '%s'", pvn3d_last_error(), cpu_msg.c_str());
    const auto out = dout.get();
    // Bad positions give 0 (batch 1, m = 277 for position 777; batch 1, m = 112 for 612).
    CHECK(out[static_cast<size_t>((1 * C + 0) * M + 277)] == 0.f && out[static_cast<size_t>((1 * C + 5) * M + 112)] == 0.f,
          "bad entries not zero");
    // A launch leaves a reset buffer untouched when every index is good.
    auto good = idx;
    good[777] = 0;
    good[612] = 1;
    Dev<int64_t> dg(good);
    err.reset();
    ok(pvn3d_gather_points_cuda(B, C, N, M, df.p, dg.p, dout.p, err.dev.p, stream), "gather launch 2");
    err.read();
    CHECK(err.host[0] == -1 && err.host[1] == -1, "after reset {%lld, %lld}", (long long)err.host[0], (long long)err.host[1]);
  }
  // The direct (unstaged) kernel reports the same way.
  {
    const int64_t m = 30000;
    IndexError err;
    std::vector<int64_t> gidx = testdata::random_indices(rng, 2 * 600, m);
    gidx[600 + 17] = m + 1;
    gidx[600 + 3] = -(int64_t{1} << 35) - 7;  // the lowest bad position: all 64 bits must come back
    gidx[600 + 40] = -1;
    Dev<float> gf(testdata::random_floats(rng, 2 * 3 * m, -1, 1)), gout(static_cast<size_t>(2 * 3 * 600));
    Dev<int64_t> gi(gidx);
    ok(pvn3d_gather_points_cuda(2, 3, m, 600, gf.p, gi.p, gout.p, err.dev.p, stream), "gather direct launch");
    err.read();
    CHECK(err.position == 603 && err.value == -(int64_t{1} << 35) - 7, "gather direct report {%lld, %lld}",
          (long long)err.position, (long long)err.value);
    std::vector<float> host_out(gout.n);
    CHECK(pvn3d_gather_points_cpu(2, 3, m, 600, gf.get().data(), gidx.data(), host_out.data()) == PVN3D_ERR_INDEX_OUT_OF_RANGE,
          "cpu");
    const std::string cpu_msg = pvn3d_last_error();
    pvn3d_index_error_describe("PVN3D_GatherPoints", "idx", err.position, err.value, m);
    CHECK(cpu_msg == pvn3d_last_error(), "describe '%s' vs cpu '%s'", pvn3d_last_error(), cpu_msg.c_str());
  }
  // NULL index_error: no report, still no out-of-bounds read (memcheck watches this), zeros.
  {
    std::vector<int64_t> idx = {0, 1, -100000000, 3};
    Dev<float> df(std::vector<float>{1, 2, 3, 4}), dout(4);
    Dev<int64_t> di(idx);
    ok(pvn3d_gather_points_cuda(1, 1, 4, 4, df.p, di.p, dout.p, nullptr, stream), "gather unchecked");
    same_values("unchecked gather", dout.get(), std::vector<float>{1, 2, 0, 4});
  }
}

// An empty output (C == 0) with a non-empty idx: the launcher runs only the index check, on the stream,
// and it reports like the gather kernels (the lowest bad position, all 64 bits of its value); a good
// idx leaves a reset buffer alone, N == 0 makes every index bad; NULL index_error or an empty idx
// launch nothing and need no device pointers.
TEST(gather_points_cuda_empty_output_checks_indices) {
  REQUIRE_CUDA();
  void* stream = testenv::stream();
  Rng rng(107);
  const int64_t B = 3, N = 64, M = 5000;
  const auto good = testdata::random_indices(rng, B * M, N);
  auto idx = good;
  idx[2 * M + 9] = N;
  // Three bad ones in one warp of the check kernel (positions 5696..5727); the lowest is the report.
  idx[M + 701] = -1;
  idx[M + 700] = -(int64_t{1} << 35) - 7;
  idx[M + 704] = N + 1;
  Dev<int64_t> di(idx), dg(good);
  IndexError err;
  ok(pvn3d_gather_points_cuda(B, 0, N, M, nullptr, di.p, nullptr, err.dev.p, stream), "C = 0 launch");
  err.read();
  CHECK(err.position == M + 700 && err.value == -(int64_t{1} << 35) - 7, "C = 0 report {%lld, %lld}",
        (long long)err.position, (long long)err.value);
  CHECK(pvn3d_gather_points_cpu(B, 0, N, M, nullptr, idx.data(), nullptr) == PVN3D_ERR_INDEX_OUT_OF_RANGE, "cpu");
  const std::string cpu_msg = pvn3d_last_error();
  pvn3d_index_error_describe("PVN3D_GatherPoints", "idx", err.position, err.value, N);
  CHECK(cpu_msg == pvn3d_last_error(), "describe '%s' vs cpu '%s'", pvn3d_last_error(), cpu_msg.c_str());
  err.reset();
  ok(pvn3d_gather_points_cuda(B, 0, N, M, nullptr, dg.p, nullptr, err.dev.p, stream), "C = 0 launch, good");
  err.read();
  CHECK(err.host[0] == -1 && err.host[1] == -1, "good idx {%lld, %lld}", (long long)err.host[0], (long long)err.host[1]);
  ok(pvn3d_gather_points_cuda(B, 0, 0, M, nullptr, dg.p, nullptr, err.dev.p, stream), "C = 0, N = 0 launch");
  err.read();
  CHECK(err.position == 0 && err.value == good[0], "N = 0 report {%lld, %lld}", (long long)err.position,
        (long long)err.value);
  err.reset();
  CHECK(pvn3d_gather_points_cuda(B, 0, N, M, nullptr, nullptr, nullptr, err.dev.p, stream) == PVN3D_ERR_INVALID_ARGUMENT &&
            contains(pvn3d_last_error(), "idx is NULL"),
        "idx NULL: '%s'", pvn3d_last_error());
  ok(pvn3d_gather_points_cuda(B, 0, N, M, nullptr, di.p, nullptr, nullptr, stream), "C = 0, no report");
  ok(pvn3d_gather_points_cuda(0, 4, N, M, nullptr, nullptr, nullptr, err.dev.p, stream), "B = 0");
  ok(pvn3d_gather_points_cuda(B, 4, N, 0, nullptr, nullptr, nullptr, err.dev.p, stream), "M = 0");
  err.read();
  CHECK(err.host[0] == -1 && err.host[1] == -1, "nothing reported {%lld, %lld}", (long long)err.host[0],
        (long long)err.host[1]);
}

// ---- a CPU-only library -------------------------------------------------------------------------

TEST(gather_points_cuda_entry_point_in_cpu_only_build) {
  if (pvn3d_built_with_cuda()) SKIP("library built with CUDA (the CUDA tests above cover the entry point)");
  int64_t idx[4] = {0};
  float xyz[12] = {0};
  CHECK(pvn3d_gather_points_cuda(1, 1, 4, 1, xyz, idx, xyz, nullptr, nullptr) == PVN3D_ERR_NO_CUDA, "gather");
}

int main(int argc, char** argv) { return testenv::run(argc, argv); }
