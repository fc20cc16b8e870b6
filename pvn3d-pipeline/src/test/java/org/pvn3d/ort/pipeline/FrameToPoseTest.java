package org.pvn3d.ort.pipeline;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.pvn3d.ort.OnnxTensorType;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.io.PvtFile;

/**
 * The device-resident graph's logic on the CPU provider: the shipped network with the pose head
 * appended in Java ({@link org.pvn3d.ort.pipeline.graph.PoseHeadGraph}) gives, on the shipped sample, the
 * pose of the Java reference pipeline (network outputs, Java votes and mask, {@link JavaPoseSolver}) and of
 * the PyTorch pipeline (pvn3d_tiny_expected.bin); a batch gives each frame its own pose; bad input fails
 * cleanly and leaves the object usable.
 */
class FrameToPoseTest {
    static Pvn3dSample sample;
    static Pvn3dPipeline.Result reference;
    static Map<String, PvtFile.Entry> expected;
    static FrameToPose cpu;

    @BeforeAll
    static void setUp() {
        sample = Pvn3dSample.resource(Pvn3dSample.RESOURCE);
        try (Pvn3dPipeline p = Pvn3dPipeline.tiny(Pvn3dPipeline.Config.cpu().withRefinement(null))) {
            reference = p.run(sample);
        }
        expected = Pvn3dPipeline.tinyExpected();
        cpu = new FrameToPose(Pvn3dPipeline.tinyModelBytes(), FrameToPose.Config.cpu().withMask(true), sample);
    }

    @AfterAll
    static void tearDown() {
        if (cpu != null) {
            cpu.close();
        }
    }

    @Test
    void theGraphsPoseIsTheJavaReferencesAndPyTorchs() {
        FrameToPose.FramePose got = cpu.run(sample);
        PoseSolver.Solution ref = reference.voting();
        // the same votes and mask: the inliers are exact, the keypoints equal to float rounding (the native
        // kernel sums in another order than the Java mean shift)
        assertEquals(ref.inliers(), got.inliers(), "inliers vs the Java reference");
        assertEquals(expected.get("pose_inliers").longs()[0], got.inliers(), "inliers vs PyTorch");
        assertArrayEquals(reference.votes().mask(), got.mask(), "the graph's mask is the Java votes' mask");
        assertTrue(got.inliers() > 100, "a real cluster: " + got.inliers());
        assertClose(ref.kps(), got.kps(), 1e-4, "keypoints vs the Java reference");
        assertClose(expected.get("pose_kps").floats(), got.kps(), 1e-5, "keypoints vs PyTorch");
        assertClose(toFloats(ref.pose().r()), toFloats(got.pose().r()), 1e-3, "R vs the Java reference");
        assertClose(expected.get("pose_R").floats(), toFloats(got.pose().r()), 1e-4, "R vs PyTorch");
        assertClose(expected.get("pose_t").floats(), toFloats(got.pose().t()), 1e-5, "t vs PyTorch");
        // and the pose is right: ADD against the ground truth under a centimetre for the shipped sample
        double add = PoseMetrics.add(got.pose(), sample.groundTruth(), sample.modelPoints());
        assertTrue(add < 0.02, "voting pose ADD " + add + " m");
    }

    @Test
    void aBatchGivesEveryFrameItsOwnPose() {
        Pvn3dSample moved = shifted(sample, 0.05f);
        try (FrameToPose batch = new FrameToPose(Pvn3dPipeline.tinyModelBytes(), FrameToPose.Config.cpu().withBatch(2), sample)) {
            List<FrameToPose.FramePose> poses = batch.run(List.of(sample, moved));
            FrameToPose.FramePose one = cpu.run(sample);
            assertArrayEquals(one.kps(), poses.get(0).kps(), 1e-6f, "frame 0 of the batch is the single frame");
            assertEquals(one.inliers(), poses.get(0).inliers());
            assertEquals(null, poses.get(0).mask(), "no mask asked for");
            // the second frame's cloud moved 5 cm along x: its keypoints move with it (the network sees the
            // shifted cloud, so not exactly 5 cm; the translation follows within a centimetre)
            double dx = poses.get(1).pose().t(0) - poses.get(0).pose().t(0);
            assertTrue(Math.abs(dx - 0.05) < 0.01, "x moved by " + dx);
            assertEquals(OrtErrorCode.ORT_INVALID_ARGUMENT,
                    assertThrows(OrtException.class, () -> batch.run(List.of(sample)), "a batch of 2 needs 2 frames").getCode());
        }
    }

    @Test
    void concurrentBranchesGiveTheSinglePosesAndMasks() {
        // three sessions (PointNet++ on its own thread, the CNN beside it, the join after both) compute
        // what the one graph computes: same masks and inliers, poses equal to float rounding
        FrameToPose.FramePose one = cpu.run(sample);
        Pvn3dSample moved = shifted(sample, 0.05f);
        FrameToPose.FramePose oneMoved = cpu.run(moved);
        FrameToPose.Config c = FrameToPose.Config.cpu().withMask(true).withBatch(2).withConcurrentBranches(true);
        assertTrue(c.describe().contains(" branches"), c.describe());
        try (FrameToPose branched = new FrameToPose(Pvn3dPipeline.tinyModelBytes(), c, sample)) {
            for (int round = 0; round < 2; round++) {
                List<FrameToPose.FramePose> got = branched.run(List.of(sample, moved));
                FrameToPose.FramePose[] want = {one, oneMoved};
                for (int f = 0; f < 2; f++) {
                    assertArrayEquals(want[f].mask(), got.get(f).mask(), "mask of frame " + f);
                    assertEquals(want[f].inliers(), got.get(f).inliers(), "inliers of frame " + f);
                    assertClose(want[f].kps(), got.get(f).kps(), 1e-5, "keypoints of frame " + f);
                    assertClose(toFloats(want[f].pose().r()), toFloats(got.get(f).pose().r()), 1e-5, "R of frame " + f);
                    assertClose(toFloats(want[f].pose().t()), toFloats(got.get(f).pose().t()), 1e-6, "t of frame " + f);
                }
            }
            // a bad frame fails cleanly in the branches too, and the object stays usable
            long[] choose = sample.entry("choose").longs();
            choose[3] = -1;
            Pvn3dSample bad = sample.with("choose", OnnxTensorType.INT64, sample.entry("choose").shape(), choose);
            assertThrows(OrtException.class, () -> branched.run(List.of(bad, sample)));
            assertEquals(one.inliers(), branched.run(List.of(sample, moved)).get(0).inliers(), "still usable");
        }
    }

    @Test
    void badInputFailsCleanlyAndTheObjectStaysUsable() {
        Pvn3dSample nanKps = sample.with("model_kps", sample.entry("model_kps").type(), sample.entry("model_kps").shape(),
                nanFirst(sample.modelKps()));
        assertEquals(OrtErrorCode.ORT_INVALID_ARGUMENT, assertThrows(OrtException.class, () -> cpu.run(nanKps)).getCode());
        long[] shape = sample.entry("rgb").shape();
        for (long bad : new long[] {-1, shape[2] * shape[3]}) { // before the first pixel, past the last
            long[] choose = sample.entry("choose").longs();
            choose[5] = bad;
            Pvn3dSample badChoose = sample.with("choose", OnnxTensorType.INT64, sample.entry("choose").shape(), choose);
            OrtException e = assertThrows(OrtException.class, () -> cpu.run(badChoose));
            assertEquals(OrtErrorCode.ORT_INVALID_ARGUMENT, e.getCode());
            assertTrue(e.getMessage().contains("point 5 names pixel " + bad), e.getMessage());
        }
        // a NaN or infinity in the cloud: the PointNet++ operators would take it silently (spec audit F4)
        int channels = sample.cloudChannels();
        for (float v : new float[] {Float.NaN, Float.NEGATIVE_INFINITY}) {
            float[] cloud = sample.cloud();
            cloud[7 * channels + 2] = v; // point 7, z
            Pvn3dSample badCloud = sample.with("cld_rgb_nrm", OnnxTensorType.FLOAT, sample.entry("cld_rgb_nrm").shape(), cloud);
            OrtException e = assertThrows(OrtException.class, () -> cpu.run(badCloud));
            assertEquals(OrtErrorCode.ORT_INVALID_ARGUMENT, e.getCode());
            assertTrue(e.getMessage().contains("'cld_rgb_nrm' point 7 channel 2") && e.getMessage().contains("(" + v + ")"),
                    e.getMessage());
        }
        // and in the image: the CNN would spread it over the map, and the pose would read "no object"
        float[] rgb = sample.entry("rgb").floats();
        long[] rgbShape = sample.entry("rgb").shape();
        rgb[(int) (2 * rgbShape[2] * rgbShape[3] + 5 * rgbShape[3] + 9)] = Float.NaN; // channel 2, row 5, column 9
        Pvn3dSample badImage = sample.with("rgb", OnnxTensorType.FLOAT, rgbShape, rgb);
        OrtException image = assertThrows(OrtException.class, () -> cpu.run(badImage));
        assertEquals(OrtErrorCode.ORT_INVALID_ARGUMENT, image.getCode());
        assertTrue(image.getMessage().endsWith("'rgb' holds a non-finite value (NaN) at batch 0 channel 2 row 5 column 9"),
                image.getMessage());
        OrtException fp16 = assertThrows(OrtException.class, () -> new FrameToPose(Pvn3dPipeline.tinyModelBytes(),
                FrameToPose.Config.cuda(0).withPrecision(FrameToPose.Precision.FP16), sample));
        assertEquals(OrtErrorCode.ORT_INVALID_ARGUMENT, fp16.getCode());
        assertTrue(fp16.getMessage().contains("fp16 model"), fp16.getMessage());
        assertThrows(IllegalArgumentException.class,
                () -> FrameToPose.Config.cpu().withPrecision(FrameToPose.Precision.TF32), "tf32 is a CUDA mode");
        assertTrue(cpu.run(sample).inliers() > 0, "still usable");
    }

    @Test
    void settingsTheModelOrTheHostCannotHoldAreRefused() {
        // an object class the model does not have used to give every frame an invalid pose, silently
        OrtException e = assertThrows(OrtException.class, () -> new FrameToPose(Pvn3dPipeline.tinyModelBytes(),
                FrameToPose.Config.cpu().withObjectClass(7), sample));
        assertTrue(e.getMessage().endsWith("object class 7 is not one of the model's 2 classes (0 to 1)"), e.getMessage());
        // a batch whose stacked inputs overflow a Java array (an int overflow inside, before)
        for (boolean branches : new boolean[] {false, true}) {
            e = assertThrows(OrtException.class, () -> new FrameToPose(Pvn3dPipeline.tinyModelBytes(),
                    FrameToPose.Config.cpu().withBatch(100_000).withConcurrentBranches(branches), sample));
            assertTrue(e.getMessage().contains("a batch of 100000 frames of input") && e.getMessage().endsWith("lower the batch"),
                    e.getMessage());
        }
    }

    @Test
    void aClosedObjectSaysSo() {
        for (boolean branches : new boolean[] {false, true}) {
            FrameToPose f = new FrameToPose(Pvn3dPipeline.tinyModelBytes(), FrameToPose.Config.cpu().withConcurrentBranches(branches), sample);
            f.close();
            f.close();
            OrtException e = assertThrows(OrtException.class, () -> f.run(sample));
            assertTrue(e.getMessage().endsWith("FrameToPose is closed"), "branches " + branches + ": " + e.getMessage());
        }
    }

    @Test
    void extraCudaOptionsAreKeptSortedAndTheOnesTheConfigSetsAreRefused() {
        FrameToPose.Config c = FrameToPose.Config.cuda(0).withCudaOptions(Map.of("prefer_nhwc", "1", "cudnn_conv_use_max_workspace", "1"));
        assertEquals(List.of("cudnn_conv_use_max_workspace", "prefer_nhwc"), List.copyOf(c.cudaOptions().keySet()));
        assertEquals("cuda:0 strict B=1 cudnn_conv_use_max_workspace=1 prefer_nhwc=1", c.describe());
        assertEquals(c.cudaOptions(), c.withBatch(8).withCudaGraph(true).cudaOptions(), "the other withers keep them");
        IllegalArgumentException own = assertThrows(IllegalArgumentException.class,
                () -> FrameToPose.Config.cuda(0).withCudaOptions(Map.of("enable_cuda_graph", "1")));
        assertTrue(own.getMessage().contains("enable_cuda_graph follows from the other settings"), own.getMessage());
        IllegalArgumentException cpuOnly = assertThrows(IllegalArgumentException.class,
                () -> FrameToPose.Config.cpu().withCudaOptions(Map.of("prefer_nhwc", "1")));
        assertTrue(cpuOnly.getMessage().contains("need the CUDA provider"), cpuOnly.getMessage());
    }

    static Pvn3dSample shifted(Pvn3dSample s, float dx) {
        PvtFile.Entry e = s.entry("cld_rgb_nrm");
        float[] c = e.floats();
        int ch = s.cloudChannels();
        for (int i = 0; i < c.length; i += ch) {
            c[i] += dx;
        }
        return s.with("cld_rgb_nrm", e.type(), e.shape(), c);
    }

    static float[] nanFirst(float[] v) {
        float[] c = v.clone();
        c[0] = Float.NaN;
        return c;
    }

    static float[] toFloats(double[] d) {
        float[] f = new float[d.length];
        for (int i = 0; i < d.length; i++) {
            f[i] = (float) d[i];
        }
        return f;
    }

    static void assertClose(float[] want, float[] got, double tol, String what) {
        assertEquals(want.length, got.length, what + ": length");
        double max = 0;
        for (int i = 0; i < want.length; i++) {
            max = Math.max(max, Math.abs((double) want[i] - got[i]));
        }
        assertTrue(max <= tol, what + ": max |diff| " + max + " > " + tol);
    }
}
