package org.pvn3d.ort.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The shipped model on the committed held-out samples (src/test/resources/heldout: the first 50 of the
 * test split, exporter/make_dataset.py --split test --count 50; seeds no training run saw), through the
 * Java pipeline on the CPU provider: the accuracy it reaches, by occlusion level too.
 *
 * <p>The floors are the project's targets, ADD-S under 10% of the diameter on 95% of the scenes and ADD on
 * 85%, for the final pose (voting, then the ICP refinement, the pipeline's default); measured here: ADD-S
 * 100%, ADD 90% (MODEL.md). The voting pose alone (ADD 72% measured) has its own floor, so that a
 * regression of the network or of the voting stage is not hidden by the refinement.
 */
class HeldOutAccuracyTest {
    static final double ADDS_FLOOR = 0.95;
    static final double ADD_FLOOR = 0.85;
    static final double VOTING_ADD_FLOOR = 0.65;

    @Test
    void theShippedModelEstimatesPosesOnHeldOutScenes() throws URISyntaxException {
        Path folder = Path.of(HeldOutAccuracyTest.class.getResource("/heldout/model.bin").toURI()).getParent();
        List<Path> files = FolderEvaluation.samples(folder);
        assertEquals(50, files.size(), "the committed held-out samples");
        FolderEvaluation.Summary s;
        try (Pvn3dPipeline p = Pvn3dPipeline.tiny(Pvn3dPipeline.Config.cpu().withWarmup(0))) {
            s = FolderEvaluation.evaluate(p, files, FolderEvaluation.Progress.NONE);
        }
        System.out.print(s.table());
        System.out.print(s.occlusionTable());
        assertEquals(0, s.failures());
        assertEquals(50, s.evaluated());
        assertTrue(s.addsAccuracy() >= ADDS_FLOOR, "ADD-S accuracy " + s.addsAccuracy());
        assertTrue(s.addAccuracy() >= ADD_FLOOR, "ADD accuracy " + s.addAccuracy());
        assertTrue(s.meanAdds() < 0.006, "mean ADD-S " + s.meanAdds() + " m");
        assertEquals(50, s.refinedCount(), "ICP ran on every sample");
        assertTrue(s.votingAddAccuracy() >= VOTING_ADD_FLOOR, "ADD accuracy of the voting pose " + s.votingAddAccuracy());
        assertTrue(s.votingAddsAccuracy() >= ADDS_FLOOR, "ADD-S accuracy of the voting pose " + s.votingAddsAccuracy());
        // every sample says how much of the object is hidden; the bins cover them all
        assertEquals(50, s.byOcclusion().values().stream().mapToInt(FolderEvaluation.Summary::evaluated).sum());
        String json = s.toJson("cpu", Pvn3dPipeline.MODEL_RESOURCE, "heldout");
        assertTrue(json.contains("\"samples\": 50") && json.contains("\"by_occlusion\": {"), json);
    }
}
