// CUDA kernel timings at the sizes of perf-targets.md: CUDA events around each launch, median over
// many launches after warm-up, on a stream of our own; beside it ("held") the same with the stream held
// busy while the call is queued, which leaves the kernel's GPU time without the host's launch in it
// (time_it). GatherPoints also runs a one-block-a-row reference kernel at every size and fails the
// bench where ours is slower. Random clouds in a 0.5 m cube and PVN3D-like
// vote scenes (the same input factories as the tests, support/test_data.h). Not a test: prints a table,
// exit 0 unless something failed (77 without a CUDA device).
//
//   pvn3d_bench_cuda [--quick] [--only OP] the PointNet++ operators (--only ThreeInterpolate: that one alone)
//   pvn3d_bench_cuda --pose [file]      the pose operators instead: the fused pose solve and the mean
//                                       shift at PVN3D's sizes (median of 50 after 5 warm-ups), first the
//                                       two sizes of perf-targets.md (9 x 6443 and 9 x 3000 votes,
//                                       PVN3D-like scenes, center_filter 1) with MET/MISS, each line with
//                                       the mean-shift iterations per keypoint and the kernel's barrier
//                                       count (its debug record), and the CPU kernel's answer compared;
//                                       also written to `file`. Exit 1 if CUDA and CPU disagree.
//   pvn3d_bench_cuda --cpu [--threads n] [--quick]
//                                       the CPU kernel of FurthestPointSample instead (no CUDA device
//                                       needed): wall clock per call at the sizes above and B = 2, 4,
//                                       median of 5 calls after one warm-up (--quick: of 3), on n
//                                       threads (pvn3d_set_num_threads; default: the library's default,
//                                       OMP_NUM_THREADS or all cores)
//   pvn3d_bench_cuda --host [file]      the host side of each launcher instead: wall-clock microseconds of
//                                       one call (what a custom node's compute upcall spends inside
//                                       libpvn3d_ops) at the full-size PVN3D's batch-1 shapes, with and
//                                       without the index report (a mapped pinned flag, as the Java
//                                       kernels pass it, reset by the caller), beside a bare cudaMemsetAsync
//                                       and cudaEventRecord; then some of them again as inside a model's run
//                                       (after 32 other kernels' launches, after a 64 MB host walk, both);
//                                       also written to `file`
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "harness.h"
#include "pvn3d_ops.h"
#include "test_data.h"
#include "vote_aggregate_debug.h"

#ifdef PVN3D_BENCH_TIMING_KERNELS
// tests/bench_timing_kernels.cu
extern "C" int pvn3d_bench_hold_stream(void* stream, double microseconds);
extern "C" int pvn3d_bench_gather_rows_reference(int64_t B, int64_t C, int64_t N, int64_t M, const float* features,
                                                 const int* idx, float* out, void* stream);
#endif

using harness::max_diff;
using testdata::make_vote_case;
using testdata::Rng;
using testdata::VoteCase;

namespace {

void* g_stream = nullptr;
int g_iters = 100;
const char* g_only = nullptr;  // --only OPERATOR: that operator's kernels alone

bool wanted(const char* op) { return g_only == nullptr || std::strcmp(g_only, op) == 0; }
bool g_failed = false;

bool ok(pvn3d_status s, const char* what) {
  if (s != PVN3D_OK) {
    std::printf("ERROR %s: %s %s\n", what, pvn3d_status_name(s), pvn3d_last_error());
    g_failed = true;
  }
  return s == PVN3D_OK;
}

template <class T>
T* upload(const std::vector<T>& h) {
  void* p = nullptr;
  ok(pvn3d_cuda_malloc(&p, std::max<size_t>(h.size(), 1) * sizeof(T)), "malloc");
  if (!h.empty()) ok(pvn3d_cuda_memcpy_h2d_async(p, h.data(), h.size() * sizeof(T), g_stream), "h2d");
  return static_cast<T*>(p);
}

template <class T>
T* alloc(size_t n) {
  void* p = nullptr;
  ok(pvn3d_cuda_malloc(&p, std::max<size_t>(n, 1) * sizeof(T)), "malloc");
  return static_cast<T*>(p);
}

// One launch's milliseconds, three ways:
//  - median: events around each launch, the stream idle before it (perf-targets.md's method): includes
//    the 2.5-4 us (H200) between the start event and the kernel that the host spends launching it;
//  - held: the same, with the stream held busy for kHoldUs before the start event (bench_timing_kernels.cu),
//    so that the events and the launch are queued before the GPU reaches them: the kernel's GPU time;
//  - batch-mean: a back-to-back batch's mean (includes the gaps between kernels).
// Prints one line; returns the per-call median and minimum and the held median (held = median in a build
// without the timing kernels).
constexpr double kHoldUs = 100;  // far above a launcher's host time (a few us)

struct Timing {
  double median = 0, min = 0, held = 0;
};

Timing time_it(const char* name, double target_ms, double bytes, const std::function<pvn3d_status()>& launch,
               int iters) {
  void *e0, *e1;
  pvn3d_cuda_event_create(&e0);
  pvn3d_cuda_event_create(&e1);
  for (int i = 0; i < 3; ++i) ok(launch(), name);
  ok(pvn3d_cuda_stream_synchronize(g_stream), "sync");
  auto per_call = [&](bool hold, double* min) {
    (void)hold;  // without the timing kernels (a CPU-only build) nothing holds the stream
    std::vector<float> t;
    for (int i = 0; i < iters; ++i) {
#ifdef PVN3D_BENCH_TIMING_KERNELS
      if (hold && pvn3d_bench_hold_stream(g_stream, kHoldUs) != 0) {
        ok(PVN3D_ERR_CUDA, "hold_stream");
        return 0.0;  // g_failed is set
      }
#endif
      pvn3d_cuda_event_record(e0, g_stream);
      ok(launch(), name);
      pvn3d_cuda_event_record(e1, g_stream);
      pvn3d_cuda_event_synchronize(e1);
      float ms = 0;
      pvn3d_cuda_event_elapsed_ms(&ms, e0, e1);
      t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    if (min != nullptr) *min = t.front();
    return static_cast<double>(t[t.size() / 2]);
  };
  Timing r;
  r.median = per_call(false, &r.min);
#ifdef PVN3D_BENCH_TIMING_KERNELS
  r.held = per_call(true, nullptr);
#else
  r.held = r.median;
#endif
  pvn3d_cuda_event_record(e0, g_stream);
  for (int i = 0; i < iters; ++i) ok(launch(), name);
  pvn3d_cuda_event_record(e1, g_stream);
  pvn3d_cuda_event_synchronize(e1);
  float total = 0;
  pvn3d_cuda_event_elapsed_ms(&total, e0, e1);
  char bw[32] = "";
  if (bytes > 0) std::snprintf(bw, sizeof bw, "%7.2f TB/s", bytes / (r.median * 1e-3) / 1e12);
  char tail[48];
  std::snprintf(tail, sizeof tail, "  held %9.4f", r.held);
  if (target_ms > 0)
    std::printf("%-66s median %9.4f ms  min %9.4f  batch-mean %9.4f  target %7.3f  %-4s %s%s\n", name, r.median, r.min,
                total / iters, target_ms, r.median <= target_ms ? "MET" : "MISS", bw, tail);
  else
    std::printf("%-66s median %9.4f ms  min %9.4f  batch-mean %9.4f  target       -  -    %s%s\n", name, r.median, r.min,
                total / iters, bw, tail);
  std::fflush(stdout);
  pvn3d_cuda_event_destroy(e0);
  pvn3d_cuda_event_destroy(e1);
  return r;
}

// The launcher's own choice, then (PVN3D_FPS_CLUSTER) the single-block kernel and a 4-block cluster, for
// comparison in the same process. Each choice's picks are checked against the launcher's default.
void bench_fps(int64_t B, int64_t N, int64_t np, double target) {
  Rng rng(1);
  float* x = upload(testdata::random_cloud(rng, B, N, 0.f, 0.5f));
  int64_t* i = alloc<int64_t>(static_cast<size_t>(B * np));
  const size_t ws = pvn3d_furthest_point_sample_cuda_workspace_bytes(B, N, np);
  void* w = alloc<unsigned char>(ws);
  std::vector<int64_t> first(static_cast<size_t>(B * np)), again(first.size());
  for (const char* mode : {static_cast<const char*>(nullptr), "0", "4"}) {
    if (mode) setenv("PVN3D_FPS_CLUSTER", mode, 1);
    else unsetenv("PVN3D_FPS_CLUSTER");
    char name[96];
    std::snprintf(name, sizeof name, "FurthestPointSample B=%lld N=%lld -> %lld%s", (long long)B, (long long)N, (long long)np,
                  !mode ? "" : mode[0] == '0' ? " (single block)" : " (cluster of <= 4)");
    time_it(name, mode ? 0 : target, 0, [&] { return pvn3d_furthest_point_sample_cuda(B, N, np, x, i, w, ws, g_stream); },
            std::max(5, g_iters / 5));
    ok(pvn3d_cuda_memcpy_d2h_async((mode ? again : first).data(), i, first.size() * sizeof(int64_t), g_stream), "d2h");
    ok(pvn3d_cuda_stream_synchronize(g_stream), "sync");
    if (mode && again != first) {
      std::printf("ERROR %s: picks differ from the default kernel's\n", name);
      g_failed = true;
    }
  }
  unsetenv("PVN3D_FPS_CLUSTER");
  pvn3d_cuda_free(x);
  pvn3d_cuda_free(i);
  pvn3d_cuda_free(w);
}

void bench_ball(int64_t B, int64_t N, int64_t M, int64_t S, float r, double target) {
  Rng rng(2);
  const auto cloud = testdata::random_cloud(rng, B, N, 0.f, 0.5f);
  float* x = upload(cloud);
  float* c = upload(testdata::centres_from(rng, cloud, B, N, M, 0.f));
  int64_t* i = alloc<int64_t>(static_cast<size_t>(B * M * S));
  char name[96];
  std::snprintf(name, sizeof name, "BallQuery B=%lld N=%lld M=%lld S=%lld r=%g", (long long)B, (long long)N, (long long)M,
                (long long)S, r);
  time_it(name, target, 0, [&] { return pvn3d_ball_query_cuda(B, N, M, r, S, x, c, i, g_stream); }, g_iters);
  pvn3d_cuda_free(x);
  pvn3d_cuda_free(c);
  pvn3d_cuda_free(i);
}

void bench_group(int64_t B, int64_t C, int64_t N, int64_t M, int64_t S, double target) {
  Rng rng(3);
  float* f = upload(testdata::random_floats(rng, B * C * N, -1, 1));
  int64_t* idx = upload(testdata::random_indices(rng, B * M * S, N));
  float* o = alloc<float>(static_cast<size_t>(B * C * M * S));
  int64_t* err = alloc<int64_t>(2);
  const double bytes = double(B * C * M * S) * 4 + double(B * M * S) * 8 + double(B * C * N) * 4;
  char name[96];
  std::snprintf(name, sizeof name, "GroupPoints B=%lld C=%lld N=%lld M=%lld S=%lld", (long long)B, (long long)C,
                (long long)N, (long long)M, (long long)S);
  time_it(name, target, bytes, [&] { return pvn3d_group_points_cuda(B, C, N, M, S, f, idx, o, err, g_stream); }, g_iters);
  std::string n2 = std::string(name) + " (no index report)";
  time_it(n2.c_str(), target, bytes, [&] { return pvn3d_group_points_cuda(B, C, N, M, S, f, idx, o, nullptr, g_stream); },
          g_iters);
  pvn3d_cuda_free(f);
  pvn3d_cuda_free(idx);
  pvn3d_cuda_free(o);
  pvn3d_cuda_free(err);
}

// Ours beside the one-block-per-row reference (the original pointnet2 kernel's launch shape, 32-bit
// indices: bench_timing_kernels.cu), both ways of timing; the outputs must be equal, and a size where ours
// is slower than the reference by the held (GPU) time is reported as SLOWER and fails the bench.
void bench_gather(int64_t B, int64_t C, int64_t N, int64_t M, double target) {
  Rng rng(4);
  float* f = upload(testdata::random_floats(rng, B * C * N, -1, 1));
  const std::vector<int64_t> picks = testdata::random_indices(rng, B * M, N);
  int64_t* idx = upload(picks);
  float* o = alloc<float>(static_cast<size_t>(B * C * M));
  int64_t* err = alloc<int64_t>(2);
  const double bytes = double(B * C * M) * 4 * 2 + double(B * M) * 8;
  char name[96];
  std::snprintf(name, sizeof name, "GatherPoints B=%lld C=%lld N=%lld M=%lld", (long long)B, (long long)C, (long long)N,
                (long long)M);
  const Timing ours =
      time_it(name, target, bytes, [&] { return pvn3d_gather_points_cuda(B, C, N, M, f, idx, o, err, g_stream); }, g_iters);
  std::string n2 = std::string(name) + " (no index report)";
  time_it(n2.c_str(), target, bytes, [&] { return pvn3d_gather_points_cuda(B, C, N, M, f, idx, o, nullptr, g_stream); },
          g_iters);
#ifdef PVN3D_BENCH_TIMING_KERNELS
  std::vector<int> picks32(picks.begin(), picks.end());
  int* idx32 = upload(picks32);
  float* ro = alloc<float>(static_cast<size_t>(B * C * M));
  std::string n3 = std::string(name) + " (one block a row, reference)";
  const Timing ref = time_it(n3.c_str(), 0, double(B * C * M) * 4 * 2 + double(B * M) * 4, [&] {
    return pvn3d_bench_gather_rows_reference(B, C, N, M, f, idx32, ro, g_stream) == 0 ? PVN3D_OK : PVN3D_ERR_CUDA;
  }, g_iters);
  std::vector<float> a(static_cast<size_t>(B * C * M)), r(a.size());
  ok(pvn3d_cuda_memcpy_d2h_async(a.data(), o, a.size() * sizeof(float), g_stream), "d2h");
  ok(pvn3d_cuda_memcpy_d2h_async(r.data(), ro, r.size() * sizeof(float), g_stream), "d2h");
  ok(pvn3d_cuda_stream_synchronize(g_stream), "sync");
  const bool same = std::memcmp(a.data(), r.data(), a.size() * sizeof(float)) == 0;
  const bool slower = ours.held > ref.held;
  std::printf("%-66s ours/reference  per call %5.2f  held %5.2f  outputs %s  %s\n", name, ours.median / ref.median,
              ours.held / ref.held, same ? "equal" : "DIFFER", slower ? "SLOWER" : "not slower");
  if (!same || slower) g_failed = true;
  pvn3d_cuda_free(idx32);
  pvn3d_cuda_free(ro);
#else
  (void)ours;
#endif
  pvn3d_cuda_free(f);
  pvn3d_cuda_free(idx);
  pvn3d_cuda_free(o);
  pvn3d_cuda_free(err);
}

void bench_three_nn(int64_t B, int64_t n, int64_t m, double target) {
  Rng rng(5);
  float* u = upload(testdata::random_cloud(rng, B, n, 0.f, 0.5f));
  float* k = upload(testdata::random_cloud(rng, B, m, 0.f, 0.5f));
  float* d = alloc<float>(static_cast<size_t>(B * n * 3));
  int64_t* i = alloc<int64_t>(static_cast<size_t>(B * n * 3));
  char name[96];
  std::snprintf(name, sizeof name, "ThreeNN B=%lld n=%lld m=%lld", (long long)B, (long long)n, (long long)m);
  time_it(name, target, 0, [&] { return pvn3d_three_nn_cuda(B, n, m, u, k, d, i, g_stream); }, g_iters);
  pvn3d_cuda_free(u);
  pvn3d_cuda_free(k);
  pvn3d_cuda_free(d);
  pvn3d_cuda_free(i);
}

void bench_interp(int64_t B, int64_t C, int64_t m, int64_t n, double target) {
  Rng rng(6);
  float* f = upload(testdata::random_floats(rng, B * C * m, -1, 1));
  int64_t* idx = upload(testdata::random_indices(rng, B * n * 3, m));
  float* w = upload(testdata::random_weights(rng, B, n));
  float* o = alloc<float>(static_cast<size_t>(B * C * n));
  int64_t* err = alloc<int64_t>(2);
  const double bytes = double(B * C * n) * 4 + double(B * C * m) * 4 + double(B * n * 3) * 12;
  char name[96];
  std::snprintf(name, sizeof name, "ThreeInterpolate B=%lld C=%lld m=%lld n=%lld", (long long)B, (long long)C,
                (long long)m, (long long)n);
  time_it(name, target, bytes, [&] { return pvn3d_three_interpolate_cuda(B, C, m, n, f, idx, w, o, err, g_stream); },
          g_iters);
  std::string n2 = std::string(name) + " (no index report)";
  time_it(n2.c_str(), target, bytes,
          [&] { return pvn3d_three_interpolate_cuda(B, C, m, n, f, idx, w, o, nullptr, g_stream); }, g_iters);
  pvn3d_cuda_free(f);
  pvn3d_cuda_free(idx);
  pvn3d_cuda_free(w);
  pvn3d_cuda_free(o);
  pvn3d_cuda_free(err);
}

// ---- pose operators ----------------------------------------------------------------------------

#define CK(expr)                                                                                   \
  do {                                                                                             \
    const int st_ = (expr);                                                                        \
    if (st_ != PVN3D_OK) {                                                                         \
      std::printf("FATAL: %s -> %s: %s\n", #expr, pvn3d_status_name(st_), pvn3d_last_error());    \
      std::exit(2);                                                                                \
    }                                                                                              \
  } while (0)

struct Dev {
  void* p = nullptr;
  size_t bytes = 0;
  explicit Dev(size_t n) : bytes(n) { CK(pvn3d_cuda_malloc(&p, n)); }
  template <class T>
  Dev(const std::vector<T>& v) : Dev(v.size() * sizeof(T)) {
    CK(pvn3d_cuda_memcpy_h2d_async(p, v.data(), bytes, g_stream));
  }
  ~Dev() { pvn3d_cuda_free(p); }
  template <class T>
  T* as() const { return static_cast<T*>(p); }
  template <class T>
  std::vector<T> get() const {
    std::vector<T> v(bytes / sizeof(T));
    CK(pvn3d_cuda_memcpy_d2h_async(v.data(), p, bytes, g_stream));
    CK(pvn3d_cuda_stream_synchronize(g_stream));
    return v;
  }
  Dev(const Dev&) = delete;
  Dev& operator=(const Dev&) = delete;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <class F>
double time_ms(F&& f, int warm = 5, int reps = 50) {
  void *e0, *e1;
  CK(pvn3d_cuda_event_create(&e0));
  CK(pvn3d_cuda_event_create(&e1));
  for (int i = 0; i < warm; ++i) f();
  std::vector<double> v;
  for (int i = 0; i < reps; ++i) {
    CK(pvn3d_cuda_event_record(e0, g_stream));
    f();
    CK(pvn3d_cuda_event_record(e1, g_stream));
    CK(pvn3d_cuda_event_synchronize(e1));
    float ms;
    CK(pvn3d_cuda_event_elapsed_ms(&ms, e0, e1));
    v.push_back(ms);
  }
  pvn3d_cuda_event_destroy(e0);
  pvn3d_cuda_event_destroy(e1);
  return median(v);
}

// The debug record of the CUDA VoteAggregate / PoseSolve at the start of the workspace
// (vote_aggregate_debug.h): barriers, tile votes, blocks, tail iterations, iterations per task.
std::vector<int> debug_record(const Dev& ws, int64_t BK) {
  std::vector<int> d(pvn3d::vote::kDebugHeader + BK);
  CK(pvn3d_cuda_memcpy_d2h_async(d.data(), ws.p, d.size() * sizeof(int), g_stream));
  CK(pvn3d_cuda_stream_synchronize(g_stream));
  return d;
}

std::string iterations_text(const std::vector<int>& d, int64_t B, int64_t K) {
  std::string s;
  char buf[64];
  for (int64_t b = 0; b < B; ++b) {
    s += b == 0 ? "[" : " [";
    for (int64_t k = 0; k < K; ++k) {
      std::snprintf(buf, sizeof buf, "%s%d", k ? " " : "", d[pvn3d::vote::kDebugHeader + b * K + k]);
      s += buf;
    }
    s += "]";
  }
  return s;
}

int bench_pose(const char* out_path) {
  std::string out;
  char line[768];
  auto emit = [&](const char* s) {
    std::printf("%s\n", s);
    std::fflush(stdout);
    out += s;
    out += "\n";
  };
  emit("# pose operators, CUDA events, median of 50 after 5 warm-ups; bandwidth 0.08, max_iter 300");
  emit("# its: mean-shift iterations per keypoint (the centre last); barriers: grid-wide barriers of the kernel;");
  emit("# tail: iterations run inside single blocks after the grid-wide steps (vote_aggregate_debug.h)");
  // The two target sizes first (perf-targets.md): one frame of the full-size PVN3D model (6443 masked
  // points) and 3000 votes, PVN3D-like scenes: votes within ~1 cm of the keypoints, 30% outliers.
  struct S { const char* name; int64_t B, K, N; double sigma, outl, maskr; double target_ms; int cf_lo; };
  const S ss[] = {{"TARGET pvn3d-like frame, 9 x 6443 votes", 1, 9, 6443, 0.01, 0.3, 1.0, 1.5, 1},
                  {"TARGET pvn3d-like, 9 x 3000 votes", 1, 9, 3000, 0.01, 0.3, 1.0, 0.6, 1},
                  {"pvn3d-like, 12288 points, ~6443 masked", 1, 9, 12288, 0.01, 0.3, 6443.0 / 12288.0, 0, 1},
                  {"pvn3d-like, B=4", 4, 9, 3000, 0.01, 0.3, 1.0, 0, 0},
                  {"clean (sigma 2mm, no outliers)", 1, 9, 3000, 0.002, 0.0, 1.0, 0, 0},
                  {"hard (sigma 3cm, 60% outliers)", 1, 9, 3000, 0.03, 0.6, 1.0, 0, 0},
                  {"pvn3d-like, N=12000", 1, 9, 12000, 0.01, 0.3, 1.0, 0, 1}};
  for (const S& s : ss) {
    VoteCase c = make_vote_case(77, s.B, s.K, s.N, s.sigma, s.outl, s.maskr);
    Dev votes(c.votes), mask(c.mask), model(c.model), kps(s.B * s.K * 12), inl(s.B * 8), R(s.B * 36), t(s.B * 12);
    const size_t wsb = pvn3d_pose_solve_cuda_workspace_bytes(s.B, s.K, s.N);
    Dev ws(wsb);
    for (int cf = 1; cf >= s.cf_lo; --cf) {
      const double va = time_ms([&] {
        CK(pvn3d_vote_aggregate_cuda(votes.as<float>(), mask.p, 0, s.B, s.K, s.N, 0.08f, 300, cf, kps.as<float>(),
                                     inl.as<int64_t>(), ws.p, wsb, g_stream));
      });
      const double ps = time_ms([&] {
        CK(pvn3d_pose_solve_cuda(votes.as<float>(), mask.p, 0, s.B, s.K, s.N, model.as<float>(), 0, s.K, 0.08f, 300, cf,
                                 R.as<float>(), t.as<float>(), kps.as<float>(), inl.as<int64_t>(), nullptr, ws.p, wsb,
                                 g_stream));
      });
      const std::vector<int> dbg = debug_record(ws, s.B * s.K);
      const std::vector<float> gk = kps.get<float>();
      const std::vector<int64_t> gi = inl.get<int64_t>();
      std::vector<float> ck(s.B * s.K * 3);
      std::vector<int64_t> ci(s.B);
      const auto t0 = std::chrono::steady_clock::now();
      CK(pvn3d_vote_aggregate_cpu(c.votes.data(), c.mask.data(), 0, s.B, s.K, s.N, 0.08f, 300, cf, ck.data(), ci.data()));
      const double cpu = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      const double d = max_diff(gk, ck);
      const bool same_inl = gi == ci;
      char target[64] = "";
      if (s.target_ms > 0 && cf == 1)
        std::snprintf(target, sizeof target, " | target %.2f ms %s", s.target_ms, ps <= s.target_ms ? "MET" : "MISS");
      std::snprintf(line, sizeof line,
                    "%-40s B=%lld K=%lld N=%lld center_filter=%d: pose_solve %.4f ms, vote_aggregate %.4f ms%s | its %s "
                    "barriers %d tail %d blocks %d tile %d | inliers %lld | CPU vote_aggregate (%d threads, 1 run) %.1f "
                    "ms | max |cuda-cpu| %.2g%s",
                    s.name, (long long)s.B, (long long)s.K, (long long)s.N, cf, ps, va, target,
                    iterations_text(dbg, s.B, s.K).c_str(), dbg[0], dbg[3], dbg[2], dbg[1], (long long)gi[0],
                    pvn3d_get_num_threads(), cpu, d, same_inl ? "" : " INLIERS DIFFER");
      emit(line);
      if (d > 1e-5 || !same_inl) g_failed = true;
    }
  }
  // Kabsch alone.
  {
    std::vector<float> model(27), pred(64 * 27);
    std::mt19937 g(5);
    std::uniform_real_distribution<double> u(-0.1, 0.1);
    for (auto& v : model) v = (float)u(g);
    for (auto& v : pred) v = (float)u(g);
    Dev m(model), p(pred), R(64 * 36), t(64 * 12);
    for (int64_t B : {1, 64}) {
      const double k = time_ms([&] {
        CK(pvn3d_kabsch_solver_cuda(m.as<float>(), 0, 9, p.as<float>(), B, 9, R.as<float>(), t.as<float>(), nullptr,
                                    g_stream));
      });
      std::snprintf(line, sizeof line, "kabsch_solver B=%lld K=9: %.4f ms", (long long)B, k);
      emit(line);
    }
  }
  if (out_path) {
    FILE* f = std::fopen(out_path, "w");
    if (f) {
      std::fputs(out.c_str(), f);
      std::fclose(f);
    }
  }
  return g_failed ? 1 : 0;
}

// ---- host cost of a launch ---------------------------------------------------------------------

#ifdef PVN3D_BENCH_LAUNCH_BASELINE
// bench_launch_baseline.cu
extern "C" int pvn3d_bench_launch_baseline(int which, void* stream);
extern "C" int pvn3d_bench_launch_others(int count, void* stream);
#endif

// Median and 90th percentile of the host wall time of one call, in microseconds: 3 x 32 calls of warm-up,
// then `calls` calls, the stream synchronised after every 32 outside the timed calls (the queue stays
// short, as in a run of the model, where each node enqueues a few operations).
void host_time(std::FILE* out, const char* name, const std::function<pvn3d_status()>& launch, int calls,
               const std::function<void()>& before = nullptr) {
  constexpr int kBatch = 32;
  std::vector<double> us;
  us.reserve(static_cast<size_t>(calls));
  for (int i = -3 * kBatch; i < calls; ++i) {
    if (before) before();  // untimed
    const auto t0 = std::chrono::steady_clock::now();
    const pvn3d_status s = launch();
    const auto t1 = std::chrono::steady_clock::now();
    if (!ok(s, name)) return;
    if (i >= 0) us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    if ((i + 1) % kBatch == 0) ok(pvn3d_cuda_stream_synchronize(g_stream), "sync");
  }
  ok(pvn3d_cuda_stream_synchronize(g_stream), "sync");
  std::sort(us.begin(), us.end());
  const double p50 = us[us.size() / 2], p90 = us[us.size() * 9 / 10];
  for (std::FILE* f : {stdout, out}) {
    if (f == nullptr) continue;
    std::fprintf(f, "%-72s host us  median %7.2f  p90 %7.2f  min %7.2f\n", name, p50, p90, us.front());
    std::fflush(f);
  }
}

int bench_host(const char* out_path) {
  std::FILE* out = out_path ? std::fopen(out_path, "w") : nullptr;
  const int calls = g_iters * 20;
  // the index flag as the Java kernels hold it: 16 bytes of mapped pinned memory, the device alias passed
  void* flag_host = nullptr;
  void* flag_dev = nullptr;
  ok(pvn3d_cuda_malloc_host(&flag_host, 16, 1), "malloc_host");
  ok(pvn3d_cuda_host_device_pointer(&flag_dev, flag_host), "host_device_pointer");
  std::memset(flag_host, 0xFF, 16);
  int64_t* flag = static_cast<int64_t*>(flag_dev);
  void* ev = nullptr;
  pvn3d_cuda_event_create(&ev);
  for (std::FILE* f : {stdout, out})
    if (f) std::fprintf(f, "host time of one call, %d calls after warm-up, stream synchronised every 32 (untimed)\n", calls);
  host_time(out, "cudaEventRecord (baseline: a stream operation without a kernel)",
            [&] { return pvn3d_cuda_event_record(ev, g_stream); }, calls);
  host_time(out, "cudaMemsetAsync 16 B of the mapped flag (what the index report cost per launch before 2026-12-02)",
            [&] { return pvn3d_cuda_memset_async(flag, 0xFF, 16, g_stream); }, calls);
#ifdef PVN3D_BENCH_LAUNCH_BASELINE
  const char* floors[] = {"empty kernel <<<1, 32>>>, no arguments (the launch floor)",
                          "empty kernel <<<264, 512>>>, a 76-byte argument block",
                          "empty kernel <<<264, 512, 100 KB smem>>>, a 76-byte argument block"};
  for (int which = 0; which < 3; ++which)
    host_time(out, floors[which], [&] {
      return pvn3d_bench_launch_baseline(which, g_stream) == 0 ? PVN3D_OK : PVN3D_ERR_CUDA;
    }, calls);
#endif

  Rng rng(11);
  const int64_t N = 12288, M = 2048, S = 16;
  const auto cloud = testdata::random_cloud(rng, 1, N, 0.f, 0.5f);
  float* xyz = upload(cloud);
  float* centres = upload(testdata::centres_from(rng, cloud, 1, N, M, 0.f));
  int64_t* fps_idx = alloc<int64_t>(static_cast<size_t>(M));
  for (int64_t n : {N, int64_t{2048}, int64_t{1024}, int64_t{512}}) {
    const int64_t np = n == N ? M : n == 2048 ? 1024 : n == 1024 ? 512 : 128;
    const size_t ws = pvn3d_furthest_point_sample_cuda_workspace_bytes(1, n, np);
    void* w = alloc<unsigned char>(ws);
    char name[96];
    std::snprintf(name, sizeof name, "FurthestPointSample B=1 N=%lld -> %lld", (long long)n, (long long)np);
    host_time(out, name, [&] { return pvn3d_furthest_point_sample_cuda(1, n, np, xyz, fps_idx, w, ws, g_stream); },
              calls / 4);
    pvn3d_cuda_free(w);
  }
  // N = 12288 takes the cluster kernel (cudaLaunchKernelEx with a cluster dimension); the same call on the
  // single-block kernel says what the cluster launch itself costs the host (SA 0's FPS is the slowest
  // custom node on the host inside the full model, results/2026-12-04-hosttime-phases).
  setenv("PVN3D_FPS_CLUSTER", "0", 1);
  host_time(out, "FurthestPointSample B=1 N=12288 -> 2048, single-block kernel (PVN3D_FPS_CLUSTER=0)",
            [&] { return pvn3d_furthest_point_sample_cuda(1, N, M, xyz, fps_idx, nullptr, 0, g_stream); }, calls / 4);
  unsetenv("PVN3D_FPS_CLUSTER");
  int64_t* ball = alloc<int64_t>(static_cast<size_t>(M * S));
  host_time(out, "BallQuery B=1 N=12288 M=2048 S=16 r=0.0175",
            [&] { return pvn3d_ball_query_cuda(1, N, M, 0.0175f, S, xyz, centres, ball, g_stream); }, calls);
  float* feats = upload(testdata::random_floats(rng, 6 * N, -1, 1));
  int64_t* gidx = upload(testdata::random_indices(rng, M * S, N));
  float* grouped = alloc<float>(static_cast<size_t>(6 * M * S));
  host_time(out, "GroupPoints B=1 C=6 N=12288 M=2048 S=16, index report",
            [&] { return pvn3d_group_points_cuda(1, 6, N, M, S, feats, gidx, grouped, flag, g_stream); }, calls);
  host_time(out, "GroupPoints B=1 C=6 N=12288 M=2048 S=16, no index report",
            [&] { return pvn3d_group_points_cuda(1, 6, N, M, S, feats, gidx, grouped, nullptr, g_stream); }, calls);
  int64_t* pidx = upload(testdata::random_indices(rng, M, N));
  float* gathered = alloc<float>(static_cast<size_t>(3 * M));
  host_time(out, "GatherPoints B=1 C=3 N=12288 M=2048, index report",
            [&] { return pvn3d_gather_points_cuda(1, 3, N, M, xyz, pidx, gathered, flag, g_stream); }, calls);
  host_time(out, "GatherPoints B=1 C=3 N=12288 M=2048, no index report",
            [&] { return pvn3d_gather_points_cuda(1, 3, N, M, xyz, pidx, gathered, nullptr, g_stream); }, calls);
  float* dist = alloc<float>(static_cast<size_t>(N * 3));
  int64_t* nn = alloc<int64_t>(static_cast<size_t>(N * 3));
  host_time(out, "ThreeNN B=1 n=12288 m=2048",
            [&] { return pvn3d_three_nn_cuda(1, N, M, xyz, centres, dist, nn, g_stream); }, calls);
  const int64_t C = 128;
  float* coarse = upload(testdata::random_floats(rng, C * M, -1, 1));
  int64_t* iidx = upload(testdata::random_indices(rng, N * 3, M));
  float* weights = upload(testdata::random_weights(rng, 1, N));
  float* fine = alloc<float>(static_cast<size_t>(C * N));
  host_time(out, "ThreeInterpolate B=1 C=128 m=2048 n=12288, index report",
            [&] { return pvn3d_three_interpolate_cuda(1, C, M, N, coarse, iidx, weights, fine, flag, g_stream); }, calls);
  host_time(out, "ThreeInterpolate B=1 C=128 m=2048 n=12288, no index report",
            [&] { return pvn3d_three_interpolate_cuda(1, C, M, N, coarse, iidx, weights, fine, nullptr, g_stream); },
            calls);
#ifdef PVN3D_BENCH_LAUNCH_BASELINE
  // The same launches as inside a model's run, where they take 5-14 us against the 3-6 us above
  // (results/2026-12-04-hosttime-phases): (a) after 32 launches of other kernels (the driver's state for
  // our kernel is no longer the last it used), (b) after the host has walked 64 MB (its caches hold
  // nothing of the driver's or ours), (c) both. Untimed, before each timed call. Which of these, if any,
  // reproduces the in-model cost says whose it is.
  std::vector<unsigned char> walk(size_t{64} << 20, 1);
  volatile unsigned sink = 0;
  const std::function<void()> others = [&] { pvn3d_bench_launch_others(32, g_stream); };
  const std::function<void()> cold = [&] {
    unsigned acc = 0;
    for (size_t k = 0; k < walk.size(); k += 64) acc += walk[k]++;
    sink = sink + acc;
  };
  const std::function<void()> both = [&] { cold(); others(); };
  const struct {
    const char* what;
    const std::function<void()>* before;
  } settings[] = {{"after 32 other kernels", &others}, {"after a 64 MB host walk", &cold}, {"after both", &both}};
  for (const auto& st : settings) {
    char name[128];
    std::snprintf(name, sizeof name, "empty kernel <<<1, 32>>>, %s", st.what);
    host_time(out, name, [&] { return pvn3d_bench_launch_baseline(0, g_stream) == 0 ? PVN3D_OK : PVN3D_ERR_CUDA; },
              calls / 10, *st.before);
    std::snprintf(name, sizeof name, "FurthestPointSample B=1 N=12288 -> 2048, %s", st.what);
    host_time(out, name, [&] { return pvn3d_furthest_point_sample_cuda(1, N, M, xyz, fps_idx, nullptr, 0, g_stream); },
              calls / 40, *st.before);  // N <= 16384: no workspace
    std::snprintf(name, sizeof name, "GroupPoints B=1 C=6 N=12288 M=2048 S=16, index report, %s", st.what);
    host_time(out, name, [&] { return pvn3d_group_points_cuda(1, 6, N, M, S, feats, gidx, grouped, flag, g_stream); },
              calls / 10, *st.before);
    std::snprintf(name, sizeof name, "ThreeInterpolate B=1 C=128 m=2048 n=12288, index report, %s", st.what);
    host_time(out, name,
              [&] { return pvn3d_three_interpolate_cuda(1, C, M, N, coarse, iidx, weights, fine, flag, g_stream); },
              calls / 10, *st.before);
  }
#endif
  if (static_cast<int64_t*>(flag_host)[0] != -1) {
    std::printf("ERROR: an index report was raised on valid indices\n");
    g_failed = true;
  }
  for (void* p : {static_cast<void*>(xyz), static_cast<void*>(centres), static_cast<void*>(fps_idx),
                  static_cast<void*>(ball), static_cast<void*>(feats), static_cast<void*>(gidx),
                  static_cast<void*>(grouped), static_cast<void*>(pidx), static_cast<void*>(gathered),
                  static_cast<void*>(dist), static_cast<void*>(nn), static_cast<void*>(coarse),
                  static_cast<void*>(iidx), static_cast<void*>(weights), static_cast<void*>(fine)})
    pvn3d_cuda_free(p);
  pvn3d_cuda_event_destroy(ev);
  pvn3d_cuda_free_host(flag_host);
  if (out) std::fclose(out);
  return g_failed ? 1 : 0;
}

// ---- CPU kernels -------------------------------------------------------------------------------

void bench_fps_cpu(int64_t B, int64_t N, int64_t np, int reps) {
  Rng rng(1);
  const auto xyz = testdata::random_cloud(rng, B, N, 0.f, 0.5f);
  std::vector<int64_t> idx(static_cast<size_t>(B * np));
  char name[96];
  std::snprintf(name, sizeof name, "FurthestPointSample CPU B=%lld N=%lld -> %lld", (long long)B, (long long)N,
                (long long)np);
  if (!ok(pvn3d_furthest_point_sample_cpu(B, N, np, xyz.data(), idx.data()), name)) return;
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    ok(pvn3d_furthest_point_sample_cpu(B, N, np, xyz.data(), idx.data()), name);
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  std::printf("%-58s median %9.2f ms  min %9.2f  max %9.2f  (%d calls, %d threads)\n", name, t[t.size() / 2], t.front(),
              t.back(), reps, pvn3d_get_num_threads());
  std::fflush(stdout);
}

int bench_cpu() {
  const int reps = g_iters < 100 ? 3 : 5;
  std::printf("pvn3d_bench_cuda --cpu: libpvn3d_ops %s, CPU kernels, wall clock, %d threads\n", pvn3d_version(),
              pvn3d_get_num_threads());
  bench_fps_cpu(1, 12288, 2048, reps);
  bench_fps_cpu(1, 16384, 4096, reps);
  bench_fps_cpu(2, 16384, 4096, reps);
  bench_fps_cpu(4, 16384, 4096, reps);
  bench_fps_cpu(8, 16384, 4096, reps);
  return g_failed ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  const char* pose_out = nullptr;
  const char* host_out = nullptr;
  bool pose = false, cpu = false, host = false;
  for (int a = 1; a < argc; ++a) {
    if (std::strcmp(argv[a], "--quick") == 0) g_iters = 20;
    if (std::strcmp(argv[a], "--cpu") == 0) cpu = true;
    if (std::strcmp(argv[a], "--threads") == 0 && a + 1 < argc) pvn3d_set_num_threads(std::atoi(argv[++a]));
    if (std::strcmp(argv[a], "--host") == 0) {
      host = true;
      if (a + 1 < argc && argv[a + 1][0] != '-') host_out = argv[++a];
    }
    if (std::strcmp(argv[a], "--only") == 0 && a + 1 < argc) g_only = argv[++a];
    if (std::strcmp(argv[a], "--pose") == 0) {
      pose = true;
      if (a + 1 < argc && argv[a + 1][0] != '-') pose_out = argv[++a];
    }
  }
  if (cpu) return bench_cpu();
  int count = 0;
  if (!pvn3d_built_with_cuda() || pvn3d_cuda_device_count(&count) != PVN3D_OK || count == 0) {
    std::printf("SKIPPED: no CUDA device\n");
    return 77;
  }
  char name[256];
  int major = 0, minor = 0, sms = 0;
  int64_t mem = 0;
  pvn3d_cuda_get_device_properties(0, name, sizeof name, &major, &minor, &mem, &sms);
  std::printf("pvn3d_bench_cuda: libpvn3d_ops %s on %s (cc %d.%d, %d SMs); times in ms, CUDA events\n", pvn3d_version(),
              name, major, minor, sms);
  pvn3d_cuda_stream_create(&g_stream, 1);
  if (host) {
    const int rc = bench_host(host_out);
    pvn3d_cuda_stream_destroy(g_stream);
    return rc;
  }
  if (pose) {
    const int rc = bench_pose(pose_out);
    pvn3d_cuda_stream_destroy(g_stream);
    return rc;
  }
  // Targets: shared/perf-targets.md (H200). Sizes without a target ("-") are PVN3D's other shapes, for
  // the comparison with the original pointnet2 kernels (GatherPoints must never be slower).
  if (wanted("FurthestPointSample")) {
    bench_fps(1, 12288, 2048, 1.5);
    bench_fps(1, 16384, 4096, 5.0);
    bench_fps(8, 16384, 4096, 5.0);
    bench_fps(1, 2048, 1024, 0);
  }
  if (wanted("BallQuery")) {
    bench_ball(1, 12288, 2048, 16, 0.0175f, 0.05);
    bench_ball(1, 12288, 2048, 32, 0.025f, 0.05);
    bench_ball(8, 16384, 4096, 32, 0.025f, 0.5);
  }
  if (wanted("GroupPoints")) {
    bench_group(8, 256, 1024, 512, 32, 0.07);
    bench_group(1, 99, 2048, 1024, 32, 0.02);
  }
  if (wanted("ThreeNN")) {
    bench_three_nn(1, 12288, 2048, 0.03);
    bench_three_nn(8, 16384, 4096, 0.4);
  }
  if (wanted("ThreeInterpolate")) {
    bench_interp(1, 128, 2048, 12288, 0.012);
    bench_interp(8, 256, 4096, 16384, 0.08);
    bench_interp(1, 256, 512, 2048, 0);
    // the full-size PVN3D's four FP levels at B=8 (FP3 .. FP0): which kernel the size rule picks for each
    bench_interp(8, 1024, 128, 512, 0);
    bench_interp(8, 512, 512, 1024, 0);
    bench_interp(8, 512, 1024, 2048, 0);
    bench_interp(8, 256, 2048, 12288, 0);
  }
  if (wanted("GatherPoints")) {
    bench_gather(8, 256, 4096, 1024, 0.010);
    bench_gather(1, 3, 12288, 2048, 0);
    bench_gather(1, 128, 2048, 1024, 0);
    bench_gather(8, 3, 16384, 4096, 0);
    bench_gather(8, 512, 128, 128, 0);
  }
  pvn3d_cuda_stream_destroy(g_stream);
  return g_failed ? 1 : 0;
}
