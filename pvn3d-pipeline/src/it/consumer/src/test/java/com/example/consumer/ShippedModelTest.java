package com.example.consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.pvn3d.ort.OnnxTensor;
import org.pvn3d.ort.OrtEnvironment;
import org.pvn3d.ort.OrtRuntime;
import org.pvn3d.ort.OrtSession;
import org.pvn3d.ort.Result;
import org.pvn3d.ort.SessionOptions;
import org.pvn3d.ort.io.PvtFile;
import org.pvn3d.ort.ops.Pvn3dOps;
import org.pvn3d.ort.pipeline.ParityReport;
import org.pvn3d.ort.pipeline.Pvn3dPipeline;
import org.pvn3d.ort.pipeline.Pvn3dSample;

/** What a user of the installed artifacts does: register the operators, run the shipped model. */
class ShippedModelTest {
    static Map<String, PvtFile.Entry> resource(String name) throws IOException {
        try (InputStream in = ShippedModelTest.class.getResourceAsStream(name)) {
            return PvtFile.read(new ByteArrayInputStream(in.readAllBytes()), name);
        }
    }

    @Test
    void noPathPropertyIsNeeded() {
        assertNull(System.getProperty("pvn3d.ops.path"));
        assertNull(System.getenv("PVN3D_OPS_PATH"));
        assertNull(System.getProperty("pvn3d.ort.path"));
        assertNull(System.getenv("PVN3D_ORT_PATH"));
        OrtRuntime ort = OrtRuntime.get();
        assertTrue(ort.isFromClassPath() && ort.source().startsWith("onnxruntime-"), ort.source());
        assertTrue(!ort.hasCudaProvider(), "the CPU-only ORT artifact carries no CUDA provider");
        Path ops = Pvn3dOps.nativeLibrary();
        assertTrue(ops.startsWith(Path.of(System.getProperty("pvn3d.cache.dir"))), "extracted from the jar: " + ops);
    }

    @Test
    void theShippedModelRunsWithTheOperatorsRegisteredByHand() throws IOException {
        Map<String, PvtFile.Entry> sample = resource("/pvn3d/pvn3d_tiny_sample.bin");
        Map<String, PvtFile.Entry> expected = resource("/pvn3d/pvn3d_tiny_expected.bin");
        byte[] model;
        try (InputStream in = ShippedModelTest.class.getResourceAsStream("/pvn3d/pvn3d_tiny.onnx")) {
            model = in.readAllBytes();
        }
        OrtEnvironment env = OrtEnvironment.getEnvironment();
        Map<String, OnnxTensor> inputs = new HashMap<>();
        try (SessionOptions options = new SessionOptions()) {
            Pvn3dOps.register(options);
            try (OrtSession session = env.createSession(model, options)) {
                for (String name : session.getInputNames()) {
                    inputs.put(name, sample.get(name).toTensor());
                }
                try (Result result = session.run(inputs)) {
                    for (String name : new String[] {"pred_rgbd_seg", "pred_kp_of", "pred_ctr_of"}) {
                        float[] got = result.tensor(name).getFloatArray();
                        float[] want = expected.get(name).floats();
                        assertEquals(want.length, got.length, name);
                        double max = 0;
                        for (int i = 0; i < got.length; i++) {
                            max = Math.max(max, Math.abs(got[i] - want[i]));
                        }
                        assertTrue(max <= 1e-4, name + ": max |ORT - PyTorch| = " + max);
                    }
                    long[] fps = result.tensor("sa1_fps_idx").getLongArray();
                    assertEquals(java.util.Arrays.toString(expected.get("sa1_fps_idx").longs()), java.util.Arrays.toString(fps));
                }
            } finally {
                inputs.values().forEach(OnnxTensor::close);
            }
        }
    }

    @Test
    void thePipelinePassesItsParityCheck() {
        Pvn3dSample sample = Pvn3dSample.resource(Pvn3dSample.RESOURCE);
        try (Pvn3dPipeline pipeline = Pvn3dPipeline.tiny(Pvn3dPipeline.Config.cpu())) {
            Pvn3dPipeline.Result result = pipeline.run(sample);
            ParityReport report = ParityReport.compare(result, Pvn3dPipeline.tinyExpected(), sample, "cpu", Pvn3dPipeline.MODEL_RESOURCE);
            assertTrue(report.passes(), report.summary());
        }
    }
}
