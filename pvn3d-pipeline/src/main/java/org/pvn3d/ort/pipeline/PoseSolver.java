package org.pvn3d.ort.pipeline;

/**
 * The pose stage: votes and the object's model keypoints in, keypoints and a pose out. The Java
 * reference ({@link JavaPoseSolver}: mean shift and Kabsch) implements it today; the native
 * PVN3D_PoseSolve / VoteAggregate + KabschSolver operators can be plugged in behind the same
 * interface (see {@link Pvn3dPipeline#Pvn3dPipeline(byte[], Pvn3dPipeline.Config)}).
 */
public interface PoseSolver {
    /** What the solver ran; shown in reports. */
    String name();

    /**
     * Clusters the votes and fits the model keypoints {@code [K,3]} (centre last, as the votes) to them.
     * An empty mask gives NaN keypoints, {@link Pose#invalid()} and 0 inliers, not an exception.
     */
    Solution solve(Votes votes, float[] modelKps);

    /**
     * The result: {@code kps [K,3]}, the points used, the pose, and how long the two steps took (a fused
     * solver that cannot separate them reports all its time as clustering and 0 for the fit).
     */
    record Solution(float[] kps, int inliers, Pose pose, double clusteringMs, double fitMs) {}

    /**
     * The solver of a name as the command lines take it: {@code native} ({@link NativePoseSolver}, the fused
     * kernel on the CPU's cores), {@code cuda} ({@link CudaPoseSolver} on {@code device}) or {@code java}
     * ({@link JavaPoseSolver}, the reference).
     */
    static PoseSolver named(String name, int device) {
        return switch (name) {
            case "native" -> new NativePoseSolver();
            case "cuda" -> new CudaPoseSolver(device);
            case "java" -> new JavaPoseSolver();
            default -> throw new IllegalArgumentException("a pose solver is native, cuda or java, not " + name);
        };
    }
}
