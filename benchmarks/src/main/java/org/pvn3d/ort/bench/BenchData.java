package org.pvn3d.ort.bench;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Input factories, the same kinds as the native tests' (cuda-ops/tests/support/test_data.h): SplitMix64 with a
 * fixed seed, random clouds uniform in a 0.5 m cube [0, 0.5)^3, centres picked from the cloud,
 * random indices, normalised positive weights; for the pose operators, keypoint votes like PVN3D's
 * ({@link #poseVotes}). Everything lands in native memory of the given arena.
 */
final class BenchData {
    /** A class-path resource's bytes (a benchmark model); fails clearly when it is missing. */
    static byte[] resource(String name) throws java.io.IOException {
        try (java.io.InputStream in = BenchData.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException("no " + name + " on the class path (run "
                        + "benchmarks/scripts/make_bench_models.py for new attribute values)");
            }
            return in.readAllBytes();
        }
    }

    private long state;

    BenchData(long seed) {
        this.state = seed;
    }

    long next() {
        long z = (state += 0x9e3779b97f4a7c15L);
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    /** Uniform in [lo, hi), 24 random bits, as the native factory. */
    float uniform(float lo, float hi) {
        float u = (float) (next() >>> 40) / (float) (1L << 24);
        return lo + (hi - lo) * u;
    }

    long below(long n) {
        return Long.remainderUnsigned(next(), n);
    }

    /** [B, N, 3] points uniform in the 0.5 m cube. */
    MemorySegment cloud(Arena arena, long b, long n) {
        return floats(arena, b * n * 3, 0f, 0.5f);
    }

    MemorySegment floats(Arena arena, long count, float lo, float hi) {
        MemorySegment s = arena.allocate(Math.max(1, count) * 4, 64);
        for (long i = 0; i < count; i++) {
            s.setAtIndex(JAVA_FLOAT, i, uniform(lo, hi));
        }
        return s.asSlice(0, count * 4);
    }

    MemorySegment indices(Arena arena, long count, long limit) {
        MemorySegment s = arena.allocate(Math.max(1, count) * 8, 64);
        for (long i = 0; i < count; i++) {
            s.setAtIndex(JAVA_LONG, i, below(limit));
        }
        return s.asSlice(0, count * 8);
    }

    /** [B, M, 3] centres: points of the cloud [B, N, 3], picked with replacement (no jitter). */
    MemorySegment centres(Arena arena, MemorySegment cloud, long b, long n, long m) {
        MemorySegment s = arena.allocate(Math.max(1, b * m * 3) * 4, 64);
        for (long bi = 0; bi < b; bi++) {
            for (long mi = 0; mi < m; mi++) {
                long i = below(n);
                for (int k = 0; k < 3; k++) {
                    s.setAtIndex(JAVA_FLOAT, (bi * m + mi) * 3 + k, cloud.getAtIndex(JAVA_FLOAT, (bi * n + i) * 3 + k));
                }
            }
        }
        return s.asSlice(0, b * m * 3 * 4);
    }

    /** A standard normal number (Box-Muller over two uniforms of 53 bits). */
    double gaussian() {
        double u1 = 1.0 - (next() >>> 11) * 0x1.0p-53; // (0, 1]
        double u2 = (next() >>> 11) * 0x1.0p-53;
        return Math.sqrt(-2.0 * Math.log(u1)) * Math.cos(2.0 * Math.PI * u2);
    }

    /** {@code count} floats 1.0f (a mask with every point set). */
    MemorySegment ones(Arena arena, long count) {
        MemorySegment s = arena.allocate(Math.max(1, count) * 4, 64);
        for (long i = 0; i < count; i++) {
            s.setAtIndex(JAVA_FLOAT, i, 1f);
        }
        return s.asSlice(0, count * 4);
    }

    /**
     * [K, 3] model keypoints of an object: K-1 uniform in [-0.08, 0.08)^3 around the object's centre,
     * and the centre (0, 0, 0) last (PVN3D's layout: the last keypoint row is the centre).
     */
    MemorySegment modelKeypoints(Arena arena, long k) {
        MemorySegment s = arena.allocate(Math.max(1, k * 3) * 4, 64);
        for (long i = 0; i < (k - 1) * 3; i++) {
            s.setAtIndex(JAVA_FLOAT, i, uniform(-0.08f, 0.08f));
        }
        return s.asSlice(0, k * 3 * 4);
    }

    /**
     * [B, K, N, 3] keypoint votes like PVN3D's for one object per batch item: the model keypoints
     * {@code model} [K, 3] under a random rotation (uniform quaternion) and a translation uniform in
     * [0.14, 0.36)^3, so every keypoint lies in the 0.5 m cube; each of the N points votes for each
     * keypoint with Gaussian noise of 1 cm per coordinate, except 30% outlier points, whose K votes
     * are uniform in the 0.5 m cube.
     */
    MemorySegment poseVotes(Arena arena, MemorySegment model, long b, long k, long n) {
        MemorySegment s = arena.allocate(Math.max(1, b * k * n * 3) * 4, 64);
        double[] kp = new double[(int) k * 3];
        boolean[] outlier = new boolean[(int) n];
        for (long bi = 0; bi < b; bi++) {
            double qw = gaussian(), qx = gaussian(), qy = gaussian(), qz = gaussian();
            double qn = Math.sqrt(qw * qw + qx * qx + qy * qy + qz * qz);
            qw /= qn;
            qx /= qn;
            qy /= qn;
            qz /= qn;
            double[] r = {
                1 - 2 * (qy * qy + qz * qz), 2 * (qx * qy - qw * qz), 2 * (qx * qz + qw * qy),
                2 * (qx * qy + qw * qz), 1 - 2 * (qx * qx + qz * qz), 2 * (qy * qz - qw * qx),
                2 * (qx * qz - qw * qy), 2 * (qy * qz + qw * qx), 1 - 2 * (qx * qx + qy * qy)};
            double[] t = {uniform(0.14f, 0.36f), uniform(0.14f, 0.36f), uniform(0.14f, 0.36f)};
            for (int ki = 0; ki < k; ki++) {
                for (int c = 0; c < 3; c++) {
                    double v = t[c];
                    for (int j = 0; j < 3; j++) {
                        v += r[c * 3 + j] * model.getAtIndex(JAVA_FLOAT, ki * 3L + j);
                    }
                    kp[ki * 3 + c] = v;
                }
            }
            for (int ni = 0; ni < n; ni++) {
                outlier[ni] = uniform(0f, 1f) < 0.3f;
            }
            for (long ki = 0; ki < k; ki++) {
                for (long ni = 0; ni < n; ni++) {
                    long at = ((bi * k + ki) * n + ni) * 3;
                    for (int c = 0; c < 3; c++) {
                        float v = outlier[(int) ni] ? uniform(0f, 0.5f) : (float) (kp[(int) ki * 3 + c] + 0.01 * gaussian());
                        s.setAtIndex(JAVA_FLOAT, at + c, v);
                    }
                }
            }
        }
        return s.asSlice(0, b * k * n * 3 * 4);
    }

    /** [B, n, 3] positive weights summing to 1 per row. */
    MemorySegment weights(Arena arena, long b, long n) {
        MemorySegment s = arena.allocate(Math.max(1, b * n * 3) * 4, 64);
        for (long r = 0; r < b * n; r++) {
            float sum = 0;
            float[] w = new float[3];
            for (int k = 0; k < 3; k++) {
                w[k] = uniform(0.01f, 1.0f);
                sum += w[k];
            }
            for (int k = 0; k < 3; k++) {
                s.setAtIndex(JAVA_FLOAT, 3 * r + k, w[k] / sum);
            }
        }
        return s.asSlice(0, b * n * 3 * 4);
    }
}
