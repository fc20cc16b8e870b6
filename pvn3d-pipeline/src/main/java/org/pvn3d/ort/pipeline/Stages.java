package org.pvn3d.ort.pipeline;

import org.pvn3d.ort.jfr.OrtEvents;
import org.pvn3d.ort.pipeline.jfr.StageProbes;
import org.pvn3d.ort.profile.Nvtx;

/**
 * The pipeline's profiling hooks: the JFR event {@value #EVENT} and an NVTX range
 * {@code stage:<name>} around each stage. {@link #begin} returns null (and costs two flag checks) while
 * no recording enables the event and NVTX is off; the jdk.jfr classes load only when the module is there.
 */
final class Stages {
    /** The JFR event of each stage. */
    static final String EVENT = "org.pvn3d.ort.PipelineStage";

    private static final boolean JFR = OrtEvents.isAvailable();
    private static final Object NVTX_ONLY = new Object();

    private Stages() {}

    static Object begin(String stage) {
        Object event = JFR ? StageProbes.begin() : null;
        if (Nvtx.isEnabled()) {
            Nvtx.push("stage:" + stage);
            return event != null ? event : NVTX_ONLY;
        }
        return event;
    }

    /** Ends what {@link #begin} started (nothing for null). */
    static void end(Object token, String stage, Pvn3dPipeline.Config config, int iteration) {
        if (token == null) {
            return;
        }
        if (Nvtx.isEnabled()) {
            Nvtx.pop();
        }
        if (token != NVTX_ONLY) {
            StageProbes.end(token, stage, config.provider().label(), config.device(), iteration);
        }
    }
}
