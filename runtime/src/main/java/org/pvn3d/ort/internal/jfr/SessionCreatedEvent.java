package org.pvn3d.ort.internal.jfr;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;

/** A session was created: {@code org.pvn3d.ort.jfr.OrtEvents#SESSION_CREATED}. */
@Name("org.pvn3d.ort.SessionCreated")
@Label("Session Created")
@Category({"pvn3d-ort", "ONNX Runtime"})
@Description("An ONNX Runtime session was created (model load, graph optimisation, kernel creation); the duration is the creation's")
public final class SessionCreatedEvent extends jdk.jfr.Event {
    @Label("Session")
    @Description("The session's id in this process (the Run events name it)")
    public long sessionId;

    @Label("Model")
    @Description("The model file, or \"N bytes in memory\"")
    public String model;

    @Label("Model Size")
    @DataAmount
    public long modelBytes;

    @Label("Execution Providers")
    @Description("The providers asked for, preferred first, then ORT's CPU provider")
    public String providers;

    @Label("Custom-Op Domains")
    public String customOpDomains;

    @Label("Inputs")
    public int inputs;

    @Label("Outputs")
    public int outputs;

    @Label("ORT Profiling")
    @Description("ONNX Runtime's own profiler is on for this session")
    public boolean profiling;

    @Label("Error")
    @Description("Why the creation failed; null when it succeeded")
    public String error;
}
