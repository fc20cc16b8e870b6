package org.pvn3d.ort.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.InflaterInputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pvn3d.ort.io.PvtFile;
import org.pvn3d.ort.pipeline.FolderEvaluationTestSamples;

/** The README's first command, in-process: the main job, the folder form, the PointNet++ job and --version. */
class MainTest {
    record Output(int code, String out, String err) {}

    static Output run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Main.run(args, new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Output(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void theMainJobRunsPvn3dEndToEndAndWritesTheReportAndThePicture(@TempDir Path dir) throws Exception {
        Path report = dir.resolve("report.json");
        Path png = dir.resolve("pose.png");
        Output o = run("--report", report.toString(), "--png", png.toString());
        assertEquals(0, o.code(), o.out() + o.err());
        for (String stage : new String[] {"load", "inference", "voting", "clustering", "fit", "metrics"}) {
            assertTrue(Pattern.compile("(?m)^  " + stage + " +[0-9]+\\.[0-9] ms  ").matcher(o.out()).find(), stage + " in\n" + o.out());
        }
        assertTrue(o.out().contains("806 of 1024 points masked"), o.out());
        assertTrue(o.out().contains("195 inliers"), o.out());
        assertTrue(o.out().contains("sa1_fps_idx      [1, 256]           mismatches 0 of 256"), o.out());
        assertTrue(o.out().contains("verdict: PASS"), o.out());

        String json = Files.readString(report);
        Matcher diffs = Pattern.compile("\"max_abs_diff\": ([-0-9.eE]+)").matcher(json);
        int floats = 0;
        while (diffs.find()) {
            assertTrue(Double.parseDouble(diffs.group(1)) <= 1e-4, diffs.group());
            floats++;
        }
        assertEquals(3, floats, json);
        Matcher mism = Pattern.compile("\"mismatches\": ([0-9]+)").matcher(json);
        int indices = 0;
        while (mism.find()) {
            assertEquals("0", mism.group(1));
            indices++;
        }
        assertEquals(3, indices, json);
        Matcher add = Pattern.compile("\"add_vs_pytorch\": ([-0-9.eE]+)").matcher(json);
        assertTrue(add.find() && Double.parseDouble(add.group(1)) < 1e-5, json);

        byte[] bytes = Files.readAllBytes(png);
        assertPng(bytes, 256, 256);
        if (ModuleLayer.boot().findModule("java.desktop").isPresent()) {
            int[] size = ImageIoCheck.size(bytes);
            assertArrayEquals(new int[] {256, 256}, size, "javax.imageio reads the PNG");
        }
        assertTrue(o.out().contains("image: " + png), o.out());
    }

    @Test
    void defaultsAndTheNoFileOptions() {
        Main.Options d = Main.Options.parse(new String[0]);
        assertEquals(Main.Options.Command.POSE, d.command);
        assertEquals(Path.of("pvn3d-report.json"), d.report);
        assertEquals(Path.of("pvn3d-pose.png"), d.png);
        assertEquals(1, d.warmup);
        assertTrue(!d.cuda);
        assertEquals(1, d.runs);
        assertTrue(!d.noIoBinding);
        Output o = run("--no-report", "--no-png", "--warmup", "0");
        assertEquals(0, o.code(), o.out() + o.err());
        assertTrue(o.out().contains("(host tensors; one timed run, after 0 untimed warm-up run(s))"), o.out());
        Output r = run("--no-report", "--no-png", "--runs", "3");
        assertEquals(0, r.code(), r.out() + r.err());
        assertTrue(Pattern.compile("median of 3 runs, min [0-9.]+, p90 [0-9.]+, max [0-9.]+ ms, after 1 untimed").matcher(r.out()).find(), r.out());
        assertTrue(!o.out().contains("report: ") && !o.out().contains("image: "), o.out());
        assertTrue(o.out().contains("verdict: PASS"), o.out());
    }

    @Test
    void theFolderFormPrintsAProgressBarAndATable(@TempDir Path dir) throws Exception {
        FolderEvaluationTestSamples.write(dir);
        Output o = run("eval", dir.toString());
        assertEquals(0, o.code(), o.out() + o.err());
        assertTrue(o.err().contains("3/3") && o.err().contains("[##############################]"), o.err());
        assertTrue(o.out().contains("3 sample(s) in " + dir), o.out());
        Matcher rows = Pattern.compile("(?m)^[abc]_\\S+\\.bin +(\\d+) +(\\d+) +(\\d+) +([0-9.]+) +([0-9.]+) +(yes|no) +(yes|no)").matcher(o.out());
        int n = 0;
        while (rows.find()) {
            n++;
            assertTrue(Double.parseDouble(rows.group(5)) <= Double.parseDouble(rows.group(4)) + 1e-5, rows.group());
        }
        assertEquals(3, n, o.out());
        assertTrue(o.out().contains("mean (3)"), o.out());
        assertEquals(1, run("eval", dir.resolve("missing").toString()).code());
    }

    @Test
    void thePointNet2JobPrintsLatencyAndTheReferenceChecksum() throws Exception {
        Output o = run("pointnet2", "--runs", "3", "--warmup", "1");
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
        assertEquals(2, run("pointnet2", "--runs", "0").code());
        assertEquals(2, run("pointnet2", "--model", "x.onnx").code());
        assertEquals(2, run("eval", "/tmp", "--runs", "3").code(), "--runs is not for eval");
        assertEquals(2, run("eval").code());
        assertEquals(2, run("frobnicate").code());
        assertEquals(2, run("--sample", "/no/such/sample.bin").code());
        assertTrue(run("--help").out().contains("eval DIR"));
    }

    /** Checks the PNG with java.base alone: signature, IHDR (size, 8-bit RGB), chunk CRCs, the IDAT's inflated size. */
    static void assertPng(byte[] png, int width, int height) throws Exception {
        assertArrayEquals(new byte[] {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'}, Arrays.copyOf(png, 8));
        ByteBuffer b = ByteBuffer.wrap(png, 8, png.length - 8);
        ByteArrayOutputStream idat = new ByteArrayOutputStream();
        boolean end = false;
        while (b.hasRemaining()) {
            int len = b.getInt();
            byte[] type = new byte[4];
            b.get(type);
            byte[] data = new byte[len];
            b.get(data);
            java.util.zip.CRC32 crc = new java.util.zip.CRC32();
            crc.update(type);
            crc.update(data);
            assertEquals((int) crc.getValue(), b.getInt(), "CRC of " + new String(type, StandardCharsets.US_ASCII));
            switch (new String(type, StandardCharsets.US_ASCII)) {
                case "IHDR" -> {
                    ByteBuffer h = ByteBuffer.wrap(data);
                    assertEquals(width, h.getInt());
                    assertEquals(height, h.getInt());
                    assertEquals(8, h.get());
                    assertEquals(2, h.get());
                }
                case "IDAT" -> idat.writeBytes(data);
                case "IEND" -> end = true;
                default -> { }
            }
        }
        assertTrue(end);
        byte[] raw = new InflaterInputStream(new ByteArrayInputStream(idat.toByteArray())).readAllBytes();
        assertEquals(height * (1 + 3 * width), raw.length);
    }

    /** Loaded only when java.desktop is present. */
    static final class ImageIoCheck {
        static int[] size(byte[] png) throws Exception {
            java.awt.image.BufferedImage img = javax.imageio.ImageIO.read(new ByteArrayInputStream(png));
            return new int[] {img.getWidth(), img.getHeight()};
        }
    }
}
