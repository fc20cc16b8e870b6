package org.pvn3d.ort.internal.jfr;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/** One compute call of a custom operator's kernel: {@code org.pvn3d.ort.jfr.OrtEvents#CUSTOM_OP_COMPUTE}. */
@Name("org.pvn3d.ort.CustomOpCompute")
@Label("Custom Operator Compute")
@Category({"pvn3d-ort", "Custom Operators"})
@Description("One compute call of a custom operator defined in Java; the duration is host time (for a CUDA kernel: the launch)")
@StackTrace(false)
public final class CustomOpComputeEvent extends jdk.jfr.Event {
    @Label("Operator")
    public String operator;

    @Label("Domain")
    public String domain;

    @Label("Node")
    public String node;

    @Label("Provider")
    public String provider;

    @Label("Input Shapes")
    @Description("The shape of each input, e.g. [1,1024,3] [1,256]")
    public String inputShapes;

    @Label("Input Bytes")
    @DataAmount
    public long inputBytes;

    @Label("Error")
    @Description("Why the compute failed; null when it succeeded")
    public String error;
}
