/*
 * Independent reference for the pose operators and the input factories of their tests (header-only,
 * test code only; written separately from the kernels, never calls them).
 *
 *  - ref_vote_aggregate: the spec's mean shift written the textbook way, in double: modes move to
 *    sum_j w x_j / sum_j w, weights exp(-0.5 d^2/h^2) in double (0 below FLT_MIN, the library's
 *    documented flush), counts with the spec's float32 distance (the count is defined
 *    on float32 distances, so it is computed the same way here), sequential.
 *  - ref_pose: Horn's closed-form quaternion method (the largest eigenvector of a 4x4 symmetric
 *    matrix, found by cyclic Jacobi in double), a different algorithm from the library's SVD; it
 *    always gives the optimal proper rotation, so it checks the reflection handling as well.
 *  - a tiny test harness: CHECK(cond, fmt...) counts passes and failures; finish() prints
 *    "N passed, M failed" and returns the exit code.
 */
#ifndef PVN3D_TEST_POSE_SOLVE_REFERENCE_H
#define PVN3D_TEST_POSE_SOLVE_REFERENCE_H

#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace poseref {

// ---------------------------------------------------------------------------------------------------
// Harness
struct Harness {
  int passed = 0, failed = 0;
  void check(bool ok, const char* fmt, ...) {
    if (ok) {
      ++passed;
      return;
    }
    ++failed;
    va_list ap;
    va_start(ap, fmt);
    std::printf("FAIL: ");
    std::vprintf(fmt, ap);
    std::printf("\n");
    va_end(ap);
  }
  int finish() const {
    std::printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
  }
};

inline bool same_float(float a, float b, double tol) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::fabs((double)a - (double)b) <= tol * std::max(1.0, std::fabs((double)b));
}
inline double max_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double m = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) != std::isnan(b[i])) return std::numeric_limits<double>::infinity();
    if (std::isnan(a[i])) continue;
    m = std::max(m, std::fabs((double)a[i] - (double)b[i]) / std::max(1.0, std::fabs((double)b[i])));
  }
  return m;
}

// ---------------------------------------------------------------------------------------------------
// Reference VoteAggregate
struct RefVA {
  std::vector<double> kps;       // [B,K,3]
  std::vector<int64_t> inliers;  // [B]
  std::vector<int64_t> best;     // [B,K]: chosen index into the point list used (-1 if none)
};

inline float ref_d2f(const float* a, const float* b) {
  volatile float dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
  volatile float xx = dx * dx, yy = dy * dy, zz = dz * dz;
  volatile float s = xx + yy;
  return s + zz;
}

// Mean shift over votes pts (float [n][3]); returns the chosen index and the converged mode.
inline int64_t ref_cluster(const std::vector<const float*>& pts, double bw, float bw2f, int64_t max_iter,
                           double out[3]) {
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

// mask: float [B,N] (nonzero = masked) or nullptr.
inline RefVA ref_vote_aggregate(const std::vector<float>& votes, const float* mask, int64_t B, int64_t K, int64_t N,
                                float bandwidth, int64_t max_iter, int center_filter) {
  RefVA r;
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

// ---------------------------------------------------------------------------------------------------
// Reference pose: Horn's quaternion method.
inline void jacobi_eigen4(double A[4][4], double V[4][4], double ev[4]) {
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

// a, b: [K][3] (double). R row-major, t.
inline void ref_pose(const double* a, const double* b, int64_t K, double R[9], double t[3]) {
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

inline double det3(const float* R) {
  return (double)R[0] * ((double)R[4] * R[8] - (double)R[5] * R[7]) -
         (double)R[1] * ((double)R[3] * R[8] - (double)R[5] * R[6]) +
         (double)R[2] * ((double)R[3] * R[7] - (double)R[4] * R[6]);
}
// max |R R^T - I|
inline double orth_err(const float* R) {
  double e = 0;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      double s = 0;
      for (int k = 0; k < 3; ++k) s += (double)R[i * 3 + k] * R[j * 3 + k];
      e = std::max(e, std::fabs(s - (i == j)));
    }
  return e;
}

// ---------------------------------------------------------------------------------------------------
// Input factories (shared by the CPU tests, the GPU test and its benchmark).
inline void axis_angle(double ax, double ay, double az, double angle, double R[9]) {
  const double n = std::sqrt(ax * ax + ay * ay + az * az);
  ax /= n; ay /= n; az /= n;
  const double c = std::cos(angle), s = std::sin(angle), C = 1 - c;
  const double r[9] = {c + ax * ax * C,      ax * ay * C - az * s, ax * az * C + ay * s,
                       ay * ax * C + az * s, c + ay * ay * C,      ay * az * C - ax * s,
                       az * ax * C - ay * s, az * ay * C + ax * s, c + az * az * C};
  for (int i = 0; i < 9; ++i) R[i] = r[i];
}

inline void random_rotation(std::mt19937& g, double R[9], double angle = -1) {
  std::normal_distribution<double> nd;
  std::uniform_real_distribution<double> ud(0.0, M_PI);
  axis_angle(nd(g), nd(g), nd(g), angle < 0 ? ud(g) : angle, R);
}

struct VoteCase {
  int64_t B = 1, K = 9, N = 0;
  std::vector<float> votes;  // [B,K,N,3]
  std::vector<float> mask;   // [B,N]
  std::vector<float> model;  // [K,3] (shared model)
  std::vector<double> Rtrue, ttrue;  // [B,9], [B,3]
};

// A PVN3D-like scene: model keypoints in a `size` box, a random pose per item (the first item gets
// `first_angle` if >= 0), each masked point votes for every keypoint with Gaussian noise `sigma`; a
// fraction `outliers` of the points votes uniformly in a 0.5 m cube instead. mask_ratio of the points
// is masked.
inline VoteCase make_vote_case(uint32_t seed, int64_t B, int64_t K, int64_t N, double sigma, double outliers,
                               double mask_ratio, double first_angle = -1, double size = 0.15) {
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

}  // namespace poseref

#endif
