/**
 * The jextract output (generated, never edited by hand): ONNX Runtime's C API (API version 16), read
 * only by the runtime module, which keeps it behind its own API; and libpvn3d_ops's C API
 * (pvn3d_ops.h), read by the operator and pipeline modules, which load the library first.
 */
module org.pvn3d.ort.ffm {
    exports org.pvn3d.ort.ffm to org.pvn3d.ort;
    exports org.pvn3d.ort.ffm.ops to org.pvn3d.ort.ops, org.pvn3d.ort.pipeline;
}
