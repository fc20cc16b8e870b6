#include "test_data.h"

#include <algorithm>
#include <cmath>
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

BunnyScene bunny_scene(const std::vector<float>& bunny) {
  BunnyScene s;
  s.N0 = static_cast<int64_t>(bunny.size() / 3);
  s.xyz = bunny;
  s.xyz.resize(s.xyz.size() + 3 * 161, 0.f);  // padding tail: N = 2000
  s.N = s.N0 + 161;
  const int64_t N = s.N, C = BunnyScene::C;
  // features: xyz transposed to [B, 3, N] plus a constant channel
  s.features.resize(static_cast<size_t>(C * N));
  for (int64_t i = 0; i < N; ++i) {
    for (int k = 0; k < 3; ++k) s.features[static_cast<size_t>(k * N + i)] = s.xyz[static_cast<size_t>(3 * i + k)];
    s.features[static_cast<size_t>(3 * N + i)] = 1.f;
  }
  return s;
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

void axis_angle(double ax, double ay, double az, double angle, double R[9]) {
  const double n = std::sqrt(ax * ax + ay * ay + az * az);
  ax /= n; ay /= n; az /= n;
  const double c = std::cos(angle), s = std::sin(angle), C = 1 - c;
  const double r[9] = {c + ax * ax * C,      ax * ay * C - az * s, ax * az * C + ay * s,
                       ay * ax * C + az * s, c + ay * ay * C,      ay * az * C - ax * s,
                       az * ax * C - ay * s, az * ay * C + ax * s, c + az * az * C};
  for (int i = 0; i < 9; ++i) R[i] = r[i];
}

void random_rotation(std::mt19937& g, double R[9], double angle) {
  std::normal_distribution<double> nd;
  std::uniform_real_distribution<double> ud(0.0, M_PI);
  axis_angle(nd(g), nd(g), nd(g), angle < 0 ? ud(g) : angle, R);
}

VoteCase make_vote_case(uint32_t seed, int64_t B, int64_t K, int64_t N, double sigma, double outliers,
                        double mask_ratio, double first_angle, double size) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> u01(0.0, 1.0);
  std::normal_distribution<double> nd(0.0, 1.0);
  VoteCase c;
  c.B = B; c.K = K; c.N = N;
  c.votes.resize(B * K * N * 3);
  c.mask.resize(B * N);
  c.model.resize(K * 3);
  for (auto& m : c.model) m = (float)((u01(g) - 0.5) * size);
  c.Rtrue.resize(B * 9);
  c.ttrue.resize(B * 3);
  for (int64_t b = 0; b < B; ++b) {
    random_rotation(g, &c.Rtrue[b * 9], b == 0 ? first_angle : -1);
    for (int i = 0; i < 3; ++i) c.ttrue[b * 3 + i] = (u01(g) - 0.5) * 0.3 + (i == 2 ? 0.8 : 0.0);
    for (int64_t n = 0; n < N; ++n) {
      c.mask[b * N + n] = u01(g) < mask_ratio ? 1.0f : 0.0f;
      const bool outlier = u01(g) < outliers;
      for (int64_t k = 0; k < K; ++k) {
        float* v = &c.votes[((b * K + k) * N + n) * 3];
        double p[3];
        for (int r = 0; r < 3; ++r) {
          const double* R = &c.Rtrue[b * 9];
          p[r] = R[r * 3] * c.model[k * 3] + R[r * 3 + 1] * c.model[k * 3 + 1] + R[r * 3 + 2] * c.model[k * 3 + 2] +
                 c.ttrue[b * 3 + r];
        }
        for (int r = 0; r < 3; ++r)
          v[r] = (float)(outlier ? c.ttrue[b * 3 + r] + (u01(g) - 0.5) * 0.5 : p[r] + sigma * nd(g));
      }
    }
  }
  return c;
}

}  // namespace testdata
