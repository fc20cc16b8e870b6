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

    /** The compact result of a pipeline run. */
    public static PoseResult of(String source, Pvn3dPipeline.Result r, String session, double queueMs, double serviceMs,
            double latencyMs) {
        return new PoseResult(source, r.pose().pose(), r.pose().kps(), r.pose().inliers(), r.votes().n(), r.votes().maskedCount(),
                r.metrics(), r.timings(), session, queueMs, serviceMs, latencyMs, r.voting().pose(), r.refinement().status());
    }

    public boolean hasMetrics() {
        return metrics != null;
    }
}
