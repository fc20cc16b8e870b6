/**
 * PVN3D end to end on ONNX Runtime: the shipped model and sample, the pipeline (network, votes, pose,
 * metrics, parity report, pose picture), folder evaluation, a pool of sessions over devices, and the
 * {@code pvn3d-ort} command line.
 */
module org.pvn3d.ort.pipeline {
    requires transitive org.pvn3d.ort.ops;
    requires org.pvn3d.ort.ffm;
    requires info.picocli;
    // JFR events and --jfr when the JDK has the module
    requires static jdk.jfr;

    exports org.pvn3d.ort.pipeline;
    exports org.pvn3d.ort.pipeline.pool;
    exports org.pvn3d.ort.pipeline.graph;
    exports org.pvn3d.ort.cli;
    // picocli sets the commands' annotated option fields by reflection
    opens org.pvn3d.ort.cli to info.picocli;
    // the pipeline's JFR event class, for JFR alone
    opens org.pvn3d.ort.pipeline.jfr to jdk.jfr;
}
