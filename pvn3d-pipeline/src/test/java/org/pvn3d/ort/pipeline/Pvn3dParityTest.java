package org.pvn3d.ort.pipeline;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.pvn3d.ort.io.PvtFile;

/**
 * Issue 7's parity check in CI: the tiny PVN3D model on ORT's CPU provider (with the Java-registered
 * PointNet++ kernels) against the committed PyTorch outputs, and the Java pose stage against the
 * PyTorch-pipeline pose.
 */
class Pvn3dParityTest {
    static Pvn3dSample sample;
    static Map<String, PvtFile.Entry> expected;
    static Pvn3dPipeline.Result result;
    static ParityReport report;
    static Map<String, String> cpuConfigEntries;

    @BeforeAll
    static void runThePipelineOnce() {
        sample = Pvn3dSample.resource(Pvn3dSample.RESOURCE);
        expected = Pvn3dPipeline.tinyExpected();
        try (Pvn3dPipeline p = Pvn3dPipeline.tiny(Pvn3dPipeline.Config.cpu())) {
            result = p.run(sample);
            cpuConfigEntries = p.sessionOptions().getConfigEntries();
        }
        report = ParityReport.compare(result, expected, sample, "cpu", "pvn3d_tiny");
        System.out.print("Pvn3dParityTest:\n" + report.summary());
    }

    @Test
    void theCpuSessionLetsOrtsIntraOpThreadsSleep() {
        // spinning, they took the cores from the PVN3D nodes' OpenMP kernels (Pvn3dOps.letIntraOpThreadsSleep)
        assertEquals("0", cpuConfigEntries.get("session.intra_op.allow_spinning"), cpuConfigEntries.toString());
    }

    @Test
    void indicesAreIdenticalAndFloatsWithin1e4() {
        assertEquals(Set.of("sa1_fps_idx", "sa1_ball_idx0", "sa1_ball_idx1"),
                report.indices().stream().map(ParityReport.IndexParity::name).collect(Collectors.toSet()));
        for (ParityReport.IndexParity i : report.indices()) {
            assertEquals(0, i.mismatches(), i.name());
            assertTrue(i.count() >= 256, i.name());
        }
        assertEquals(List.of("pred_rgbd_seg", "pred_kp_of", "pred_ctr_of"),
                report.floats().stream().map(ParityReport.FloatParity::name).toList());
        for (ParityReport.FloatParity f : report.floats()) {
            assertTrue(f.maxAbsDiff() <= 1e-4, f.name() + " max abs diff " + f.maxAbsDiff());
            assertTrue(f.meanAbsDiff() <= 1e-5, f.name() + " mean abs diff " + f.meanAbsDiff());
            assertTrue(f.maxAbsReference() > 0.1, f.name() + " is not trivially zero");
        }
        assertArrayEquals(new long[] {1, 8, 1024, 3}, result.output("pred_kp_of").shape());
        assertTrue(report.passes());
        assertEquals(0, report.indexMismatches());
    }

    @Test
    void theOrtPoseMatchesThePyTorchPipelinePose() {
        ParityReport.PoseParity p = report.pose();
        assertNotNull(p);
        // the inputs of the pose stage differ by ~1e-5 (the network's float outputs), the pose by far less
        // than a millimetre
        assertTrue(p.add() < 1e-5, "ADD vs PyTorch " + p.add());
        assertTrue(p.adds() <= p.add() + 1e-12, "ADD-S <= ADD");
        assertTrue(p.rotationDegrees() < 1e-2, "rotation diff " + p.rotationDegrees());
        assertTrue(p.kpsMaxAbsDiff() < 1e-5, "keypoints " + p.kpsMaxAbsDiff());
        assertEquals(287, p.pytorchInliers());
        assertEquals(p.pytorchInliers(), p.inliers());
        assertEquals(287, result.votes().maskedCount());
        assertEquals(1.0, result.pose().pose().determinant(), 1e-9);
        // against the ground truth: the trained model's pose of its shipped sample is within 10% of the diameter
        assertNotNull(result.metrics());
        assertEquals(0.1895, result.metrics().diameter(), 1e-4);
        assertTrue(result.metrics().adds() <= result.metrics().add());
        assertTrue(result.metrics().addCorrect(), "ADD " + result.metrics().add() + " >= " + result.metrics().threshold());
    }

    @Test
    void theJavaPoseStageOnPyTorchsOutputsIsThePyTorchPose() {
        // the same reading of spec/ops.md as pose.py: from PyTorch's own outputs the keypoints agree to the bit
        // here (float32 mean shift, sums in double) and the pose to round-off
        Votes v = Votes.fromPredictions(sample.cloud(), 9, expected.get("pred_kp_of").floats(), expected.get("pred_ctr_of").floats(),
                expected.get("pred_rgbd_seg").floats(), 2, 1);
        PoseSolver.Solution s = new JavaPoseSolver().solve(v, sample.modelKps());
        float[] want = expected.get("pose_kps").floats();
        for (int i = 0; i < want.length; i++) {
            assertEquals(want[i], s.kps()[i], 1e-6, "kps[" + i + "]");
        }
        assertEquals(expected.get("pose_inliers").longs()[0], s.inliers());
        Pose ref = Pose.of(expected.get("pose_R").floats(), expected.get("pose_t").floats());
        assertArrayEquals(ref.r(), s.pose().r(), 1e-6);
        assertArrayEquals(ref.t(), s.pose().t(), 1e-6);
    }

    @Test
    void theJsonReportHoldsTheNumbers() {
        String json = report.toJson();
        assertTrue(json.startsWith("{\n  \"provider\": \"cpu\""), json);
        assertTrue(json.contains("\"pass\": true"), json);
        for (ParityReport.FloatParity f : report.floats()) {
            assertTrue(json.contains("\"" + f.name() + "\": {"), f.name());
            assertTrue(json.contains("\"max_abs_diff\": " + f.maxAbsDiff()), f.name());
        }
        assertTrue(json.contains("\"mismatches\": 0"), json);
        assertTrue(json.contains("\"pytorch_inliers\": 287"), json);
        assertTrue(json.contains("\"timings_ms\""), json);
        assertTrue(json.contains("\"inference_latency_ms\": {\n      \"runs\": 1,"), json);
        assertEquals(json.chars().filter(c -> c == '{').count(), json.chars().filter(c -> c == '}').count());
        assertEquals("[1, 2]\n", Json.write(new long[] {1, 2}));
        Map<String, Object> m = new java.util.LinkedHashMap<>();
        m.put("a", "x\"y");
        m.put("b", Double.NaN);
        m.put("c", 0.5);
        m.put("d", List.of(1, true));
        assertEquals("{\n  \"a\": \"x\\\"y\",\n  \"b\": null,\n  \"c\": 0.5,\n  \"d\": [\n    1,\n    true\n  ]\n}\n", Json.write(m));
    }

    @Test
    void runDoesTheStagesAfterTheNetworkOnceAndMeasureAsOftenAsTheNetwork(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        Map<String, Integer> once;
        Map<String, Integer> measured;
        try (Pvn3dPipeline p = Pvn3dPipeline.tiny(Pvn3dPipeline.Config.cpu().withWarmup(1).withRepeat(2))) {
            once = stageCounts(dir.resolve("run.jfr"), () -> p.run(sample));
            measured = stageCounts(dir.resolve("measure.jfr"), () -> p.measure(sample));
        }
        assertEquals(Map.of("inference", 3, "voting", 1, "pose", 1, "refinement", 1, "metrics", 1), once);
        assertEquals(Map.of("inference", 3, "voting", 3, "pose", 3, "refinement", 3, "metrics", 3), measured);
    }

    /** How often each pipeline stage's JFR event was recorded while {@code work} ran. */
    private static Map<String, Integer> stageCounts(java.nio.file.Path file, Runnable work) throws Exception {
        try (jdk.jfr.Recording rec = new jdk.jfr.Recording()) {
            rec.enable("org.pvn3d.ort.PipelineStage");
            rec.start();
            work.run();
            rec.stop();
            rec.dump(file);
        }
        Map<String, Integer> counts = new java.util.TreeMap<>();
        for (jdk.jfr.consumer.RecordedEvent e : jdk.jfr.consumer.RecordingFile.readAllEvents(file)) {
            if (e.getEventType().getName().equals("org.pvn3d.ort.PipelineStage")) {
                counts.merge(e.getString("stage"), 1, Integer::sum);
            }
        }
        return counts;
    }

    @Test
    void repeatedRunsAreTimedApartFromTheWarmUpAndGiveTheSameOutputs() {
        Pvn3dPipeline.Result r;
        try (Pvn3dPipeline p = Pvn3dPipeline.tiny(Pvn3dPipeline.Config.cpu().withWarmup(1).withRepeat(4))) {
            r = p.measure(sample);
        }
        Pvn3dPipeline.Timings t = r.timings();
        assertEquals(4, t.latency().runs());
        assertTrue(t.latency().min() <= t.inference() && t.inference() <= t.latency().p90()
                && t.latency().p90() <= t.latency().max(), t.toString());
        assertEquals(0, t.upload());
        assertEquals(0, t.download());
        for (String name : result.outputs().keySet()) {
            Pvn3dPipeline.Output a = result.output(name);
            Pvn3dPipeline.Output b = r.output(name);
            if (a.isFloat()) {
                assertArrayEquals(a.floats(), b.floats(), name);
            } else {
                assertArrayEquals(a.longs(), b.longs(), name);
            }
        }
        // The stages after the network ran 1 + 4 times too (medians reported), with the single run's results.
        assertArrayEquals(result.voting().kps(), r.voting().kps());
        assertArrayEquals(result.voting().pose().r(), r.voting().pose().r());
        assertArrayEquals(result.voting().pose().t(), r.voting().pose().t());
        assertArrayEquals(result.pose().pose().r(), r.pose().pose().r());
        assertArrayEquals(result.pose().pose().t(), r.pose().pose().t());
        assertEquals(result.refinement().iterations(), r.refinement().iterations());
        assertEquals(result.metrics(), r.metrics());
        for (double stage : new double[] {t.voting(), t.clustering(), t.fit(), t.refinement(), t.metrics()}) {
            assertTrue(stage >= 0 && Double.isFinite(stage), t.toString());
        }
        assertEquals(new Pvn3dPipeline.Latency(4, 2.5, 1, 4, 4), Pvn3dPipeline.Latency.of(new double[] {4, 1, 3, 2}));
        assertEquals(new Pvn3dPipeline.Latency(1, 7, 7, 7, 7), Pvn3dPipeline.Latency.of(new double[] {7}));
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> Pvn3dPipeline.Config.cpu().withRepeat(0));
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> Pvn3dPipeline.Config.cpu().withWarmup(-1));
    }
}
