// Naive references (see reference.h). Built with -ffp-contract=off like the library, so a*b+c is
// two roundings here too.
#include "reference.h"

#include <cstddef>
#include <limits>

namespace ref {
namespace {
float sqdist(const float* a, const float* b) {
  return (a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]);
}
}  // namespace

std::vector<int64_t> furthest_point_sample(const std::vector<float>& xyz, int64_t B, int64_t N, int64_t npoint) {
  std::vector<int64_t> out(static_cast<size_t>(B * npoint));
  for (int64_t b = 0; b < B; ++b) {
    const float* p = xyz.data() + b * N * 3;
    std::vector<float> running(static_cast<size_t>(N), 1e10f);
    std::vector<bool> padding(static_cast<size_t>(N));
    for (int64_t i = 0; i < N; ++i) {
      const float* q = p + 3 * i;
      const float norm2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2];
      padding[static_cast<size_t>(i)] = norm2 <= 1e-3;  // float promoted to double, as in the original
    }
    int64_t last = 0;
    out[static_cast<size_t>(b * npoint)] = 0;
    for (int64_t s = 1; s < npoint; ++s) {
      float best = -1.0f;
      int64_t best_index = 0;  // stays 0 when there is no candidate
      for (int64_t i = 0; i < N; ++i) {
        if (padding[static_cast<size_t>(i)]) continue;
        const float d = sqdist(p + 3 * i, p + 3 * last);
        if (d < running[static_cast<size_t>(i)]) running[static_cast<size_t>(i)] = d;
        if (running[static_cast<size_t>(i)] > best) {  // strict: ties keep the lower index
          best = running[static_cast<size_t>(i)];
          best_index = i;
        }
      }
      last = best_index;
      out[static_cast<size_t>(b * npoint + s)] = last;
    }
  }
  return out;
}

std::vector<float> gather_points(const std::vector<float>& features, const std::vector<int64_t>& idx, int64_t B,
                                 int64_t C, int64_t N, int64_t M) {
  std::vector<float> out(static_cast<size_t>(B * C * M));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t m = 0; m < M; ++m)
        out[static_cast<size_t>((b * C + c) * M + m)] =
            features[static_cast<size_t>((b * C + c) * N + idx[static_cast<size_t>(b * M + m)])];
  return out;
}

std::vector<int64_t> ball_query(const std::vector<float>& xyz, const std::vector<float>& new_xyz, int64_t B, int64_t N,
                                int64_t M, float radius, int64_t nsample) {
  std::vector<int64_t> out(static_cast<size_t>(B * M * nsample), 0);
  const float r2 = radius * radius;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t m = 0; m < M; ++m) {
      int64_t* slots = out.data() + (b * M + m) * nsample;
      const float* centre = new_xyz.data() + (b * M + m) * 3;
      int64_t hits = 0;
      for (int64_t i = 0; i < N && hits < nsample; ++i) {
        if (!(sqdist(xyz.data() + (b * N + i) * 3, centre) < r2)) continue;
        if (hits == 0)
          for (int64_t s = 0; s < nsample; ++s) slots[s] = i;  // the first hit fills every slot
        slots[hits] = i;                                     // later hits overwrite 1, 2, ...
        ++hits;
      }
    }
  return out;
}

std::vector<float> group_points(const std::vector<float>& features, const std::vector<int64_t>& idx, int64_t B,
                                int64_t C, int64_t N, int64_t M, int64_t S) {
  std::vector<float> out(static_cast<size_t>(B * C * M * S));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t m = 0; m < M; ++m)
        for (int64_t s = 0; s < S; ++s)
          out[static_cast<size_t>(((b * C + c) * M + m) * S + s)] =
              features[static_cast<size_t>((b * C + c) * N + idx[static_cast<size_t>((b * M + m) * S + s)])];
  return out;
}

void three_nn(const std::vector<float>& unknown, const std::vector<float>& known, int64_t B, int64_t n, int64_t m,
              std::vector<float>* dist2, std::vector<int64_t>* idx) {
  dist2->assign(static_cast<size_t>(B * n * 3), 0.f);
  idx->assign(static_cast<size_t>(B * n * 3), 0);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t j = 0; j < n; ++j) {
      const float inf = std::numeric_limits<float>::infinity();
      float best[3] = {inf, inf, inf};
      int64_t besti[3] = {0, 0, 0};
      for (int64_t k = 0; k < m; ++k) {
        const float d = sqdist(unknown.data() + (b * n + j) * 3, known.data() + (b * m + k) * 3);
        for (int slot = 0; slot < 3; ++slot)
          if (d < best[slot]) {
            for (int t = 2; t > slot; --t) {
              best[t] = best[t - 1];
              besti[t] = besti[t - 1];
            }
            best[slot] = d;
            besti[slot] = k;
            break;
          }
      }
      for (int slot = 0; slot < 3; ++slot) {
        (*dist2)[static_cast<size_t>((b * n + j) * 3 + slot)] = best[slot];
        (*idx)[static_cast<size_t>((b * n + j) * 3 + slot)] = besti[slot];
      }
    }
}

std::vector<float> three_interpolate(const std::vector<float>& features, const std::vector<int64_t>& idx,
                                     const std::vector<float>& weight, int64_t B, int64_t C, int64_t m, int64_t n) {
  std::vector<float> out(static_cast<size_t>(B * C * n));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t j = 0; j < n; ++j) {
        const float* f = features.data() + (b * C + c) * m;
        const int64_t* i = idx.data() + (b * n + j) * 3;
        const float* w = weight.data() + (b * n + j) * 3;
        out[static_cast<size_t>((b * C + c) * n + j)] = f[i[0]] * w[0] + f[i[1]] * w[1] + f[i[2]] * w[2];
      }
  return out;
}

}  // namespace ref
