package org.pvn3d.ort.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** {@code pvn3d-spark}'s command line, without Spark: the options the job gets, the help, the usage errors. */
class Pvn3dSparkMainTest {
    record Parsed(Integer code, Pvn3dSparkMain.Options options, String out, String err) {}

    static Parsed parse(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        Pvn3dSparkMain.Options o = new Pvn3dSparkMain.Options();
        Integer code = Pvn3dSparkMain.parse(o, args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Parsed(code, o, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void theOptionsReachTheJob() {
        Parsed p = parse("--input", "in", "--output", "out", "--ep", "CUDA", "--device", "1", "--threads", "2", "--pose", "java",
                "--batch", "4", "--partitions", "3", "--model", "m.onnx", "--no-table", "--master", "local[2]");
        assertNull(p.code(), p.err());
        Pvn3dSparkOptions o = p.options().options;
        assertEquals(new Pvn3dSparkOptions("m.onnx", Pvn3dSparkOptions.Ep.CUDA, 1, 2, "java", 4, 1), o);
        assertEquals("icp", o.refine());
        Parsed none = parse("--input", "in", "--output", "out", "--refine", "none");
        assertNull(none.code(), none.err());
        assertEquals(Pvn3dSparkOptions.defaults().withRefine("none"), none.options().options);
        assertEquals(3, p.options().partitions);
        assertTrue(p.options().noTable);
        assertEquals("local[2]", p.options().master);
        Parsed defaults = parse("--input", "in", "--output", "out");
        assertNull(defaults.code(), defaults.err());
        assertEquals(Pvn3dSparkOptions.defaults(), defaults.options().options);
        assertNull(defaults.options().partitions);
    }

    @Test
    void helpAndUsageErrors() {
        Parsed help = parse("--help");
        assertEquals(0, help.code());
        assertTrue(help.out().contains("--input=DIR|PARQUET") && help.out().replaceAll("\\s+", " ").contains("(default: 16)"), help.out());
        assertUsage(parse("--input", "in"), "--input and --output are needed");
        assertUsage(parse("--input", "in", "--output", "out", "--ep", "tpu"), "--ep takes auto, cpu or cuda, not tpu");
        assertUsage(parse("--input", "in", "--output", "out", "--threads", "0"), "--threads takes a positive integer, not 0");
        assertUsage(parse("--input", "in", "--output", "out", "--batch", "0"), "--batch takes a positive integer, not 0");
        assertUsage(parse("--input", "in", "--output", "out", "--device", "-1"), "--device takes a non-negative integer, not -1");
        assertUsage(parse("--input", "in", "--output", "out", "--pose", "gpu"), "--pose takes native, cuda or java, not gpu");
        assertUsage(parse("--input", "in", "--output", "out", "--refine", "gpu"), "--refine takes icp or none, not gpu");
        assertUsage(parse("--input", "in", "--output", "out", "--frobnicate"), "Unknown option: '--frobnicate'");
    }

    static void assertUsage(Parsed p, String message) {
        assertEquals(Pvn3dSparkMain.USAGE, p.code(), p.err());
        assertTrue(p.err().startsWith("pvn3d-spark: ") && p.err().contains(message), p.err());
        assertTrue(p.err().contains("Usage: pvn3d-spark") && p.err().contains("'pvn3d-spark --help' says more."), p.err());
    }
}
