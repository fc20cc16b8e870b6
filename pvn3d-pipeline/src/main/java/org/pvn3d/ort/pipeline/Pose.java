package org.pvn3d.ort.pipeline;

import java.util.Arrays;

/**
 * A rigid transform {@code x -> R x + t} (model frame to camera frame), in double: {@code r} holds the
 * 3x3 rotation row-major, {@code t} the translation in metres.
 */
public record Pose(double[] r, double[] t) {
    public Pose {
        if (r.length != 9 || t.length != 3) {
            throw new IllegalArgumentException("a pose needs a 3x3 rotation and a 3-vector, got " + r.length + " and " + t.length);
        }
        r = r.clone();
        t = t.clone();
    }

    /** The pose whose every entry is NaN (what an empty mask gives). */
    public static Pose invalid() {
        double[] r = new double[9];
        double[] t = new double[3];
        Arrays.fill(r, Double.NaN);
        Arrays.fill(t, Double.NaN);
        return new Pose(r, t);
    }

    /** From float32 arrays (as the ONNX outputs and the fixture files hold them). */
    public static Pose of(float[] r, float[] t) {
        if (r.length != 9 || t.length != 3) {
            throw new IllegalArgumentException("a pose is 9 rotation and 3 translation values, not " + r.length + " and "
                    + t.length);
        }
        double[] rd = new double[9];
        double[] td = new double[3];
        for (int i = 0; i < 9; i++) {
            rd[i] = r[i];
        }
        for (int i = 0; i < 3; i++) {
            td[i] = t[i];
        }
        return new Pose(rd, td);
    }

    public double[] r() {
        return r.clone();
    }

    public double[] t() {
        return t.clone();
    }

    public double r(int row, int col) {
        return r[row * 3 + col];
    }

    public double t(int i) {
        return t[i];
    }

    /** Whether every entry is finite. */
    public boolean isFinite() {
        for (double v : r) {
            if (!Double.isFinite(v)) {
                return false;
            }
        }
        for (double v : t) {
            if (!Double.isFinite(v)) {
                return false;
            }
        }
        return true;
    }

    /** {@code R x + t} for x = (x0, x1, x2), written into out[off..off+3). */
    public void apply(double x0, double x1, double x2, double[] out, int off) {
        out[off] = r[0] * x0 + r[1] * x1 + r[2] * x2 + t[0];
        out[off + 1] = r[3] * x0 + r[4] * x1 + r[5] * x2 + t[1];
        out[off + 2] = r[6] * x0 + r[7] * x1 + r[8] * x2 + t[2];
    }

    /** Transforms points {@code [n,3]} (float or double array). */
    public double[] apply(float[] points) {
        double[] out = new double[points.length];
        for (int i = 0; i < points.length; i += 3) {
            apply(points[i], points[i + 1], points[i + 2], out, i);
        }
        return out;
    }

    /** {@code R} times {@code other.R}, {@code R other.t + t}: first {@code other}, then this. */
    public Pose compose(Pose other) {
        double[] rr = new double[9];
        for (int i = 0; i < 3; i++) {
            for (int j = 0; j < 3; j++) {
                rr[i * 3 + j] = r[i * 3] * other.r[j] + r[i * 3 + 1] * other.r[3 + j] + r[i * 3 + 2] * other.r[6 + j];
            }
        }
        double[] tt = new double[3];
        apply(other.t[0], other.t[1], other.t[2], tt, 0);
        return new Pose(rr, tt);
    }

    public double determinant() {
        return Mat3.det(r);
    }

    /**
     * The angle of the rotation {@code R_this^T R_other}, in degrees (atan2 of its axis part and its
     * trace part, accurate for small angles too).
     */
    public double rotationErrorDegrees(Pose other) {
        double[] rel = Mat3.mul(Mat3.transpose(r), other.r);
        double c = (rel[0] + rel[4] + rel[8] - 1) / 2;
        double sx = rel[7] - rel[5];
        double sy = rel[2] - rel[6];
        double sz = rel[3] - rel[1];
        double s = Math.sqrt(sx * sx + sy * sy + sz * sz) / 2;
        return Math.toDegrees(Math.atan2(s, c));
    }

    /** |t_this - t_other| in metres. */
    public double translationError(Pose other) {
        return Math.sqrt(sq(t[0] - other.t[0]) + sq(t[1] - other.t[1]) + sq(t[2] - other.t[2]));
    }

    private static double sq(double v) {
        return v * v;
    }

    /** A rotation of {@code angle} radians about the axis (ax, ay, az) (normalised here). */
    public static double[] axisAngle(double ax, double ay, double az, double angle) {
        double n = Math.sqrt(ax * ax + ay * ay + az * az);
        double x = ax / n;
        double y = ay / n;
        double z = az / n;
        double c = Math.cos(angle);
        double s = Math.sin(angle);
        double v = 1 - c;
        return new double[] {
            c + x * x * v, x * y * v - z * s, x * z * v + y * s,
            y * x * v + z * s, c + y * y * v, y * z * v - x * s,
            z * x * v - y * s, z * y * v + x * s, c + z * z * v};
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Pose p && Arrays.equals(r, p.r) && Arrays.equals(t, p.t);
    }

    @Override
    public int hashCode() {
        return 31 * Arrays.hashCode(r) + Arrays.hashCode(t);
    }

    @Override
    public String toString() {
        return String.format(java.util.Locale.ROOT, "Pose[R=[[%.6f, %.6f, %.6f], [%.6f, %.6f, %.6f], [%.6f, %.6f, %.6f]], t=[%.6f, %.6f, %.6f]]",
                r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], t[0], t[1], t[2]);
    }
}
