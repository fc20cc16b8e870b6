// GPU tests: every CUDA launcher on the same inputs as the CPU kernels, requiring exact index
// equality and floats within 1e-5 relative (they are expected to be bit-equal: no FMA on either
// side); the CUDA index-error report; argument errors; the device API.
//
//   pvn3d_test_cuda [--bunny <bunny_positions.txt>]
// Without CUDA compiled in, or without a usable device, prints "SKIPPED: no CUDA device ..." and
// exits 77 (ctest SKIP_RETURN_CODE): skipped, never passed.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "harness.h"
#include "pvn3d_ops.h"
#include "test_data.h"

using harness::close_values;
using harness::same_values;
using testdata::Rng;

namespace {

std::string g_bunny_path;
// PVN3D_TEST_SMALL=1 (for compute-sanitizer racecheck, which is slow on shared memory): leaves out the
// ball-query and three-NN cases above 4M point pairs. Every kernel and code path still runs.
bool g_small = false;
// PVN3D_TEST_NO_API_ERRORS=1 (for compute-sanitizer memcheck, which reports every failing CUDA API call
// as an error): leaves out the checks that make CUDA calls fail on purpose (bad device ordinal, a
// 2^62-byte cudaMalloc). The plain ctest run keeps them.
bool g_no_api_errors = false;
void* g_stream = nullptr;  // a non-blocking stream of our own: launchers must honour it
constexpr double kRel = 1e-5;

bool ok(pvn3d_status s, const char* what) {
  return CHECK(s == PVN3D_OK, "%s: %s %s", what, pvn3d_status_name(s), pvn3d_last_error());
}

// Device buffer holding a copy of a host vector (or `count` uninitialised elements).
template <class T>
struct Dev {
  T* p = nullptr;
  size_t n = 0;
  explicit Dev(size_t count) : n(count) {
    void* v = nullptr;
    ok(pvn3d_cuda_malloc(&v, std::max<size_t>(count, 1) * sizeof(T)), "cuda_malloc");
    p = static_cast<T*>(v);
  }
  explicit Dev(const std::vector<T>& h) : Dev(h.size()) {
    if (!h.empty()) ok(pvn3d_cuda_memcpy_h2d_async(p, h.data(), h.size() * sizeof(T), g_stream), "h2d");
  }
  ~Dev() { pvn3d_cuda_free(p); }
  Dev(const Dev&) = delete;
  Dev& operator=(const Dev&) = delete;
  std::vector<T> get() const {
    std::vector<T> h(n);
    if (n) ok(pvn3d_cuda_memcpy_d2h_async(h.data(), p, n * sizeof(T), g_stream), "d2h");
    ok(pvn3d_cuda_stream_synchronize(g_stream), "stream sync");
    return h;
  }
  void fill(unsigned char byte) { ok(pvn3d_cuda_memset_async(p, byte, std::max<size_t>(n, 1) * sizeof(T), g_stream), "memset"); }
};

// Pinned host mirror of an index-error buffer, read the recommended way: async copy + event.
struct IndexError {
  Dev<int64_t> dev{PVN3D_INDEX_ERROR_WORDS};
  int64_t* host = nullptr;
  void* event = nullptr;
  IndexError() {
    void* h = nullptr;
    ok(pvn3d_cuda_malloc_host(&h, PVN3D_INDEX_ERROR_BYTES, 0), "malloc_host");
    host = static_cast<int64_t*>(h);
    ok(pvn3d_cuda_event_create(&event), "event_create");
  }
  ~IndexError() {
    pvn3d_cuda_free_host(host);
    pvn3d_cuda_event_destroy(event);
  }
  // After the launch: enqueue the copy and an event, wait for the event only.
  void read() {
    host[0] = host[1] = 12345;
    ok(pvn3d_cuda_memcpy_d2h_async(host, dev.p, PVN3D_INDEX_ERROR_BYTES, g_stream), "index_error d2h");
    ok(pvn3d_cuda_event_record(event, g_stream), "event_record");
    ok(pvn3d_cuda_event_synchronize(event), "event_synchronize");
  }
};

// ---- per-op comparisons --------------------------------------------------------------------------

void compare_fps(const std::vector<float>& xyz, int64_t B, int64_t N, int64_t npoint, const char* what) {
  std::vector<int64_t> want(static_cast<size_t>(B * npoint));
  ok(pvn3d_furthest_point_sample_cpu(B, N, npoint, xyz.data(), want.data()), "fps cpu");
  Dev<float> dx(xyz);
  Dev<int64_t> di(static_cast<size_t>(B * npoint));
  const size_t ws = pvn3d_furthest_point_sample_cuda_workspace_bytes(B, N, npoint);
  Dev<unsigned char> dw(ws);
  ok(pvn3d_furthest_point_sample_cuda(B, N, npoint, dx.p, di.p, dw.p, ws, g_stream), what);
  same_values(what, di.get(), want);
}

void compare_ball(const std::vector<float>& xyz, const std::vector<float>& c, int64_t B, int64_t N, int64_t M, float r,
                  int64_t S, const char* what) {
  std::vector<int64_t> want(static_cast<size_t>(B * M * S));
  ok(pvn3d_ball_query_cpu(B, N, M, r, S, xyz.data(), c.data(), want.data()), "ball cpu");
  Dev<float> dx(xyz), dc(c);
  Dev<int64_t> di(want.size());
  di.fill(0xAB);
  ok(pvn3d_ball_query_cuda(B, N, M, r, S, dx.p, dc.p, di.p, g_stream), what);
  same_values(what, di.get(), want);
}

void compare_three_nn(const std::vector<float>& u, const std::vector<float>& k, int64_t B, int64_t n, int64_t m,
                      const char* what) {
  std::vector<float> wd(static_cast<size_t>(B * n * 3));
  std::vector<int64_t> wi(wd.size());
  ok(pvn3d_three_nn_cpu(B, n, m, u.data(), k.data(), wd.data(), wi.data()), "three_nn cpu");
  Dev<float> du(u), dk(k), dd(wd.size());
  Dev<int64_t> di(wi.size());
  ok(pvn3d_three_nn_cuda(B, n, m, du.p, dk.p, dd.p, di.p, g_stream), what);
  same_values(what, di.get(), wi);
  close_values(what, dd.get(), wd, kRel);
}

void compare_gather(const std::vector<float>& f, const std::vector<int64_t>& idx, int64_t B, int64_t C, int64_t N,
                    int64_t M, const char* what) {
  std::vector<float> want(static_cast<size_t>(B * C * M));
  ok(pvn3d_gather_points_cpu(B, C, N, M, f.data(), idx.data(), want.data()), "gather cpu");
  Dev<float> df(f), dout(want.size());
  Dev<int64_t> di(idx);
  IndexError err;
  ok(pvn3d_gather_points_cuda(B, C, N, M, df.p, di.p, dout.p, err.dev.p, g_stream), what);
  err.read();
  CHECK(err.host[0] == -1 && err.host[1] == -1, "%s: index_error {%lld, %lld} on good input", what,
        (long long)err.host[0], (long long)err.host[1]);
  close_values(what, dout.get(), want, kRel);
}

void compare_group(const std::vector<float>& f, const std::vector<int64_t>& idx, int64_t B, int64_t C, int64_t N,
                   int64_t M, int64_t S, const char* what) {
  std::vector<float> want(static_cast<size_t>(B * C * M * S));
  ok(pvn3d_group_points_cpu(B, C, N, M, S, f.data(), idx.data(), want.data()), "group cpu");
  Dev<float> df(f), dout(want.size());
  Dev<int64_t> di(idx);
  IndexError err;
  ok(pvn3d_group_points_cuda(B, C, N, M, S, df.p, di.p, dout.p, err.dev.p, g_stream), what);
  err.read();
  CHECK(err.host[0] == -1, "%s: index_error %lld on good input", what, (long long)err.host[0]);
  close_values(what, dout.get(), want, kRel);
}

void compare_interp(const std::vector<float>& f, const std::vector<int64_t>& idx, const std::vector<float>& w, int64_t B,
                    int64_t C, int64_t m, int64_t n, const char* what) {
  std::vector<float> want(static_cast<size_t>(B * C * n));
  ok(pvn3d_three_interpolate_cpu(B, C, m, n, f.data(), idx.data(), w.data(), want.data()), "interp cpu");
  Dev<float> df(f), dw(w), dout(want.size());
  Dev<int64_t> di(idx);
  IndexError err;
  ok(pvn3d_three_interpolate_cuda(B, C, m, n, df.p, di.p, dw.p, dout.p, err.dev.p, g_stream), what);
  err.read();
  CHECK(err.host[0] == -1, "%s: index_error %lld on good input", what, (long long)err.host[0]);
  const auto got = dout.get();
  close_values(what, got, want, kRel);
  same_values("interpolate bit-exact", got, want);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
TEST(device_api) {
  int count = 0;
  ok(pvn3d_cuda_device_count(&count), "device_count");
  CHECK(count >= 1, "count %d", count);
  char name[256] = {0};
  int major = 0, minor = 0, sms = 0;
  int64_t total = 0;
  ok(pvn3d_cuda_get_device_properties(0, name, sizeof name, &major, &minor, &total, &sms), "properties");
  std::printf("    device 0: %s, cc %d.%d, %lld MiB, %d SMs\n", name, major, minor, (long long)(total >> 20), sms);
  CHECK(std::strlen(name) > 0 && major >= 7 && total > 0 && sms > 0, "properties look wrong");
  ok(pvn3d_cuda_get_device_properties(0, nullptr, 0, nullptr, nullptr, nullptr, nullptr), "properties, no outputs");
  if (!g_no_api_errors) {
    CHECK(pvn3d_cuda_get_device_properties(count + 5, name, sizeof name, &major, &minor, &total, &sms) == PVN3D_ERR_CUDA &&
              std::strstr(pvn3d_last_error(), "cudaGetDeviceProperties") != nullptr,
          "bad device: '%s'", pvn3d_last_error());
    CHECK(pvn3d_cuda_set_device(count + 5) == PVN3D_ERR_CUDA, "set bad device");
  }
  ok(pvn3d_cuda_set_device(0), "set_device");
  int dev = -1;
  ok(pvn3d_cuda_get_device(&dev), "get_device");
  CHECK(dev == 0, "device %d", dev);
  size_t fr = 0, tot = 0;
  ok(pvn3d_cuda_mem_get_info(&fr, &tot), "mem_get_info");
  CHECK(fr > 0 && tot >= fr, "free %zu total %zu", fr, tot);

  // memset + h2d + d2d + d2h round trip through pinned memory, timed with events on our stream.
  const size_t n = 1 << 20;
  void *a = nullptr, *b = nullptr, *h = nullptr, *e0 = nullptr, *e1 = nullptr;
  ok(pvn3d_cuda_malloc(&a, n), "malloc a");
  ok(pvn3d_cuda_malloc(&b, n), "malloc b");
  ok(pvn3d_cuda_malloc_host(&h, n, 0), "malloc_host");
  ok(pvn3d_cuda_event_create(&e0), "event0");
  ok(pvn3d_cuda_event_create(&e1), "event1");
  auto* hb = static_cast<unsigned char*>(h);
  for (size_t i = 0; i < n; ++i) hb[i] = static_cast<unsigned char>(i * 7);
  ok(pvn3d_cuda_event_record(e0, g_stream), "record0");
  ok(pvn3d_cuda_memcpy_h2d_async(a, h, n, g_stream), "h2d");
  ok(pvn3d_cuda_memset_async(b, 0x5A, n, g_stream), "memset");
  ok(pvn3d_cuda_memcpy_d2d_async(b, a, n / 2, g_stream), "d2d");
  ok(pvn3d_cuda_memcpy_d2h_async(h, b, n, g_stream), "d2h");
  ok(pvn3d_cuda_event_record(e1, g_stream), "record1");
  ok(pvn3d_cuda_event_synchronize(e1), "event sync");
  float ms = -1.f;
  ok(pvn3d_cuda_event_elapsed_ms(&ms, e0, e1), "elapsed");
  CHECK(ms >= 0.f, "elapsed %f", ms);
  bool round_trip = true;
  for (size_t i = 0; i < n; ++i)
    round_trip &= hb[i] == (i < n / 2 ? static_cast<unsigned char>(i * 7) : 0x5A);
  CHECK(round_trip, "memset/memcpy round trip mismatch");
  // Mapped pinned memory: a device alias exists.
  void *mh = nullptr, *md = nullptr;
  ok(pvn3d_cuda_malloc_host(&mh, 64, 1), "malloc_host mapped");
  ok(pvn3d_cuda_host_device_pointer(&md, mh), "host_device_pointer");
  CHECK(md != nullptr, "no device alias");
  // A stream of our own with the legacy default semantics, then destroyed.
  void* s2 = nullptr;
  ok(pvn3d_cuda_stream_create(&s2, 0), "stream_create");
  ok(pvn3d_cuda_stream_synchronize(s2), "stream_sync");
  ok(pvn3d_cuda_stream_destroy(s2), "stream_destroy");
  ok(pvn3d_cuda_device_synchronize(), "device_synchronize");
  // Zero-size and NULL conventions.
  void* z = reinterpret_cast<void*>(1);
  ok(pvn3d_cuda_malloc(&z, 0), "malloc 0");
  CHECK(z == nullptr, "malloc 0 gives NULL");
  ok(pvn3d_cuda_free(nullptr), "free NULL");
  CHECK(pvn3d_cuda_malloc(nullptr, 8) == PVN3D_ERR_INVALID_ARGUMENT, "malloc NULL out");
  if (!g_no_api_errors) {
    CHECK(pvn3d_cuda_malloc(&z, static_cast<size_t>(1) << 62) == PVN3D_ERR_CUDA &&
              std::strstr(pvn3d_last_error(), "cudaMalloc") != nullptr,
          "huge malloc: '%s'", pvn3d_last_error());
    // A failed runtime call must not make the next launch report its error.
    Dev<float> x(std::vector<float>{1, 1, 1, 2, 2, 2});
    Dev<int64_t> i(2);
    ok(pvn3d_furthest_point_sample_cuda(1, 2, 2, x.p, i.p, nullptr, 0, g_stream), "launch after a failed cudaMalloc");
    same_values("launch after a failed cudaMalloc", i.get(), std::vector<int64_t>{0, 1});
  }
  pvn3d_cuda_free_host(mh);
  pvn3d_cuda_event_destroy(e0);
  pvn3d_cuda_event_destroy(e1);
  pvn3d_cuda_free_host(h);
  pvn3d_cuda_free(a);
  pvn3d_cuda_free(b);
}

// ---------------------------------------------------------------------------------------------
TEST(fps_cuda_equals_cpu) {
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

TEST(fps_cuda_errors) {
  Dev<float> x(static_cast<size_t>(3 * 20000));
  Dev<int64_t> i(16);
  CHECK(pvn3d_furthest_point_sample_cuda(1, 4, 5, x.p, i.p, nullptr, 0, g_stream) == PVN3D_ERR_INVALID_ARGUMENT &&
            std::strstr(pvn3d_last_error(), "npoint (5) must be <= N (4)") != nullptr,
        "npoint > N: '%s'", pvn3d_last_error());
  const size_t ws = pvn3d_furthest_point_sample_cuda_workspace_bytes(1, 20000, 10);
  CHECK(ws == 20000 * 4, "workspace bytes %zu", ws);
  CHECK(pvn3d_furthest_point_sample_cuda_workspace_bytes(1, 16384, 10) == 0, "no workspace on chip");
  CHECK(pvn3d_furthest_point_sample_cuda_workspace_bytes(3, 16385, 10) == 3 * 16385 * 4, "workspace B=3");
  CHECK(pvn3d_furthest_point_sample_cuda(1, 20000, 10, x.p, i.p, nullptr, 0, g_stream) == PVN3D_ERR_INVALID_ARGUMENT &&
            std::strstr(pvn3d_last_error(), "workspace_bytes (0)") != nullptr,
        "small workspace: '%s'", pvn3d_last_error());
  CHECK(pvn3d_furthest_point_sample_cuda(1, 20000, 10, x.p, i.p, nullptr, ws, g_stream) == PVN3D_ERR_INVALID_ARGUMENT &&
            std::strstr(pvn3d_last_error(), "workspace is NULL") != nullptr,
        "null workspace: '%s'", pvn3d_last_error());
  CHECK(pvn3d_furthest_point_sample_cuda(0, 4, 2, nullptr, nullptr, nullptr, 0, g_stream) == PVN3D_OK, "B = 0");
}

TEST(ball_query_cuda_equals_cpu) {
  Rng rng(103);
  struct Case { int64_t B, N, M; float r; int64_t S; };
  for (const Case& c : {Case{1, 12288, 2048, 0.0175f, 16}, Case{1, 12288, 2048, 0.025f, 32}, Case{2, 5000, 1001, 0.05f, 32},
                        Case{3, 777, 13, 0.2f, 16}, Case{1, 3000, 100, 10.f, 64}, Case{1, 4097, 33, 1e-4f, 4},
                        Case{2, 1, 5, 0.1f, 3}, Case{1, 2049, 64, 0.08f, 1}, Case{1, 6000, 40, 0.3f, 100}}) {
    if (g_small && c.B * c.N * c.M > 4000000) continue;
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
  ok(pvn3d_ball_query_cuda(1, 0, 1, 0.5f, 4, nullptr, c.p, i.p, g_stream), "ball N = 0");
  same_values("ball N = 0", i.get(), std::vector<int64_t>(4, 0));
  CHECK(pvn3d_ball_query_cuda(1, 1, 1, 0.f, 4, c.p, c.p, i.p, g_stream) == PVN3D_ERR_INVALID_ARGUMENT, "radius 0");
}

TEST(three_nn_cuda_equals_cpu) {
  Rng rng(104);
  struct Case { int64_t B, n, m; };
  for (const Case& c : {Case{1, 12288, 2048}, Case{2, 5000, 3}, Case{3, 1000, 4097}, Case{1, 33, 9000}, Case{2, 100, 7}}) {
    if (g_small && c.B * c.n * c.m > 4000000) continue;
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
  Dev<float> p(9);
  Dev<int64_t> i(3);
  CHECK(pvn3d_three_nn_cuda(1, 1, 2, p.p, p.p, p.p, i.p, g_stream) == PVN3D_ERR_INVALID_ARGUMENT, "m < 3");
}

TEST(gather_group_interpolate_cuda_equal_cpu) {
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
  {
    const int64_t B = 2, C = 3, N = 20000, M = 50, S = 8;
    compare_group(testdata::random_floats(rng, B * C * N, -1, 1), testdata::random_indices(rng, B * M * S, N), B, C, N, M,
                  S, "group direct");
  }
  {
    const int64_t B = 2, C = 99, N = 2048, M = 1024, S = 32;
    compare_group(testdata::random_floats(rng, B * C * N, -1, 1), testdata::random_indices(rng, B * M * S, N), B, C, N, M,
                  S, "group");
  }
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
}

TEST(cuda_index_errors) {
  Rng rng(106);
  // GatherPoints: two bad indices; the report names the lower position, as the CPU does.
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
    ok(pvn3d_gather_points_cuda(B, C, N, M, df.p, di.p, dout.p, err.dev.p, g_stream), "gather launch");
    err.read();
    CHECK(err.host[0] == 612 && err.host[1] == N + 5, "gather report {%lld, %lld}", (long long)err.host[0],
          (long long)err.host[1]);
    CHECK(pvn3d_index_error_describe("PVN3D_GatherPoints", "idx", err.host[0], err.host[1], N) == PVN3D_ERR_INDEX_OUT_OF_RANGE &&
              cpu_msg == pvn3d_last_error(),
          "describe '%s' vs cpu '%s'", pvn3d_last_error(), cpu_msg.c_str());
    const auto out = dout.get();
    // Bad positions give 0 (batch 1, m = 277 for position 777; batch 1, m = 112 for 612).
    CHECK(out[static_cast<size_t>((1 * C + 0) * M + 277)] == 0.f && out[static_cast<size_t>((1 * C + 5) * M + 112)] == 0.f,
          "bad entries not zero");
    // The same buffer is reset by the next launch: a good launch reads {-1, -1}.
    auto good = idx;
    good[777] = 0;
    good[612] = 1;
    Dev<int64_t> dg(good);
    ok(pvn3d_gather_points_cuda(B, C, N, M, df.p, dg.p, dout.p, err.dev.p, g_stream), "gather launch 2");
    err.read();
    CHECK(err.host[0] == -1 && err.host[1] == -1, "reset {%lld, %lld}", (long long)err.host[0], (long long)err.host[1]);
  }
  // GroupPoints through MAPPED pinned memory (no copy): read after the stream sync.
  {
    const int64_t B = 2, C = 3, N = 100, M = 40, S = 16;
    const auto f = testdata::random_floats(rng, B * C * N, -1, 1);
    auto idx = testdata::random_indices(rng, B * M * S, N);
    idx[1000] = 100;
    idx[1001] = -1;
    void *h = nullptr, *d = nullptr;
    ok(pvn3d_cuda_malloc_host(&h, PVN3D_INDEX_ERROR_BYTES, 1), "mapped");
    ok(pvn3d_cuda_host_device_pointer(&d, h), "alias");
    Dev<float> df(f), dout(static_cast<size_t>(B * C * M * S));
    Dev<int64_t> di(idx);
    ok(pvn3d_group_points_cuda(B, C, N, M, S, df.p, di.p, dout.p, static_cast<int64_t*>(d), g_stream), "group launch");
    ok(pvn3d_cuda_stream_synchronize(g_stream), "sync");
    const auto* rep = static_cast<const int64_t*>(h);
    CHECK(rep[0] == 1000 && rep[1] == 100, "group report {%lld, %lld}", (long long)rep[0], (long long)rep[1]);
    std::vector<float> host_out(dout.n);
    CHECK(pvn3d_group_points_cpu(B, C, N, M, S, f.data(), idx.data(), host_out.data()) == PVN3D_ERR_INDEX_OUT_OF_RANGE, "cpu");
    const std::string cpu_msg = pvn3d_last_error();
    pvn3d_index_error_describe("PVN3D_GroupPoints", "idx", rep[0], rep[1], N);
    CHECK(cpu_msg == pvn3d_last_error(), "describe '%s' vs cpu '%s'", pvn3d_last_error(), cpu_msg.c_str());
    pvn3d_cuda_free_host(h);
  }
  // ThreeInterpolate: a bad third index.
  {
    const int64_t B = 1, C = 40, m = 30, n = 500;
    const auto f = testdata::random_floats(rng, B * C * m, -1, 1);
    auto idx = testdata::random_indices(rng, B * n * 3, m);
    const auto w = testdata::random_weights(rng, B, n);
    idx[3 * 321 + 2] = 1LL << 40;
    Dev<float> df(f), dw(w), dout(static_cast<size_t>(B * C * n));
    Dev<int64_t> di(idx);
    IndexError err;
    ok(pvn3d_three_interpolate_cuda(B, C, m, n, df.p, di.p, dw.p, dout.p, err.dev.p, g_stream), "interp launch");
    err.read();
    CHECK(err.host[0] == 3 * 321 + 2 && err.host[1] == (1LL << 40), "interp report {%lld, %lld}", (long long)err.host[0],
          (long long)err.host[1]);
    std::vector<float> host_out(dout.n);
    CHECK(pvn3d_three_interpolate_cpu(B, C, m, n, f.data(), idx.data(), w.data(), host_out.data()) ==
              PVN3D_ERR_INDEX_OUT_OF_RANGE,
          "cpu");
    const std::string cpu_msg = pvn3d_last_error();
    pvn3d_index_error_describe("PVN3D_ThreeInterpolate", "idx", err.host[0], err.host[1], m);
    CHECK(cpu_msg == pvn3d_last_error(), "describe '%s' vs cpu '%s'", pvn3d_last_error(), cpu_msg.c_str());
    CHECK(dout.get()[static_cast<size_t>(7 * n + 321)] == 0.f, "bad entry not zero");
  }
  // The direct (unstaged) kernels report the same way.
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
    ok(pvn3d_three_interpolate_cuda(B, C, m, n, df.p, di.p, dw.p, dout.p, err.dev.p, g_stream), "interp direct launch");
    err.read();
    CHECK(err.host[0] == 3 * 500 + 1 && err.host[1] == m, "interp direct report {%lld, %lld}", (long long)err.host[0],
          (long long)err.host[1]);
    std::vector<int64_t> gidx = testdata::random_indices(rng, 2 * 600, m);
    gidx[600 + 17] = m + 1;
    Dev<float> gf(testdata::random_floats(rng, 2 * 3 * m, -1, 1)), gout(static_cast<size_t>(2 * 3 * 600));
    Dev<int64_t> gi(gidx);
    ok(pvn3d_gather_points_cuda(2, 3, m, 600, gf.p, gi.p, gout.p, err.dev.p, g_stream), "gather direct launch");
    err.read();
    CHECK(err.host[0] == 617 && err.host[1] == m + 1, "gather direct report {%lld, %lld}", (long long)err.host[0],
          (long long)err.host[1]);
  }
  // NULL index_error: no report, still no out-of-bounds read (memcheck watches this), zeros.
  {
    std::vector<int64_t> idx = {0, 1, -100000000, 3};
    Dev<float> df(std::vector<float>{1, 2, 3, 4}), dout(4);
    Dev<int64_t> di(idx);
    ok(pvn3d_gather_points_cuda(1, 1, 4, 4, df.p, di.p, dout.p, nullptr, g_stream), "gather unchecked");
    same_values("unchecked gather", dout.get(), std::vector<float>{1, 2, 0, 4});
  }
}

TEST(bunny_cuda_equals_cpu) {
  std::vector<float> bunny;
  std::string why;
  if (!testdata::load_bunny(g_bunny_path, &bunny, &why)) {
    if (testdata::bunny_required()) {
      CHECK(false, "PVN3D_REQUIRE_BUNNY=1 but the bunny is missing: %s", why.c_str());
      return;
    }
    SKIP("bunny data missing: " + why);
  }
  const int64_t N = static_cast<int64_t>(bunny.size() / 3);
  compare_fps(bunny, 1, N, 512, "bunny fps");
  std::vector<int64_t> pick(512);
  ok(pvn3d_furthest_point_sample_cpu(1, N, 512, bunny.data(), pick.data()), "bunny fps cpu");
  std::vector<float> centres;
  for (int64_t i : pick) centres.insert(centres.end(), bunny.begin() + 3 * i, bunny.begin() + 3 * i + 3);
  compare_ball(bunny, centres, 1, N, 512, 0.02f, 16, "bunny ball");
  compare_three_nn(bunny, centres, 1, N, 512, "bunny three_nn");
}

int main(int argc, char** argv) {
  g_bunny_path = testdata::bunny_path(argc, argv);
  const char* small = std::getenv("PVN3D_TEST_SMALL");
  g_small = small != nullptr && std::strcmp(small, "1") == 0;
  const char* no_api = std::getenv("PVN3D_TEST_NO_API_ERRORS");
  g_no_api_errors = no_api != nullptr && std::strcmp(no_api, "1") == 0;
  if (!pvn3d_built_with_cuda()) {
    std::printf("SKIPPED: no CUDA device (libpvn3d_ops was built without CUDA)\n");
    return 77;
  }
  int count = 0;
  const pvn3d_status s = pvn3d_cuda_device_count(&count);
  if (s != PVN3D_OK || count == 0) {
    std::printf("SKIPPED: no CUDA device (%s)\n", s != PVN3D_OK ? pvn3d_last_error() : "cudaGetDeviceCount returned 0");
    return 77;
  }
  if (pvn3d_cuda_stream_create(&g_stream, 1) != PVN3D_OK) {
    std::printf("cannot create a stream: %s\n", pvn3d_last_error());
    return 1;
  }
  std::printf("pvn3d_test_cuda: libpvn3d_ops %s, %d CUDA device(s), bunny '%s'%s\n", pvn3d_version(), count,
              g_bunny_path.c_str(), g_small ? ", PVN3D_TEST_SMALL=1" : "");
  if (g_no_api_errors) std::printf("PVN3D_TEST_NO_API_ERRORS=1: deliberate CUDA API failures left out\n");
  const int rc = harness::run_all();
  pvn3d_cuda_stream_destroy(g_stream);
  return rc;
}
