package org.pvn3d.ort.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pvn3d.ort.jfr.OrtEvents;
import org.pvn3d.ort.ops.Pvn3dOps;
import org.pvn3d.ort.pipeline.OnnxGraphNodes;
import org.pvn3d.ort.pipeline.Pvn3dPipeline;
import org.pvn3d.ort.profile.ProfileSummary;

/**
 * {@code --jfr} and {@code --profile} on the CPU provider, as CI runs them: the JFR recording read back
 * with {@code jdk.jfr.consumer} (the session, the runs, every PVN3D operator's compute calls with their
 * fields, the pipeline's stages), and the profile's summary (its JSON: nodes per operator type as in the
 * model, totals as the sum over nodes, the custom operators apart; its bar chart).
 */
class ProfilingCliTest {
    @Test
    void theMainJobRecordsJfrEventsAndSummarisesOrtsProfile(@TempDir Path dir) throws Exception {
        Path jfr = dir.resolve("run.jfr");
        Path profiles = dir.resolve("profile");
        MainTest.Output o = MainTest.run("--jfr", jfr.toString(), "--profile", profiles.toString(), "--warmup", "1", "--runs", "2");
        assertEquals(0, o.code(), o.out() + o.err());
        assertTrue(o.out().contains("jfr: " + jfr), o.out());
        assertTrue(o.out().contains("by operator type"), o.out());
        Map<String, Integer> modelNodes = nodesByOpType(Pvn3dPipeline.class.getResourceAsStream(Pvn3dPipeline.MODEL_RESOURCE));
        Map<String, Integer> customNodes = new TreeMap<>(modelNodes);
        customNodes.keySet().removeIf(op -> !op.startsWith("PVN3D_"));
        assertFalse(customNodes.isEmpty(), "the tiny model uses PVN3D operators: " + modelNodes);
        int runs = 3; // one warm-up and two timed

        // ---- the recording ----
        List<RecordedEvent> events = RecordingFile.readAllEvents(jfr);
        List<RecordedEvent> sessions = named(events, OrtEvents.SESSION_CREATED);
        assertEquals(1, sessions.size());
        RecordedEvent session = sessions.get(0);
        assertTrue(session.getString("model").endsWith("bytes in memory"), session.getString("model"));
        assertEquals("CPUExecutionProvider", session.getString("providers"));
        assertEquals(Pvn3dOps.DOMAIN, session.getString("customOpDomains"));
        assertTrue(session.getBoolean("profiling"));
        assertNull(session.getString("error"));

        List<RecordedEvent> runEvents = named(events, OrtEvents.RUN);
        assertEquals(runs, runEvents.size());
        for (RecordedEvent r : runEvents) {
            assertEquals(session.getLong("sessionId"), r.getLong("sessionId"));
            assertEquals("CPUExecutionProvider", r.getString("provider"));
            assertTrue(r.getLong("inputBytes") > 0 && r.getLong("outputBytes") > 0, r.toString());
            assertNull(r.getString("error"));
        }

        List<RecordedEvent> computes = named(events, OrtEvents.CUSTOM_OP_COMPUTE);
        Map<String, Set<String>> nodesSeen = new TreeMap<>();
        Map<String, Integer> callsSeen = new TreeMap<>();
        for (RecordedEvent c : computes) {
            String op = c.getString("operator");
            assertEquals(Pvn3dOps.DOMAIN, c.getString("domain"));
            assertEquals("CPUExecutionProvider", c.getString("provider"));
            assertFalse(c.getString("node").isEmpty());
            assertTrue(c.getString("inputShapes").matches("\\[[0-9,]+\\]( \\[[0-9,]+\\])*"), c.getString("inputShapes"));
            assertTrue(c.getLong("inputBytes") > 0);
            assertTrue(c.getDuration().toNanos() > 0);
            assertNull(c.getString("error"));
            nodesSeen.computeIfAbsent(op, k -> new java.util.TreeSet<>()).add(c.getString("node"));
            callsSeen.merge(op, 1, Integer::sum);
        }
        for (Map.Entry<String, Integer> e : customNodes.entrySet()) {
            assertEquals(e.getValue(), nodesSeen.getOrDefault(e.getKey(), Set.of()).size(), "nodes of " + e.getKey() + " computed");
            assertEquals(e.getValue() * runs, callsSeen.get(e.getKey()), "compute calls of " + e.getKey());
        }
        RecordedEvent fps = computes.stream().filter(c -> c.getString("operator").equals("PVN3D_FurthestPointSample")).findFirst()
                .orElseThrow();
        assertTrue(fps.getString("inputShapes").matches("\\[1,[0-9]+,3\\]"), "FPS takes xyz [B,N,3]: " + fps.getString("inputShapes"));

        List<RecordedEvent> stages = named(events, "org.pvn3d.ort.PipelineStage");
        List<String> names = stages.stream().map(s -> s.getString("stage")).toList();
        // the stages after the network run as often as the network: one warm-up (iteration -1) and two timed
        List<String> after = List.of("voting", "pose", "refinement", "metrics");
        List<String> expectedNames = new java.util.ArrayList<>(List.of("load", "inference", "inference", "inference"));
        for (int i = 0; i < 3; i++) {
            expectedNames.addAll(after);
        }
        assertEquals(expectedNames, names);
        assertEquals(List.of(0, -1, 0, 1, -1, -1, -1, -1, 0, 0, 0, 0, 1, 1, 1, 1),
                stages.stream().map(s -> s.getInt("iteration")).toList());
        assertTrue(stages.stream().allMatch(s -> s.getString("provider").equals("cpu")));

        // ---- the profile and its summary ----
        Path profile = single(profiles, "pvn3d_[0-9]+_.*[0-9]\\.json");
        Path summaryJson = single(profiles, ".*\\.summary\\.json");
        Path chart = single(profiles, ".*\\.summary\\.png");
        String json = Files.readString(summaryJson);
        assertTrue(json.contains("\"runs\": " + runs), json);
        List<Map<String, String>> types = objects(json, "op_types", "nodes");
        List<Map<String, String>> nodes = objects(json, "nodes", null);
        for (Map.Entry<String, Integer> e : customNodes.entrySet()) {
            Map<String, String> t = types.stream().filter(m -> m.get("op_type").equals(e.getKey())).findFirst().orElseThrow();
            assertEquals("true", t.get("custom"), e.getKey());
            assertEquals(String.valueOf(e.getValue()), t.get("nodes"), "nodes of " + e.getKey() + " in the profile");
            assertEquals(String.valueOf(e.getValue() * runs), t.get("calls"));
            double sum = nodes.stream().filter(n -> n.get("op_type").equals(e.getKey())).mapToDouble(n -> Double.parseDouble(n.get("host_ms"))).sum();
            assertEquals(sum, Double.parseDouble(t.get("host_ms")), 1e-3, "a type's host time is the sum over its nodes");
        }
        for (Map<String, String> t : types) {
            assertEquals(String.valueOf(t.get("op_type").startsWith("PVN3D_")), t.get("custom"), "custom or not: " + t);
            assertEquals("null", t.get("device_ms"), "no device time on the CPU provider");
        }
        String customPart = json.substring(json.indexOf("\"custom_operators\""), json.indexOf("\"nodes\": ["));
        for (String op : customNodes.keySet()) {
            assertTrue(customPart.contains("\"" + op + "\""), op + " listed with the custom operators: " + customPart);
        }
        assertFalse(customPart.contains("\"Conv\"") || customPart.contains("\"MatMul\""), customPart);
        double total = types.stream().mapToDouble(t -> Double.parseDouble(t.get("host_ms"))).sum();
        Matcher m = Pattern.compile("\"node_host_ms_total\": ([0-9.eE+-]+)").matcher(json);
        assertTrue(m.find());
        assertEquals(Double.parseDouble(m.group(1)), total, 1e-2);

        ProfileSummary summary = ProfileSummary.read(profile);
        assertEquals(runs, summary.runs());
        assertEquals(customNodes.values().stream().mapToInt(Integer::intValue).sum(),
                summary.nodes().stream().filter(ProfileSummary.Node::custom).count());

        byte[] png = Files.readAllBytes(chart);
        assertEquals(0x89, png[0] & 0xFF);
        assertEquals("PNG", new String(png, 1, 3, java.nio.charset.StandardCharsets.US_ASCII));
        ByteBuffer ihdr = ByteBuffer.wrap(png, 16, 8);
        assertTrue(ihdr.getInt() > 600 && ihdr.getInt() > 200, "a chart of some size");
    }

    @Test
    void thePointNet2JobTakesTheSameOptions(@TempDir Path dir) throws Exception {
        Path jfr = dir.resolve("pn2.jfr");
        MainTest.Output o = MainTest.run("pointnet2", "--warmup", "0", "--runs", "1", "--jfr", jfr.toString(), "--profile",
                dir.toString(), "--nvtx");
        assertEquals(0, o.code(), o.out() + o.err());
        assertTrue(o.out().contains("custom operators:"), o.out());
        single(dir, "pointnet2_.*[0-9]\\.json");
        single(dir, "pointnet2_.*\\.summary\\.png");
        List<RecordedEvent> events = RecordingFile.readAllEvents(jfr);
        assertEquals(1, named(events, OrtEvents.RUN).size());
        assertFalse(named(events, OrtEvents.CUSTOM_OP_COMPUTE).isEmpty());
    }

    @Test
    void theFolderFormProfilesItsSession(@TempDir Path dir) throws Exception {
        Path samples = Files.createDirectories(dir.resolve("samples"));
        org.pvn3d.ort.pipeline.FolderEvaluationTestSamples.write(samples);
        long count;
        try (Stream<Path> s = Files.list(samples)) {
            count = s.filter(p -> p.toString().endsWith(".bin")).count();
        }
        Path jfr = dir.resolve("eval.jfr");
        MainTest.Output o = MainTest.run("eval", samples.toString(), "--warmup", "0", "--profile", dir.resolve("p").toString(), "--jfr",
                jfr.toString());
        assertEquals(0, o.code(), o.out() + o.err());
        Path profile = single(dir.resolve("p"), "pvn3d_[0-9]+_.*[0-9]\\.json");
        ProfileSummary summary = ProfileSummary.read(profile);
        assertEquals(count, summary.runs(), "one run per sample, one session");
        single(dir.resolve("p"), ".*\\.summary\\.png");
        List<RecordedEvent> events = RecordingFile.readAllEvents(jfr);
        assertEquals(1, named(events, OrtEvents.SESSION_CREATED).size());
        assertEquals(count, named(events, OrtEvents.RUN).size());
        assertEquals(count, named(events, "org.pvn3d.ort.PipelineStage").stream().filter(e -> e.getString("stage").equals("pose")).count());
    }

    @Test
    void profilingOptionsAreCheckedLikeTheOthers(@TempDir Path dir) throws Exception {
        Path file = Files.writeString(dir.resolve("a-file"), "x");
        MainTest.Output o = MainTest.run("--profile", file.toString());
        assertEquals(Main.USAGE, o.code(), o.err());
        assertTrue(o.err().contains("--profile takes a folder"), o.err());
        o = MainTest.run("eval", dir.toString(), "--jfr", dir.toString());
        assertEquals(Main.USAGE, o.code(), o.err());
        assertTrue(o.err().contains("--jfr takes a file name"), o.err());
    }

    static List<RecordedEvent> named(List<RecordedEvent> events, String name) {
        return events.stream().filter(e -> e.getEventType().getName().equals(name))
                .sorted(Comparator.comparing(RecordedEvent::getStartTime)).toList();
    }

    static Path single(Path dir, String regex) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            List<Path> found = s.filter(p -> p.getFileName().toString().matches(regex)).toList();
            assertEquals(1, found.size(), regex + " in " + dir + ": " + found);
            return found.get(0);
        }
    }

    /**
     * The flat objects of the summary's array {@code field} (as written: one member per line), each as
     * member name to raw value; {@code stopAt}, when not null, is a member every object has (a guard).
     */
    static List<Map<String, String>> objects(String json, String field, String stopAt) {
        int start = json.indexOf("\"" + field + "\": [");
        assertTrue(start >= 0, field);
        int end = json.indexOf("\n  ]", start);
        List<Map<String, String>> out = new ArrayList<>();
        Matcher object = Pattern.compile("\\{([^{}]*)\\}").matcher(json.substring(start, end));
        Pattern member = Pattern.compile("\"([a-z_]+)\": (\"[^\"]*\"|[^,\\n]+)");
        while (object.find()) {
            Map<String, String> m = new TreeMap<>();
            Matcher mm = member.matcher(object.group(1));
            while (mm.find()) {
                String v = mm.group(2).trim();
                m.put(mm.group(1), v.startsWith("\"") ? v.substring(1, v.length() - 1) : v);
            }
            if (stopAt != null) {
                assertNotNull(m.get(stopAt), m.toString());
            }
            out.add(m);
        }
        return out;
    }

    // ---- the model's own node count per op type, from its protobuf (ModelProto.graph.node[].op_type) ----

    static Map<String, Integer> nodesByOpType(InputStream model) throws IOException {
        byte[] bytes;
        try (model) {
            bytes = model.readAllBytes();
        }
        Map<String, Integer> counts = new TreeMap<>();
        for (OnnxGraphNodes.Node node : OnnxGraphNodes.of(bytes)) {
            counts.merge(node.opType(), 1, Integer::sum);
        }
        return counts;
    }
}
