/*
 * The test runner of every native test program: TEST(name) { ... CHECK(cond, "fmt", ...); ... },
 * SKIP("why") inside a test (the test is reported as skipped, with the reason: the per-test form of
 * ctest's exit code 77). run_all() prints one line per test and "N passed, M failed, K skipped" and
 * returns the program's exit code: 1 if a test failed, or if no test ran a check at all (a program
 * whose tests all skipped has tested nothing), else 0. A test that runs no check and does not skip
 * is a failure too.
 */
#ifndef PVN3D_TESTS_HARNESS_H
#define PVN3D_TESTS_HARNESS_H

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace harness {

struct Case {
  const char* name;
  void (*fn)();
};

inline std::vector<Case>& cases() {
  static std::vector<Case> c;
  return c;
}

struct State {
  int failures = 0;     // failed checks in the current test
  int checks = 0;       // checks in the current test
  bool skipped = false;
  std::string skip_reason;
};

inline State& state() {
  static State s;
  return s;
}

struct Register {
  Register(const char* name, void (*fn)()) { cases().push_back({name, fn}); }
};

inline int run_all() {
  int passed = 0, failed = 0, skipped = 0;
  for (const Case& c : cases()) {
    state() = State{};
    c.fn();
    State& s = state();
    if (s.failures > 0) {
      ++failed;
      std::printf("[FAIL] %s (%d of %d checks failed)\n", c.name, s.failures, s.checks);
    } else if (s.skipped) {
      ++skipped;
      std::printf("[SKIP] %s: %s\n", c.name, s.skip_reason.c_str());
    } else if (s.checks == 0) {
      ++failed;  // a test that asserts nothing is a broken test
      std::printf("[FAIL] %s (no checks ran)\n", c.name);
    } else {
      ++passed;
      std::printf("[PASS] %s (%d checks)\n", c.name, s.checks);
    }
    std::fflush(stdout);
  }
  std::printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
  if (failed == 0 && passed == 0) {
    std::printf("FAIL: no test ran a check\n");
    return 1;
  }
  return failed > 0 ? 1 : 0;
}

}  // namespace harness

#define TEST(name)                                                  \
  static void test_##name();                                        \
  static harness::Register register_##name(#name, &test_##name);    \
  static void test_##name()

// Records a check; on failure prints the location and the message. Evaluates to the condition.
#define CHECK(cond, ...)                                                          \
  ([&]() -> bool {                                                                \
    ++harness::state().checks;                                                    \
    if (cond) return true;                                                        \
    ++harness::state().failures;                                                  \
    std::printf("    check failed at %s:%d: %s: ", __FILE__, __LINE__, #cond);    \
    std::printf(__VA_ARGS__);                                                     \
    std::printf("\n");                                                            \
    return false;                                                                 \
  }())

#define SKIP(reason)                          \
  do {                                        \
    harness::state().skipped = true;          \
    harness::state().skip_reason = (reason);  \
    return;                                   \
  } while (0)

namespace harness {

inline bool contains(const char* haystack, const char* needle) { return std::strstr(haystack, needle) != nullptr; }

// Largest element-wise difference, relative to max(1, |b|); NaN must meet NaN (else infinity).
inline double max_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double m = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) != std::isnan(b[i])) return std::numeric_limits<double>::infinity();
    if (std::isnan(a[i])) continue;
    m = std::max(m, std::fabs((double)a[i] - (double)b[i]) / std::max(1.0, std::fabs((double)b[i])));
  }
  return m;
}

// Exact element-wise equality; prints the first few mismatches. Returns true if equal.
template <class T>
bool same_values(const char* what, const std::vector<T>& got, const std::vector<T>& want) {
  ++state().checks;
  if (got.size() != want.size()) {
    ++state().failures;
    std::printf("    %s: size %zu, expected %zu\n", what, got.size(), want.size());
    return false;
  }
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const bool eq = std::memcmp(&got[i], &want[i], sizeof(T)) == 0 || got[i] == want[i];
    if (!eq) {
      if (bad < 5)
        std::printf("    %s: element %zu is %.9g, expected %.9g\n", what, i, static_cast<double>(got[i]),
                    static_cast<double>(want[i]));
      ++bad;
    }
  }
  if (bad) {
    ++state().failures;
    std::printf("    %s: %zu of %zu elements differ\n", what, bad, got.size());
    return false;
  }
  return true;
}

// |got - want| <= rel * max(|want|, 1e-30) for every element (bit-equal infinities pass).
inline bool close_values(const char* what, const std::vector<float>& got, const std::vector<float>& want, double rel) {
  ++state().checks;
  if (got.size() != want.size()) {
    ++state().failures;
    std::printf("    %s: size %zu, expected %zu\n", what, got.size(), want.size());
    return false;
  }
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], w = want[i];
    const bool ok = g == w || std::fabs(g - w) <= rel * std::fmax(std::fabs(w), 1e-30);
    if (!ok) {
      if (bad < 5) std::printf("    %s: element %zu is %.9g, expected %.9g\n", what, i, g, w);
      ++bad;
    }
  }
  if (bad) {
    ++state().failures;
    std::printf("    %s: %zu of %zu elements differ by more than %g relative\n", what, bad, got.size(), rel);
    return false;
  }
  return true;
}

}  // namespace harness

#endif
