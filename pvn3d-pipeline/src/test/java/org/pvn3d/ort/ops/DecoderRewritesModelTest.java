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
        check(got, f, what, -1);
    }

    /**
     * Compares every output with the PyTorch modules' values; with {@code skipPoint >= 0}, at_points' column of
     * that flat (b, n) position (every channel) is left out: the run fed a bad pixel there.
     */
    static void check(Map<String, float[]> got, Map<String, PvtFile.Entry> f, String what, int skipPoint) {
        for (String n : OUTPUTS) {
            float[] want = f.get(n).floats();
            float[] a = got.get(n);
            long[] shape = f.get(n).shape();
            double max = 0;
            int compared = 0;
            for (int i = 0; i < want.length; i++) {
                if (skipPoint >= 0 && n.equals("at_points") && atPoint(shape, i) == skipPoint) {
                    continue;
                }
                assertTrue(Float.isFinite(a[i]), what + ": " + n + "[" + i + "] = " + a[i]);
                max = Math.max(max, Math.abs((double) a[i] - want[i]));
                compared++;
            }
            System.out.printf("DecoderRewritesModelTest: %s %s: %d values, max |ORT - PyTorch modules| = %.3g%n", what, n,
                    compared, max);
            assertTrue(max <= TOL, what + ": max |" + n + " - PyTorch| = " + max + " > " + TOL);
        }
    }

    /** The flat (b, n) position of element i of an at_points tensor [B, C, N]. */
    static int atPoint(long[] shape, int i) {
        int c = (int) shape[1], np = (int) shape[2];
        return (i / (c * np)) * np + i % np;
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
                // a pixel past the map (index H*W of a 24 x 32 map): on the CPU, ORT's Gather of the
                // neighbour tables fails the run with its error. ORT's CUDA Gather does not check indices
                // (an out-of-range one reads as 0 there), so on CUDA the run may succeed: then every other
                // pixel's values are still right and nothing is NaN. (FrameToPose refuses such a pixel on
                // the host before anything reaches the device.) Either way the session goes on serving.
                long[] bad = choose.clone();
                bad[17] = 24 * 32;
                if (!cuda) {
                    OrtException e = assertThrows(OrtException.class, () -> run(s, f, bad));
                    System.out.println("DecoderRewritesModelTest: " + what + ", a pixel past the map: " + e.getMessage());
                    assertTrue(e.getMessage() != null && e.getMessage().contains("Gather"), what + ": " + e.getMessage());
                } else {
                    Map<String, float[]> got = null;
                    try {
                        got = run(s, f, bad);
                    } catch (OrtException e) {
                        System.out.println("DecoderRewritesModelTest: " + what + ", a pixel past the map: " + e.getMessage());
                        assertTrue(e.getMessage() != null && !e.getMessage().isBlank(), what + ": an empty message");
                    }
                    if (got != null) {
                        System.out.println("DecoderRewritesModelTest: " + what + ", a pixel past the map: the run succeeded"
                                + " (ORT's CUDA Gather does not check indices); the other pixels:");
                        check(got, f, what + " with one pixel past the map", 17);
                    }
                }
                check(run(s, f, choose), f, what + " after the run with a pixel past the map");
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
