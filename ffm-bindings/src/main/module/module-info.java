/**
 * The jextract output for ONNX Runtime's C API (API version 16): generated, never edited by hand, and
 * readable only by the runtime module, which keeps it behind its own API.
 */
module org.pvn3d.ort.ffm {
    exports org.pvn3d.ort.ffm to org.pvn3d.ort;
}
