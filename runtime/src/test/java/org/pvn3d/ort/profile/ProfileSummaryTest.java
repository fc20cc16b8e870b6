package org.pvn3d.ort.profile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pvn3d.ort.OnnxTensor;
import org.pvn3d.ort.OnnxTensorType;
import org.pvn3d.ort.OrtEnvironment;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.OrtSession;
import org.pvn3d.ort.SessionOptions;
import org.pvn3d.ort.customop.CustomOpDomain;
import org.pvn3d.ort.customop.JavaScaleOp;
import org.pvn3d.ort.customop.KernelContext;
import org.pvn3d.ort.customop.KernelTensor;

/**
 * ORT profiles summarised: a real profile of this ORT (a model of ORT's own operators, and one with a
 * custom operator defined in Java), and hand-written profiles for what this ORT does not write on the
 * CPU (CUDA kernel events) and for device times measured outside the profile.
 */
class ProfileSummaryTest {
    @TempDir
    Path tmp;

    static Path resource(String name) throws Exception {
        return Path.of(ProfileSummaryTest.class.getResource(name).toURI());
    }

    @Test
    void aRealProfileByOperatorTypeNodeAndProvider() throws Exception {
        OrtEnvironment env = OrtEnvironment.getEnvironment();
        CustomOpDomain domain = JavaScaleOp.domain(info -> (KernelContext ctx) -> {
            KernelTensor x = ctx.input(0);
            ctx.output(0, x.shape());
        });
        Path matmul;
        Path custom;
        try (SessionOptions options = new SessionOptions().enableProfiling(tmp, "chain")) {
            assertTrue(options.isProfiling());
            try (OrtSession s = env.createSession(resource("/models/matmul_chain.onnx"), options);
                    OnnxTensor x = OnnxTensor.createTensor(new float[16 * 64], 16, 64)) {
                for (int i = 0; i < 3; i++) {
                    s.run(Map.of("x", x)).close();
                }
                matmul = Path.of(s.endProfiling());
            }
        }
        try (domain; SessionOptions options = new SessionOptions().enableProfiling(tmp, "custom")) {
            options.registerCustomOps(domain);
            try (OrtSession s = env.createSession(resource("/customop/java_scale.onnx"), options);
                    OnnxTensor x = OnnxTensor.createTensor(new float[6], 2, 3)) {
                s.run(Map.of("x", x)).close();
                s.run(Map.of("x", x)).close();
                custom = Path.of(s.endProfiling());
            }
        }
        assertTrue(Files.isRegularFile(matmul) && matmul.getParent().equals(tmp), matmul.toString());

        ProfileSummary chain = ProfileSummary.read(matmul);
        assertEquals(3, chain.runs());
        assertTrue(chain.runMicros() > 0);
        assertFalse(chain.nodes().isEmpty());
        for (ProfileSummary.Node n : chain.nodes()) {
            assertEquals(3, n.calls(), "every node ran once per run: " + n);
            assertEquals("CPUExecutionProvider", n.provider());
            assertFalse(n.custom());
            assertFalse(n.deviceKnown());
        }
        for (ProfileSummary.OpType t : chain.opTypes()) {
            List<ProfileSummary.Node> of = chain.nodes().stream().filter(n -> n.opType().equals(t.opType())).toList();
            assertEquals(of.size(), t.nodes());
            assertEquals(of.stream().mapToLong(ProfileSummary.Node::hostMicros).sum(), t.hostMicros(), "a type's time is its nodes' sum");
            assertEquals(3L * t.nodes(), t.calls());
        }
        assertEquals(chain.hostMicros(), chain.opTypes().stream().mapToLong(ProfileSummary.OpType::hostMicros).sum());
        assertEquals(Map.of("CPUExecutionProvider", chain.hostMicros()), chain.hostMicrosByProvider());
        assertEquals(ProfileSummary.DeviceTimeSource.NONE, chain.deviceTimeSource());

        ProfileSummary withCustom = ProfileSummary.read(custom);
        assertEquals(2, withCustom.runs());
        ProfileSummary.OpType scale = withCustom.opTypes().stream().filter(t -> t.opType().equals("JavaScale")).findFirst().orElseThrow();
        assertTrue(scale.custom(), "an operator of a Java custom-op domain is custom");
        assertEquals(1, scale.nodes());
        assertEquals(2, scale.calls());
        assertEquals(scale.hostMicros(), withCustom.customHostMicros());
        String table = withCustom.table(5);
        assertTrue(table.contains("JavaScale") && table.contains("custom operators: 1 type(s)"), table);
        String json = withCustom.toJson();
        @SuppressWarnings("unchecked")
        Map<String, Object> doc = (Map<String, Object>) JsonText.parse(json);
        assertEquals(2L, doc.get("runs"));
        @SuppressWarnings("unchecked")
        Map<String, Object> customOps = (Map<String, Object>) doc.get("custom_operators");
        assertEquals(List.of("JavaScale"), customOps.get("op_types"));
        assertNull(customOps.get("device_ms"), "no device time on the CPU");
    }

    /** The Kernel events of an ORT built with CUDA profiling: device time per node through args.parent_name. */
    @Test
    void kernelEventsGiveDeviceTimePerNode() {
        String profile = """
                [
                {"cat" : "Session","pid" :1,"tid" :1,"dur" :900,"ts" :1,"ph" : "X","name" :"model_run","args" : {}},
                {"cat" : "Node","pid" :1,"tid" :1,"dur" :0,"ts" :2,"ph" : "X","name" :"conv1_fence_before","args" : {"op_name" : "Conv"}},
                {"cat" : "Node","pid" :1,"tid" :1,"dur" :40,"ts" :3,"ph" : "X","name" :"conv1_kernel_time","args" : {"op_name" : "Conv","provider" : "CUDAExecutionProvider"}},
                {"cat" : "Node","pid" :1,"tid" :1,"dur" :25,"ts" :50,"ph" : "X","name" :"fps_kernel_time","args" : {"op_name" : "PVN3D_FurthestPointSample","provider" : "CUDAExecutionProvider"}},
                {"cat" : "Node","pid" :1,"tid" :1,"dur" :15,"ts" :80,"ph" : "X","name" :"shape_kernel_time","args" : {"op_name" : "Shape","provider" : "CPUExecutionProvider"}},
                {"cat" : "Kernel","pid" :1,"tid" :1,"dur" :300,"ts" :5,"ph" : "X","name" :"implicit_convolve_sgemm","args" : {"op_name" : "Conv","parent_name" : "conv1_kernel_time","stream" : "7"}},
                {"cat" : "Kernel","pid" :1,"tid" :1,"dur" :100,"ts" :6,"ph" : "X","name" :"bias_add","args" : {"op_name" : "Conv","parent_name" : "conv1_kernel_time"}},
                {"cat" : "Kernel","pid" :1,"tid" :1,"dur" :500,"ts" :60,"ph" : "X","name" :"fps_kernel","args" : {"op_name" : "PVN3D_FurthestPointSample","parent_name" : "fps_kernel_time"}}
                ]""";
        ProfileSummary s = ProfileSummary.parse(profile, "hand-written", ProfileSummary::knownCustomOperator);
        assertEquals(ProfileSummary.DeviceTimeSource.PROFILE_KERNEL_EVENTS, s.deviceTimeSource());
        assertEquals(1, s.runs());
        assertEquals(3, s.nodes().size(), "the fences are not nodes of their own");
        ProfileSummary.Node conv = node(s, "conv1");
        assertEquals(40, conv.hostMicros());
        assertEquals(400, conv.deviceMicros());
        ProfileSummary.Node fps = node(s, "fps");
        assertTrue(fps.custom());
        assertEquals(500, fps.deviceMicros());
        assertFalse(node(s, "shape").deviceKnown(), "a CPU node has no device time");
        assertEquals(Map.of("CUDAExecutionProvider", 65L, "CPUExecutionProvider", 15L), s.hostMicrosByProvider());
        assertTrue(s.table(3).contains("ORT's CUDA kernel events"), s.table(3));
    }

    /** Without kernel events, CUDA-event times of the custom operators fill their device time (split by calls). */
    @Test
    void deviceTimesFromOutsideTheProfile() {
        String profile = """
                [{"cat":"Session","dur":500,"name":"model_run","args":{}},
                 {"cat":"Session","dur":500,"name":"model_run","args":{}},
                 {"cat":"Node","dur":10,"name":"g1_kernel_time","args":{"op_name":"PVN3D_GroupPoints","provider":"CUDAExecutionProvider"}},
                 {"cat":"Node","dur":12,"name":"g2_kernel_time","args":{"op_name":"PVN3D_GroupPoints","provider":"CUDAExecutionProvider"}},
                 {"cat":"Node","dur":10,"name":"g1_kernel_time","args":{"op_name":"PVN3D_GroupPoints","provider":"CUDAExecutionProvider"}},
                 {"cat":"Node","dur":12,"name":"g2_kernel_time","args":{"op_name":"PVN3D_GroupPoints","provider":"CUDAExecutionProvider"}},
                 {"cat":"Node","dur":30,"name":"mm_kernel_time","args":{"op_name":"MatMul","provider":"CUDAExecutionProvider"}}]""";
        ProfileSummary s = ProfileSummary.parse(profile, "hand-written", ProfileSummary::knownCustomOperator);
        assertEquals(ProfileSummary.DeviceTimeSource.NONE, s.deviceTimeSource());
        ProfileSummary d = s.withDeviceTimes(Map.of("PVN3D_GroupPoints", new ProfileSummary.DeviceTime(4, 2.0)));
        assertEquals(ProfileSummary.DeviceTimeSource.CUDA_EVENTS, d.deviceTimeSource());
        assertEquals(1000, node(d, "g1").deviceMicros());
        assertEquals(1000, node(d, "g2").deviceMicros());
        ProfileSummary.OpType group = d.opTypes().stream().filter(t -> t.opType().equals("PVN3D_GroupPoints")).findFirst().orElseThrow();
        assertEquals(2000, group.deviceMicros());
        assertEquals(44, group.hostMicros());
        assertEquals(2, group.nodes());
        assertEquals(4, group.calls());
        assertFalse(node(d, "mm").deviceKnown(), "ORT's own operators stay unknown");
    }

    @Test
    void notAProfileIsAClearError() throws Exception {
        Path bad = tmp.resolve("bad.json");
        Files.writeString(bad, "{\"x\": [1, 2");
        OrtException e = assertThrows(OrtException.class, () -> ProfileSummary.read(bad));
        assertTrue(e.getMessage().contains("is not an ONNX Runtime profile"), e.getMessage());
    }

    @Test
    void hostileFilesAreClearErrorsNotCrashesOrHangs() throws Exception {
        // 100,000 levels of nesting overflowed the recursive reader's stack
        Path deep = tmp.resolve("deep.json");
        Files.writeString(deep, "[".repeat(100_000) + "]".repeat(100_000));
        OrtException e = assertThrows(OrtException.class, () -> ProfileSummary.read(deep));
        assertTrue(e.getMessage().contains("nested deeper than 512"), e.getMessage());
        // a folder, a FIFO (read forever) or a device (/dev/zero: no end) is not a profile
        e = assertThrows(OrtException.class, () -> ProfileSummary.read(tmp));
        assertTrue(e.getMessage().endsWith("is not a regular file"), e.getMessage());
        if (Files.exists(Path.of("/dev/zero"))) {
            assertThrows(OrtException.class, () -> ProfileSummary.read(Path.of("/dev/zero")));
        }
        // durations ORT never writes made negative and overflowing totals
        for (String dur : new String[] {"-500", "9223372036854775807", "1.0e300"}) {
            Path odd = tmp.resolve("odd.json");
            Files.writeString(odd, "[{\"cat\": \"Session\", \"name\": \"model_run\", \"dur\": " + dur + "}]");
            e = assertThrows(OrtException.class, () -> ProfileSummary.read(odd), dur);
            assertTrue(e.getMessage().contains("has the duration"), e.getMessage());
        }
    }

    @Test
    void jsonReaderHandlesEscapesAndNumbers() {
        Object v = JsonText.parse("{\"a\\\"b\": [1, -2.5e-3, true, null, \"\\u00e9\\n\"], \"c\": {}}");
        assertEquals(Map.of("a\"b", java.util.Arrays.asList(1L, -0.0025, true, null, "\u00e9\n"), "c", Map.of()), v);
        assertEquals(v, JsonText.parse(JsonText.write(v)));
        assertEquals(java.util.List.of(2.5, 1180591620717411303424.0), JsonText.parse(JsonText.write(java.util.List.of(
                new java.math.BigDecimal("2.5"), java.math.BigInteger.TWO.pow(70)))), "not truncated to a long");
    }

    private static ProfileSummary.Node node(ProfileSummary s, String name) {
        return s.nodes().stream().filter(n -> n.name().equals(name)).findFirst().orElseThrow();
    }
}
