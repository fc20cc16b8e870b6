package org.pvn3d.ort.ops;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.pvn3d.ort.OnnxTensor;
import org.pvn3d.ort.OrtEnvironment;
import org.pvn3d.ort.OrtSession;
import org.pvn3d.ort.Result;
import org.pvn3d.ort.SessionOptions;
import org.pvn3d.ort.io.PvtFile;

/**
 * The embedded PointNet++ graph (all six PVN3D operators, two MSG set-abstraction levels, two
 * feature-propagation levels) on the embedded bunny sample, through ORT's CPU provider with the
 * Java-registered kernels, against the output PyTorch computed for it (exporter/make_pointnet2_default.py).
 */
class PointNet2DefaultTest {
    static byte[] resource(String name) throws Exception {
        try (InputStream in = PointNet2DefaultTest.class.getResourceAsStream(name)) {
            return in.readAllBytes();
        }
    }

    @Test
    void matchesTheCommittedPyTorchOutput() throws Exception {
        Map<String, PvtFile.Entry> sample = PvtFile.read(new java.io.ByteArrayInputStream(resource("/models/bunny_sample.bin")), "bunny_sample.bin");
        Map<String, PvtFile.Entry> expected = PvtFile.read(Path.of(PointNet2DefaultTest.class.getResource("/models/pointnet2_default_expected.bin").toURI()));
        float[] want = expected.get("point_features").floats();
        try (SessionOptions options = new SessionOptions();
                CustomOpDomainCloser domain = new CustomOpDomainCloser(Pvn3dOps.register(options));
                OrtSession session = OrtEnvironment.getEnvironment().createSession(resource("/models/pointnet2_default.onnx"), options);
                OnnxTensor xyz = sample.get("xyz").toTensor();
                Result r = session.run(Map.of("xyz", xyz))) {
            OnnxTensor out = r.tensor("point_features");
            assertArrayEquals(expected.get("point_features").shape(), out.getShape());
            float[] got = out.getFloatArray();
            double maxDiff = 0;
            for (int i = 0; i < got.length; i++) {
                maxDiff = Math.max(maxDiff, Math.abs(got[i] - want[i]));
            }
            System.out.printf("PointNet2DefaultTest: %d values, max |ORT - PyTorch| = %.3g%n", got.length, maxDiff);
            assertTrue(maxDiff < 1e-4, "max abs difference " + maxDiff);
            assertEquals(13 * 2048, got.length);
        }
    }

    /** Closes the domain (the owner's claim) at the end of the try block. */
    record CustomOpDomainCloser(org.pvn3d.ort.customop.CustomOpDomain domain) implements AutoCloseable {
        @Override
        public void close() {
            domain.close();
        }
    }
}
