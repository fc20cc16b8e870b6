/*
 * The Kabsch fit for one batch item, shared verbatim by the CPU kernel and the CUDA kernel (internal,
 * not part of the public ABI). Everything is double precision, in a fixed order, with plain + - * /
 * and sqrt only; the library is built with -ffp-contract=off (C++) and --fmad=false (CUDA), so the
 * CPU and the GPU compute bit-identical rotations from identical inputs, even in degenerate cases
 * (collinear or coincident keypoints) where the answer is not unique.
 *
 * Algorithm (spec/ops.md, PVN3D_KabschSolver):
 *   ma = mean a, mb = mean b;  H = sum_i (a_i - ma)(b_i - mb)^T  (3x3, double);
 *   H = U S V^T by one-sided (Hestenes) Jacobi on the columns of H, singular values sorted
 *   descending; R = V U^T; if det R < 0 the last column of V is negated and R recomputed;
 *   t = mb - R ma.
 * U's last column is taken as U0 x U1 (right-handed). That only chooses between V U^T and
 * V diag(1,1,-1) U^T before the det test, so the final R (the proper one of the two) is the same
 * as with the textbook SVD; it also makes rank-2 H (coplanar keypoints) well defined.
 * Rank deficiency: a singular value <= 1e-13 * the largest counts as 0.
 *   rank 1 (all keypoints of a or of b collinear): U1 is a fixed unit vector orthogonal to U0
 *     (built from the coordinate axis least aligned with U0). R is proper (det +1) and maps the
 *     model's line onto the predicted line; the rotation about that line is arbitrary but
 *     deterministic and identical on CPU and CUDA.
 *   rank 0 (all keypoints of a, or of b, coincide): U = V = I, so R = I and t = mb - ma.
 */
#ifndef PVN3D_KABSCH_CORE_H
#define PVN3D_KABSCH_CORE_H

#include <stdint.h>

#if defined(__CUDACC__)
#define PVN3D_KABSCH_HD __host__ __device__
#else
#define PVN3D_KABSCH_HD
#endif
#include <cmath>

namespace pvn3d {
namespace kabsch {

PVN3D_KABSCH_HD inline double k_sqrt(double x) {
#if defined(__CUDA_ARCH__)
  return sqrt(x);  // IEEE round-to-nearest on the device
#else
  return std::sqrt(x);
#endif
}
PVN3D_KABSCH_HD inline double k_abs(double x) { return x < 0.0 ? -x : x; }

PVN3D_KABSCH_HD inline bool k_finite(float x) {
  // x - x is 0 for finite x and NaN for inf/NaN; no <cmath> needed on the device.
  return (x - x) == 0.0f;
}

/* Whether every one of x[0..count) is NaN: VoteAggregate's keypoints for a batch item with an empty
 * mask, which Kabsch answers with NaN R and t (no pose), as PoseSolve does, instead of an error. */
PVN3D_KABSCH_HD inline bool k_all_nan(const float* x, int64_t count) {
  for (int64_t i = 0; i < count; ++i)
    if (x[i] == x[i]) return false;  // only NaN differs from itself
  return count > 0;
}

/* a: model keypoints [K][3], b: predicted keypoints [K][3] (float32, finite), K >= 3.
 * Writes R [3][3] row-major and t [3] (float32). */
PVN3D_KABSCH_HD inline void solve(const float* a, const float* b, int64_t K, float* R_out,
                                  float* t_out) {
  double ma[3] = {0.0, 0.0, 0.0}, mb[3] = {0.0, 0.0, 0.0};
  for (int64_t i = 0; i < K; ++i) {
    for (int c = 0; c < 3; ++c) {
      ma[c] = ma[c] + (double)a[i * 3 + c];
      mb[c] = mb[c] + (double)b[i * 3 + c];
    }
  }
  const double inv_k = 1.0 / (double)K;
  for (int c = 0; c < 3; ++c) {
    ma[c] = ma[c] * inv_k;
    mb[c] = mb[c] * inv_k;
  }
  // A starts as H (A[r][c]); the Jacobi rotations orthogonalise its columns: A V = U S.
  double A[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
  for (int64_t i = 0; i < K; ++i) {
    double da[3], db[3];
    for (int c = 0; c < 3; ++c) {
      da[c] = (double)a[i * 3 + c] - ma[c];
      db[c] = (double)b[i * 3 + c] - mb[c];
    }
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) A[r][c] = A[r][c] + da[r] * db[c];
  }
  double V[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  const int pp[3] = {0, 0, 1}, qq[3] = {1, 2, 2};
  for (int sweep = 0; sweep < 30; ++sweep) {
    bool rotated = false;
    for (int pr = 0; pr < 3; ++pr) {
      const int p = pp[pr], q = qq[pr];
      double alpha = 0.0, beta = 0.0, gamma = 0.0;
      for (int r = 0; r < 3; ++r) {
        alpha = alpha + A[r][p] * A[r][p];
        beta = beta + A[r][q] * A[r][q];
        gamma = gamma + A[r][p] * A[r][q];
      }
      // Skip pairs already orthogonal to working precision (also when gamma is 0 or NaN).
      // (sqrt of each: alpha * beta overflows for keypoints near 1e38, and every pair was skipped)
      if (!(k_abs(gamma) > 1e-15 * (k_sqrt(alpha) * k_sqrt(beta)))) continue;
      const double zeta = (beta - alpha) / (2.0 * gamma);
      double tt;
      if (k_abs(zeta) > 1e150) {
        tt = 0.5 / zeta;  // sqrt(1 + zeta^2) would overflow; t ~ 1/(2 zeta)
      } else {
        tt = 1.0 / (k_abs(zeta) + k_sqrt(1.0 + zeta * zeta));
        if (zeta < 0.0) tt = -tt;
      }
      const double cs = 1.0 / k_sqrt(1.0 + tt * tt);
      const double sn = cs * tt;
      for (int r = 0; r < 3; ++r) {
        const double ap = A[r][p], aq = A[r][q];
        A[r][p] = cs * ap - sn * aq;
        A[r][q] = sn * ap + cs * aq;
        const double vp = V[r][p], vq = V[r][q];
        V[r][p] = cs * vp - sn * vq;
        V[r][q] = sn * vp + cs * vq;
      }
      rotated = true;
    }
    if (!rotated) break;
  }
  double sig[3];
  for (int c = 0; c < 3; ++c) sig[c] = k_sqrt(A[0][c] * A[0][c] + A[1][c] * A[1][c] + A[2][c] * A[2][c]);
  // Sort columns by singular value, descending (stable: swap only on strictly greater).
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 2 - i; ++j) {
      if (sig[j + 1] > sig[j]) {
        const double ts = sig[j]; sig[j] = sig[j + 1]; sig[j + 1] = ts;
        for (int r = 0; r < 3; ++r) {
          double tmp = A[r][j]; A[r][j] = A[r][j + 1]; A[r][j + 1] = tmp;
          tmp = V[r][j]; V[r][j] = V[r][j + 1]; V[r][j + 1] = tmp;
        }
      }
    }
  }
  double U[3][3];  // U[r][c]: column c
  const double tiny = 1e-13 * sig[0];
  if (!(sig[0] > 0.0)) {
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) U[r][c] = (r == c) ? 1.0 : 0.0;
  } else {
    for (int r = 0; r < 3; ++r) U[r][0] = A[r][0] / sig[0];
    if (sig[1] > tiny) {
      for (int r = 0; r < 3; ++r) U[r][1] = A[r][1] / sig[1];
    } else {
      // Any unit vector orthogonal to U0: U0 x e, e the axis least aligned with U0.
      int e = 0;
      if (k_abs(U[1][0]) < k_abs(U[e][0])) e = 1;
      if (k_abs(U[2][0]) < k_abs(U[e][0])) e = 2;
      double ev[3] = {0.0, 0.0, 0.0};
      ev[e] = 1.0;
      double w[3] = {U[1][0] * ev[2] - U[2][0] * ev[1], U[2][0] * ev[0] - U[0][0] * ev[2],
                     U[0][0] * ev[1] - U[1][0] * ev[0]};
      const double nw = k_sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
      for (int r = 0; r < 3; ++r) U[r][1] = w[r] / nw;
    }
    U[0][2] = U[1][0] * U[2][1] - U[2][0] * U[1][1];
    U[1][2] = U[2][0] * U[0][1] - U[0][0] * U[2][1];
    U[2][2] = U[0][0] * U[1][1] - U[1][0] * U[0][1];
  }
  double Rm[3][3];
  for (int pass = 0; pass < 2; ++pass) {
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c)
        Rm[r][c] = V[r][0] * U[c][0] + V[r][1] * U[c][1] + V[r][2] * U[c][2];
    const double det = Rm[0][0] * (Rm[1][1] * Rm[2][2] - Rm[1][2] * Rm[2][1]) -
                       Rm[0][1] * (Rm[1][0] * Rm[2][2] - Rm[1][2] * Rm[2][0]) +
                       Rm[0][2] * (Rm[1][0] * Rm[2][1] - Rm[1][1] * Rm[2][0]);
    if (!(det < 0.0)) break;
    for (int r = 0; r < 3; ++r) V[r][2] = -V[r][2];
  }
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 3; ++c) R_out[r * 3 + c] = (float)Rm[r][c];
    const double tr = mb[r] - (Rm[r][0] * ma[0] + Rm[r][1] * ma[1] + Rm[r][2] * ma[2]);
    t_out[r] = (float)tr;
  }
}

}  // namespace kabsch
}  // namespace pvn3d

#endif /* PVN3D_KABSCH_CORE_H */
