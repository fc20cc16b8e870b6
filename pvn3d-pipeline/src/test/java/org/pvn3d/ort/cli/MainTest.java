package org.pvn3d.ort.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.PrintStream;
import java.net.URI;
import java.net.URL;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.InflaterInputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.OrtRuntime;
import org.pvn3d.ort.cuda.CudaDevice;
import org.pvn3d.ort.io.PvtFile;
import org.pvn3d.ort.pipeline.FolderEvaluationTestSamples;
import picocli.CommandLine;

/**
 * The README's first command: the main job, the folder form, the PointNet++ job and the version, in this JVM
 * and (where the working directory, the exit status or the terminal check matter) in a JVM of its own;
 * every failure a message and an exit code, never a stack trace unless asked for.
 */
class MainTest {
    record Output(int code, String out, String err) {}

    static Output run(String... args) {
        return run(false, args);
    }

    /** In this JVM, with {@code terminal} saying whether a person watches stderr. */
    static Output run(boolean terminal, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Main.run(args, new Io(new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8),
                terminal));
        return new Output(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void aPictureAskedForAndNotWrittenFailsTheRun(@TempDir Path dir) {
        Path png = dir.resolve("no-such-folder").resolve("pose.png");
        Output o = run("--png", png.toString());
        assertEquals(1, o.code(), o.out() + o.err());
        assertTrue(o.err().startsWith("pvn3d-ort: cannot write the image " + png + ": "), o.err());
        assertTrue(o.out().contains("verdict: PASS"), "the run itself went through: " + o.out());
    }

    @Test
    void theMainJobRunsPvn3dEndToEndAndWritesTheReportAndThePicture(@TempDir Path dir) throws Exception {
        Path report = dir.resolve("report.json");
        Path png = dir.resolve("pose.png");
        Output o = run("--report", report.toString(), "--png", png.toString());
        assertEquals(0, o.code(), o.out() + o.err());
        for (String stage : new String[] {"load", "inference", "voting", "clustering", "fit", "refinement", "metrics"}) {
            assertTrue(Pattern.compile("(?m)^  " + stage + " +[0-9]+\\.[0-9] ms  ").matcher(o.out()).find(), stage + " in\n" + o.out());
        }
        assertTrue(o.out().contains("287 of 1024 points masked"), o.out());
        assertTrue(o.out().contains("287 inliers"), o.out());
        assertTrue(o.out().contains(": ADD correct, ADD-S correct"), o.out());
        assertTrue(Pattern.compile("(?m)^  refinement +[0-9.]+ ms  icp \\(trim 15% of the diameter.*\\): (converged|stopped at the "
                + "iteration limit) after [0-9]+ iterations?, [0-9]+ of [0-9]+ points within 28\\.[0-9] mm, rms .*from the voting pose$")
                .matcher(o.out()).find(), o.out());
        assertTrue(o.out().contains("(voting pose before refinement: ADD "), o.out());
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
        assertTrue(json.contains("\"refinement\": \"icp (trim 15% of the diameter") && json.contains("\"refined\": true"), json);

        byte[] bytes = Files.readAllBytes(png);
        assertPng(bytes, 256, 256);
        if (ModuleLayer.boot().findModule("java.desktop").isPresent()) {
            int[] size = ImageIoCheck.size(bytes);
            assertArrayEquals(new int[] {256, 256}, size, "javax.imageio reads the PNG");
        }
        assertTrue(o.out().contains("image: " + png), o.out());
    }

    @Test
    void filesOnlyWhenAsked(@TempDir Path dir) throws Exception {
        PoseCommand defaults = parse();
        assertNull(defaults.reportFile());
        assertNull(defaults.pngFile());
        assertEquals(1, defaults.pipeline.warmup);
        assertEquals(1, defaults.runs);
        assertTrue(!defaults.common.cuda() && !defaults.pipeline.noIoBinding);
        PoseCommand out = parse("--out", "d");
        assertEquals(Path.of("d", "report.json"), out.reportFile());
        assertEquals(Path.of("d", "pose.png"), out.pngFile());
        PoseCommand both = parse("--out", "d", "--png", "p.png");
        assertEquals(Path.of("p.png"), both.pngFile());

        Output o = run("--warmup", "0");
        assertEquals(0, o.code(), o.out() + o.err());
        assertTrue(o.out().contains("(host tensors; one timed run, after 0 untimed warm-up run(s))"), o.out());
        assertTrue(o.out().contains("verdict: PASS"), o.out());
        assertTrue(o.out().contains("files: none written (--out DIR"), o.out());
        assertTrue(!o.out().contains("report: ") && !o.out().contains("image: "), o.out());
        assertEquals("icp", defaults.pipeline.refine);

        Output none = run("--warmup", "0", "--refine", "none");
        assertEquals(0, none.code(), none.out() + none.err());
        assertTrue(none.out().contains("  refinement ") && none.out().contains("ms  none: the final pose is the voting pose"), none.out());
        assertTrue(!none.out().contains("voting pose before refinement"), none.out());
        assertTrue(none.out().contains("verdict: PASS"), none.out());
        Output r = run("--runs", "3");
        assertEquals(0, r.code(), r.out() + r.err());
        assertTrue(Pattern.compile("median of 3 runs, min [0-9.]+, p90 [0-9.]+, max [0-9.]+ ms, after 1 untimed").matcher(r.out()).find(), r.out());

        Path folder = dir.resolve("new/out");
        Output w = run("--out", folder.toString());
        assertEquals(0, w.code(), w.out() + w.err());
        assertTrue(w.out().contains("report: " + folder.resolve("report.json")), w.out());
        assertTrue(Files.readString(folder.resolve("report.json")).contains("max_abs_diff"));
        assertPng(Files.readAllBytes(folder.resolve("pose.png")), 256, 256);
    }

    @Test
    void theDefaultRunWritesNothingIntoTheWorkingDirectory(@TempDir Path cwd) throws Exception {
        Output o = java(cwd);
        assertEquals(0, o.code(), o.out() + o.err());
        assertTrue(o.out().contains("verdict: PASS") && o.out().contains("files: none written"), o.out());
        try (var files = Files.list(cwd)) {
            assertEquals(List.of(), files.toList(), "the working directory stays empty");
        }
    }

    @Test
    void theFolderFormPrintsATableAndPlainProgressWhenNotATerminal(@TempDir Path dir) throws Exception {
        FolderEvaluationTestSamples.write(dir);
        Output o = run("eval", dir.toString());
        assertEquals(0, o.code(), o.out() + o.err());
        assertTrue(o.err().contains("eval: 3/3 samples (100%)"), o.err());
        assertTrue(!o.err().contains("\r") && !o.err().contains("[#"), "no progress bar off a terminal: " + o.err());
        assertTrue(o.out().contains("3 sample(s) in " + dir), o.out());
        Matcher rows = Pattern.compile("(?m)^[abc]_\\S+\\.bin +(\\d+) +(\\d+) +(\\d+) +([0-9.]+) +([0-9.]+) +(yes|no) +(yes|no)").matcher(o.out());
        int n = 0;
        while (rows.find()) {
            n++;
            assertTrue(Double.parseDouble(rows.group(5)) <= Double.parseDouble(rows.group(4)) + 1e-5, rows.group());
        }
        assertEquals(3, n, o.out());
        assertTrue(o.out().contains("mean (3)"), o.out());
        assertTrue(Pattern.compile("(?m)^refinement: icp \\(trim 15% .*\\) on [0-9] of 3 samples; before it \\(voting pose\\): ADD-S < 10% "
                + "of the diameter on [0-9.]+%, ADD on [0-9.]+% \\(mean ADD-S [0-9.]+ mm, ADD [0-9.]+ mm\\)$").matcher(o.out()).find(), o.out());
        Path json = dir.resolve("eval.json");
        Output plain = run("eval", dir.toString(), "--refine", "none", "--json", json.toString());
        assertEquals(0, plain.code(), plain.out() + plain.err());
        assertTrue(plain.out().contains("refinement: none (the final pose is the voting pose)"), plain.out());
        String report = Files.readString(json);
        assertTrue(report.contains("\"refinement\": \"none\"") && report.contains("\"refined\": 0")
                && report.contains("\"before_refinement\": {"), report);

        Output bar = run(true, "eval", dir.toString());
        assertEquals(0, bar.code(), bar.out() + bar.err());
        assertTrue(bar.err().contains("\r[") && bar.err().contains("3/3") && bar.err().contains("[##############################]"), bar.err());

        Output missing = run("eval", dir.resolve("missing").toString());
        assertUsage(missing, "no folder " + dir.resolve("missing"), "Usage: pvn3d-ort eval");
        Path empty = Files.createDirectory(dir.resolve("empty"));
        Output none = run("eval", empty.toString());
        assertEquals(1, none.code());
        assertTrue(none.err().contains("no *.bin samples in " + empty), none.err());
    }

    @Test
    void theFolderFormRunsOnInTheRealProcessWithoutABar(@TempDir Path dir) throws Exception {
        FolderEvaluationTestSamples.write(dir);
        Files.write(dir.resolve("d_corrupt.bin"), new byte[] {'P', 'V', 'T', '1', 1, 0, 0, 0, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff});
        Output o = java(dir, "eval", dir.toString());
        assertEquals(1, o.code(), "a failed sample fails the run: " + o.out() + o.err());
        assertTrue(o.err().contains("eval: 4/4 samples (100%)") && !o.err().contains("\r"), o.err());
        assertTrue(o.out().contains("error: " + dir.resolve("d_corrupt.bin") + ": the header says 1 tensor, but only 4 bytes follow"),
                o.out());
        assertTrue(o.out().contains("1 sample(s) failed"), o.out());
    }

    @Test
    void aCorruptSampleIsAMessageNotAStackTrace(@TempDir Path dir) throws Exception {
        Path garbage = dir.resolve("garbage.bin");
        Files.write(garbage, new byte[] {0x13, 0x37, (byte) 0xca, (byte) 0xfe, 0x00, 0x42, 0x17});
        Output g = run("--sample", garbage.toString());
        assertFailure(g, "pvn3d-ort: " + garbage + ": not a PVT1 file (it starts with 13 37 ca fe, not \"PVT1\")");

        byte[] shipped;
        try (var in = MainTest.class.getResourceAsStream("/pvn3d/pvn3d_tiny_sample.bin")) {
            shipped = in.readAllBytes();
        }
        Path truncated = dir.resolve("truncated.bin");
        Files.write(truncated, Arrays.copyOf(shipped, shipped.length / 2));
        Output t = run("--sample", truncated.toString());
        assertFailure(t, "pvn3d-ort: " + truncated + ": entry ");
        assertTrue(t.err().contains("truncated: its data "), t.err());

        Path negative = dir.resolve("negative.bin");
        Files.write(negative, new byte[] {'P', 'V', 'T', '1', (byte) 0xfe, (byte) 0xff, (byte) 0xff, (byte) 0xff});
        assertFailure(run("--sample", negative.toString()), "pvn3d-ort: " + negative + ": negative tensor count -2");
        // the model as a file, copied from the class path (a folder in the build, inside the jar elsewhere)
        Path model = dir.resolve("pointnet2_default.onnx");
        try (var in = MainTest.class.getResourceAsStream("/models/pointnet2_default.onnx")) {
            Files.copy(in, model);
        }
        assertFailure(run("pointnet2", "--model", model.toString(), "--input", negative.toString()),
                "pvn3d-ort: " + negative + ": negative tensor count -2");

        Output debug = run("--sample", garbage.toString(), "--debug");
        assertEquals(1, debug.code());
        assertTrue(debug.err().contains("not a PVT1 file") && debug.err().contains("\tat org.pvn3d.ort.io.PvtFile"), debug.err());
    }

    @Test
    void cudaWithoutAGpuSaysWhatToDo() {
        assumeTrue(CudaDevice.count() == 0, "this machine has a CUDA device");
        for (String[] args : new String[][] {{"--ep", "cuda"}, {"pointnet2", "--ep", "cuda"},
            {"pool-bench", "--ep", "cuda", "--frames", "2"}}) {
            Output o = run(args);
            assertFailure(o, "pvn3d-ort: --ep cuda: no ");
            assertTrue(o.err().contains("; without --ep cuda it runs on the CPU provider"), o.err());
            if (CudaDevice.hasRuntime()) {
                assertTrue(o.err().contains("no CUDA device (the CUDA runtime finds no GPU"), o.err());
            }
            assertTrue(!o.out().contains("frames/s"), "failed before any table: " + o.out());
        }
        if (CudaDevice.hasRuntime()) {
            // the pose stage alone on the GPU: CUDA reports "driver insufficient" also when there is no driver at all
            Output o = run("--pose", "cuda");
            assertEquals(1, o.code(), o.out() + o.err());
            assertTrue(o.err().contains("no CUDA device (the CUDA runtime finds no GPU"), o.err());
        }
    }

    @Test
    void ortsCudaProviderLoadFailureBecomesAdvice() {
        String raw = "CUDA provider options {device_id=0}: /onnxruntime_src/onnxruntime/core/session/provider_bridge_ort.cc:1193 "
                + "onnxruntime::Provider& onnxruntime::ProviderLibrary::Get() [ONNXRuntimeError] : 1 : FAIL : Failed to load library "
                + "libonnxruntime_providers_cuda.so with error: libcublasLt.so.11: cannot open shared object file: No such file or directory\n";
        String m = Errors.describe(new OrtException(OrtErrorCode.ORT_RUNTIME_EXCEPTION, raw));
        assertTrue(m.startsWith("the CUDA provider of ONNX Runtime " + OrtRuntime.get().version() + " could not load: "), m);
        if (OrtRuntime.get().isFromClassPath() && !OrtRuntime.get().isAtLeast("1.19")) {
            assertTrue(m.contains("it needs CUDA 11.8 and cuDNN 8 (libcublasLt.so.11 missing); for CUDA 12/13 point PVN3D_ORT_PATH at "
                    + "an ORT build for it, e.g. org.bytedeco:onnxruntime:1.24.1-1.5.13"), m);
        } else {
            assertTrue(m.contains("libcublasLt.so.11"), m);
        }
        assertTrue(!m.contains("[ORT_") && !m.contains("onnxruntime_src"), m);
        assertEquals("cannot open x.onnx", Errors.strip(new OrtException(OrtErrorCode.ORT_NO_SUCHFILE, "cannot open x.onnx\n")));
        assertEquals("java.lang.IllegalStateException: boom", Errors.describe(new IllegalStateException("boom")));
        assertTrue(!Errors.expected(new IllegalStateException("boom")) && Errors.expected(new OrtException("x")));
    }

    @Test
    void versionNamesTheRuntimeTheOperatorLibraryAndTheProvidersThatLoad() {
        for (String flag : new String[] {"--version", "-V", "version"}) {
            Output o = run(flag);
            assertEquals(0, o.code(), o.err());
            assertTrue(o.out().startsWith("pvn3d-ort "), o.out());
            assertTrue(o.out().contains("ONNX Runtime 1.") && o.out().contains("libonnxruntime.so"), o.out());
            assertTrue(o.out().contains("libpvn3d_ops"), o.out());
            assertTrue(Pattern.compile("(?m)^execution providers: CPU(, CUDA)?$").matcher(o.out()).find(), o.out());
            assertTrue(o.out().contains("  CUDA: "), o.out());
            if (CudaDevice.count() == 0) {
                assertTrue(o.out().contains("execution providers: CPU\n") && o.out().contains("  CUDA: unavailable: no "), o.out());
            }
            assertTrue(!o.out().contains("ExecutionProvider"), "ORT's compiled-in list is not the answer: " + o.out());
        }
    }

    @Test
    void usageErrorsExitWith2AndAUsageLine(@TempDir Path dir) {
        assertUsage(run("--ep", "tpu"), "--ep takes cpu or cuda, not tpu", "Usage: pvn3d-ort [OPTIONS] [COMMAND]");
        assertUsage(run("--frobnicate"), "Unknown option: '--frobnicate'", "Usage: pvn3d-ort [OPTIONS] [COMMAND]");
        assertUsage(run("--run", "3"), "Unknown options: '--run', '3'", "Possible solutions: --runs");
        assertUsage(run("frobnicate"), "unknown command 'frobnicate' (the commands: eval, pointnet2, pool-bench, frame-to-pose, version", "Usage: pvn3d-ort");
        assertUsage(run("--runs", "abc"), "'abc' is not an int", "Usage: pvn3d-ort");
        assertUsage(run("--runs", "0"), "--runs takes a positive integer, not 0", "Usage: pvn3d-ort");
        assertUsage(run("--warmup"), "Missing required parameter for option '--warmup'", "Usage: pvn3d-ort");
        assertUsage(run("--sample", "/no/such/sample.bin"), "no sample file /no/such/sample.bin", "Usage: pvn3d-ort");
        assertUsage(run("--model", "/no/such/model.onnx"), "no model file /no/such/model.onnx", "Usage: pvn3d-ort");
        assertUsage(run("--scale", "64"), "--scale takes at most 32", "Usage: pvn3d-ort");
        assertUsage(run("--pose", "gpu"), "--pose takes native, cuda or java, not gpu", "Usage: pvn3d-ort");
        assertUsage(run("--refine", "icp2"), "--refine takes icp or none, not icp2", "Usage: pvn3d-ort");
        assertUsage(run("eval", dir.toString(), "--refine", "yes"), "--refine takes icp or none, not yes", "Usage: pvn3d-ort eval");
        assertUsage(run("pointnet2", "--runs", "0"), "--runs takes a positive integer", "Usage: pvn3d-ort pointnet2 [OPTIONS]");
        assertUsage(run("pointnet2", "--model", "x.onnx"), "--model and --input go together", "Usage: pvn3d-ort pointnet2");
        assertUsage(run("pointnet2", "--sample", "x.bin"), "Unknown options: '--sample', 'x.bin'", "Usage: pvn3d-ort pointnet2");
        assertUsage(run("eval", dir.toString(), "--runs", "3"), "Unknown options: '--runs', '3'", "Usage: pvn3d-ort eval [OPTIONS] DIR");
        assertUsage(run("eval"), "Missing required parameter: 'DIR'", "Usage: pvn3d-ort eval");
        assertUsage(run("--runs", "3", "eval", dir.toString()), "--runs belongs to the main job (pvn3d-ort with no command), not to 'eval'",
                "Usage: pvn3d-ort eval");
        assertUsage(run("--ep", "cpu", "eval", dir.toString()), "--ep comes before 'eval': options go after the command (pvn3d-ort eval ... --ep)",
                "Usage: pvn3d-ort eval");
        assertUsage(run("version", "--ep", "cpu"), "Unknown options: '--ep', 'cpu'", "Usage: pvn3d-ort version");
        assertUsage(run("frame-to-pose", "--cuda-option", "prefer_nhwc=1"), "--cuda-option needs --ep cuda",
                "Usage: pvn3d-ort frame-to-pose");
    }

    @Test
    void helpListsTheCommandsTheFilesAndTheExitCodes() {
        Output o = run("--help");
        assertEquals(0, o.code(), o.err());
        for (String s : new String[] {"Usage: pvn3d-ort [OPTIONS] [COMMAND]", "--ep=cpu|cuda", "--out=DIR", "--report=FILE.json",
            "--debug", "--jfr=FILE.jfr", "--profile=DIR", "--nvtx", "--device-timing", "-V, --version", "eval", "pointnet2", "version", "Exit codes:", "  2   usage error", "  3   the run worked but missed its parity target", "PVN3D_ORT_PATH"}) {
            assertTrue(o.out().contains(s), s + " in\n" + o.out());
        }
        assertTrue(run("eval", "--help").out().contains("Usage: pvn3d-ort eval [OPTIONS] DIR"));
        for (String command : new String[] {"eval", "pointnet2"}) {
            String help = run(command, "-h").out();
            assertTrue(help.contains("--profile=DIR") && help.contains("--jfr=FILE.jfr") && help.contains("--nvtx"), help);
        }
        assertTrue(run("-h").out().contains("Writes no file unless asked: --out DIR"));
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

    static PoseCommand parse(String... args) {
        CommandLine cl = Main.commandLine(new Io(System.out, System.err, false));
        cl.parseArgs(args);
        return cl.getCommand();
    }

    static void assertUsage(Output o, String message, String usage) {
        assertEquals(2, o.code(), o.out() + o.err());
        assertTrue(o.err().startsWith("pvn3d-ort: "), o.err());
        assertTrue(o.err().contains(message), "'" + message + "' in\n" + o.err());
        assertTrue(o.err().contains(usage), "'" + usage + "' in\n" + o.err());
        assertTrue(o.err().contains(" --help' says more."), o.err());
        assertTrue(!o.err().contains("\tat ") && !o.err().contains("Exception"), o.err());
    }

    static void assertFailure(Output o, String start) {
        assertEquals(1, o.code(), o.out() + o.err());
        assertTrue(o.err().startsWith(start), "'" + start + "' at the start of\n" + o.err());
        assertTrue(!o.err().contains("\tat ") && !o.err().contains("Exception") && !o.err().contains("[ORT_"), o.err());
        assertTrue(!o.err().contains("--help"), "a runtime failure is not a usage error: " + o.err());
    }

    /**
     * This JVM's class path, plus where the classes the command line needs came from: under a launcher
     * with a class loader of its own (the JUnit console on the GPU machine) java.class.path is only the
     * launcher's jar.
     */
    static String classPath() throws Exception {
        Set<String> entries = new LinkedHashSet<>(List.of(System.getProperty("java.class.path").split(File.pathSeparator)));
        for (String name : new String[] {Main.class.getName(), PvtFile.class.getName(), OrtRuntime.class.getName(),
            "org.pvn3d.ort.ffm.OrtApi", CommandLine.class.getName()}) {
            entries.add(Path.of(Class.forName(name).getProtectionDomain().getCodeSource().getLocation().toURI()).toString());
        }
        URL ort = MainTest.class.getClassLoader().getResource("ai/onnxruntime/native/linux-x64/libonnxruntime.so");
        if (ort != null && ort.getProtocol().equals("jar")) {
            String jar = ort.getPath(); // file:/.../onnxruntime-1.16.3.jar!/ai/...
            entries.add(Path.of(new URI(jar.substring(0, jar.indexOf("!/")))).toString());
        }
        return String.join(File.pathSeparator, entries);
    }

    /** The command line in a JVM of its own (the tests' class path), in {@code cwd}, with stdout and stderr piped. */
    static Output java(Path cwd, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "-Xmx512m", "-cp", classPath()));
        for (String p : new String[] {"pvn3d.cache.dir", "pvn3d.ort.path", "pvn3d.ops.path", "pvn3d.cudart.path"}) {
            if (System.getProperty(p) != null) {
                command.add("-D" + p + "=" + System.getProperty(p));
            }
        }
        command.add(Main.class.getName());
        command.addAll(List.of(args));
        Path out = Files.createTempFile("pvn3d-main", ".out");
        Path err = Files.createTempFile("pvn3d-main", ".err");
        try {
            Process p = new ProcessBuilder(command).directory(cwd.toFile()).redirectOutput(out.toFile()).redirectError(err.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
            assertTrue(p.waitFor(120, TimeUnit.SECONDS), "the command line finishes within 2 minutes");
            return new Output(p.exitValue(), Files.readString(out), Files.readString(err));
        } finally {
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
        }
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

    @Test
    void thePictureDrawsTheModelKeypointsUnderThePose() {
        // a quarter turn about z, then a shift: (1,0,0) -> (0,1,0) + t, (0,0,2) -> (0,0,2) + t
        org.pvn3d.ort.pipeline.Pose pose = new org.pvn3d.ort.pipeline.Pose(new double[] {0, -1, 0, 1, 0, 0, 0, 0, 1},
                new double[] {0.1, 0.2, 0.5});
        float[] got = PoseCommand.keypointsUnder(pose, new float[] {1, 0, 0, 0, 0, 2});
        org.junit.jupiter.api.Assertions.assertArrayEquals(new float[] {0.1f, 1.2f, 0.5f, 0.1f, 0.2f, 2.5f}, got, 1e-6f);
    }
}
