package org.pvn3d.ort.bench;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Input factories, the same kinds as the native tests' (cuda-ops/tests/test_data.h): SplitMix64 with a
 * fixed seed, random clouds uniform in a 0.5 m cube [0, 0.5)^3, centres picked from the cloud,
 * random indices, normalised positive weights. Everything lands in native memory of the given arena.
 */
final class BenchData {
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
