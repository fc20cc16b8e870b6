/**
 * The PVN3D custom operators for ONNX Runtime (the six PointNet++ operators, vote clustering, the
 * Kabsch fit and the fused pose solve), with libpvn3d_ops's CPU and CUDA kernels inside this jar, and
 * the PVT1 tensor container of the project's fixtures.
 */
module org.pvn3d.ort.ops {
    requires transitive org.pvn3d.ort;
    requires org.pvn3d.ort.ffm;

    exports org.pvn3d.ort.ops;
    exports org.pvn3d.ort.io;
}
