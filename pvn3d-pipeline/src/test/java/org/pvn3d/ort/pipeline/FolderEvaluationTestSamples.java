package org.pvn3d.ort.pipeline;

import java.nio.file.Path;

/** Test helper shared with the CLI test: a folder of three samples made from the shipped one. */
public final class FolderEvaluationTestSamples {
    private FolderEvaluationTestSamples() {}

    public static void write(Path dir) throws Exception {
        FolderEvaluationTest.writeSamples(dir);
    }
}
