package org.pvn3d.ort.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pvn3d.ort.OnnxTensorType;

/** The folder form on samples made from the shipped one. */
class FolderEvaluationTest {
    /**
     * Writes three samples into {@code dir}: the shipped one, the same scene moved 2 cm along x (points and
     * ground truth), and one keeping only the first 700 points.
     */
    static void writeSamples(Path dir) throws Exception {
        Pvn3dSample s = Pvn3dSample.resource(Pvn3dSample.RESOURCE);
        s.write(dir.resolve("a_shipped.bin"));
        float[] cld = s.cloud();
        for (int i = 0; i < cld.length; i += 9) {
            cld[i] += 0.02f;
        }
        float[] t = s.entry("gt_t").floats();
        t[0] += 0.02f;
        s.with("cld_rgb_nrm", OnnxTensorType.FLOAT, s.entry("cld_rgb_nrm").shape(), cld)
                .with("gt_t", OnnxTensorType.FLOAT, new long[] {3}, t)
                .write(dir.resolve("b_shifted.bin"));
        int n = 700;
        float[] sub = java.util.Arrays.copyOf(s.cloud(), n * 9);
        long[] choose = java.util.Arrays.copyOf(s.entry("choose").longs(), n);
        s.with("cld_rgb_nrm", OnnxTensorType.FLOAT, new long[] {1, n, 9}, sub)
                .with("choose", OnnxTensorType.INT64, new long[] {1, 1, n}, choose)
                .write(dir.resolve("c_700_points.bin"));
        Files.writeString(dir.resolve("notes.txt"), "not a sample");
    }

    @Test
    void evaluatesEverySampleAndSummarises(@TempDir Path dir) throws Exception {
        writeSamples(dir);
        List<Path> files = FolderEvaluation.samples(dir);
        assertEquals(3, files.size(), files.toString());
        ByteArrayOutputStream progress = new ByteArrayOutputStream();
        FolderEvaluation.Summary summary;
        Pvn3dPipeline.Result direct;
        try (Pvn3dPipeline p = Pvn3dPipeline.tiny(Pvn3dPipeline.Config.cpu())) {
            summary = FolderEvaluation.evaluate(p, files, FolderEvaluation.Progress.bar(new PrintStream(progress, true, StandardCharsets.UTF_8)));
            direct = p.run(Pvn3dSample.resource(Pvn3dSample.RESOURCE));
        }
        String bar = progress.toString(StandardCharsets.UTF_8);
        assertTrue(bar.contains("1/3") && bar.contains("3/3") && bar.contains("#"), bar);
        assertEquals(3, summary.rows().size());
        assertEquals(3, summary.evaluated());
        assertEquals(0, summary.failures());
        FolderEvaluation.Row a = summary.rows().get(0);
        assertNull(a.error());
        assertEquals(1024, a.points());
        assertEquals(direct.metrics().add(), a.add(), 1e-9, "the shipped sample's row equals a direct run");
        assertEquals(direct.metrics().adds(), a.adds(), 1e-9);
        assertEquals(700, summary.rows().get(2).points());
        for (FolderEvaluation.Row r : summary.rows()) {
            assertTrue(Double.isFinite(r.add()) && Double.isFinite(r.adds()) && r.adds() <= r.add() + 1e-12, r.toString());
            assertTrue(r.masked() > 0 && r.inliers() > 0 && r.inliers() <= r.masked(), r.toString());
        }
        double mean = summary.rows().stream().mapToDouble(FolderEvaluation.Row::add).average().orElseThrow();
        assertEquals(mean, summary.meanAdd(), 1e-12);
        long correct = summary.rows().stream().filter(FolderEvaluation.Row::addCorrect).count();
        assertEquals(correct / 3.0, summary.addAccuracy(), 1e-12);
        String table = summary.table();
        assertTrue(table.contains("a_shipped.bin") && table.contains("c_700_points.bin") && table.contains("mean (3)"), table);
    }

    @Test
    void aBrokenSampleBecomesAnErrorRow(@TempDir Path dir) throws Exception {
        Pvn3dSample.resource(Pvn3dSample.RESOURCE).write(dir.resolve("good.bin"));
        Files.writeString(dir.resolve("junk.bin"), "not PVT1");
        FolderEvaluation.Summary summary;
        try (Pvn3dPipeline p = Pvn3dPipeline.tiny(Pvn3dPipeline.Config.cpu())) {
            summary = FolderEvaluation.evaluate(p, FolderEvaluation.samples(dir), FolderEvaluation.Progress.NONE);
        }
        assertEquals(2, summary.rows().size());
        assertEquals(1, summary.failures());
        assertEquals(1, summary.evaluated());
        String error = summary.rows().get(1).error();
        assertTrue(error.startsWith(dir.resolve("junk.bin") + ": not a PVT1 file"), error);
        assertTrue(summary.table().contains("junk.bin error:"), summary.table());
    }

    @Test
    void aSampleWithoutAPoseOrWithABrokenGroundTruthLeavesTheMeansFinite(@TempDir Path dir) throws Exception {
        Pvn3dSample s = Pvn3dSample.resource(Pvn3dSample.RESOURCE);
        s.write(dir.resolve("a_good.bin"));
        float[] emptyCloud = new float[s.cloud().length]; // every point at the origin: nothing is masked, no pose
        s.with("cld_rgb_nrm", OnnxTensorType.FLOAT, s.entry("cld_rgb_nrm").shape(), emptyCloud).write(dir.resolve("b_no_pose.bin"));
        float[] t = s.entry("gt_t").floats();
        t[1] = Float.NaN;
        s.with("gt_t", OnnxTensorType.FLOAT, new long[] {3}, t).write(dir.resolve("c_nan_truth.bin"));
        FolderEvaluation.Summary summary;
        double goodAdd;
        try (Pvn3dPipeline p = Pvn3dPipeline.tiny(Pvn3dPipeline.Config.cpu())) {
            summary = FolderEvaluation.evaluate(p, FolderEvaluation.samples(dir), FolderEvaluation.Progress.NONE);
            goodAdd = p.run(s).metrics().add();
        }
        assertEquals(1, summary.failures(), "a NaN ground truth is a broken sample, not a wrong pose");
        assertTrue(summary.rows().get(2).error().endsWith("'gt_t' holds a non-finite value (NaN at 1)"), summary.rows().get(2).error());
        assertEquals(2, summary.evaluated());
        assertEquals(1, summary.noPose());
        assertEquals(0.5, summary.addsAccuracy(), "the sample without a pose counts as wrong");
        assertEquals(goodAdd, summary.meanAdd(), 1e-12, "the mean is over the poses there are");
        assertTrue(summary.table().contains("1 sample(s) gave no pose"), summary.table());
        assertTrue(summary.toJson("cpu", "tiny", "test").contains("\"no_pose\": 1"));
    }

    @Test
    void progressForALogIsAFewPlainLines() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        FolderEvaluation.Progress p = FolderEvaluation.Progress.lines(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        for (int i = 0; i < 25; i++) {
            p.update(i, 25, "s" + i + ".bin");
        }
        p.update(25, 25, null);
        String log = bytes.toString(StandardCharsets.UTF_8);
        assertTrue(!log.contains("\r") && !log.contains("#"), log);
        List<String> lines = log.lines().toList();
        assertEquals(10, lines.size(), log);
        assertEquals("eval: 3/25 samples (12%)", lines.get(0));
        assertEquals("eval: 25/25 samples (100%)", lines.get(9));
        ByteArrayOutputStream few = new ByteArrayOutputStream();
        FolderEvaluation.Progress q = FolderEvaluation.Progress.lines(new PrintStream(few, true, StandardCharsets.UTF_8));
        q.update(0, 2, "a.bin");
        q.update(1, 2, "b.bin");
        q.update(2, 2, null);
        assertEquals(List.of("eval: 1/2 samples (50%)", "eval: 2/2 samples (100%)"), few.toString(StandardCharsets.UTF_8).lines().toList());
    }
}
