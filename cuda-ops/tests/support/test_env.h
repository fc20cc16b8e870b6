/*
 * What every test program of libpvn3d_ops shares beyond the harness: its main (arguments, environment,
 * whether CUDA cases run), the skip rule of the CUDA cases, and the CUDA helpers of the tests
 * (device buffers on the program's stream, the index-error report read back the recommended way).
 *
 *   pvn3d_test_<op> [--bunny <bunny_positions.txt>]
 *
 * Environment:
 *   PVN3D_BUNNY_FILE=<path>       the bunny file when --bunny is not given
 *   PVN3D_REQUIRE_BUNNY=1         a missing bunny file fails the bunny tests instead of skipping them
 *   PVN3D_REQUIRE_CUDA=1          no CUDA device (or a CPU-only library) fails the CUDA tests instead of
 *                                 skipping them: for runs on a GPU machine, where a skip would hide that
 *                                 the CUDA kernels were never run
 *   PVN3D_TEST_SMALL=1            for compute-sanitizer racecheck, which is slow on shared memory: leaves
 *                                 out the ball-query and three-NN cases above 4M point pairs. Every kernel
 *                                 and code path still runs.
 *   PVN3D_TEST_NO_API_ERRORS=1    for compute-sanitizer memcheck, which reports every failing CUDA API call
 *                                 as an error: leaves out the checks that make CUDA calls fail on purpose
 *                                 (bad device ordinal, a 2^62-byte cudaMalloc). The plain ctest run keeps
 *                                 them.
 *
 * The CUDA cases of a program (TESTs that start with REQUIRE_CUDA()) run when the library was built
 * with CUDA and a device is there; otherwise each says "[SKIP] <test>: no CUDA device (...)" and the
 * program passes on its CPU checks.
 */
#ifndef PVN3D_TESTS_TEST_ENV_H
#define PVN3D_TESTS_TEST_ENV_H

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "harness.h"
#include "pvn3d_ops.h"
#include "test_data.h"

namespace testenv {

/* The program's main: reads the arguments and environment, decides whether the CUDA cases run (and
 * creates their stream), prints one line about all that, runs every TEST and returns the exit code. */
int run(int argc, char** argv);

const std::string& bunny_path();
bool small();
bool no_api_errors();
bool cuda_required();
/* Empty when the CUDA cases run; else why they skip ("no CUDA device (...)"). */
const std::string& cuda_skip_reason();
/* The non-blocking stream of the CUDA cases (launchers must honour it); NULL when they skip. */
void* stream();

/* CUDA against CPU on floats: spec/ops.md's 1e-5 relative (the kernels are expected to be bit-equal: no
 * FMA on either side). Indices must be equal. */
constexpr double kRel = 1e-5;

/* A status that must be PVN3D_OK: counted as a check, printed with the message when it is not. */
bool ok(pvn3d_status s, const char* what);

/* Runs f() with 1 thread and with the default, restoring the default. */
template <class F>
void single_and_default_threads(F f) {
  pvn3d_set_num_threads(1);
  f();
  pvn3d_set_num_threads(0);
  f();
}

/* Device buffer of `count` uninitialised elements of T, or holding a copy of a host vector. A Dev without
 * a type (Dev x(bytes), Dev x(vector)) is a byte buffer; as<U>() and get<U>() view any buffer as
 * elements of U. */
template <class T = unsigned char>
struct Dev {
  T* p = nullptr;
  size_t n = 0;  // elements of T
  explicit Dev(size_t count) : n(count) {
    void* v = nullptr;
    ok(pvn3d_cuda_malloc(&v, std::max<size_t>(count, 1) * sizeof(T)), "cuda_malloc");
    p = static_cast<T*>(v);
  }
  template <class U>
  explicit Dev(const std::vector<U>& h) : Dev(h.size() * sizeof(U) / sizeof(T)) {
    if (!h.empty()) ok(pvn3d_cuda_memcpy_h2d_async(p, h.data(), h.size() * sizeof(U), stream()), "h2d");
  }
  ~Dev() { pvn3d_cuda_free(p); }
  Dev(const Dev&) = delete;
  Dev& operator=(const Dev&) = delete;
  std::vector<T> get() const {
    std::vector<T> h(n);
    if (n) ok(pvn3d_cuda_memcpy_d2h_async(h.data(), p, n * sizeof(T), stream()), "d2h");
    ok(pvn3d_cuda_stream_synchronize(stream()), "stream sync");
    return h;
  }
  template <class U>
  U* as() const {
    return reinterpret_cast<U*>(p);
  }
  template <class U>
  std::vector<U> get() const {
    std::vector<U> h(n * sizeof(T) / sizeof(U));
    if (!h.empty()) ok(pvn3d_cuda_memcpy_d2h_async(h.data(), p, h.size() * sizeof(U), stream()), "d2h");
    ok(pvn3d_cuda_stream_synchronize(stream()), "stream sync");
    return h;
  }
  void fill(unsigned char byte) {
    ok(pvn3d_cuda_memset_async(p, byte, std::max<size_t>(n, 1) * sizeof(T), stream()), "memset");
  }
};

/* An index-error buffer (index_check.h) reset to {-1, -1}, read the recommended way: async copy into a
 * pinned host mirror + event; read() decodes the report into position and value (-1, -1: none). */
struct IndexError {
  Dev<int64_t> dev{PVN3D_INDEX_ERROR_WORDS};
  int64_t* host = nullptr;
  void* event = nullptr;
  int64_t position = PVN3D_INDEX_ERROR_NONE;
  int64_t value = PVN3D_INDEX_ERROR_NONE;
  IndexError();
  ~IndexError();
  IndexError(const IndexError&) = delete;
  IndexError& operator=(const IndexError&) = delete;
  /* After the launch: enqueue the copy and an event, wait for the event only, decode. */
  void read();
  /* What the caller does after reading a report: {-1, -1} again (on the stream, before the next launch). */
  void reset();
};

}  // namespace testenv

/* A call whose status must be PVN3D_OK, counted as a check named by its own text. */
#define CHECK_OK(expr) testenv::ok((expr), #expr)

/* First statement of a CUDA test: skips it (saying why) without a CUDA device or in a CPU-only library;
 * with PVN3D_REQUIRE_CUDA=1 that is a failure instead. */
#define REQUIRE_CUDA()                                                                                     \
  do {                                                                                                     \
    if (!testenv::cuda_skip_reason().empty()) {                                                            \
      if (testenv::cuda_required()) {                                                                      \
        CHECK(false, "PVN3D_REQUIRE_CUDA=1 but %s", testenv::cuda_skip_reason().c_str());                  \
        return;                                                                                            \
      }                                                                                                    \
      SKIP(testenv::cuda_skip_reason());                                                                   \
    }                                                                                                      \
  } while (0)

/* Loads the bunny into `xyz` (std::vector<float>), or skips the test when the file is missing; with
 * PVN3D_REQUIRE_BUNNY=1 that is a failure instead. */
#define LOAD_BUNNY_OR_SKIP(xyz)                                                                            \
  do {                                                                                                     \
    std::string why_;                                                                                      \
    if (!testdata::load_bunny(testenv::bunny_path(), &(xyz), &why_)) {                                     \
      if (testdata::bunny_required()) {                                                                    \
        CHECK(false, "PVN3D_REQUIRE_BUNNY=1 but the bunny is missing: %s", why_.c_str());                  \
        return;                                                                                            \
      }                                                                                                    \
      SKIP("bunny data missing: " + why_);                                                                 \
    }                                                                                                      \
  } while (0)

#endif
