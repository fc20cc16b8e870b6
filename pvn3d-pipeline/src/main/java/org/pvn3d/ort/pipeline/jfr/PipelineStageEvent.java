package org.pvn3d.ort.pipeline.jfr;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/** One stage of the PVN3D pipeline ({@value #NAME}). */
@Name(PipelineStageEvent.NAME)
@Label("PVN3D Pipeline Stage")
@Category({"pvn3d-ort", "Pipeline"})
@Description("One stage of the PVN3D pipeline: load, upload, inference, download, voting, pose (clustering and fit), refinement (ICP), metrics")
@StackTrace(false)
public final class PipelineStageEvent extends jdk.jfr.Event {
    public static final String NAME = "org.pvn3d.ort.PipelineStage";

    @Label("Stage")
    public String stage;

    @Label("Provider")
    @Description("cpu or cuda")
    public String provider;

    @Label("Device")
    public int device;

    @Label("Iteration")
    @Description("For the network's stages: the timed run (0, 1, ...) or a warm-up run (negative); 0 for the others")
    public int iteration;
}
