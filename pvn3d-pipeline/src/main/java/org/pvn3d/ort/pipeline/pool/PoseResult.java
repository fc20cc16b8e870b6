package org.pvn3d.ort.pipeline.pool;

import org.pvn3d.ort.pipeline.IcpRefiner;
import org.pvn3d.ort.pipeline.Pose;
import org.pvn3d.ort.pipeline.PoseMetrics;
import org.pvn3d.ort.pipeline.Pvn3dPipeline;

/**
 * What one frame gave, without the network's raw outputs (a pool serving many frames keeps only this):
 * the final pose (refined where the refinement ran), the keypoints {@code [K,3]} the voting pose was fitted
 * to, the inlier count, the cloud size and how many points the mask kept, the final pose's ADD / ADD-S when
 * the sample has a ground truth ({@code metrics} null otherwise), the pipeline's stage times, where and how
 * long the frame waited and ran, the voting pose before refinement and how the refinement went.
 *
 * @param source    the sample's name ({@code Pvn3dSample.source()})
 * @param session   the session that ran it, e.g. {@code cpu#0} or {@code cuda:1#0} (device 1, its first session)
 * @param queueMs   from {@code submit} until a session took the frame
 * @param serviceMs the session's time on the frame (the whole pipeline)
 * @param latencyMs from {@code submit} until the result was ready ({@code queueMs + serviceMs} and a little)
 */
public record PoseResult(String source, Pose pose, float[] keypoints, int inliers, int points, int masked,
        PoseMetrics.Result metrics, Pvn3dPipeline.Timings timings, String session, double queueMs, double serviceMs,
        double latencyMs, Pose votingPose, IcpRefiner.Status refinement) {

    /**
     * What a session gives for one frame (a {@link PoseResult} without where and how long the frame waited
     * and ran): the pool adds those. {@code timings} splits the session's time into stages where the session
     * can tell them apart ({@link org.pvn3d.ort.pipeline.Pvn3dPipeline}); a session whose network and pose
     * stage are one graph ({@link FrameToPoseSession}) reports them as one inference.
     */
    public record Frame(Pose pose, float[] keypoints, int inliers, int points, int masked, PoseMetrics.Result metrics,
            Pvn3dPipeline.Timings timings, Pose votingPose, IcpRefiner.Status refinement) {
        /** The frame's part of a pipeline run. */
        public static Frame of(Pvn3dPipeline.Result r) {
            return new Frame(r.pose().pose(), r.pose().kps(), r.pose().inliers(), r.votes().n(), r.votes().maskedCount(), r.metrics(),
                    r.timings(), r.voting().pose(), r.refinement().status());
        }
    }

    /** A session's frame with the pool's figures. */
    public static PoseResult of(String source, Frame f, String session, double queueMs, double serviceMs, double latencyMs) {
        return new PoseResult(source, f.pose(), f.keypoints(), f.inliers(), f.points(), f.masked(), f.metrics(), f.timings(), session,
                queueMs, serviceMs, latencyMs, f.votingPose(), f.refinement());
    }

    /** The compact result of a pipeline run. */
    public static PoseResult of(String source, Pvn3dPipeline.Result r, String session, double queueMs, double serviceMs,
            double latencyMs) {
        return of(source, Frame.of(r), session, queueMs, serviceMs, latencyMs);
    }

    public boolean hasMetrics() {
        return metrics != null;
    }
}
