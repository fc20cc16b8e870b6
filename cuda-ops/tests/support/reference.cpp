// Naive references (see reference.h). Built with -ffp-contract=off like the library, so a*b+c is
// two roundings here too.
#include "reference.h"

#include <algorithm>
#include <cmath>
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

// ---- pose operators ----------------------------------------------------------------------------

namespace {

float ref_d2f(const float* a, const float* b) {
  volatile float dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
  volatile float xx = dx * dx, yy = dy * dy, zz = dz * dz;
  volatile float s = xx + yy;
  return s + zz;
}

// Mean shift over votes pts (float [n][3]); returns the chosen index and the converged mode.
int64_t ref_cluster(const std::vector<const float*>& pts, double bw, float bw2f, int64_t max_iter, double out[3]) {
  const int64_t n = (int64_t)pts.size();
  int64_t best = 0, best_count = -1;
  for (int64_t i = 0; i < n; ++i) {
    int64_t c = 0;
    for (int64_t j = 0; j < n; ++j)
      if (ref_d2f(pts[i], pts[j]) < bw2f) ++c;
    if (c > best_count) {
      best_count = c;
      best = i;
    }
  }
  std::vector<double> m(n * 3);
  for (int64_t i = 0; i < n; ++i)
    for (int c = 0; c < 3; ++c) m[i * 3 + c] = pts[i][c];
  const double tol = bw * 1e-3;
  for (int64_t it = 0; it < max_iter; ++it) {
    bool moved = false;
    std::vector<double> nm(m);
    for (int64_t i = 0; i < n; ++i) {
      double sw = 0, s[3] = {0, 0, 0};
      for (int64_t j = 0; j < n; ++j) {
        double d2 = 0;
        for (int c = 0; c < 3; ++c) d2 += (m[i * 3 + c] - pts[j][c]) * (m[i * 3 + c] - pts[j][c]);
        const double e = -0.5 * d2 / (bw * bw);
        double w = std::exp(e);
        if (w < (double)std::numeric_limits<float>::min()) w = 0.0;  // the documented flush
        sw += w;
        for (int c = 0; c < 3; ++c) s[c] += w * pts[j][c];
      }
      if (!(sw > 0)) continue;
      double sh = 0;
      for (int c = 0; c < 3; ++c) {
        nm[i * 3 + c] = s[c] / sw;
        sh += (nm[i * 3 + c] - m[i * 3 + c]) * (nm[i * 3 + c] - m[i * 3 + c]);
      }
      if (std::sqrt(sh) > tol) moved = true;
    }
    m.swap(nm);
    if (!moved) break;
  }
  for (int c = 0; c < 3; ++c) out[c] = m[best * 3 + c];
  return best;
}

void jacobi_eigen4(double A[4][4], double V[4][4], double ev[4]) {
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) V[i][j] = i == j;
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0;
    for (int i = 0; i < 4; ++i)
      for (int j = i + 1; j < 4; ++j) off += A[i][j] * A[i][j];
    if (off < 1e-30) break;
    for (int p = 0; p < 4; ++p)
      for (int q = p + 1; q < 4; ++q) {
        if (std::fabs(A[p][q]) < 1e-300) continue;
        const double theta = (A[q][q] - A[p][p]) / (2 * A[p][q]);
        const double t = (theta >= 0 ? 1 : -1) / (std::fabs(theta) + std::sqrt(theta * theta + 1));
        const double c = 1 / std::sqrt(t * t + 1), s = t * c;
        for (int k = 0; k < 4; ++k) {  // A = J^T A J
          const double akp = A[k][p], akq = A[k][q];
          A[k][p] = c * akp - s * akq;
          A[k][q] = s * akp + c * akq;
        }
        for (int k = 0; k < 4; ++k) {
          const double apk = A[p][k], aqk = A[q][k];
          A[p][k] = c * apk - s * aqk;
          A[q][k] = s * apk + c * aqk;
        }
        for (int k = 0; k < 4; ++k) {
          const double vkp = V[k][p], vkq = V[k][q];
          V[k][p] = c * vkp - s * vkq;
          V[k][q] = s * vkp + c * vkq;
        }
      }
  }
  for (int i = 0; i < 4; ++i) ev[i] = A[i][i];
}

}  // namespace

VoteAggregateResult vote_aggregate(const std::vector<float>& votes, const float* mask, int64_t B, int64_t K, int64_t N,
                                   float bandwidth, int64_t max_iter, int center_filter) {
  VoteAggregateResult r;
  r.kps.assign(B * K * 3, std::numeric_limits<double>::quiet_NaN());
  r.inliers.assign(B, 0);
  r.best.assign(B * K, -1);
  const float bw2f = bandwidth * bandwidth;
  for (int64_t b = 0; b < B; ++b) {
    std::vector<int64_t> cand;
    for (int64_t n = 0; n < N; ++n) {
      if (mask && mask[b * N + n] == 0.0f) continue;
      bool ok = true;
      for (int64_t k = 0; k < K; ++k)
        for (int c = 0; c < 3; ++c) ok = ok && std::isfinite(votes[((b * K + k) * N + n) * 3 + c]);
      if (ok) cand.push_back(n);
    }
    if (cand.empty()) continue;
    auto vote = [&](int64_t k, int64_t n) { return &votes[((b * K + k) * N + n) * 3]; };
    std::vector<int64_t> used = cand;
    if (center_filter) {
      std::vector<const float*> pts;
      for (int64_t n : cand) pts.push_back(vote(K - 1, n));
      double m[3];
      const int64_t best = ref_cluster(pts, bandwidth, bw2f, max_iter, m);
      r.best[b * K + K - 1] = best;
      for (int c = 0; c < 3; ++c) r.kps[(b * K + K - 1) * 3 + c] = m[c];
      used.clear();
      for (int64_t n : cand)
        if (ref_d2f(vote(K - 1, n), pts[best]) < bw2f) used.push_back(n);
      if (used.empty()) used = cand;
    }
    const int64_t rows = center_filter ? K - 1 : K;
    for (int64_t k = 0; k < rows; ++k) {
      std::vector<const float*> pts;
      for (int64_t n : used) pts.push_back(vote(k, n));
      double m[3];
      r.best[b * K + k] = ref_cluster(pts, bandwidth, bw2f, max_iter, m);
      for (int c = 0; c < 3; ++c) r.kps[(b * K + k) * 3 + c] = m[c];
    }
    r.inliers[b] = (int64_t)used.size();
  }
  return r;
}

void kabsch_solver(const double* a, const double* b, int64_t K, double R[9], double t[3]) {
  double ma[3] = {0, 0, 0}, mb[3] = {0, 0, 0};
  for (int64_t i = 0; i < K; ++i)
    for (int c = 0; c < 3; ++c) {
      ma[c] += a[i * 3 + c] / K;
      mb[c] += b[i * 3 + c] / K;
    }
  double S[3][3] = {{0}};
  for (int64_t i = 0; i < K; ++i)
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) S[r][c] += (a[i * 3 + r] - ma[r]) * (b[i * 3 + c] - mb[c]);
  const double Sxx = S[0][0], Sxy = S[0][1], Sxz = S[0][2], Syx = S[1][0], Syy = S[1][1], Syz = S[1][2], Szx = S[2][0],
               Szy = S[2][1], Szz = S[2][2];
  double N4[4][4] = {{Sxx + Syy + Szz, Syz - Szy, Szx - Sxz, Sxy - Syx},
                     {Syz - Szy, Sxx - Syy - Szz, Sxy + Syx, Szx + Sxz},
                     {Szx - Sxz, Sxy + Syx, -Sxx + Syy - Szz, Syz + Szy},
                     {Sxy - Syx, Szx + Sxz, Syz + Szy, -Sxx - Syy + Szz}};
  double V[4][4], ev[4];
  jacobi_eigen4(N4, V, ev);
  int m = 0;
  for (int i = 1; i < 4; ++i)
    if (ev[i] > ev[m]) m = i;
  const double w = V[0][m], x = V[1][m], y = V[2][m], z = V[3][m];
  const double q[9] = {w * w + x * x - y * y - z * z, 2 * (x * y - w * z), 2 * (x * z + w * y),
                       2 * (x * y + w * z), w * w - x * x + y * y - z * z, 2 * (y * z - w * x),
                       2 * (x * z - w * y), 2 * (y * z + w * x), w * w - x * x - y * y + z * z};
  for (int i = 0; i < 9; ++i) R[i] = q[i];
  for (int r = 0; r < 3; ++r) t[r] = mb[r] - (R[r * 3] * ma[0] + R[r * 3 + 1] * ma[1] + R[r * 3 + 2] * ma[2]);
}

double det3(const float* R) {
  return (double)R[0] * ((double)R[4] * R[8] - (double)R[5] * R[7]) -
         (double)R[1] * ((double)R[3] * R[8] - (double)R[5] * R[6]) +
         (double)R[2] * ((double)R[3] * R[7] - (double)R[4] * R[6]);
}

double orth_err(const float* R) {
  double e = 0;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      double s = 0;
      for (int k = 0; k < 3; ++k) s += (double)R[i * 3 + k] * R[j * 3 + k];
      e = std::max(e, std::fabs(s - (i == j)));
    }
  return e;
}

// ---- the bunny tests' chain -------------------------------------------------------------------------

Chain pointnet_chain(const std::vector<float>& xyz, const std::vector<float>& features, int64_t N, int64_t C,
                     int64_t npoint, float radius, int64_t S) {
  const int64_t B = 1;
  Chain ch;
  ch.centres_idx = furthest_point_sample(xyz, B, N, npoint);
  ch.gathered = gather_points(features, ch.centres_idx, B, C, N, npoint);
  ch.centres.resize(static_cast<size_t>(3 * npoint));
  for (int64_t j = 0; j < npoint; ++j)
    for (int k = 0; k < 3; ++k) ch.centres[static_cast<size_t>(3 * j + k)] = ch.gathered[static_cast<size_t>(k * npoint + j)];
  ch.nbr = ball_query(xyz, ch.centres, B, N, npoint, radius, S);
  ch.grouped = group_points(features, ch.nbr, B, C, N, npoint, S);
  three_nn(xyz, ch.centres, B, N, npoint, &ch.nn_dist2, &ch.nn_idx);
  const std::vector<float>& d = ch.nn_dist2;
  std::vector<float>& w = ch.weight;
  w.resize(d.size());
  for (int64_t j = 0; j < N; ++j) {
    float r[3], s = 0;
    for (int k = 0; k < 3; ++k) s += (r[k] = 1.f / (std::sqrt(d[static_cast<size_t>(3 * j + k)]) + 1e-8f));
    for (int k = 0; k < 3; ++k) w[static_cast<size_t>(3 * j + k)] = r[k] / s;
  }
  ch.interpolated = three_interpolate(ch.gathered, ch.nn_idx, ch.weight, B, C, npoint, N);
  return ch;
}

}  // namespace ref
