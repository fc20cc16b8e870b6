package org.pvn3d.ort.pipeline.jfr;

/** Begins and commits {@link PipelineStageEvent}s; called only when the {@code jdk.jfr} module is there. */
public final class StageProbes {
    private static final PipelineStageEvent PROBE = new PipelineStageEvent();

    private StageProbes() {}

    /** A started event, or null while no recording enables it (nothing allocated then). */
    public static Object begin() {
        if (!PROBE.isEnabled()) {
            return null;
        }
        PipelineStageEvent e = new PipelineStageEvent();
        e.begin();
        return e;
    }

    public static void end(Object token, String stage, String provider, int device, int iteration) {
        if (token instanceof PipelineStageEvent e) {
            e.end();
            if (e.shouldCommit()) {
                e.stage = stage;
                e.provider = provider;
                e.device = device;
                e.iteration = iteration;
                e.commit();
            }
        }
    }
}
