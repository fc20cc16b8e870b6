/**
 * The Java API over ONNX Runtime's C API through FFM (no JNI): environments, sessions, tensors, IO
 * binding, allocators, custom operators defined in Java, execution providers, and the CUDA device API.
 * ONNX Runtime's native library comes from the ORT artifact on the class path or module path, or from
 * a folder named by {@code pvn3d.ort.path}.
 */
module org.pvn3d.ort {
    requires org.pvn3d.ort.ffm;

    exports org.pvn3d.ort;
    exports org.pvn3d.ort.cuda;
    exports org.pvn3d.ort.customop;
    exports org.pvn3d.ort.providers;
    // native-file extraction, shared with this project's own operator library
    exports org.pvn3d.ort.internal to org.pvn3d.ort.ops;
}
