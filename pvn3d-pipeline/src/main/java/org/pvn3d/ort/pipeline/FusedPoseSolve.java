package org.pvn3d.ort.pipeline;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.MemorySegment;
import java.util.Locale;

/**
 * What the two pose stages over libpvn3d_ops's fused kernel ({@code pvn3d_pose_solve_cpu} in
 * {@link NativePoseSolver}, {@code pvn3d_pose_solve_cuda} in {@link CudaPoseSolver}) share: the argument
 * checks, the mask as one byte per point, the description, and the solution from the kernel's R, t,
 * keypoints and inlier count.
 */
final class FusedPoseSolve {
    private FusedPoseSolve() {
    }

    /** Model keypoints must be K rows of x, y, z, like the votes. */
    static void checkRows(Votes votes, float[] modelKps) {
        if (modelKps.length != votes.k() * 3) {
            throw new IllegalArgumentException("model keypoints: " + modelKps.length / 3.0 + " rows, votes have K=" + votes.k());
        }
    }

    /** For the CUDA kernel, which would only flag a non-finite model keypoint on the device: say it here. */
    static void checkFinite(float[] modelKps) {
        for (int i = 0; i < modelKps.length; i++) {
            if (!Float.isFinite(modelKps[i])) {
                throw new IllegalArgumentException("model keypoints hold a non-finite value (" + modelKps[i] + ") at flat position " + i);
            }
        }
    }

    static byte[] maskBytes(Votes votes) {
        byte[] mask = new byte[votes.n()];
        for (int i = 0; i < mask.length; i++) {
            mask[i] = (byte) (votes.mask()[i] ? 1 : 0);
        }
        return mask;
    }

    static String describe(String kernel, MeanShift s) {
        return String.format(Locale.ROOT, "native %s (mean shift bandwidth %.3g m, max_iter %d, center_filter %d)", kernel,
                s.bandwidth(), s.maxIter(), s.centerFilter() ? 1 : 0);
    }

    /** The solution from host copies of the kernel's outputs; the whole call (since {@code t0}) counts as clustering. */
    static PoseSolver.Solution solution(MemorySegment r, MemorySegment t, MemorySegment kps, MemorySegment inliers, long t0) {
        double ms = (System.nanoTime() - t0) / 1e6;
        float[] rr = r.toArray(JAVA_FLOAT);
        Pose pose = Float.isNaN(rr[0]) ? Pose.invalid() : Pose.of(rr, t.toArray(JAVA_FLOAT));
        return new PoseSolver.Solution(kps.toArray(JAVA_FLOAT), (int) inliers.get(JAVA_LONG, 0), pose, ms, 0);
    }
}
