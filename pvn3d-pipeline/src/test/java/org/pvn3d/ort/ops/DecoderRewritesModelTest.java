package org.pvn3d.ort.ops;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.pvn3d.ort.OnnxTensor;
import org.pvn3d.ort.OrtEnvironment;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.OrtSession;
import org.pvn3d.ort.Result;
import org.pvn3d.ort.SessionOptions;
import org.pvn3d.ort.io.PvtFile;

/**
 * The two decoder rewrites the exporter writes into PVN3D's graph by default (--conv-before-upsample 1,
 * --cnn-at-points up_3; exporter/pvn3d_export/pvn3d/decoder.py), in ORT: {@code decoder_rewrites.onnx}
 * (exporter/make_decoder_models.py) holds a x2 stage computed with its convolution before the upsampling, and
 * the last stage plus the final layer at chosen pixels (their 3x3 neighbourhoods gathered by
 * PVN3D_GroupPoints, neighbours outside the map weighted 0). The expected outputs come from the original
 * modules in PyTorch (upsampling, 3x3 convolution, BatchNorm, PReLU; the final layer over the whole map,
 * then the gather), with chosen pixels on every border and corner.
 */
class DecoderRewritesModelTest {
    static final List<String> INPUTS = List.of("x1", "x3", "choose");
    static final List<String> OUTPUTS = List.of("up1", "at_points");
    /** Float rounding only: other summation orders than PyTorch's convolutions (measured 2e-6 here). */
    static final double TOL = 1e-4;

    static byte[] model() throws Exception {
        try (InputStream in = DecoderRewritesModelTest.class.getResourceAsStream("/models/decoder_rewrites.onnx")) {
            return in.readAllBytes();
        }
    }

    static Map<String, PvtFile.Entry> fixture() throws Exception {
        return PvtFile.read(Path.of(DecoderRewritesModelTest.class.getResource("/models/decoder_rewrites_case1.bin").toURI()));
    }

    /** Runs the model once per feed on one session; returns each run's outputs, or the failure of a run. */
    static Map<String, float[]> run(OrtSession s, Map<String, PvtFile.Entry> f, long[] choose) {
        Map<String, OnnxTensor> feeds = new LinkedHashMap<>();
        try {
            feeds.put("x1", f.get("x1").toTensor());
            feeds.put("x3", f.get("x3").toTensor());
            feeds.put("choose", OnnxTensor.createTensor(choose, f.get("choose").shape()));
            try (Result r = s.run(feeds)) {
                Map<String, float[]> out = new LinkedHashMap<>();
                for (String n : OUTPUTS) {
                    assertArrayEquals(f.get(n).shape(), r.tensor(n).getShape(), "shape of " + n);
                    out.put(n, r.tensor(n).getFloatArray());
                }
                return out;
            }
        } finally {
            feeds.values().forEach(OnnxTensor::close);
        }
    }

    static void check(Map<String, float[]> got, Map<String, PvtFile.Entry> f, String what) {
        for (String n : OUTPUTS) {
            float[] want = f.get(n).floats();
            float[] a = got.get(n);
            double max = 0;
            for (int i = 0; i < want.length; i++) {
                assertTrue(Float.isFinite(a[i]), what + ": " + n + "[" + i + "] = " + a[i]);
                max = Math.max(max, Math.abs((double) a[i] - want[i]));
            }
            System.out.printf("DecoderRewritesModelTest: %s %s: %d values, max |ORT - PyTorch modules| = %.3g%n", what, n,
                    want.length, max);
            assertTrue(max <= TOL, what + ": max |" + n + " - PyTorch| = " + max + " > " + TOL);
        }
    }

    static void runAndCheck(boolean cuda) throws Exception {
        Map<String, PvtFile.Entry> f = fixture();
        long[] choose = f.get("choose").longs();
        try (SessionOptions options = new SessionOptions()) {
            if (cuda) {
                options.addExecutionProvider(CudaProviderTest.cudaOptions());
            }
            try (PointNet2DefaultTest.CustomOpDomainCloser domain =
                            new PointNet2DefaultTest.CustomOpDomainCloser(Pvn3dOps.register(options, CudaIndexCheck.SYNC));
                    OrtSession s = OrtEnvironment.getEnvironment().createSession(model(), options)) {
                String what = cuda ? "CUDA" : "CPU";
                check(run(s, f, choose), f, what);
                // a pixel past the map (index H*W of a 24 x 32 map) fails the run with ORT's error, and the
                // session goes on serving good inputs
                long[] bad = choose.clone();
                bad[17] = 24 * 32;
                OrtException e = assertThrows(OrtException.class, () -> run(s, f, bad));
                System.out.println("DecoderRewritesModelTest: " + what + ", a pixel past the map: " + e.getMessage());
                assertTrue(e.getMessage() != null && e.getMessage().contains("Gather"), what + ": " + e.getMessage());
                check(run(s, f, choose), f, what + " after a failed run");
            }
        }
    }

    @Test
    void bothRewritesMatchTheOriginalModulesOnCpu() throws Exception {
        runAndCheck(false);
    }

    @Test
    void bothRewritesMatchTheOriginalModulesOnCuda() throws Exception {
        Assumptions.assumeTrue(Pvn3dOps.nativeBuiltWithCuda() && Pvn3dOps.cudaDeviceCount() > 0,
                "no CUDA device (or a CPU-only libpvn3d_ops): the CUDA run is made on the GPU machine");
        runAndCheck(true);
    }
}
