package org.pvn3d.ort.pipeline;

/**
 * The least-squares rigid fit of spec/ops.md (PVN3D_KabschSolver) in double: the rotation and
 * translation minimising {@code sum |R a_i + t - b_i|^2}. Centre both point sets,
 * {@code H = sum (a_i - mean a)(b_i - mean b)^T = U S V^T}, {@code R = V U^T}; when {@code det R < 0}
 * the last column of V (the smallest singular value's) is negated and R recomputed, so R is always a
 * proper rotation; {@code t = mean b - R mean a}.
 */
public final class Kabsch {
    private Kabsch() {}

    /**
     * Fits model points {@code a [k,3]} to observed points {@code b [k,3]} (row-major). A non-finite
     * b gives {@link Pose#invalid()}, as the native solver's NaN rows.
     *
     * @throws IllegalArgumentException when k < 3 or the lengths differ
     */
    public static Pose fit(float[] a, float[] b) {
        return fit(toDouble(a), toDouble(b));
    }

    /** {@link #fit(float[], float[])} in double. */
    public static Pose fit(double[] a, double[] b) {
        if (a.length != b.length || a.length % 3 != 0) {
            throw new IllegalArgumentException("Kabsch: model has " + a.length / 3.0 + " points, prediction " + b.length / 3.0);
        }
        return fit(a, b, a.length / 3);
    }

    /**
     * {@link #fit(double[], double[])} over the first {@code k} rows of {@code a} and {@code b} (longer
     * arrays are scratch space that callers reuse, e.g. {@link IcpRefiner}'s correspondences).
     *
     * @throws IllegalArgumentException when k < 3 or either array has fewer than k rows
     */
    public static Pose fit(double[] a, double[] b, int k) {
        if (k < 3) {
            throw new IllegalArgumentException("Kabsch: needs K >= 3 keypoints, got K=" + k);
        }
        if (a.length < 3 * k || b.length < 3 * k) {
            throw new IllegalArgumentException("Kabsch: K=" + k + " rows asked, model has " + a.length / 3.0 + ", prediction "
                    + b.length / 3.0);
        }
        for (int i = 0; i < 3 * k; i++) {
            if (!Double.isFinite(b[i])) {
                return Pose.invalid();
            }
        }
        double[] ma = mean(a, k);
        double[] mb = mean(b, k);
        double[] h = new double[9];
        for (int i = 0; i < k; i++) {
            for (int r = 0; r < 3; r++) {
                double ar = a[i * 3 + r] - ma[r];
                for (int c = 0; c < 3; c++) {
                    h[r * 3 + c] += ar * (b[i * 3 + c] - mb[c]);
                }
            }
        }
        Mat3.Svd svd = Mat3.svd(h);
        double[] v = svd.v();
        double[] rot = Mat3.mulTransposed(v, svd.u());
        if (Mat3.det(rot) < 0) {
            v[2] = -v[2];
            v[5] = -v[5];
            v[8] = -v[8];
            rot = Mat3.mulTransposed(v, svd.u());
        }
        double[] t = new double[3];
        for (int r = 0; r < 3; r++) {
            t[r] = mb[r] - (rot[r * 3] * ma[0] + rot[r * 3 + 1] * ma[1] + rot[r * 3 + 2] * ma[2]);
        }
        return new Pose(rot, t);
    }

    private static double[] mean(double[] p, int k) {
        double[] m = new double[3];
        for (int i = 0; i < k; i++) {
            m[0] += p[i * 3];
            m[1] += p[i * 3 + 1];
            m[2] += p[i * 3 + 2];
        }
        m[0] /= k;
        m[1] /= k;
        m[2] /= k;
        return m;
    }

    static double[] toDouble(float[] f) {
        double[] d = new double[f.length];
        for (int i = 0; i < f.length; i++) {
            d[i] = f[i];
        }
        return d;
    }
}
