package org.pvn3d.ort.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.pvn3d.ort.DeviceTensor;
import org.pvn3d.ort.OnnxTensor;
import org.pvn3d.ort.OnnxTensorType;
import org.pvn3d.ort.OrtEnvironment;
import org.pvn3d.ort.OrtIoBinding;
import org.pvn3d.ort.OrtMemoryInfo;
import org.pvn3d.ort.OrtSession;
import org.pvn3d.ort.Result;
import org.pvn3d.ort.SessionOptions;
import org.pvn3d.ort.cuda.CudaCopy;
import org.pvn3d.ort.cuda.CudaDevice;
import org.pvn3d.ort.cuda.DeviceBuffer;
import org.pvn3d.ort.io.PvtFile;
import org.pvn3d.ort.providers.OrtCUDAProviderOptions;

/**
 * The PVN3D operators inside an IO-bound, device-resident run of the embedded PointNet++ model (GPU
 * machine only; skipped, and says so, without a CUDA device or with a CPU-only libpvn3d_ops).
 */
class PointNet2BoundRunGpuTest {
    static final OrtEnvironment env = OrtEnvironment.getEnvironment();

    @BeforeAll
    static void gpuOnly() {
        Assumptions.assumeTrue(Pvn3dOps.nativeBuiltWithCuda() && CudaDevice.count() > 0,
                "no CUDA device (or a CPU-only libpvn3d_ops): these runs are made on the GPU machine");
    }

    static float[] floats(DeviceTensor deviceTensor) {
        try (OnnxTensor h = CudaCopy.toHost(deviceTensor)) {
            return h.getFloatArray();
        }
    }

    @Test
    void pvn3dCustomOperatorsInsideABoundRunEqualTheHostPath() throws Exception {
        byte[] model;
        byte[] sampleBytes;
        try (InputStream m = PointNet2BoundRunGpuTest.class.getResourceAsStream("/models/pointnet2_default.onnx");
                InputStream s = PointNet2BoundRunGpuTest.class.getResourceAsStream("/models/bunny_sample.bin")) {
            model = m.readAllBytes();
            sampleBytes = s.readAllBytes();
        }
        PvtFile.Entry xyz = PvtFile.read(new ByteArrayInputStream(sampleBytes), "bunny_sample.bin").get("xyz");
        float[] xyzValues = xyz.floats();
        try (SessionOptions o = new SessionOptions()) {
            Pvn3dOps.register(o).close();
            o.addExecutionProvider(new OrtCUDAProviderOptions(0));
            try (OrtSession s = env.createSession(model, o);
                    OnnxTensor host = xyz.toTensor();
                    DeviceBuffer buf = DeviceBuffer.of(xyzValues);
                    DeviceTensor dev = DeviceTensor.createTensor(buf, OnnxTensorType.FLOAT, xyz.shape());
                    OrtMemoryInfo cuda = OrtMemoryInfo.cuda(0);
                    OrtIoBinding b = s.createIoBinding()) {
                float[] hostPath;
                try (Result r = s.run(Map.of("xyz", host))) {
                    hostPath = r.tensor("point_features").getFloatArray();
                }
                long launches = Pvn3dOps.cudaLaunchCount();
                b.bindInput("xyz", dev).bindOutput("point_features", cuda);
                s.run(b);
                float[] bound;
                try (Result r = b.getOutputs()) {
                    assertTrue(r.deviceTensor("point_features").isOnDevice());
                    bound = floats(r.deviceTensor("point_features"));
                }
                System.out.println("PointNet++ bound run: " + (Pvn3dOps.cudaLaunchCount() - launches)
                        + " PVN3D CUDA launches, " + bound.length + " values");
                assertTrue(Pvn3dOps.cudaLaunchCount() > launches, "the PVN3D operators ran on CUDA in the bound run");
                assertEquals(hostPath.length, bound.length);
                double maxDiff = 0;
                for (int i = 0; i < bound.length; i++) {
                    maxDiff = Math.max(maxDiff, Math.abs(bound[i] - hostPath[i]));
                }
                System.out.printf("PointNet++ bound device run vs host-input run: max |diff| = %.3g%n", maxDiff);
                assertTrue(maxDiff <= 1e-5, "max abs difference " + maxDiff);
            }
        }
    }

}
