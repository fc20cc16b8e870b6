package org.pvn3d.ort;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.pvn3d.ort.internal.NativeObject;

/**
 * Thousands of runs in a loop: the process's resident memory stays flat and every native object
 * created in the loop is released (the live counts return to where they were).
 */
class NativeMemoryTest {
    static final int WARMUP = 500;
    static final int RUNS = 5000;
    /** Allowed RSS growth over the measured loop; a leak of one tensor per run would be > 5 MB. */
    static final long SLACK_BYTES = 4L << 20;

    static long residentBytes() throws IOException {
        String[] statm = Files.readString(Path.of("/proc/self/statm")).trim().split("\\s+");
        return Long.parseLong(statm[1]) * 4096L;
    }

    @Test
    void manyRunsKeepNativeMemoryFlat() throws IOException {
        Map<String, Long> before = NativeObject.liveCounts();
        long start;
        long end;
        try (OrtSession s = OrtEnvironment.getEnvironment().createSession(TestModels.model("matmul_chain.onnx"))) {
            float[] input = new float[4 * 64];
            for (int i = 0; i < input.length; i++) {
                input[i] = (i % 13) * 0.1f;
            }
            float[] first = loop(s, input, WARMUP);
            System.gc();
            start = residentBytes();
            float[] last = loop(s, input, RUNS);
            System.gc();
            end = residentBytes();
            assertArrayEquals(first, last, "the same input gives the same output every time");
        }
        long growth = end - start;
        System.out.printf("NativeMemoryTest: %d runs, RSS %.1f MB -> %.1f MB (growth %+d KB)%n", RUNS,
                start / 1048576.0, end / 1048576.0, growth / 1024);
        assertTrue(growth < SLACK_BYTES, "RSS grew by " + growth + " bytes over " + RUNS + " runs");
        assertEquals(before, NativeObject.liveCounts(), "every native object made in the loop was released");
    }

    private static float[] loop(OrtSession s, float[] input, int runs) {
        float[] out = null;
        for (int i = 0; i < runs; i++) {
            // a fresh input tensor and result every run: both must be released each time
            try (OnnxTensor x = OnnxTensor.createTensor(input, 4, 64); OrtSession.Result r = s.run(Map.of("x", x))) {
                out = r.tensor("y").getFloatArray();
            }
        }
        return out;
    }
}
