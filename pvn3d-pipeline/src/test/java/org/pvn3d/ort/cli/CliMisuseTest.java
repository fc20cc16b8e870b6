package org.pvn3d.ort.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pvn3d.ort.OnnxTensorType;
import org.pvn3d.ort.pipeline.Pvn3dSample;

/**
 * The command line under misuse: a refused command starts no recording, a run that fails inside ORT prints one
 * line, frame-to-pose's --eval fails like eval does, and pool-bench says why frames failed.
 */
class CliMisuseTest {
    static final Pvn3dSample SAMPLE = Pvn3dSample.resource(Pvn3dSample.RESOURCE);

    /** The shipped sample cut to its first {@code n} points (the tiny model samples 256: fewer fail inside ORT). */
    static Pvn3dSample firstPoints(int n) {
        int c = SAMPLE.cloudChannels();
        float[] cloud = java.util.Arrays.copyOf(SAMPLE.cloud(), n * c);
        long[] choose = java.util.Arrays.copyOf(SAMPLE.entry("choose").longs(), n);
        return SAMPLE.with("cld_rgb_nrm", OnnxTensorType.FLOAT, new long[] {1, n, c}, cloud)
                .with("choose", OnnxTensorType.INT64, new long[] {1, 1, n}, choose);
    }

    /** A usage error with --jfr leaves an earlier recording there as it was and prints no profiling line. */
    @Test
    void aRefusedCommandWritesNoRecording(@TempDir Path dir) throws Exception {
        Path jfr = dir.resolve("keep.jfr");
        Files.writeString(jfr, "precious");
        MainTest.Output o = MainTest.run("eval", dir.resolve("no such folder").toString(), "--jfr", jfr.toString());
        assertEquals(Main.USAGE, o.code(), o.err());
        assertEquals("precious", Files.readString(jfr));
        assertEquals("", o.out());
        o = MainTest.run("pointnet2", "--runs", "0", "--jfr", jfr.toString(), "--device-timing");
        assertEquals(Main.USAGE, o.code(), o.err());
        assertEquals("precious", Files.readString(jfr));
        assertEquals("", o.out());
    }

    /** A node that fails inside ORT: one line on stderr (ORT's own log of it, a timestamp and a SEVERE line, is off). */
    @Test
    void aRunThatFailsInsideOrtPrintsOneLine(@TempDir Path dir) throws Exception {
        Path s16 = dir.resolve("s16.bin");
        firstPoints(16).write(s16);
        MainTest.Output o = MainTest.java(dir, "--sample", s16.toString());
        assertEquals(Main.FAILED, o.code(), o.err());
        assertEquals(1, o.err().strip().lines().count(), o.err());
        assertTrue(o.err().startsWith("pvn3d-ort: ") && o.err().contains("PVN3D_FurthestPointSample"), o.err());
    }

    /** frame-to-pose --eval with a sample that fails: its row without the [ORT_...] prefix, and exit code 1 as eval gives. */
    @Test
    void frameToPoseEvalFailsLikeEval(@TempDir Path dir) throws Exception {
        SAMPLE.write(dir.resolve("a_good.bin"));
        Files.write(dir.resolve("b_truncated.bin"), java.util.Arrays.copyOf(Files.readAllBytes(dir.resolve("a_good.bin")), 100));
        MainTest.Output o = MainTest.run("frame-to-pose", "--frames", "2", "--warmup", "0", "--eval", dir.toString());
        assertEquals(Main.FAILED, o.code(), o.out() + o.err());
        assertTrue(o.out().contains("b_truncated.bin") && o.out().contains("truncated"), o.out());
        assertFalse(o.out().contains("[ORT_"), o.out());
        o = MainTest.run("frame-to-pose", "--frames", "2", "--warmup", "0", "--eval-json", dir.resolve("e.json").toString());
        assertEquals(Main.USAGE, o.code(), o.err());
        assertTrue(o.err().contains("--eval-json goes with --eval"), o.err());
        assertFalse(Files.exists(dir.resolve("e.json")));
    }

    /** pool-bench: failed frames are said with the first one's reason; --devices is refused on the CPU provider. */
    @Test
    void poolBenchSaysWhyFramesFailed(@TempDir Path dir) throws Exception {
        SAMPLE.write(dir.resolve("a.bin"));
        firstPoints(512).write(dir.resolve("b.bin")); // another size than the one-graph sessions' template
        MainTest.Output o = MainTest.run("pool-bench", "--sample", dir.toString(), "--sessions", "1", "--frames", "4",
                "--warmup", "0", "--precision", "strict");
        assertEquals(Main.FAILED, o.code(), o.out() + o.err());
        assertTrue(o.err().contains("frame(s) failed; the first: ") && o.err().contains("made for"), o.err());
        o = MainTest.run("pool-bench", "--sessions", "1", "--devices", "0,1");
        assertEquals(Main.USAGE, o.code(), o.err());
        assertTrue(o.err().contains("--devices needs --ep cuda"), o.err());
    }

    /** 4096 CPU sessions (the bound on --sessions) are refused before one opens when the host cannot hold them. */
    @Test
    void poolBenchRefusesMoreCpuSessionsThanTheHostHolds() throws Exception {
        long available = Files.readAllLines(Path.of("/proc/meminfo")).stream().filter(l -> l.startsWith("MemAvailable:"))
                .mapToLong(l -> Long.parseLong(l.replaceAll("[^0-9]", "")) * 1024).findFirst().orElse(Long.MAX_VALUE);
        // the tiny model's 4096 sessions are estimated at about 52 GB: on a host with more, they would open
        org.junit.jupiter.api.Assumptions.assumeTrue(available < 40e9, "a host with " + available / 1e9 + " GB available");
        MainTest.Output o = MainTest.run("pool-bench", "--sessions", "4096", "--threads", "1");
        assertEquals(Main.FAILED, o.code(), o.out() + o.err());
        assertTrue(o.err().contains("4096 CPU sessions of this model need about") && o.err().contains("fewer --sessions"), o.err());
        assertEquals("", o.out());
    }
}
