package org.pvn3d.ort.pipeline;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Test helper shared with the CLI and pool tests: a folder of three samples made from the shipped one. */
public final class FolderEvaluationTestSamples {
    private FolderEvaluationTestSamples() {}

    public static void write(Path dir) throws Exception {
        FolderEvaluationTest.writeSamples(dir);
    }

    /** Writes the folder and reads its samples back, in the folder's order. */
    public static List<Pvn3dSample> writeAndRead(Path dir) throws Exception {
        write(dir);
        List<Pvn3dSample> samples = new ArrayList<>();
        for (Path f : FolderEvaluation.samples(dir)) {
            samples.add(Pvn3dSample.read(f));
        }
        return samples;
    }
}
