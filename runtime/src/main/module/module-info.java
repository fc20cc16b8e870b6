/**
 * The Java API over ONNX Runtime's C API through FFM (no JNI): environments, sessions, tensors, IO
 * binding, allocators, custom operators defined in Java, execution providers, and the CUDA device API.
 * ONNX Runtime's native library comes from the ORT artifact on the class path or module path, or from
 * a folder named by {@code pvn3d.ort.path}.
 */
module org.pvn3d.ort {
    requires org.pvn3d.ort.ffm;
    // JFR events when the JDK has the module (a jlinked runtime may leave it out: the events are then off)
    requires static jdk.jfr;

    exports org.pvn3d.ort;
    exports org.pvn3d.ort.cuda;
    exports org.pvn3d.ort.customop;
    exports org.pvn3d.ort.providers;
    exports org.pvn3d.ort.jfr;
    exports org.pvn3d.ort.profile;
    // native-file extraction, shared with this project's own operator library
    exports org.pvn3d.ort.internal to org.pvn3d.ort.ops;
    // the JFR event classes: JFR instruments and registers them, nothing else needs to see them
    opens org.pvn3d.ort.internal.jfr to jdk.jfr;
}
