// Tests of PVN3D_ThreeInterpolate (three_interpolate/), three ways: the CPU kernel against the naive
// reference (support/reference.cpp) on random input and the Stanford bunny, bad indices and errors, the
// index check of an empty output (C == 0); the CUDA kernel equal to the CPU kernel (bit-exact; staged and
// direct kernels), its index-error report, the check-only launch of an empty output; the CUDA entry point
// of a CPU-only library.
//
//   pvn3d_test_three_interpolate [--bunny <bunny_positions.txt>]   (support/test_env.h)
#include <cmath>
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

// shift > 0: every device pointer sits `shift` elements past a 256-byte boundary (not 16-byte aligned:
// the scalar variants of the staged kernel).
void compare_interp(const std::vector<float>& f, const std::vector<int64_t>& idx, const std::vector<float>& w, int64_t B,
                    int64_t C, int64_t m, int64_t n, const char* what, size_t shift = 0) {
  std::vector<float> want(static_cast<size_t>(B * C * n));
  ok(pvn3d_three_interpolate_cpu(B, C, m, n, f.data(), idx.data(), w.data(), want.data()), "interp cpu");
  std::vector<float> fs(shift, 0.f), ws(shift, 0.f);
  std::vector<int64_t> is(shift, 0);
  fs.insert(fs.end(), f.begin(), f.end());
  ws.insert(ws.end(), w.begin(), w.end());
  is.insert(is.end(), idx.begin(), idx.end());
  Dev<float> df(fs), dw(ws), dout(want.size() + shift);
  Dev<int64_t> di(is);
  IndexError err;
  ok(pvn3d_three_interpolate_cuda(B, C, m, n, df.p + shift, di.p + shift, dw.p + shift, dout.p + shift, err.dev.p,
                                  testenv::stream()),
     what);
  err.read();
  CHECK(err.host[0] == -1, "%s: index_error %lld on good input", what, (long long)err.host[0]);
  auto got = dout.get();
  got.erase(got.begin(), got.begin() + static_cast<std::ptrdiff_t>(shift));
  close_values(what, got, want, kRel);
  same_values("interpolate bit-exact", got, want);
}

// Bad indices planted at (b, j, k) of idx: the CUDA report is the lowest flat position's, every channel
// of a bad point is 0 and every other output equals the CPU kernel's on idx without the bad entries.
struct BadIndex {
  int64_t b, j, k, value;
};
void check_bad_points(Rng& rng, int64_t B, int64_t C, int64_t m, int64_t n, const std::vector<BadIndex>& bad,
                      const char* what) {
  const auto f = testdata::random_floats(rng, B * C * m, -1, 1);
  const auto good_idx = testdata::random_indices(rng, B * n * 3, m);
  const auto w = testdata::random_weights(rng, B, n);
  auto idx = good_idx;
  int64_t want_pos = -1, want_value = -1;
  for (const BadIndex& x : bad) {
    const int64_t p = (x.b * n + x.j) * 3 + x.k;
    idx[static_cast<size_t>(p)] = x.value;
    if (want_pos < 0 || p < want_pos) {
      want_pos = p;
      want_value = x.value;
    }
  }
  std::vector<float> want(static_cast<size_t>(B * C * n));
  ok(pvn3d_three_interpolate_cpu(B, C, m, n, f.data(), good_idx.data(), w.data(), want.data()), "interp cpu");
  for (const BadIndex& x : bad)
    for (int64_t c = 0; c < C; ++c) want[static_cast<size_t>((x.b * C + c) * n + x.j)] = 0.f;
  Dev<float> df(f), dw(w), dout(want.size());
  Dev<int64_t> di(idx);
  IndexError err;
  ok(pvn3d_three_interpolate_cuda(B, C, m, n, df.p, di.p, dw.p, dout.p, err.dev.p, testenv::stream()), what);
  err.read();
  CHECK(err.position == want_pos && err.value == want_value, "%s: report {%lld, %lld}, expected {%lld, %lld}", what,
        (long long)err.position, (long long)err.value, (long long)want_pos, (long long)want_value);
  same_values(what, dout.get(), want);
}

}  // namespace

// ---- CPU kernel == reference -------------------------------------------------------------------

TEST(three_interpolate_vs_reference) {
  Rng rng(10);
  // The kernel takes 4 channels at a time up to m = 1024 and 2 above, the rest one by one: every channel
  // count below covers a whole group, a remainder, or both.
  struct Size { int64_t B, C, m, n; };
  for (const Size s : {Size{2, 7, 300, 1000}, Size{1, 4, 1024, 700}, Size{2, 6, 1025, 900}, Size{1, 3, 2048, 500},
                       Size{3, 1, 50, 64}, Size{1, 10, 17, 333},
                       Size{1, 3, 2048, 9000}}) {  // the last: few long rows, also cut along n
    const auto f = testdata::random_floats(rng, s.B * s.C * s.m, -2.f, 2.f);
    const auto idx = testdata::random_indices(rng, s.B * s.n * 3, s.m);
    const auto w = testdata::random_weights(rng, s.B, s.n);
    single_and_default_threads([&] {
      std::vector<float> out(static_cast<size_t>(s.B * s.C * s.n), -7.f);
      CHECK(pvn3d_three_interpolate_cpu(s.B, s.C, s.m, s.n, f.data(), idx.data(), w.data(), out.data()) == PVN3D_OK,
            "%s", pvn3d_last_error());
      same_values("interpolate", out, ref::three_interpolate(f, idx, w, s.B, s.C, s.m, s.n));
    });
  }
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
  // C == 0 computes nothing but still checks idx (three_interpolate_empty_output_checks_indices).
  CHECK(pvn3d_three_interpolate_cpu(B, 0, m, n, f.data(), idx.data(), w.data(), out.data()) ==
            PVN3D_ERR_INDEX_OUT_OF_RANGE &&
            contains(pvn3d_last_error(), "index 10 at flat position 74"),
        "C = 0: '%s'", pvn3d_last_error());
}

// An empty output still validates a non-empty idx (spec/ops.md: an index outside [0, m) is an error):
// with C == 0 the first bad index (lowest flat position, whichever of a point's three) is reported as
// with C > 0, m == 0 makes every index bad, and idx must be given; features, weight and out may be NULL
// (weight is not read). With idx empty too (B == 0 or n == 0) no pointer is needed.
TEST(three_interpolate_empty_output_checks_indices) {
  Rng rng(12);
  const int64_t B = 2, m = 10, n = 20;
  auto idx = testdata::random_indices(rng, B * n * 3, m);
  CHECK(pvn3d_three_interpolate_cpu(B, 0, m, n, nullptr, idx.data(), nullptr, nullptr) == PVN3D_OK, "C = 0, good: '%s'",
        pvn3d_last_error());
  idx[(1 * n + 4) * 3 + 2] = -1;
  idx[(1 * n + 4) * 3 + 1] = 10;  // the first bad one
  CHECK(pvn3d_three_interpolate_cpu(B, 0, m, n, nullptr, idx.data(), nullptr, nullptr) == PVN3D_ERR_INDEX_OUT_OF_RANGE,
        "C = 0, bad");
  CHECK(std::strcmp(pvn3d_last_error(),
                    "PVN3D_ThreeInterpolate: input idx holds index 10 at flat position 73, outside [0, 10)") == 0,
        "message '%s'", pvn3d_last_error());
  CHECK(pvn3d_three_interpolate_cpu(B, 0, 0, n, nullptr, idx.data(), nullptr, nullptr) == PVN3D_ERR_INDEX_OUT_OF_RANGE &&
            contains(pvn3d_last_error(), "at flat position 0, outside [0, 0)"),
        "C = 0, m = 0: '%s'", pvn3d_last_error());
  CHECK(pvn3d_three_interpolate_cpu(B, 0, m, n, nullptr, nullptr, nullptr, nullptr) == PVN3D_ERR_INVALID_ARGUMENT &&
            contains(pvn3d_last_error(), "idx is NULL"),
        "C = 0, idx NULL: '%s'", pvn3d_last_error());
  CHECK(pvn3d_three_interpolate_cpu(0, 4, m, n, nullptr, nullptr, nullptr, nullptr) == PVN3D_OK, "B = 0: '%s'",
        pvn3d_last_error());
  CHECK(pvn3d_three_interpolate_cpu(B, 4, m, 0, nullptr, nullptr, nullptr, nullptr) == PVN3D_OK, "n = 0: '%s'",
        pvn3d_last_error());
}

// The Stanford bunny scene (support/test_data.h): the FPS centres' features back to every point with
// PointNet++'s weights, the last stage of the PointNet++-like chain (inputs from the reference chain,
// support/reference.h).
TEST(three_interpolate_bunny) {
  std::vector<float> bunny;
  LOAD_BUNNY_OR_SKIP(bunny);
  const testdata::BunnyScene sc = testdata::bunny_scene(bunny);
  const ref::Chain ch = ref::pointnet_chain(sc.xyz, sc.features, sc.N, sc.C, sc.npoint, sc.radius, sc.S);
  const int64_t B = sc.B, C = sc.C, N = sc.N, npoint = sc.npoint;
  const std::vector<float>& centre_feats = ch.gathered;
  std::vector<float> up(static_cast<size_t>(C * N));
  CHECK(pvn3d_three_interpolate_cpu(B, C, npoint, N, centre_feats.data(), ch.nn_idx.data(), ch.weight.data(), up.data()) ==
            PVN3D_OK,
        "interpolate");
  same_values("bunny interpolate", up, ref::three_interpolate(centre_feats, ch.nn_idx, ch.weight, B, C, npoint, N));
  // The constant channel interpolates to ~1 everywhere.
  bool ones = true;
  for (int64_t j = 0; j < N; ++j) ones &= std::fabs(up[static_cast<size_t>(3 * N + j)] - 1.f) < 1e-5f;
  CHECK(ones, "constant channel not preserved");
}

// ---- CUDA kernel == CPU kernel ------------------------------------------------------------------

TEST(three_interpolate_cuda_equals_cpu) {
  REQUIRE_CUDA();
  Rng rng(125);
  {
    const int64_t B = 2, C = 37, m = 2048, n = 12288;
    compare_interp(testdata::random_floats(rng, B * C * m, -1, 1), testdata::random_indices(rng, B * n * 3, m),
                   testdata::random_weights(rng, B, n), B, C, m, n, "interpolate");
  }
  {
    const int64_t B = 2, C = 9, m = 30000, n = 3000;  // rows too long to stage: the direct kernel
    compare_interp(testdata::random_floats(rng, B * C * m, -1, 1), testdata::random_indices(rng, B * n * 3, m),
                   testdata::random_weights(rng, B, n), B, C, m, n, "interpolate direct");
  }
  {
    const int64_t B = 3, C = 40, m = 4096, n = 5000;  // staged, several chunks of 6 rows
    compare_interp(testdata::random_floats(rng, B * C * m, -1, 1), testdata::random_indices(rng, B * n * 3, m),
                   testdata::random_weights(rng, B, n), B, C, m, n, "interpolate staged m=4096");
  }
  struct Size { int64_t B, C, m, n; size_t shift; const char* what; };
  // PVN3D's largest shape with B = 8 (the benchmark's; the staged kernel over several position ranges and
  // chunks of rows); C not a multiple of the rows per chunk, m and n odd, with and without 16-byte aligned
  // pointers.
  for (const Size& z : {Size{8, 256, 4096, 16384, 0, "interpolate B=8 C=256"},
                        Size{8, 134, 998, 901, 0, "interpolate C=134, m and n odd"},
                        Size{8, 134, 998, 901, 1, "interpolate C=134, misaligned"}}) {
    if (testenv::small() && z.B * z.C * z.n > (1 << 20)) continue;
    compare_interp(testdata::random_floats(rng, z.B * z.C * z.m, -1, 1), testdata::random_indices(rng, z.B * z.n * 3, z.m),
                   testdata::random_weights(rng, z.B, z.n), z.B, z.C, z.m, z.n, z.what, z.shift);
  }
  // The staged kernel's variants: 4 points a thread (n % 4 == 0) over many chunks and position ranges
  // (PVN3D's largest shape with B = 2, C = 64); one point a thread (n odd; misaligned pointers, which
  // also take the plain-load staging); fewer units than threads (threads share a unit's rows).
  for (const Size& z : {Size{2, 64, 4096, 16384, 0, "interpolate staged, float4"},
                        Size{1, 128, 2048, 12288, 0, "interpolate staged, B=1 C=128"},
                        Size{2, 21, 1000, 1001, 0, "interpolate staged, n odd"},
                        Size{2, 19, 1024, 4096, 1, "interpolate staged, misaligned"},
                        Size{3, 50, 999, 2000, 1, "interpolate staged, m odd, misaligned"},
                        Size{2, 40, 512, 8, 0, "interpolate staged, n = 8"},
                        Size{1, 3, 64, 3, 0, "interpolate staged, n = 3"},
                        // The transposed kernel (a (b, chunk of 8 rows) for every SM, n >= 8192): a last chunk
                        // of 4 rows; rows of 7000 points (219 KB staged, one block per SM). run-native.sh also
                        // runs this binary with PVN3D_THREE_INTERPOLATE=transposed (every aligned case above
                        // through it, small batches with several position ranges a chunk) and =staged.
                        Size{17, 68, 600, 8192, 0, "interpolate transposed, C % 8 = 4"},
                        Size{8, 136, 7000, 8192, 0, "interpolate transposed, m = 7000"}}) {
    if (testenv::small() && z.B * z.C * z.n > (1 << 20)) continue;  // racecheck: the smaller shapes cover the kernel
    compare_interp(testdata::random_floats(rng, z.B * z.C * z.m, -1, 1), testdata::random_indices(rng, z.B * z.n * 3, z.m),
                   testdata::random_weights(rng, z.B, z.n), z.B, z.C, z.m, z.n, z.what, z.shift);
  }
}

TEST(three_interpolate_cuda_index_errors) {
  REQUIRE_CUDA();
  void* stream = testenv::stream();
  Rng rng(126);
  // A bad third index.
  {
    const int64_t B = 1, C = 40, m = 30, n = 500;
    const auto f = testdata::random_floats(rng, B * C * m, -1, 1);
    auto idx = testdata::random_indices(rng, B * n * 3, m);
    const auto w = testdata::random_weights(rng, B, n);
    idx[3 * 321 + 2] = 1LL << 40;
    Dev<float> df(f), dw(w), dout(static_cast<size_t>(B * C * n));
    Dev<int64_t> di(idx);
    IndexError err;
    ok(pvn3d_three_interpolate_cuda(B, C, m, n, df.p, di.p, dw.p, dout.p, err.dev.p, stream), "interp launch");
    err.read();
    CHECK(err.position == 3 * 321 + 2 && err.value == (1LL << 40), "interp report {%lld, %lld}", (long long)err.position,
          (long long)err.value);
    std::vector<float> host_out(dout.n);
    CHECK(pvn3d_three_interpolate_cpu(B, C, m, n, f.data(), idx.data(), w.data(), host_out.data()) ==
              PVN3D_ERR_INDEX_OUT_OF_RANGE,
          "cpu");
    const std::string cpu_msg = pvn3d_last_error();
    pvn3d_index_error_describe("PVN3D_ThreeInterpolate", "idx", err.position, err.value, m);
    CHECK(cpu_msg == pvn3d_last_error(), "describe '%s' vs cpu '%s'", pvn3d_last_error(), cpu_msg.c_str());
    CHECK(dout.get()[static_cast<size_t>(7 * n + 321)] == 0.f, "bad entry not zero");
  }
  // Several bad points: a bad third index and, at a lower flat position, a bad first index on the last
  // point; at B=8 C=256 (not with PVN3D_TEST_SMALL) bad points in different position ranges, at a range's
  // edges and at index values beyond 32 bits. The lowest position is reported; every other output exact.
  check_bad_points(rng, 8, 134, 998, 901, {{5, 700, 2, 998}, {3, 900, 0, -1}}, "interp several bad indices");
  if (!testenv::small())
    check_bad_points(rng, 8, 256, 4096, 16384,
                     {{2, 9000, 0, -5}, {2, 4096 + 2048 + 5, 1, 4096}, {7, 16383, 2, 1LL << 40},
                      {0, 1024 + 7, 2, 1LL << 33}},
                     "interp B=8 C=256, several bad indices");
  // The direct (unstaged) kernel reports the same way.
  {
    const int64_t B = 1, C = 4, m = 30000, n = 900;
    const auto f = testdata::random_floats(rng, B * C * m, -1, 1);
    auto idx = testdata::random_indices(rng, B * n * 3, m);
    idx[3 * 500 + 1] = m;
    idx[3 * 800] = -1;
    const auto w = testdata::random_weights(rng, B, n);
    Dev<float> df(f), dw(w), dout(static_cast<size_t>(B * C * n));
    Dev<int64_t> di(idx);
    IndexError err;
    ok(pvn3d_three_interpolate_cuda(B, C, m, n, df.p, di.p, dw.p, dout.p, err.dev.p, stream), "interp direct launch");
    err.read();
    CHECK(err.position == 3 * 500 + 1 && err.value == m, "interp direct report {%lld, %lld}", (long long)err.position,
          (long long)err.value);
  }
}

// An empty output (C == 0) with a non-empty idx: the launcher runs only the index check, on the stream,
// and it reports the lowest bad flat position as the interpolation kernels do (all 64 bits of its
// value); a good idx leaves a reset buffer alone, m == 0 makes every index bad; NULL index_error or an
// empty idx launch nothing and need no device pointers.
TEST(three_interpolate_cuda_empty_output_checks_indices) {
  REQUIRE_CUDA();
  void* stream = testenv::stream();
  Rng rng(127);
  const int64_t B = 2, m = 30, n = 900;
  const auto good = testdata::random_indices(rng, B * n * 3, m);
  auto idx = good;
  idx[3 * (n + 800)] = -1;
  idx[3 * (n + 500) + 2] = m;
  idx[3 * (n + 500) + 1] = 1LL << 40;  // the lowest bad position
  Dev<int64_t> di(idx), dg(good);
  IndexError err;
  ok(pvn3d_three_interpolate_cuda(B, 0, m, n, nullptr, di.p, nullptr, nullptr, err.dev.p, stream), "C = 0 launch");
  err.read();
  CHECK(err.position == 3 * (n + 500) + 1 && err.value == (1LL << 40), "C = 0 report {%lld, %lld}",
        (long long)err.position, (long long)err.value);
  CHECK(pvn3d_three_interpolate_cpu(B, 0, m, n, nullptr, idx.data(), nullptr, nullptr) == PVN3D_ERR_INDEX_OUT_OF_RANGE,
        "cpu");
  const std::string cpu_msg = pvn3d_last_error();
  pvn3d_index_error_describe("PVN3D_ThreeInterpolate", "idx", err.position, err.value, m);
  CHECK(cpu_msg == pvn3d_last_error(), "describe '%s' vs cpu '%s'", pvn3d_last_error(), cpu_msg.c_str());
  err.reset();
  ok(pvn3d_three_interpolate_cuda(B, 0, m, n, nullptr, dg.p, nullptr, nullptr, err.dev.p, stream), "C = 0 launch, good");
  err.read();
  CHECK(err.host[0] == -1 && err.host[1] == -1, "good idx {%lld, %lld}", (long long)err.host[0], (long long)err.host[1]);
  ok(pvn3d_three_interpolate_cuda(B, 0, 0, n, nullptr, dg.p, nullptr, nullptr, err.dev.p, stream), "C = 0, m = 0 launch");
  err.read();
  CHECK(err.position == 0 && err.value == good[0], "m = 0 report {%lld, %lld}", (long long)err.position,
        (long long)err.value);
  err.reset();
  ok(pvn3d_three_interpolate_cuda(B, 0, m, n, nullptr, di.p, nullptr, nullptr, nullptr, stream), "C = 0, no report");
  ok(pvn3d_three_interpolate_cuda(0, 4, m, n, nullptr, nullptr, nullptr, nullptr, err.dev.p, stream), "B = 0");
  ok(pvn3d_three_interpolate_cuda(B, 4, m, 0, nullptr, nullptr, nullptr, nullptr, err.dev.p, stream), "n = 0");
  err.read();
  CHECK(err.host[0] == -1 && err.host[1] == -1, "nothing reported {%lld, %lld}", (long long)err.host[0],
        (long long)err.host[1]);
}

// ---- a CPU-only library -------------------------------------------------------------------------

TEST(three_interpolate_cuda_entry_point_in_cpu_only_build) {
  if (pvn3d_built_with_cuda()) SKIP("library built with CUDA (the CUDA tests above cover the entry point)");
  int64_t idx[4] = {0};
  float xyz[12] = {0};
  CHECK(pvn3d_three_interpolate_cuda(1, 1, 3, 1, xyz, idx, xyz, xyz, nullptr, nullptr) == PVN3D_ERR_NO_CUDA, "interp");
}

int main(int argc, char** argv) { return testenv::run(argc, argv); }
