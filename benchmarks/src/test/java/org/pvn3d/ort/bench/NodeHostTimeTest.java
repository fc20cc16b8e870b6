package org.pvn3d.ort.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pvn3d.ort.io.PvtFile;
import org.pvn3d.ort.ops.Pvn3dOps;
import org.pvn3d.ort.pipeline.Pvn3dPipeline;
import org.pvn3d.ort.pipeline.OnnxGraphNodes;
import org.pvn3d.ort.pipeline.Pvn3dSample;

/**
 * {@link NodeHostTime} on the CPU provider with the shipped tiny PVN3D model and its sample (the
 * pvn3d-pipeline jar's class-path resources {@link Pvn3dPipeline#MODEL_RESOURCE} and
 * {@link Pvn3dSample#RESOURCE}): every custom node of the model's graph, and nothing else, comes back
 * with one event per recorded run.
 */
class NodeHostTimeTest {
    private static final int WARMUP = 3;
    private static final int RUNS = 20;

    @Test
    void everyCustomNodeOfTheTinyModelIsTimedOncePerRun(@TempDir Path dir) throws Exception {
        byte[] modelBytes = Pvn3dPipeline.resourceBytes(Pvn3dPipeline.MODEL_RESOURCE);
        Path model = dir.resolve("pvn3d_tiny.onnx");
        Files.write(model, modelBytes);
        Map<String, PvtFile.Entry> sample = PvtFile.read(
                new ByteArrayInputStream(Pvn3dPipeline.resourceBytes(Pvn3dSample.RESOURCE)), Pvn3dSample.RESOURCE);
        Map<String, String> custom = customNodes(modelBytes);
        assertFalse(custom.isEmpty(), "the tiny model has PVN3D nodes");

        NodeHostTime.Result r = NodeHostTime.measure(model, sample, false, WARMUP, RUNS);

        assertEquals("cpu", r.provider());
        Map<String, String> timed = new TreeMap<>();
        r.nodes().forEach(n -> timed.put(n.node(), n.operator()));
        assertEquals(custom, timed, "the timed nodes and their operators are the graph's custom nodes");
        for (NodeHostTime.Node n : r.nodes()) {
            assertEquals(RUNS, n.count(), n.node());
            assertTrue(n.medianUs() > 0 && n.medianUs() < 1e6, n.toString());
            assertTrue(n.medianUs() <= n.p90Us() && n.p90Us() <= n.maxUs(), n.toString());
        }
        assertEquals(RUNS * custom.size(), r.events());
        assertEquals(r.expectedEvents(), r.events());
        assertTrue(r.runMsMedian() > 0 && r.runMsMedian() <= r.runMsP90(), r.toString());
        double[] medians = r.nodes().stream().mapToDouble(NodeHostTime.Node::medianUs).toArray();
        assertEquals(Arrays.stream(medians).max().orElseThrow(), r.customNodeHostUsMax());
        assertTrue(r.customNodeHostUsMedian() > 0 && r.customNodeHostUsMedian() <= r.customNodeHostUsMax());

        List<String> sorted = new ArrayList<>(r.nodes().stream().map(n -> n.operator() + " " + n.node()).toList());
        sorted.sort(null);
        assertEquals(sorted, r.nodes().stream().map(n -> n.operator() + " " + n.node()).toList(), "by operator, then node");

        String table = NodeHostTime.table(r);
        assertTrue(table.contains("all " + custom.size() + " custom nodes: median"), table);
        assertTrue(table.contains("events: " + r.events() + " seen, " + r.events() + " expected"), table);
        String json = NodeHostTime.json(r);
        for (String field : List.of("model", "provider", "warmup", "runs", "events", "nodes", "custom_node_host_us_median",
                "custom_node_host_us_max", "run_ms_median", "run_ms_p90")) {
            assertTrue(json.contains("\"" + field + "\": "), field + " in " + json);
        }
        assertEquals(custom.size(), json.split("\"median_us\": ", -1).length - 1, json);
    }

    @Test
    void percentilesAreThoseOfProfileNodesPy() {
        double[] odd = {5, 1, 3};
        double[] even = {4, 1, 3, 2};
        assertEquals(3, NodeHostTime.median(odd));
        assertEquals(2.5, NodeHostTime.median(even));
        double[] ten = {10, 9, 8, 7, 6, 5, 4, 3, 2, 1};
        assertEquals(9, NodeHostTime.p90(ten)); // index round(0.9 * 9) = 8 of 1..10
    }

    // ---- the model's custom nodes (domain ai.onnx.contrib), from its protobuf ----

    private static Map<String, String> customNodes(byte[] model) {
        Map<String, String> out = new TreeMap<>();
        for (OnnxGraphNodes.Node node : OnnxGraphNodes.of(model)) {
            if (Pvn3dOps.DOMAIN.equals(node.domain())) {
                out.put(node.name(), node.opType());
            }
        }
        return out;
    }
}
