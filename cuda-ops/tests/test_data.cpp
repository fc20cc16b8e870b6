#include "test_data.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>

namespace testdata {

uint64_t Rng::next() {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

float Rng::uniform(float lo, float hi) {
  const float u = static_cast<float>(next() >> 40) / static_cast<float>(1ull << 24);  // [0, 1)
  return lo + (hi - lo) * u;
}

int64_t Rng::below(int64_t n) { return static_cast<int64_t>(next() % static_cast<uint64_t>(n)); }

std::vector<float> random_cloud(Rng& rng, int64_t B, int64_t N, float lo, float hi) {
  return random_floats(rng, B * N * 3, lo, hi);
}

std::vector<float> random_floats(Rng& rng, int64_t count, float lo, float hi) {
  std::vector<float> v(static_cast<size_t>(count));
  for (auto& x : v) x = rng.uniform(lo, hi);
  return v;
}

std::vector<int64_t> random_indices(Rng& rng, int64_t count, int64_t limit) {
  std::vector<int64_t> v(static_cast<size_t>(count));
  for (auto& x : v) x = rng.below(limit);
  return v;
}

std::vector<float> centres_from(Rng& rng, const std::vector<float>& xyz, int64_t B, int64_t N, int64_t M,
                                float jitter) {
  std::vector<float> c(static_cast<size_t>(B * M * 3));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t m = 0; m < M; ++m) {
      const int64_t i = rng.below(N);
      for (int k = 0; k < 3; ++k)
        c[static_cast<size_t>((b * M + m) * 3 + k)] =
            xyz[static_cast<size_t>((b * N + i) * 3 + k)] + rng.uniform(-jitter, jitter);
    }
  return c;
}

std::vector<float> random_weights(Rng& rng, int64_t B, int64_t n) {
  std::vector<float> w(static_cast<size_t>(B * n * 3));
  for (int64_t r = 0; r < B * n; ++r) {
    float s = 0;
    for (int k = 0; k < 3; ++k) s += (w[static_cast<size_t>(3 * r + k)] = rng.uniform(0.01f, 1.0f));
    for (int k = 0; k < 3; ++k) w[static_cast<size_t>(3 * r + k)] /= s;
  }
  return w;
}

bool load_bunny(const std::string& path, std::vector<float>* xyz, std::string* why) {
  if (path.empty()) {
    *why = "no bunny file given (run cuda-ops/tests/fetch_bunny.sh <build dir>)";
    return false;
  }
  std::ifstream in(path);
  if (!in) {
    *why = "cannot open " + path + " (run cuda-ops/tests/fetch_bunny.sh <build dir>)";
    return false;
  }
  long long count = 0;
  if (!(in >> count) || count <= 0 || count > 10000000) {
    *why = "bad vertex count in " + path;
    return false;
  }
  std::vector<double> v(static_cast<size_t>(count) * 3);
  for (auto& x : v)
    if (!(in >> x)) {
      *why = "truncated vertex list in " + path;
      return false;
    }
  double lo[3], hi[3];
  for (int k = 0; k < 3; ++k) {
    lo[k] = std::numeric_limits<double>::max();
    hi[k] = -lo[k];
  }
  for (long long i = 0; i < count; ++i)
    for (int k = 0; k < 3; ++k) {
      lo[k] = std::min(lo[k], v[static_cast<size_t>(3 * i + k)]);
      hi[k] = std::max(hi[k], v[static_cast<size_t>(3 * i + k)]);
    }
  const double extent = std::max({hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]});
  if (!(extent > 0)) {
    *why = "degenerate bunny in " + path;
    return false;
  }
  const double scale = 0.2 / extent;
  const double offset[3] = {0.0, 0.0, 0.6};
  xyz->resize(v.size());
  for (long long i = 0; i < count; ++i)
    for (int k = 0; k < 3; ++k) {
      const double mid = 0.5 * (lo[k] + hi[k]);
      (*xyz)[static_cast<size_t>(3 * i + k)] =
          static_cast<float>((v[static_cast<size_t>(3 * i + k)] - mid) * scale + offset[k]);
    }
  return true;
}

std::string bunny_path(int argc, char** argv) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--bunny") == 0) return argv[i + 1];
  const char* env = std::getenv("PVN3D_BUNNY_FILE");
  return env ? env : "";
}

bool bunny_required() {
  const char* env = std::getenv("PVN3D_REQUIRE_BUNNY");
  return env != nullptr && std::strcmp(env, "1") == 0;
}

}  // namespace testdata
