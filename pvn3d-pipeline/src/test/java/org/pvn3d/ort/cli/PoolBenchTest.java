package org.pvn3d.ort.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code pvn3d-ort pool-bench} on the CPU provider, briefly: 1 and 2 sessions, the table and the JSON. */
class PoolBenchTest {
    @Test
    void measuresOneAndTwoSessionsAndWritesJson(@TempDir Path dir) throws Exception {
        Path json = dir.resolve("pool.json");
        MainTest.Output o = MainTest.run("pool-bench", "--frames", "3", "--sessions", "1,2", "--warmup", "1", "--threads", "1", "--json",
                json.toString());
        assertEquals(0, o.code(), o.out() + o.err());
        assertTrue(o.out().contains("frames/s") && o.out().contains("p99 ms"), o.out());
        Matcher rows = Pattern.compile("(?m)^ +([12]) +1 +([24]) +3 +[0-9.]+ +[0-9.]+ ").matcher(o.out());
        int n = 0;
        while (rows.find()) {
            assertEquals(2 * Integer.parseInt(rows.group(1)), Integer.parseInt(rows.group(2)), "in flight: twice the sessions");
            n++;
        }
        assertEquals(2, n, o.out());
        String j = Files.readString(json);
        assertTrue(j.contains("\"ep\": \"cpu\"") && j.contains("\"frames_per_s\"") && j.contains("\"p99\"")
                && j.contains("\"cpu#1\": "), j);
        assertEquals(2, Pattern.compile("\"sessions_per_device\"").matcher(j).results().count(), j);
    }

    @Test
    void jsonToStandardOutputIsTheJsonAlone(@TempDir Path dir) throws Exception {
        Path jfr = dir.resolve("pool.jfr");
        MainTest.Output o = MainTest.run("pool-bench", "--frames", "2", "--sessions", "1", "--warmup", "0", "--threads", "1",
                "--json", "-", "--jfr", jfr.toString());
        assertEquals(0, o.code(), o.out() + o.err());
        assertTrue(o.out().startsWith("{") && o.out().strip().endsWith("}"), "standard output: " + o.out());
        assertTrue(o.out().contains("\"tool\": \"pvn3d-ort pool-bench\""), o.out());
        assertTrue(o.err().contains("frames/s") && o.err().contains("jfr: " + jfr), "the table and notes go to stderr: " + o.err());
    }

    /** frame-to-pose and eval take '-' as pool-bench does (they wrote a file named '-'). */
    @Test
    void everyJsonOptionTakesStandardOutput(@TempDir Path dir) throws Exception {
        MainTest.Output f = MainTest.run("frame-to-pose", "--frames", "1", "--warmup", "0", "--threads", "1", "--json", "-");
        assertEquals(0, f.code(), f.out() + f.err());
        assertTrue(f.out().startsWith("[") && f.out().strip().endsWith("]"), "standard output: " + f.out());
        assertTrue(f.out().contains("\"frames_per_s\""), f.out());
        assertTrue(f.err().contains("frames/s"), "the table goes to stderr: " + f.err());
        org.pvn3d.ort.pipeline.Pvn3dSample.resource(org.pvn3d.ort.pipeline.Pvn3dSample.RESOURCE).write(dir.resolve("a.bin"));
        MainTest.Output e = MainTest.run("eval", dir.toString(), "--threads", "1", "--json", "-");
        assertEquals(0, e.code(), e.out() + e.err());
        assertTrue(e.out().startsWith("{") && e.out().strip().endsWith("}"), "standard output: " + e.out());
        assertTrue(e.err().contains("summary: 1 samples"), "the table goes to stderr: " + e.err());
        assertEquals(List.of("a.bin"), names(dir), "no file named '-'");
        MainTest.Output both = MainTest.run("frame-to-pose", "--json", "-", "--eval-json", "-", "--eval", dir.toString());
        assertEquals(2, both.code(), both.err());
        assertTrue(both.err().contains("only one of them can have standard output"), both.err());
    }

    private static List<String> names(Path dir) throws java.io.IOException {
        try (var files = java.nio.file.Files.list(dir)) {
            return files.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    @Test
    void oneGraphSessionsPerPrecision(@TempDir Path dir) throws Exception {
        Path json = dir.resolve("pool.json");
        MainTest.Output o = MainTest.run("pool-bench", "--frames", "3", "--sessions", "1", "--warmup", "1", "--threads", "1",
                "--precision", "strict", "--json", json.toString());
        assertEquals(0, o.code(), o.out() + o.err());
        assertTrue(Pattern.compile("(?m)^ +1 +1 +2 +3 .* 0  one graph, strict$").matcher(o.out()).find(), o.out());
        String j = Files.readString(json);
        assertTrue(j.contains("\"mode\": \"strict\"") && j.contains("\"cuda_graph\": false") && j.contains("\"frames_per_s\""), j);
        MainTest.Output staged = MainTest.run("pool-bench", "--frames", "1", "--sessions", "1", "--warmup", "0", "--threads", "1");
        assertTrue(staged.out().contains("the staged pipeline"), staged.out());
        Path branched = dir.resolve("branches.json");
        MainTest.Output b = MainTest.run("pool-bench", "--frames", "3", "--sessions", "1", "--warmup", "1", "--threads", "1",
                "--precision", "strict", "--branches", "--json", branched.toString());
        assertEquals(0, b.code(), b.out() + b.err());
        assertTrue(b.out().contains(" 0  one graph, strict, branches"), b.out());
        assertTrue(Files.readString(branched).contains("\"branches\": true"), Files.readString(branched));
        MainTest.Output lone = MainTest.run("pool-bench", "--branches");
        assertEquals(2, lone.code(), lone.out() + lone.err());
        assertTrue(lone.err().contains("--cuda-graph, --branches and --fp16-model go with --precision"), lone.err());
    }

    @Test
    void oneGraphOptionsThatCannotWorkAreUsageErrors() {
        String[][] cases = {
            {"--precision", "tf32"}, {"--precision", "fp16"}, {"--precision", "strict", "--cuda-graph"},
            {"--cuda-graph"}, {"--precision", "half"}, {"--precision", "strict", "--pose", "java"},
            {"--precision", "fp16", "--ep", "cuda"}};
        String[] why = {
            "--precision tf32/fp16 and --cuda-graph need --ep cuda", "--precision tf32/fp16 and --cuda-graph need --ep cuda",
            "--precision tf32/fp16 and --cuda-graph need --ep cuda", "--cuda-graph, --branches and --fp16-model go with --precision",
            "--precision: precision must be strict, tf32 or fp16, not 'half'", "with --precision the pose head runs inside the graph",
            "--precision fp16 needs --fp16-model"};
        for (int i = 0; i < cases.length; i++) {
            String[] args = new String[cases[i].length + 1];
            args[0] = "pool-bench";
            System.arraycopy(cases[i], 0, args, 1, cases[i].length);
            MainTest.Output o = MainTest.run(args);
            assertEquals(2, o.code(), String.join(" ", args) + ": " + o.err());
            assertTrue(o.err().contains(why[i]), String.join(" ", args) + ": " + o.err());
        }
    }

    @Test
    void badArgumentsAreRefused() {
        MainTest.Output o = MainTest.run("pool-bench", "--ep", "tpu");
        assertEquals(2, o.code());
        assertTrue(o.err().contains("--ep takes cpu or cuda, not tpu") && o.err().contains("--sessions"), o.err());
        assertEquals(2, MainTest.run("pool-bench", "--sessions", "1,0").code());
        // beyond what a pool holds: usage errors, not "this looks like a bug" (exit 1)
        for (String[] args : new String[][] {{"--sessions", "4097"}, {"--queue", "2147483647"}, {"--sessions", ",,,"}}) {
            MainTest.Output big = MainTest.run(java.util.stream.Stream.concat(java.util.stream.Stream.of("pool-bench", "--frames", "1"),
                    java.util.Arrays.stream(args)).toArray(String[]::new));
            assertEquals(2, big.code(), String.join(" ", args) + ": " + big.err());
            assertTrue(!big.err().contains("looks like a bug"), big.err());
        }
        assertEquals(0, MainTest.run("pool-bench", "--help").code());
    }

    @Test
    void isACommandOfTheCommandLine() {
        MainTest.Output help = MainTest.run("--help");
        assertEquals(0, help.code());
        assertTrue(help.out().contains("pool-bench"), help.out());
        MainTest.Output own = MainTest.run("pool-bench", "--help");
        assertTrue(own.out().contains("--sessions") && own.out().contains("--jfr") && own.out().contains("(default: 2)"), own.out());
        MainTest.Output debug = MainTest.run("--debug", "pool-bench", "--ep", "tpu");
        assertEquals(2, debug.code(), debug.out() + debug.err());
        assertTrue(debug.err().contains("--ep takes cpu or cuda, not tpu") && debug.err().contains("ParameterException"), debug.err());
        MainTest.Output threads = MainTest.run("pool-bench", "--threads", "0");
        assertEquals(2, threads.code());
        assertTrue(threads.err().contains("--threads takes a positive integer, not 0"), threads.err());
        MainTest.Output both = MainTest.run("pool-bench", "--device", "1", "--devices", "0");
        assertEquals(2, both.code());
        assertTrue(both.err().contains("--device and --devices"), both.err());
        assertEquals(2, MainTest.run("pool-bench", "--devices", "0,0").code());
        assertEquals(2, MainTest.run("pool-bench", "--model", "missing.onnx").code());
    }

    @Test
    void profilesEverySessionAndRecordsJfr(@TempDir Path dir) throws Exception {
        Path jfr = dir.resolve("pool.jfr");
        Path profiles = dir.resolve("profiles");
        MainTest.Output o = MainTest.run("pool-bench", "--frames", "2", "--sessions", "2", "--warmup", "0", "--threads", "1", "--profile",
                profiles.toString(), "--jfr", jfr.toString());
        assertEquals(0, o.code(), o.out() + o.err());
        try (var files = java.nio.file.Files.list(profiles)) {
            long summaries = files.filter(f -> f.toString().endsWith(".summary.json")).count();
            assertEquals(2, summaries, "one profile summarised per session");
        }
        var events = jdk.jfr.consumer.RecordingFile.readAllEvents(jfr);
        assertEquals(2, ProfilingCliTest.named(events, org.pvn3d.ort.jfr.OrtEvents.SESSION_CREATED).size());
        assertEquals(2, ProfilingCliTest.named(events, org.pvn3d.ort.jfr.OrtEvents.RUN).size(), "two frames, no warm-up");
        assertEquals(2, o.out().split("ORT profile ", -1).length - 1, o.out());
    }
}
