package org.pvn3d.ort.pipeline;

/** Row-major 3x3 double matrices and their singular value decomposition (one-sided Jacobi). */
public final class Mat3 {
    private Mat3() {}

    public static double det(double[] m) {
        return m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) + m[2] * (m[3] * m[7] - m[4] * m[6]);
    }

    /** a * b. */
    public static double[] mul(double[] a, double[] b) {
        double[] c = new double[9];
        for (int i = 0; i < 3; i++) {
            for (int j = 0; j < 3; j++) {
                c[i * 3 + j] = a[i * 3] * b[j] + a[i * 3 + 1] * b[3 + j] + a[i * 3 + 2] * b[6 + j];
            }
        }
        return c;
    }

    /** a * b^T. */
    public static double[] mulTransposed(double[] a, double[] b) {
        double[] c = new double[9];
        for (int i = 0; i < 3; i++) {
            for (int j = 0; j < 3; j++) {
                c[i * 3 + j] = a[i * 3] * b[j * 3] + a[i * 3 + 1] * b[j * 3 + 1] + a[i * 3 + 2] * b[j * 3 + 2];
            }
        }
        return c;
    }

    public static double[] transpose(double[] a) {
        return new double[] {a[0], a[3], a[6], a[1], a[4], a[7], a[2], a[5], a[8]};
    }

    /** {@code a = u diag(s) v^T} with orthogonal u, v and s[0] >= s[1] >= s[2] >= 0. */
    public record Svd(double[] u, double[] s, double[] v) {
        /** u diag(s) v^T, to check a decomposition. */
        public double[] product() {
            double[] us = new double[9];
            for (int i = 0; i < 3; i++) {
                for (int j = 0; j < 3; j++) {
                    us[i * 3 + j] = u[i * 3 + j] * s[j];
                }
            }
            return mulTransposed(us, v);
        }
    }

    /**
     * The SVD of a 3x3 matrix by one-sided (Hestenes) Jacobi rotations in double: the columns of
     * {@code a v} are orthogonalised, their norms are the singular values and, normalised, the
     * columns of u. Accurate for every input, rank-deficient ones included: a column of u whose
     * singular value vanishes (below 1e-12 of the largest) is completed to a right-handed
     * orthonormal basis from the others. Non-finite input gives NaN everywhere.
     */
    public static Svd svd(double[] a) {
        for (double x : a) {
            if (!Double.isFinite(x)) {
                double[] nan = new double[9];
                java.util.Arrays.fill(nan, Double.NaN);
                return new Svd(nan, new double[] {Double.NaN, Double.NaN, Double.NaN}, nan.clone());
            }
        }
        double[] w = a.clone();
        double[] v = {1, 0, 0, 0, 1, 0, 0, 0, 1};
        for (int sweep = 0; sweep < 64; sweep++) {
            boolean rotated = false;
            for (int p = 0; p < 2; p++) {
                for (int q = p + 1; q < 3; q++) {
                    double alpha = 0;
                    double beta = 0;
                    double gamma = 0;
                    for (int i = 0; i < 3; i++) {
                        double wp = w[i * 3 + p];
                        double wq = w[i * 3 + q];
                        alpha += wp * wp;
                        beta += wq * wq;
                        gamma += wp * wq;
                    }
                    // sqrt of each, as the native kernels: alpha * beta overflows for points near 1e38, and every
                    // pair was skipped (R came out as no rotation)
                    if (gamma == 0 || Math.abs(gamma) <= 1e-15 * (Math.sqrt(alpha) * Math.sqrt(beta))) {
                        continue;
                    }
                    rotated = true;
                    double zeta = (beta - alpha) / (2 * gamma);
                    double tan = Math.abs(zeta) > 1e150 ? 0.5 / zeta // sqrt(1 + zeta^2) would overflow; t ~ 1/(2 zeta)
                            : Math.signum(zeta) / (Math.abs(zeta) + Math.sqrt(1 + zeta * zeta));
                    if (zeta == 0) {
                        tan = 1;
                    }
                    double c = 1 / Math.sqrt(1 + tan * tan);
                    double s = c * tan;
                    for (int i = 0; i < 3; i++) {
                        double wp = w[i * 3 + p];
                        double wq = w[i * 3 + q];
                        w[i * 3 + p] = c * wp - s * wq;
                        w[i * 3 + q] = s * wp + c * wq;
                        double vp = v[i * 3 + p];
                        double vq = v[i * 3 + q];
                        v[i * 3 + p] = c * vp - s * vq;
                        v[i * 3 + q] = s * vp + c * vq;
                    }
                }
            }
            if (!rotated) {
                break;
            }
        }
        double[] s = new double[3];
        for (int j = 0; j < 3; j++) {
            s[j] = Math.sqrt(w[j] * w[j] + w[3 + j] * w[3 + j] + w[6 + j] * w[6 + j]);
        }
        // sort columns by descending singular value
        int[] order = {0, 1, 2};
        for (int i = 0; i < 3; i++) {
            for (int j = i + 1; j < 3; j++) {
                if (s[order[j]] > s[order[i]]) {
                    int tmp = order[i];
                    order[i] = order[j];
                    order[j] = tmp;
                }
            }
        }
        double[] ss = new double[3];
        double[] u = new double[9];
        double[] vs = new double[9];
        for (int j = 0; j < 3; j++) {
            int o = order[j];
            ss[j] = s[o];
            for (int i = 0; i < 3; i++) {
                vs[i * 3 + j] = v[i * 3 + o];
                u[i * 3 + j] = w[i * 3 + o];
            }
        }
        double tiny = Math.max(ss[0] * 1e-12, Double.MIN_NORMAL);
        int rank = 0;
        for (int j = 0; j < 3; j++) {
            if (ss[j] > tiny) {
                for (int i = 0; i < 3; i++) {
                    u[i * 3 + j] /= ss[j];
                }
                rank++;
            }
        }
        // complete u to an orthonormal basis where singular values vanish
        if (rank == 0) {
            u = new double[] {1, 0, 0, 0, 1, 0, 0, 0, 1};
        } else if (rank < 3) {
            if (rank == 1) {
                double[] u0 = {u[0], u[3], u[6]};
                // any unit vector orthogonal to u0: cross with the axis it is least aligned with
                int axis = Math.abs(u0[0]) <= Math.abs(u0[1]) && Math.abs(u0[0]) <= Math.abs(u0[2]) ? 0
                        : Math.abs(u0[1]) <= Math.abs(u0[2]) ? 1 : 2;
                double[] e = new double[3];
                e[axis] = 1;
                double[] u1 = normalize(cross(u0, e));
                u[1] = u1[0];
                u[4] = u1[1];
                u[7] = u1[2];
            }
            double[] u2 = normalize(cross(new double[] {u[0], u[3], u[6]}, new double[] {u[1], u[4], u[7]}));
            u[2] = u2[0];
            u[5] = u2[1];
            u[8] = u2[2];
        }
        return new Svd(u, ss, vs);
    }

    static double[] cross(double[] a, double[] b) {
        return new double[] {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
    }

    static double[] normalize(double[] a) {
        double n = Math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
        return new double[] {a[0] / n, a[1] / n, a[2] / n};
    }
}
