package org.pvn3d.ort.ops;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.pvn3d.ort.NativeObject;
import org.pvn3d.ort.OnnxTensor;
import org.pvn3d.ort.OrtEnvironment;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.OrtSession;
import org.pvn3d.ort.Result;
import org.pvn3d.ort.SessionOptions;
import org.pvn3d.ort.customop.CustomOp;
import org.pvn3d.ort.customop.CustomOpDomain;
import org.pvn3d.ort.providers.OrtCUDAProviderOptions;

/**
 * The six PVN3D operators inside ORT on the CPU provider, through the Java bridge: results against
 * the fixtures' expected outputs (computed by the independent PyTorch reference of
 * exporter/pvn3d_export/ops.py), two point counts through one session, every error of spec/ops.md,
 * and the session still serving good input after each failed run.
 */
class Pvn3dOpsTest {
    private static OrtEnvironment env;

    @BeforeAll
    static void environment() {
        env = OrtEnvironment.getEnvironment();
    }

    /**
     * Closed sessions and options give their custom-op domains back when collected (see
     * CustomOpDomain); wait for that here so that no other test class sees domains disappear
     * under its own leak counts.
     */
    @AfterAll
    static void domainsReleased() throws InterruptedException {
        for (int i = 0; i < 400 && NativeObject.liveCount("OrtCustomOpDomain") > 0; i++) {
            System.gc();
            Thread.sleep(10);
        }
        assertEquals(0, NativeObject.liveCount("OrtCustomOpDomain"), "custom-op domains still alive after the tests");
    }

    static Path resource(String name) {
        try {
            var url = Pvn3dOpsTest.class.getResource("/ops/" + name);
            if (url == null) {
                throw new IllegalStateException("missing test resource ops/" + name);
            }
            return Path.of(url.toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A CPU session of an ops model with the operators registered; the options are closed at once. */
    static OrtSession session(String model) {
        try (SessionOptions options = new SessionOptions()) {
            Pvn3dOps.register(options);
            return env.createSession(resource(model), options);
        }
    }

    record Op(String snake, List<String> inputs, List<String> outputs) {
        @Override
        public String toString() {
            return snake;
        }
    }

    static Stream<Op> ops() {
        return Stream.of(
                new Op("furthest_point_sample", List.of("xyz"), List.of("idx")),
                new Op("gather_points", List.of("features", "idx"), List.of("out")),
                new Op("ball_query", List.of("xyz", "new_xyz"), List.of("idx")),
                new Op("group_points", List.of("features", "idx"), List.of("out")),
                new Op("three_nn", List.of("unknown", "known"), List.of("dist2", "idx")),
                new Op("three_interpolate", List.of("features", "idx", "weight"), List.of("out")));
    }

    static Map<String, Pvt.Tensor> fixture(String snake, int c) throws IOException {
        return Pvt.read("/ops/" + snake + "_case" + c + ".bin");
    }

    static OnnxTensor tensor(Pvt.Tensor t) {
        return t.isFloat() ? OnnxTensor.createTensor(t.floats(), t.shape()) : OnnxTensor.createTensor(t.longs(), t.shape());
    }

    /** Runs {@code inputs} (closing the tensors afterwards) and checks every output in {@code expected}. */
    static void runAndCompare(OrtSession s, Map<String, Pvt.Tensor> inputs, Map<String, Pvt.Tensor> expected, String what) {
        Map<String, OnnxTensor> feeds = new LinkedHashMap<>();
        try {
            inputs.forEach((k, v) -> feeds.put(k, tensor(v)));
            try (Result r = s.run(feeds)) {
                for (Pvt.Tensor e : expected.values()) {
                    OnnxTensor got = r.tensor(e.name());
                    assertArrayEquals(e.shape(), got.getShape(), what + ": shape of " + e.name());
                    if (e.isFloat()) {
                        assertClose(e.floats(), got.getFloatArray(), what + ": " + e.name());
                    } else {
                        assertArrayEquals(e.longs(), got.getLongArray(), what + ": " + e.name());
                    }
                }
            }
        } finally {
            feeds.values().forEach(OnnxTensor::close);
        }
    }

    static void assertClose(float[] expected, float[] actual, String what) {
        assertEquals(expected.length, actual.length, what + ": length");
        for (int i = 0; i < expected.length; i++) {
            float tol = 1e-6f + 1e-5f * Math.abs(expected[i]);
            if (!(Math.abs(expected[i] - actual[i]) <= tol) && !(Float.isInfinite(expected[i]) && expected[i] == actual[i])) {
                fail(what + ": element " + i + " is " + actual[i] + ", expected " + expected[i]);
            }
        }
    }

    static Map<String, Pvt.Tensor> select(Map<String, Pvt.Tensor> all, List<String> names) {
        Map<String, Pvt.Tensor> out = new LinkedHashMap<>();
        for (String n : names) {
            out.put(n, all.get(n));
        }
        return out;
    }

    /** Runs and expects an OrtException whose message holds every fragment. */
    static OrtException runFails(OrtSession s, Map<String, Pvt.Tensor> inputs, String... fragments) {
        Map<String, OnnxTensor> feeds = new LinkedHashMap<>();
        try {
            inputs.forEach((k, v) -> feeds.put(k, tensor(v)));
            OrtException e = assertThrows(OrtException.class, () -> s.run(feeds).close());
            for (String f : fragments) {
                assertTrue(e.getMessage().contains(f), "message lacks '" + f + "': " + e.getMessage());
            }
            return e;
        } finally {
            feeds.values().forEach(OnnxTensor::close);
        }
    }

    static void assertFragments(Throwable e, String... fragments) {
        for (String f : fragments) {
            assertTrue(e.getMessage().contains(f), "message lacks '" + f + "': " + e.getMessage());
        }
    }

    // ---- results ----

    @ParameterizedTest
    @MethodSource("ops")
    void matchesReferenceOnTwoPointCountsInOneSession(Op op) throws IOException {
        try (OrtSession s = session(op.snake() + ".onnx")) {
            for (int c = 1; c <= 2; c++) {
                Map<String, Pvt.Tensor> f = fixture(op.snake(), c);
                runAndCompare(s, select(f, op.inputs()), select(f, op.outputs()), op.snake() + " case " + c);
            }
            // and back to the first point count: nothing is cached by shape
            Map<String, Pvt.Tensor> f = fixture(op.snake(), 1);
            runAndCompare(s, select(f, op.inputs()), select(f, op.outputs()), op.snake() + " case 1 again");
        }
    }

    /** The kernels' thread count is process-wide, defaults to at least one, and never changes a result. */
    @Test
    void cpuThreadsLeaveTheResultsAlone() throws IOException {
        int defaultThreads = Pvn3dOps.cpuThreads();
        assertTrue(defaultThreads >= 1, "default threads " + defaultThreads);
        try (OrtSession s = session("furthest_point_sample.onnx")) {
            for (int threads : new int[] {1, 3, 8}) {
                Pvn3dOps.setCpuThreads(threads);
                assertEquals(threads, Pvn3dOps.cpuThreads());
                for (int c = 1; c <= 2; c++) {
                    Map<String, Pvt.Tensor> f = fixture("furthest_point_sample", c);
                    runAndCompare(s, select(f, List.of("xyz")), select(f, List.of("idx")), threads + " threads, case " + c);
                }
            }
        } finally {
            Pvn3dOps.setCpuThreads(0);
        }
        assertEquals(defaultThreads, Pvn3dOps.cpuThreads(), "0 restores the default");
        // ten thousand crashed the JVM in the next kernel (an OpenMP team overflowing the caller's stack)
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Pvn3dOps.setCpuThreads(10000));
        assertEquals("at most 1024 CPU kernel threads, not 10000", e.getMessage());
        assertEquals(defaultThreads, Pvn3dOps.cpuThreads(), "unchanged");
    }

    // ---- errors at run time: the run fails with a message naming operator, input, value; the session goes on ----

    @Test
    void furthestPointSampleNpointLargerThanN() throws IOException {
        try (OrtSession s = session("furthest_point_sample.onnx")) {
            Pvt.Tensor small = new Pvt.Tensor("xyz", new long[] {2, 50, 3}, new float[2 * 50 * 3], null);
            runFails(s, Map.of("xyz", small), "PVN3D_FurthestPointSample", "npoint (64)", "N = 50", "input xyz");
            Map<String, Pvt.Tensor> f = fixture("furthest_point_sample", 1);
            runAndCompare(s, select(f, List.of("xyz")), select(f, List.of("idx")), "after the error");
        }
    }

    @Test
    void gatherPointsIndexOutOfRange() throws IOException {
        indexOutOfRange("gather_points", "PVN3D_GatherPoints", List.of("features", "idx"), List.of("out"), 300);
    }

    @Test
    void groupPointsIndexOutOfRange() throws IOException {
        indexOutOfRange("group_points", "PVN3D_GroupPoints", List.of("features", "idx"), List.of("out"), 300);
    }

    @Test
    void threeInterpolateIndexOutOfRange() throws IOException {
        // case 1: m = N/4 = 75 known points
        indexOutOfRange("three_interpolate", "PVN3D_ThreeInterpolate", List.of("features", "idx", "weight"),
                List.of("out"), 75);
    }

    private void indexOutOfRange(String snake, String op, List<String> ins, List<String> outs, long limit) throws IOException {
        Map<String, Pvt.Tensor> good = fixture(snake, 1);
        try (OrtSession s = session(snake + ".onnx")) {
            for (long bad : new long[] {-1, limit, Long.MAX_VALUE}) {
                Map<String, Pvt.Tensor> in = select(good, ins);
                Pvt.Tensor idx = in.get("idx");
                long[] changed = idx.longs().clone();
                changed[5] = bad;
                in.put("idx", new Pvt.Tensor("idx", idx.shape(), null, changed));
                runFails(s, in, op, "input idx", "index " + bad, "flat position 5", "[0, " + limit + ")");
                runAndCompare(s, select(good, ins), select(good, outs), snake + " after index " + bad);
            }
        }
    }

    /**
     * C = 0 leaves no output to compute, but an index outside its range is still an error (spec/ops.md): the
     * kernels call the native ones whatever the output's size, and those check idx before anything else.
     */
    @Test
    void anEmptyOutputStillChecksTheIndices() throws IOException {
        emptyOutputChecksIndices("gather_points", "PVN3D_GatherPoints", List.of("features", "idx"), 300);
        emptyOutputChecksIndices("group_points", "PVN3D_GroupPoints", List.of("features", "idx"), 300);
        emptyOutputChecksIndices("three_interpolate", "PVN3D_ThreeInterpolate", List.of("features", "idx", "weight"), 75);
    }

    private void emptyOutputChecksIndices(String snake, String op, List<String> ins, long limit) throws IOException {
        Map<String, Pvt.Tensor> good = fixture(snake, 1);
        Map<String, Pvt.Tensor> in = select(good, ins);
        long[] featuresShape = good.get("features").shape().clone();
        long[] outShape = good.get("out").shape().clone();
        featuresShape[1] = 0; // C = 0
        outShape[1] = 0;
        in.put("features", new Pvt.Tensor("features", featuresShape, new float[0], null));
        Pvt.Tensor idx = in.get("idx");
        long[] changed = idx.longs().clone();
        changed[5] = limit;
        Map<String, Pvt.Tensor> bad = new LinkedHashMap<>(in);
        bad.put("idx", new Pvt.Tensor("idx", idx.shape(), null, changed));
        try (OrtSession s = session(snake + ".onnx")) {
            runFails(s, bad, op, "input idx", "index " + limit, "flat position 5", "[0, " + limit + ")");
            runAndCompare(s, in, Map.of("out", new Pvt.Tensor("out", outShape, new float[0], null)),
                    snake + " with C = 0 and good indices");
        }
    }

    @Test
    void threeNNNeedsThreeKnownPoints() throws IOException {
        Map<String, Pvt.Tensor> good = fixture("three_nn", 1);
        try (OrtSession s = session("three_nn.onnx")) {
            Map<String, Pvt.Tensor> in = select(good, List.of("unknown"));
            in.put("known", new Pvt.Tensor("known", new long[] {2, 2, 3}, new float[12], null));
            runFails(s, in, "PVN3D_ThreeNN", "input known", "m = 2");
            runAndCompare(s, select(good, List.of("unknown", "known")), select(good, List.of("dist2", "idx")), "after m < 3");
        }
    }

    /**
     * An output larger than the machine's memory names the output and the shape that asked for it (here nsample's
     * 2^40).
     */
    @Test
    void anOutputTooLargeToAllocateNamesItsShape() {
        try (OrtSession s = session("errors/ball_query_nsample_huge.onnx")) {
            Map<String, Pvt.Tensor> in = new LinkedHashMap<>();
            in.put("xyz", new Pvt.Tensor("xyz", new long[] {1, 4, 3}, new float[12], null));
            in.put("new_xyz", new Pvt.Tensor("new_xyz", new long[] {1, 2, 3}, new float[6], null));
            // refused before ORT allocates it: under overcommit the allocation would be granted and the kernel's
            // writes would grow the process until the OOM killer ended it (seen on the GPU machine, 2026-12-05)
            runFails(s, in, "PVN3D_BallQuery", "output idx of shape [1, 2, 1099511627776]",
                    "is larger than this machine's memory");
            // the session still serves: no centre, an empty output
            in.put("new_xyz", new Pvt.Tensor("new_xyz", new long[] {1, 0, 3}, new float[0], null));
            Map<String, OnnxTensor> feeds = new LinkedHashMap<>();
            in.forEach((k, v) -> feeds.put(k, tensor(v)));
            try (Result r = s.run(feeds)) {
                assertArrayEquals(new long[] {1, 0, 1L << 40}, r.tensor("idx").getShape());
            } finally {
                feeds.values().forEach(OnnxTensor::close);
            }
        }
    }

    @Test
    void mismatchedBatchIsAnErrorNamingTheInput() throws IOException {
        Map<String, Pvt.Tensor> good = fixture("gather_points", 1);
        try (OrtSession s = session("gather_points.onnx")) {
            Map<String, Pvt.Tensor> in = select(good, List.of("features"));
            in.put("idx", new Pvt.Tensor("idx", new long[] {3, 4}, null, new long[12]));
            runFails(s, in, "PVN3D_GatherPoints", "input idx", "got 3");
            runAndCompare(s, select(good, List.of("features", "idx")), select(good, List.of("out")), "after batch mismatch");
        }
    }

    @Test
    void wrongRankReachesTheKernelThroughAnUnshapedGraph() throws IOException {
        Map<String, Pvt.Tensor> good = fixture("gather_points", 1);
        try (OrtSession s = session("errors/gather_points_unshaped.onnx")) {
            Map<String, Pvt.Tensor> in = select(good, List.of("idx"));
            in.put("features", new Pvt.Tensor("features", new long[] {4, 300}, new float[1200], null));
            runFails(s, in, "PVN3D_GatherPoints", "input features", "rank 3", "got rank 2", "[4, 300]");
            runAndCompare(s, select(good, List.of("features", "idx")), select(good, List.of("out")), "after wrong rank");
        }
        Map<String, Pvt.Tensor> fps = fixture("furthest_point_sample", 1);
        try (OrtSession s = session("errors/furthest_point_sample_unshaped.onnx")) {
            runFails(s, Map.of("xyz", new Pvt.Tensor("xyz", new long[] {2, 100, 2}, new float[400], null)),
                    "PVN3D_FurthestPointSample", "input xyz", "must have 3 in dimension 2", "got 2");
            runAndCompare(s, select(fps, List.of("xyz")), select(fps, List.of("idx")), "after wrong last dimension");
        }
    }

    @Test
    void wrongRankOrTypeOfAGraphInputIsCaughtByOrtWithTheInputsName() throws IOException {
        Map<String, Pvt.Tensor> good = fixture("furthest_point_sample", 1);
        try (OrtSession s = session("furthest_point_sample.onnx")) {
            runFails(s, Map.of("xyz", new Pvt.Tensor("xyz", new long[] {300, 3}, new float[900], null)), "xyz", "rank");
            try (OnnxTensor doubles = OnnxTensor.createTensor(new double[2 * 300 * 3], 2, 300, 3)) {
                OrtException e = assertThrows(OrtException.class, () -> s.run(Map.of("xyz", doubles)).close());
                assertFragments(e, "double", "float");
            }
            runAndCompare(s, select(good, List.of("xyz")), select(good, List.of("idx")), "after ORT's checks");
        }
    }

    // ---- errors at session creation: attributes and declared types ----

    @Test
    void badAttributesFailSessionCreationNamingOperatorAndValue() {
        assertFragments(assertThrows(OrtException.class, () -> session("errors/ball_query_radius0.onnx").close()),
                "PVN3D_BallQuery", "attribute radius", "must be > 0, got 0.0");
        assertFragments(assertThrows(OrtException.class, () -> session("errors/ball_query_radius_neg.onnx").close()),
                "PVN3D_BallQuery", "attribute radius", "got -0.1");
        assertFragments(assertThrows(OrtException.class, () -> session("errors/ball_query_nsample0.onnx").close()),
                "PVN3D_BallQuery", "attribute nsample", "must be >= 1, got 0");
        assertFragments(assertThrows(OrtException.class, () -> session("errors/furthest_point_sample_npoint0.onnx").close()),
                "PVN3D_FurthestPointSample", "attribute npoint", "got 0");
        assertFragments(assertThrows(OrtException.class, () -> session("errors/furthest_point_sample_no_npoint.onnx").close()),
                "PVN3D_FurthestPointSample", "attribute npoint", "required but missing");
    }

    @Test
    void wrongDeclaredInputTypeFailsSessionCreationNamingTheOperator() {
        // ORT rejects the graph at load (no kernel declares double for xyz); its message names the
        // operator and the node (checked without the model's path, which contains the words too)
        OrtException e = assertThrows(OrtException.class, () -> session("errors/furthest_point_sample_double.onnx").close());
        String message = e.getMessage().replace(resource("errors/furthest_point_sample_double.onnx").toString(), "<model>");
        // (ORT 1.16 quotes the node name, later versions put it in parentheses)
        assertFragments(new OrtException(e.getCode(), message), "PVN3D_FurthestPointSample", "furthest_point_sample");
    }

    // ---- CUDA ----

    @Test
    void everyOperatorHasACpuAndACudaKernel() {
        List<CustomOp> ops = Pvn3dOps.operators(CudaIndexCheck.DEFERRED);
        for (String name : Pvn3dOps.OPERATORS) {
            List<String> providers = new ArrayList<>();
            for (CustomOp op : ops) {
                if (op.name().equals(name)) {
                    providers.add(op.executionProvider());
                }
            }
            assertEquals(List.of(CustomOp.CPU, CustomOp.CUDA), providers, name);
        }
        // both kernels sit in one registered domain; a CPU session over it still works
        try (CustomOpDomain domain = Pvn3dOps.createDomain()) {
            assertEquals(Pvn3dOps.DOMAIN, domain.name());
            assertEquals(2 * (Pvn3dOps.OPERATORS.size() + Pvn3dOps.POSE_OPERATORS.size()), domain.ops().size());
        }
    }

    @Test
    void cudaProviderMatchesTheReference() throws IOException {
        Assumptions.assumeTrue(Pvn3dOps.nativeBuiltWithCuda() && Pvn3dOps.cudaDeviceCount() > 0,
                "no CUDA device (or a CPU-only libpvn3d_ops): the CUDA provider runs are made on the GPU machine");
        for (Op op : ops().toList()) {
            try (SessionOptions options = new SessionOptions()) {
                options.addExecutionProvider(new OrtCUDAProviderOptions(0));
                Pvn3dOps.register(options, CudaIndexCheck.SYNC);
                try (OrtSession s = env.createSession(resource(op.snake() + ".onnx"), options)) {
                    for (int c = 1; c <= 2; c++) {
                        Map<String, Pvt.Tensor> f = fixture(op.snake(), c);
                        runAndCompare(s, select(f, op.inputs()), select(f, op.outputs()), "CUDA " + op.snake() + " case " + c);
                    }
                }
            }
        }
    }

    @Test
    void cudaBadIndexIsReportedBothWays() throws IOException {
        Assumptions.assumeTrue(Pvn3dOps.nativeBuiltWithCuda() && Pvn3dOps.cudaDeviceCount() > 0,
                "no CUDA device (or a CPU-only libpvn3d_ops): the CUDA provider runs are made on the GPU machine");
        Map<String, Pvt.Tensor> good = fixture("gather_points", 1);
        Map<String, Pvt.Tensor> bad = select(good, List.of("features", "idx"));
        long[] idx = bad.get("idx").longs().clone();
        idx[5] = 300;
        bad.put("idx", new Pvt.Tensor("idx", bad.get("idx").shape(), null, idx));
        // a lower position holding an index that needs all 64 bits (the report packs it in two words)
        Map<String, Pvt.Tensor> wide = select(good, List.of("features", "idx"));
        long[] wideIdx = idx.clone();
        wideIdx[3] = -(1L << 40) - 5;
        wide.put("idx", new Pvt.Tensor("idx", bad.get("idx").shape(), null, wideIdx));
        // SYNC: the run itself fails with the CPU kernel's message
        try (SessionOptions options = new SessionOptions()) {
            options.addExecutionProvider(new OrtCUDAProviderOptions(0));
            Pvn3dOps.register(options, CudaIndexCheck.SYNC);
            try (OrtSession s = env.createSession(resource("gather_points.onnx"), options)) {
                runFails(s, bad, "PVN3D_GatherPoints", "input idx", "index 300", "flat position 5");
                runAndCompare(s, select(good, List.of("features", "idx")), select(good, List.of("out")), "after");
                runFails(s, wide, "PVN3D_GatherPoints", "index -1099511627781 at flat position 3");
            }
        }
        // DEFERRED: the kernel does not wait for its launch; the session reports the flag once ORT's
        // run has finished its device work, so the run still fails with the same message
        try (SessionOptions options = new SessionOptions()) {
            options.addExecutionProvider(new OrtCUDAProviderOptions(0));
            CustomOpDomain domain = Pvn3dOps.register(options, CudaIndexCheck.DEFERRED);
            try (OrtSession s = env.createSession(resource("gather_points.onnx"), options)) {
                runFails(s, bad, "PVN3D_GatherPoints", "input idx", "index 300", "flat position 5", "CUDA kernel");
                domain.checkDeferredErrors(); // reported once, by the run
                runAndCompare(s, select(good, List.of("features", "idx")), select(good, List.of("out")), "after");
                runFails(s, wide, "PVN3D_GatherPoints", "index -1099511627781 at flat position 3", "CUDA kernel");
                runAndCompare(s, select(good, List.of("features", "idx")), select(good, List.of("out")), "after wide");
            }
        }
    }

    @Test
    void deviceTimingIsOffByDefaultAndRecordsNothingOnTheCpu() throws IOException {
        assertFalse(Pvn3dOps.isDeviceTiming());
        Pvn3dOps.setDeviceTiming(true);
        try (OrtSession s = session("furthest_point_sample.onnx")) {
            Map<String, Pvt.Tensor> f = fixture("furthest_point_sample", 1);
            runAndCompare(s, select(f, List.of("xyz")), select(f, List.of("idx")), "CPU with device timing on");
            assertTrue(Pvn3dOps.deviceTimings().isEmpty(), "the CPU kernels are not timed on a device");
        } finally {
            Pvn3dOps.setDeviceTiming(false);
        }
    }

    @Test
    void cudaDeviceTimingAfterEachRunWithoutWaitingInside() throws IOException {
        Assumptions.assumeTrue(Pvn3dOps.nativeBuiltWithCuda() && Pvn3dOps.cudaDeviceCount() > 0,
                "no CUDA device (or a CPU-only libpvn3d_ops): the CUDA provider runs are made on the GPU machine");
        Pvn3dOps.resetDeviceTimes();
        Pvn3dOps.setDeviceTiming(true);
        try (SessionOptions options = new SessionOptions()) {
            options.addExecutionProvider(new OrtCUDAProviderOptions(0));
            Pvn3dOps.register(options);
            try (OrtSession s = env.createSession(resource("ball_query.onnx"), options)) {
                Map<String, Pvt.Tensor> f = fixture("ball_query", 1);
                for (int run = 0; run < 3; run++) {
                    runAndCompare(s, select(f, List.of("xyz", "new_xyz")), select(f, List.of("idx")), "CUDA ball_query, timed");
                }
            }
            Pvn3dOps.DeviceTiming t = Pvn3dOps.deviceTimings().stream().filter(d -> d.operator().equals("PVN3D_BallQuery"))
                    .findFirst().orElseThrow(() -> new AssertionError("no device time: " + Pvn3dOps.deviceTimingTable()));
            assertEquals(3, t.launches(), Pvn3dOps.deviceTimingTable());
            assertTrue(t.totalMs() > 0 && t.minMs() > 0 && t.maxMs() >= t.minMs(), t.toString());
            System.out.print(Pvn3dOps.deviceTimingTable());
        } finally {
            Pvn3dOps.setDeviceTiming(false);
            Pvn3dOps.resetDeviceTimes();
        }
    }
}
