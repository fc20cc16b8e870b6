package org.pvn3d.ort.pipeline;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.pvn3d.ort.io.PvtFile;

/**
 * The refinement stage inside the pipeline (CPU provider): the final pose is ICP's, the voting pose is kept
 * as the pose stage gave it (parity compares that one), and on the committed held-out scenes refining
 * never lowers the ADD accuracy. No accuracy numbers are fixed here: the shipped model may change.
 */
class RefinementPipelineTest {
    static Pvn3dPipeline.Result run(Pvn3dPipeline.Config config, Pvn3dSample sample) {
        try (Pvn3dPipeline p = Pvn3dPipeline.tiny(config)) {
            return p.run(sample);
        }
    }

    @Test
    void theFinalPoseIsRefinedAndTheVotingPoseKept() {
        Pvn3dSample sample = Pvn3dSample.resource(Pvn3dSample.RESOURCE);
        Pvn3dPipeline.Result refined = run(Pvn3dPipeline.Config.cpu(), sample);
        Pvn3dPipeline.Result plain = run(Pvn3dPipeline.Config.cpu().withRefinement(null), sample);

        assertEquals(IcpRefinement.DEFAULT, Pvn3dPipeline.Config.cpu().refinement(), "ICP is the default");
        assertTrue(refined.refinement().refined(), refined.refinement().toString());
        assertTrue(refined.refinement().iterations() >= 1);
        assertEquals(sample.diameter() * IcpRefinement.DEFAULT.trimFraction(), refined.refinement().trimDistance(), 1e-9);
        assertEquals(refined.votes().maskedCount(), refined.refinement().observed());
        // the voting pose is the pose stage's, the same as without refinement
        assertEquals(plain.pose().pose(), refined.voting().pose());
        assertArrayEquals(plain.pose().kps(), refined.pose().kps());
        assertEquals(plain.pose().inliers(), refined.pose().inliers());
        assertNotEquals(refined.voting().pose(), refined.pose().pose());
        assertEquals(1.0, refined.pose().pose().determinant(), 1e-9);
        // the metrics of both poses
        assertEquals(plain.metrics().add(), refined.votingMetrics().add(), 0.0);
        assertEquals(PoseMetrics.add(refined.pose().pose(), sample.groundTruth(), sample.modelPoints()), refined.metrics().add(), 0.0);
        assertTrue(refined.timings().refinement() > 0);
        System.out.printf(Locale.ROOT, "RefinementPipelineTest: shipped sample ADD %.2f mm -> %.2f mm (%s)%n",
                1e3 * refined.votingMetrics().add(), 1e3 * refined.metrics().add(),
                refined.refinement().describe(IcpRefinement.DEFAULT));

        // without refinement: the final pose is the voting pose, one metrics object
        assertEquals(IcpRefiner.Status.DISABLED, plain.refinement().status());
        assertSame(plain.pose(), plain.voting());
        assertSame(plain.metrics(), plain.votingMetrics());
        assertEquals("none", Pvn3dPipeline.Config.cpu().withRefinement(null).refinementName());

        // the parity report compares the voting pose and says how the refinement went
        ParityReport report = ParityReport.compare(refined, Pvn3dPipeline.tinyExpected(), sample, "cpu", "pvn3d_tiny");
        assertEquals(refined.voting().pose(), report.pose().ort());
        assertTrue(report.passes());
        String json = report.toJson();
        assertTrue(json.contains("\"refinement\": {") && json.contains("\"status\": \"" + refined.refinement().status().name()
                .toLowerCase(Locale.ROOT) + "\"") && json.contains("\"voting_vs_ground_truth\": {") && json.contains("\"voting_R\": ["), json);
    }

    @Test
    void aSampleWithoutModelPointsKeepsTheVotingPose() {
        Pvn3dSample shipped = Pvn3dSample.resource(Pvn3dSample.RESOURCE);
        Map<String, PvtFile.Entry> entries = new LinkedHashMap<>(shipped.entries());
        entries.remove("model_points");
        entries.remove("model_diameter");
        Pvn3dPipeline.Result r = run(Pvn3dPipeline.Config.cpu(), new Pvn3dSample("no-model", entries));
        assertEquals(IcpRefiner.Status.NO_MODEL_POINTS, r.refinement().status());
        assertSame(r.voting(), r.pose());
        assertNull(r.metrics());
    }

    @Test
    void refiningTheHeldOutScenesDoesNotLowerTheAccuracy() throws Exception {
        Path folder = Path.of(RefinementPipelineTest.class.getResource("/heldout/model.bin").toURI()).getParent();
        List<Path> files = FolderEvaluation.samples(folder);
        FolderEvaluation.Summary voting;
        FolderEvaluation.Summary refined;
        try (Pvn3dPipeline p = Pvn3dPipeline.tiny(Pvn3dPipeline.Config.cpu().withPoseSolver(new NativePoseSolver()).withRefinement(null))) {
            voting = FolderEvaluation.evaluate(p, files, FolderEvaluation.Progress.NONE);
        }
        try (Pvn3dPipeline p = Pvn3dPipeline.tiny(Pvn3dPipeline.Config.cpu().withPoseSolver(new NativePoseSolver()))) {
            refined = FolderEvaluation.evaluate(p, files, FolderEvaluation.Progress.NONE);
        }
        System.out.printf(Locale.ROOT, "RefinementPipelineTest: held-out ADD accuracy %.1f%% -> %.1f%%, ADD-S %.1f%% -> %.1f%%, "
                + "mean ADD %.2f mm -> %.2f mm%n", 100 * voting.addAccuracy(), 100 * refined.addAccuracy(), 100 * voting.addsAccuracy(),
                100 * refined.addsAccuracy(), 1e3 * voting.meanAdd(), 1e3 * refined.meanAdd());
        System.out.print(refined.refinementLine());
        assertEquals(0, voting.failures());
        assertEquals(0, refined.failures());
        assertEquals(files.size(), refined.evaluated());
        assertEquals("none", voting.refinement());
        assertEquals(0, voting.refinedCount());
        assertEquals(IcpRefinement.DEFAULT.describe(), refined.refinement());
        assertTrue(refined.refinedCount() > 0, refined.refinementLine());
        // the same voting poses either way: the refined run's "before" numbers are the plain run's
        assertEquals(voting.addAccuracy(), refined.votingAddAccuracy(), 0.0);
        assertEquals(voting.meanAdd(), refined.votingMeanAdd(), 1e-12);
        assertTrue(refined.addAccuracy() >= voting.addAccuracy(),
                "ADD accuracy with ICP " + refined.addAccuracy() + " < without " + voting.addAccuracy());
        String json = refined.toJson("cpu", Pvn3dPipeline.MODEL_RESOURCE, "heldout");
        assertTrue(json.contains("\"refinement\": \"icp (") && json.contains("\"before_refinement\": {"), json);
    }
}
