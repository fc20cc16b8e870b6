package org.pvn3d.ort.pipeline;

import java.util.Arrays;
import java.util.stream.IntStream;

/**
 * PVN3D_VoteAggregate of spec/ops.md in Java: mean-shift clustering of per-point keypoint votes, in
 * the reading that {@code cuda-ops/vote_aggregate/vote_aggregate.h} documents and
 * {@code exporter/pvn3d_export/pvn3d/pose.py} implements (float32 distances and weights, sums in
 * double). This is the reference the native operator is checked against.
 *
 * <ul>
 *   <li>Candidates: the masked points all of whose K votes are finite.</li>
 *   <li>For one keypoint over points P with votes x: {@code count_i = #{j : d2(x_i, x_j) < bw^2}} over the
 *       original votes; {@code best} = the first argmax.</li>
 *   <li>Non-blurring mean shift: every mode starts at its vote and moves to
 *       {@code m_i + sum_j w_ij (x_j - m_i) / sum_j w_ij}, {@code w_ij = exp(-0.5 d2(m_i, x_j) / bw^2)} in
 *       float32, flushed to 0 below FLT_MIN; a mode with no weight stays. Stop after the first iteration
 *       in which no mode moved more than {@code bw * 1e-3}, or after {@code maxIter}. The answer is
 *       {@code m_best}.</li>
 *   <li>{@code centerFilter}: the last row (the centre) is clustered first over all candidates; the other
 *       rows use the candidates whose centre vote lies within bw of the chosen centre vote (all
 *       candidates if none). {@code inliers} is the size of that set.</li>
 * </ul>
 */
public final class MeanShift {
    /** PVN3D's settings: bandwidth 0.08 m, 300 iterations, centre filter on. */
    public static final MeanShift PVN3D = new MeanShift(0.08f, 300, true);

    /** ln(2^-126): below this exponent a float32 weight is flushed to 0. */
    static final float MIN_EXPONENT = -87.33654475f;

    private final float bandwidth;
    private final int maxIter;
    private final boolean centerFilter;
    private final float bw2;
    private final float negHalfInvBw2;
    private final float tol2;

    public MeanShift(float bandwidth, int maxIter, boolean centerFilter) {
        if (!(bandwidth > 0) || !Float.isFinite(bandwidth)) {
            throw new IllegalArgumentException("bandwidth must be finite and > 0, not " + bandwidth);
        }
        if (maxIter < 0) {
            throw new IllegalArgumentException("max_iter must be >= 0, not " + maxIter);
        }
        this.bandwidth = bandwidth;
        this.maxIter = maxIter;
        this.centerFilter = centerFilter;
        this.bw2 = bandwidth * bandwidth;
        this.negHalfInvBw2 = -0.5f / bw2;
        float tol = bandwidth * 1e-3f;
        this.tol2 = tol * tol;
    }

    public float bandwidth() {
        return bandwidth;
    }

    public int maxIter() {
        return maxIter;
    }

    public boolean centerFilter() {
        return centerFilter;
    }

    /** The keypoints {@code [K,3]} (NaN when no candidate) and the number of points used. */
    public record Aggregate(float[] kps, int inliers, int candidates, int[] iterations) {}

    /** One keypoint's clustering: the answer, the chosen vote (index into the list) and the iterations run. */
    public record Cluster(float x, float y, float z, int best, int count, int iterations) {}

    /**
     * Aggregates votes {@code [K,N,3]} of the points with {@code mask[n]} (null = all points).
     */
    public Aggregate aggregate(float[] votes, int k, int n, boolean[] mask) {
        if (k < 1 || n < 0 || votes.length != k * n * 3L) {
            throw new IllegalArgumentException("votes must be [K,N,3] with K >= 1; got " + votes.length + " floats for K=" + k + ", N=" + n);
        }
        if (mask != null && mask.length != n) {
            throw new IllegalArgumentException("mask has " + mask.length + " entries, votes have N=" + n);
        }
        float[] kps = new float[k * 3];
        int[] iterations = new int[k];
        int[] cand = IntStream.range(0, n).filter(i -> (mask == null || mask[i]) && allFinite(votes, k, n, i)).toArray();
        if (cand.length == 0) {
            Arrays.fill(kps, Float.NaN);
            return new Aggregate(kps, 0, 0, iterations);
        }
        int[] used = cand;
        int rows = k;
        if (centerFilter) {
            float[] xc = gather(votes, n, k - 1, cand);
            Cluster c = cluster(xc);
            put(kps, k - 1, c);
            iterations[k - 1] = c.iterations();
            float cx = xc[c.best() * 3];
            float cy = xc[c.best() * 3 + 1];
            float cz = xc[c.best() * 3 + 2];
            int[] sel = IntStream.range(0, cand.length)
                    .filter(i -> d2(xc[i * 3], xc[i * 3 + 1], xc[i * 3 + 2], cx, cy, cz) < bw2)
                    .map(i -> cand[i]).toArray();
            used = sel.length > 0 ? sel : cand;
            rows = k - 1;
        }
        final int[] usedPoints = used;
        final int[] its = iterations;
        IntStream.range(0, rows).parallel().forEach(row -> {
            Cluster c = cluster(gather(votes, n, row, usedPoints));
            put(kps, row, c);
            its[row] = c.iterations();
        });
        return new Aggregate(kps, used.length, cand.length, iterations);
    }

    /** Clusters the votes {@code x [n,3]} (n >= 1) of one keypoint. */
    public Cluster cluster(float[] x) {
        int n = x.length / 3;
        if (n < 1) {
            throw new IllegalArgumentException("no votes to cluster");
        }
        int best = 0;
        int bestCount = -1;
        for (int i = 0; i < n; i++) {
            float xi = x[i * 3];
            float yi = x[i * 3 + 1];
            float zi = x[i * 3 + 2];
            int count = 0;
            for (int j = 0; j < n; j++) {
                if (d2(xi, yi, zi, x[j * 3], x[j * 3 + 1], x[j * 3 + 2]) < bw2) {
                    count++;
                }
            }
            if (count > bestCount) {
                bestCount = count;
                best = i;
            }
        }
        float[] m = x.clone();
        float[] next = new float[m.length];
        int it = 0;
        while (it < maxIter) {
            it++;
            final float[] cur = m;
            final float[] nxt = next;
            boolean moved = IntStream.range(0, n).parallel().map(i -> shift(x, n, cur, nxt, i) ? 1 : 0).max().orElse(0) == 1;
            float[] swap = m;
            m = next;
            next = swap;
            if (!moved) {
                break;
            }
        }
        return new Cluster(m[best * 3], m[best * 3 + 1], m[best * 3 + 2], best, bestCount, it);
    }

    /** One mean-shift step of mode i from cur into next; whether it moved more than the tolerance. */
    private boolean shift(float[] x, int n, float[] cur, float[] next, int i) {
        float mx = cur[i * 3];
        float my = cur[i * 3 + 1];
        float mz = cur[i * 3 + 2];
        double sw = 0;
        double sx = 0;
        double sy = 0;
        double sz = 0;
        for (int j = 0; j < n; j++) {
            float dx = x[j * 3] - mx;
            float dy = x[j * 3 + 1] - my;
            float dz = x[j * 3 + 2] - mz;
            float d = dx * dx;
            d = d + dy * dy;
            d = d + dz * dz;
            float e = d * negHalfInvBw2;
            if (e < MIN_EXPONENT) {
                continue;
            }
            float w = (float) Math.exp(e);
            if (w < Float.MIN_NORMAL) {
                continue;
            }
            sw += w;
            sx += w * dx;
            sy += w * dy;
            sz += w * dz;
        }
        float nx = mx;
        float ny = my;
        float nz = mz;
        if (sw > 0) {
            nx = mx + (float) (sx / sw);
            ny = my + (float) (sy / sw);
            nz = mz + (float) (sz / sw);
        }
        next[i * 3] = nx;
        next[i * 3 + 1] = ny;
        next[i * 3 + 2] = nz;
        float ex = nx - mx;
        float ey = ny - my;
        float ez = nz - mz;
        float sh = ex * ex + ey * ey + ez * ez;
        return sh > tol2;
    }

    /** The float32 squared distance of spec/ops.md, left to right. */
    static float d2(float ax, float ay, float az, float bx, float by, float bz) {
        float dx = ax - bx;
        float dy = ay - by;
        float dz = az - bz;
        float d = dx * dx;
        d = d + dy * dy;
        d = d + dz * dz;
        return d;
    }

    private static boolean allFinite(float[] votes, int k, int n, int point) {
        for (int row = 0; row < k; row++) {
            int o = (row * n + point) * 3;
            if (!Float.isFinite(votes[o]) || !Float.isFinite(votes[o + 1]) || !Float.isFinite(votes[o + 2])) {
                return false;
            }
        }
        return true;
    }

    private static float[] gather(float[] votes, int n, int row, int[] points) {
        float[] out = new float[points.length * 3];
        for (int i = 0; i < points.length; i++) {
            System.arraycopy(votes, (row * n + points[i]) * 3, out, i * 3, 3);
        }
        return out;
    }

    private static void put(float[] kps, int row, Cluster c) {
        kps[row * 3] = c.x();
        kps[row * 3 + 1] = c.y();
        kps[row * 3 + 2] = c.z();
    }
}
