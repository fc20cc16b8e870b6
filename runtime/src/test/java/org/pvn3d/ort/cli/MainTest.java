package org.pvn3d.ort.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.pvn3d.ort.io.PvtFile;

/** The README's first command, in-process: the main job and --version print what they promise. */
class MainTest {
    record Output(int code, String out, String err) {}

    static Output run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Main.run(args, new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Output(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void theMainJobPrintsLatencyAndTheReferenceChecksum() throws Exception {
        Output o = run("--runs", "3", "--warmup", "1");
        assertEquals(0, o.code(), o.err());
        assertTrue(o.out().contains("run 3: "), o.out());
        assertTrue(o.out().contains("latency over 3 runs (after 1 warm-up): median"), o.out());
        Matcher m = Pattern.compile("output: point_features FLOAT \\[1, 13, 2048\\] checksum sum=(-?[0-9.]+) ").matcher(o.out());
        assertTrue(m.find(), o.out());
        double expected = 0;
        for (float v : PvtFile.read(Path.of(MainTest.class.getResource("/models/pointnet2_default_expected.bin").toURI()))
                .get("point_features").floats()) {
            expected += v;
        }
        assertEquals(expected, Double.parseDouble(m.group(1)), 0.05, "checksum of the PyTorch reference output");
    }

    @Test
    void versionNamesTheRuntimeAndTheOperatorLibrary() {
        Output o = run("--version");
        assertEquals(0, o.code(), o.err());
        assertTrue(o.out().contains("ONNX Runtime 1.") && o.out().contains("libonnxruntime.so"), o.out());
        assertTrue(o.out().contains("libpvn3d_ops"), o.out());
    }

    @Test
    void badArgumentsExitWithUsage() {
        Output o = run("--ep", "tpu");
        assertEquals(2, o.code());
        assertTrue(o.err().contains("--ep takes cpu or cuda") && o.err().toLowerCase(Locale.ROOT).contains("usage"), o.err());
        assertEquals(2, run("--runs", "0").code());
        assertEquals(2, run("--model", "x.onnx").code());
    }
}
