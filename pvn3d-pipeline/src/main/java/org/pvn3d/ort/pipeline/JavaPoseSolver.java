package org.pvn3d.ort.pipeline;

/** The pose stage in Java: {@link MeanShift} then {@link Kabsch}; the reference for the native operators. */
public final class JavaPoseSolver implements PoseSolver {
    private final MeanShift meanShift;

    public JavaPoseSolver(MeanShift meanShift) {
        this.meanShift = meanShift;
    }

    /** With PVN3D's settings (bandwidth 0.08 m, 300 iterations, centre filter). */
    public JavaPoseSolver() {
        this(MeanShift.PVN3D);
    }

    public MeanShift meanShift() {
        return meanShift;
    }

    @Override
    public String name() {
        return String.format(java.util.Locale.ROOT, "java (mean shift bandwidth %.3g m, max_iter %d, center_filter %d; Kabsch in double)",
                meanShift.bandwidth(), meanShift.maxIter(), meanShift.centerFilter() ? 1 : 0);
    }

    @Override
    public Solution solve(Votes votes, float[] modelKps) {
        if (modelKps.length != votes.k() * 3) {
            throw new IllegalArgumentException("model keypoints: " + modelKps.length / 3.0 + " rows, votes have K=" + votes.k());
        }
        long t0 = System.nanoTime();
        MeanShift.Aggregate agg = meanShift.aggregate(votes.votes(), votes.k(), votes.n(), votes.mask());
        long t1 = System.nanoTime();
        Pose pose = Kabsch.fit(modelKps, agg.kps());
        long t2 = System.nanoTime();
        return new Solution(agg.kps(), agg.inliers(), pose, (t1 - t0) / 1e6, (t2 - t1) / 1e6);
    }
}
