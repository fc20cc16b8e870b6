package org.pvn3d.ort;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pvn3d.ort.customop.CustomOpDomain;
import org.pvn3d.ort.customop.JavaScaleOp;
import org.pvn3d.ort.customop.KernelContext;
import org.pvn3d.ort.customop.KernelTensor;
import org.pvn3d.ort.jfr.OrtEvents;

/**
 * The runtime's JFR events, recorded and read back with {@code jdk.jfr.consumer}: session creation,
 * runs (plain, with a run tag, failing, through an IO binding), a Java custom operator's compute calls
 * and the calls ORT makes into a {@link JavaAllocator}, each with its fields.
 */
class RuntimeEventsTest {
    @TempDir
    Path tmp;

    /** y = 2x, in Java, as domain "test.jfr" (java_scale.onnx's node "scale" with its factor attribute ignored). */
    static CustomOpDomain doubling() {
        return JavaScaleOp.domain(info -> (KernelContext ctx) -> {
            KernelTensor x = ctx.input(0, OnnxTensorType.FLOAT, -1);
            KernelTensor y = ctx.output(0, x.shape());
            MemorySegment in = x.data();
            MemorySegment out = y.data();
            for (long i = 0; i < x.elementCount(); i++) {
                out.setAtIndex(JAVA_FLOAT, i, 2 * in.getAtIndex(JAVA_FLOAT, i));
            }
        });
    }

    static Path customModel() {
        return JavaScaleOp.model("java_scale.onnx");
    }

    @Test
    void sessionRunComputeAndAllocatorEventsWithTheirFields() throws Exception {
        assertTrue(OrtEvents.isAvailable(), "this JDK has jdk.jfr");
        OrtEnvironment env = OrtEnvironment.getEnvironment();
        Path file = tmp.resolve("runtime.jfr");
        float[] a = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
        JavaAllocator allocator = JavaAllocator.cpu();
        try (Recording recording = new Recording()) {
            for (String name : OrtEvents.ALL) {
                recording.enable(name).withThreshold(Duration.ZERO);
            }
            recording.start();
            try (OrtSession add = env.createSession(TestModels.model("add16.onnx"));
                    OnnxTensor x = OnnxTensor.createTensor(a, 16);
                    OnnxTensor y = OnnxTensor.createTensor(a, 16);
                    RunOptions tagged = new RunOptions().setRunTag("tagged-run")) {
                add.run(Map.of("a", x, "b", y)).close();
                add.run(Map.of("a", x, "b", y), add.getOutputInfo().keySet(), tagged).close();
                assertThrows(OrtException.class, () -> add.run(Map.of("a", x)));
                try (OrtIoBinding binding = add.createIoBinding(); OnnxTensor c = OnnxTensor.allocate(OnnxTensorType.FLOAT, 16)) {
                    binding.bindInput("a", x).bindInput("b", y).bindOutput("c", c);
                    add.run(binding);
                }
            }
            try (CustomOpDomain domain = doubling(); SessionOptions options = new SessionOptions()) {
                options.registerCustomOps(domain);
                try (OrtSession s = env.createSession(customModel(), options);
                        OnnxTensor x = OnnxTensor.createTensor(new float[] {1, 2, 3, 4, 5, 6}, 2, 3);
                        Result r = s.run(Map.of("x", x))) {
                    assertEquals(12f, r.tensor("y").getFloatArray()[5]);
                }
            }
            env.registerAllocator(allocator);
            try (SessionOptions o = new SessionOptions().addConfigEntry(OrtEnvironment.USE_ENV_ALLOCATORS, "1");
                    OrtSession s = env.createSession(TestModels.model("add16.onnx"), o);
                    OnnxTensor x = OnnxTensor.createTensor(a, 16);
                    Result r = s.run(Map.of("a", x, "b", x))) {
                assertEquals(32f, r.tensor("c").getFloatArray()[15]);
            } finally {
                env.unregisterAllocator(allocator);
            }
            recording.stop();
            recording.dump(file);
        } finally {
            allocator.close();
        }
        List<RecordedEvent> events = RecordingFile.readAllEvents(file);
        List<RecordedEvent> sessions = named(events, OrtEvents.SESSION_CREATED);
        assertEquals(3, sessions.size(), "three sessions: " + sessions);
        RecordedEvent first = sessions.get(0);
        assertTrue(first.getString("model").endsWith("add16.onnx"), first.getString("model"));
        assertTrue(first.getLong("modelBytes") > 0);
        assertEquals("CPUExecutionProvider", first.getString("providers"));
        assertEquals(2, first.getInt("inputs"));
        assertEquals(1, first.getInt("outputs"));
        assertFalse(first.getBoolean("profiling"));
        assertNull(first.getString("error"));
        assertTrue(first.getDuration().toNanos() > 0);
        assertEquals("test.java", sessions.get(1).getString("customOpDomains"));

        List<RecordedEvent> runs = named(events, OrtEvents.RUN);
        assertEquals(6, runs.size(), "four runs of add16, one of the custom model, one with the Java allocator: " + runs);
        RecordedEvent plain = runs.get(0);
        assertEquals(first.getLong("sessionId"), plain.getLong("sessionId"));
        assertEquals("CPUExecutionProvider", plain.getString("provider"));
        assertEquals("", plain.getString("runTag"));
        assertFalse(plain.getBoolean("ioBinding"));
        assertEquals(2, plain.getInt("inputCount"));
        assertEquals(128, plain.getLong("inputBytes"));
        assertEquals(1, plain.getInt("outputCount"));
        assertEquals(64, plain.getLong("outputBytes"), "ORT's output tensor, 16 floats");
        assertNull(plain.getString("error"));
        assertEquals("tagged-run", runs.get(1).getString("runTag"));
        assertNotNull(runs.get(2).getString("error"), "the run missing input b failed");
        RecordedEvent bound = runs.get(3);
        assertTrue(bound.getBoolean("ioBinding"));
        assertEquals(128, bound.getLong("inputBytes"));
        assertEquals(64, bound.getLong("outputBytes"), "the preallocated output");

        List<RecordedEvent> computes = named(events, OrtEvents.CUSTOM_OP_COMPUTE);
        assertEquals(1, computes.size());
        RecordedEvent compute = computes.get(0);
        assertEquals("JavaScale", compute.getString("operator"));
        assertEquals("test.java", compute.getString("domain"));
        assertEquals("scale", compute.getString("node"));
        assertEquals("CPUExecutionProvider", compute.getString("provider"));
        assertEquals("[2,3]", compute.getString("inputShapes"));
        assertEquals(24, compute.getLong("inputBytes"));
        assertNull(compute.getString("error"));

        List<RecordedEvent> allocations = named(events, OrtEvents.ALLOCATOR_CALL);
        assertFalse(allocations.isEmpty(), "ORT allocated through the Java allocator");
        RecordedEvent alloc = allocations.stream().filter(e -> e.getString("operation").equals("alloc")).findFirst().orElseThrow();
        assertEquals("host", alloc.getString("allocator"));
        assertTrue(alloc.getLong("bytes") > 0);
        assertTrue(alloc.getLong("address") != 0);
        assertTrue(alloc.getBoolean("succeeded"));
        assertTrue(allocations.stream().anyMatch(e -> e.getString("operation").equals("free")));
        assertTrue(Files.size(file) > 0);
    }

    @Test
    void disabledEventsAreNotWritten() throws Exception {
        Path file = tmp.resolve("none.jfr");
        try (Recording recording = new Recording()) {
            recording.enable(OrtEvents.RUN).withThreshold(Duration.ZERO);
            recording.disable(OrtEvents.SESSION_CREATED);
            recording.start();
            try (OrtSession add = OrtEnvironment.getEnvironment().createSession(TestModels.model("add16.onnx"));
                    OnnxTensor x = OnnxTensor.createTensor(new float[16], 16)) {
                add.run(Map.of("a", x, "b", x)).close();
            }
            recording.stop();
            recording.dump(file);
        }
        List<RecordedEvent> events = RecordingFile.readAllEvents(file);
        assertEquals(1, named(events, OrtEvents.RUN).size());
        assertEquals(0, named(events, OrtEvents.SESSION_CREATED).size(), "disabled in this recording");
    }

    static List<RecordedEvent> named(List<RecordedEvent> events, String name) {
        return events.stream().filter(e -> e.getEventType().getName().equals(name))
                .sorted(java.util.Comparator.comparing(RecordedEvent::getStartTime)).toList();
    }
}
