package org.pvn3d.ort.internal.jfr;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/** One run of a session: {@code org.pvn3d.ort.jfr.OrtEvents#RUN}. */
@Name("org.pvn3d.ort.Run")
@Label("Session Run")
@Category({"pvn3d-ort", "ONNX Runtime"})
@Description("One run of an ONNX Runtime session (OrtSession.run with tensors or an IO binding)")
@StackTrace(false)
public final class RunEvent extends jdk.jfr.Event {
    @Label("Session")
    public long sessionId;

    @Label("Model")
    public String model;

    @Label("Run Tag")
    @Description("The run options' tag, or empty")
    public String runTag;

    @Label("Provider")
    @Description("The session's preferred execution provider")
    public String provider;

    @Label("IO Binding")
    public boolean ioBinding;

    @Label("Input Count")
    public int inputCount;

    @Label("Input Bytes")
    @DataAmount
    public long inputBytes;

    @Label("Output Count")
    public int outputCount;

    @Label("Output Bytes")
    @DataAmount
    @Description("Bytes of the outputs of known size (outputs ORT allocates on a device for an IO binding are not counted)")
    public long outputBytes;

    @Label("Error")
    @Description("Why the run failed; null when it succeeded")
    public String error;
}
