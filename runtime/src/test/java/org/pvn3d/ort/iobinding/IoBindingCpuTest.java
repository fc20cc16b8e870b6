package org.pvn3d.ort.iobinding;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.pvn3d.ort.DeviceTensor;
import org.pvn3d.ort.ExecutionProvider;
import org.pvn3d.ort.JavaAllocator;
import org.pvn3d.ort.NativeObject;
import org.pvn3d.ort.OnnxTensor;
import org.pvn3d.ort.OnnxTensorType;
import org.pvn3d.ort.OrtAllocator;
import org.pvn3d.ort.OrtArenaConfig;
import org.pvn3d.ort.OrtEnvironment;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.OrtIoBinding;
import org.pvn3d.ort.OrtMemoryInfo;
import org.pvn3d.ort.OrtSession;
import org.pvn3d.ort.Result;
import org.pvn3d.ort.RunOptions;
import org.pvn3d.ort.SessionOptions;
import org.pvn3d.ort.providers.OrtCUDAProviderOptions;

/**
 * IO binding, memory descriptions and allocators on the CPU provider (what CI runs): real values
 * checked on every run, and every test ends with the same live native objects it started with.
 */
class IoBindingCpuTest {
    static final OrtEnvironment env = OrtEnvironment.getEnvironment();
    Map<String, Long> before;
    /** Memory descriptions a test deliberately leaves alive (a registered JavaAllocator keeps its own). */
    long retainedMemoryInfos;

    static Path model(String name) {
        try {
            return Path.of(IoBindingCpuTest.class.getResource("/models/" + name).toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    static float[] ramp(int n, float start, float step) {
        float[] v = new float[n];
        for (int i = 0; i < n; i++) {
            v[i] = start + i * step;
        }
        return v;
    }

    static void assertArith(float[] x, float[] y, float[] sum, float[] prod, float[] affine) {
        for (int i = 0; i < x.length; i++) {
            if (sum != null) {
                assertEquals(x[i] + y[i], sum[i], 0f, "sum[" + i + "]");
            }
            if (prod != null) {
                assertEquals(x[i] * y[i], prod[i], 0f, "prod[" + i + "]");
            }
            if (affine != null) {
                assertEquals(2 * x[i] + 1, affine[i], 0f, "affine[" + i + "]");
            }
        }
    }

    static Map<String, Long> counts() {
        Map<String, Long> m = new TreeMap<>(NativeObject.liveCounts());
        m.remove("OrtEnv"); // the shared environment may be created by the first test
        return m;
    }

    @BeforeEach
    void snapshot() {
        before = counts();
    }

    @AfterEach
    void nothingLeaked() {
        Map<String, Long> after = counts();
        for (String kind : List.of("OrtValue", "OrtIoBinding", "OrtAllocator", "OrtMemoryInfo", "OrtSession",
                "OrtSessionOptions", "JavaAllocator")) {
            long extra = kind.equals("OrtMemoryInfo") ? retainedMemoryInfos : 0;
            assertEquals(before.getOrDefault(kind, 0L) + extra, after.getOrDefault(kind, 0L), "live " + kind + " objects");
        }
    }

    @Test
    void hostInputsPreallocatedOutputAndOutputsOrtAllocates() {
        float[] x = ramp(8, 1, 1);
        float[] y = ramp(8, 0.5f, -0.25f);
        try (OrtSession s = env.createSession(model("arith.onnx"));
                OnnxTensor tx = OnnxTensor.createTensor(x, 2, 4);
                OnnxTensor ty = OnnxTensor.createTensor(y, 2, 4);
                OnnxTensor prod = OnnxTensor.allocate(OnnxTensorType.FLOAT, 2, 4);
                OrtMemoryInfo cpu = OrtMemoryInfo.cpu();
                OrtIoBinding b = s.createIoBinding()) {
            assertEquals("Cpu", cpu.getName());
            assertTrue(cpu.isHostAccessible());
            long prodAddress = prod.data().address();
            b.bindInput("x", tx).bindInput("y", ty);
            b.bindOutput("sum", cpu);          // ORT allocates it
            b.bindOutput("prod", prod);        // written into our tensor
            b.bindOutput("affine", cpu);
            s.run(b);
            b.synchronizeBoundOutputs();
            assertEquals(List.of("sum", "prod", "affine"), b.getOutputNames());
            try (Result r = b.getOutputs()) {
                assertEquals(List.of("sum", "prod", "affine"), r.names());
                assertArrayEquals(new long[] {2, 4}, r.tensor("sum").getShape());
                assertFalse(r.tensor("sum").isOnDevice());
                assertArith(x, y, r.tensor("sum").getFloatArray(), r.tensor("prod").getFloatArray(),
                        r.tensor("affine").getFloatArray());
                try (OrtMemoryInfo where = r.tensor("sum").getMemoryInfo()) {
                    assertEquals("Cpu", where.getName());
                    assertEquals(OrtMemoryInfo.DeviceType.CPU, where.getDeviceType());
                }
            }
            assertEquals(prodAddress, prod.data().address(), "ORT wrote into the preallocated tensor");
            assertArith(x, y, null, prod.getFloatArray(), null);
        }
    }

    @Test
    void rebindingBetweenRunsWithDifferentInputsAndShapes() {
        try (OrtSession s = env.createSession(model("arith.onnx"));
                OrtMemoryInfo cpu = OrtMemoryInfo.cpu();
                OrtIoBinding b = s.createIoBinding()) {
            float[] y1 = ramp(4, 10, 1);
            OnnxTensor first;
            try (OnnxTensor tx = OnnxTensor.createTensor(ramp(4, 1, 1), 1, 4);
                    OnnxTensor ty = OnnxTensor.createTensor(y1, 1, 4)) {
                b.bindInput("x", tx).bindInput("y", ty).bindOutput("sum", cpu);
                s.run(b);
                try (Result r = b.getOutputs()) {
                    first = (OnnxTensor) r.take("sum");
                }
            }
            // running now must refuse: the bound tensors were closed
            OrtException closed = assertThrows(OrtException.class, () -> s.run(b));
            assertTrue(closed.getMessage().contains("bound input") && closed.getMessage().contains("closed"), closed.getMessage());
            // rebind only x, with another batch size, and y accordingly; outputs of run 1 stay valid
            float[] x2 = ramp(12, -3, 0.5f);
            float[] y2 = ramp(12, 2, 2);
            try (first;
                    OnnxTensor tx = OnnxTensor.createTensor(x2, 3, 4);
                    OnnxTensor ty = OnnxTensor.createTensor(y2, 3, 4)) {
                b.bindInput("x", tx).bindInput("y", ty);
                s.run(b);
                try (Result r = b.getOutputs()) {
                    assertArrayEquals(new long[] {3, 4}, r.tensor("sum").getShape());
                    assertArith(x2, y2, r.tensor("sum").getFloatArray(), null, null);
                }
                assertArrayEquals(new float[] {11, 13, 15, 17}, first.getFloatArray(), "run 1's output is independent");
                // change only the data behind x (same tensor) and run again
                tx.data().copyFrom(MemorySegment.ofArray(ramp(12, 100, 0)));
                s.run(b);
                try (Result r = b.getOutputs()) {
                    float[] sum = r.tensor("sum").getFloatArray();
                    for (int i = 0; i < 12; i++) {
                        assertEquals(100 + y2[i], sum[i], 0f);
                    }
                }
                // clearing outputs, then binding a different one
                b.clearBoundOutputs();
                assertEquals(List.of(), b.getOutputNames());
                b.bindOutput("affine", cpu);
                s.run(b);
                try (Result r = b.getOutputs()) {
                    assertEquals(List.of("affine"), r.names());
                    float[] affine = r.tensor("affine").getFloatArray();
                    assertEquals(201f, affine[0], 0f);
                }
                b.clearBoundInputs();
                assertTrue(b.getBoundInputs().isEmpty());
                assertThrows(OrtException.class, () -> s.run(b), "no inputs bound");
            }
        }
    }

    /**
     * ORT's binding keeps its own reference to a bound value; a tensor from an {@link OrtAllocator} frees
     * its data through that allocator's native object when ORT drops the value (on rebinding, clearing or
     * releasing the binding). Closing the tensor and the allocator while the tensor is bound must therefore
     * not release the allocator: on the H200 that use-after-free crashed the JVM inside BindInput.
     */
    @Test
    void aBoundTensorAndItsAllocatorLiveUntilTheBindingLetsGo() {
        float[] x = ramp(8, 1, 1);
        float[] y = ramp(8, 3, -1);
        float[] z = ramp(8, -4, 0.5f);
        long allocators = NativeObject.liveCount("OrtAllocator");
        long values = NativeObject.liveCount("OrtValue");
        try (OrtSession s = env.createSession(model("arith.onnx"));
                OnnxTensor ty = OnnxTensor.createTensor(y, 2, 4);
                OrtMemoryInfo cpu = OrtMemoryInfo.cpu();
                OrtIoBinding b = s.createIoBinding()) {
            OrtAllocator alloc = s.getAllocator(cpu);
            OnnxTensor tx = OnnxTensor.createTensor(alloc, OnnxTensorType.FLOAT, 2, 4);
            tx.data().copyFrom(MemorySegment.ofArray(x));
            b.bindInput("x", tx).bindInput("y", ty).bindOutput("sum", cpu).bindOutput("prod", cpu).bindOutput("affine", cpu);
            s.run(b);
            try (Result r = b.getOutputs()) {
                assertArith(x, y, r.tensor("sum").getFloatArray(), r.tensor("prod").getFloatArray(),
                        r.tensor("affine").getFloatArray());
            }
            tx.close();
            alloc.close();
            assertTrue(tx.isClosed() && alloc.isClosed());
            assertEquals(allocators + 1, NativeObject.liveCount("OrtAllocator"), "bound: the allocator lives on");
            assertEquals(values + 2, NativeObject.liveCount("OrtValue"), "bound: x's value lives on beside y");
            OrtException closed = assertThrows(OrtException.class, () -> s.run(b));
            assertTrue(closed.getMessage().contains("'x' was closed"), closed.getMessage());
            // rebinding makes ORT drop x: its data is freed through the allocator, then both go
            try (OnnxTensor tz = OnnxTensor.createTensor(z, 2, 4)) {
                b.bindInput("x", tz);
                assertEquals(allocators, NativeObject.liveCount("OrtAllocator"), "rebound: the allocator is released");
                s.run(b);
                try (Result r = b.getOutputs()) {
                    assertArith(z, y, r.tensor("sum").getFloatArray(), null, null);
                }
                // the same when the binding is cleared: tz closed while bound, then released by the clear
                tz.close();
                assertEquals(values + 2, NativeObject.liveCount("OrtValue"), "z is still bound");
                b.clearBoundInputs();
                assertEquals(values + 1, NativeObject.liveCount("OrtValue"), "cleared: only y is left");
            }
        }
        assertEquals(allocators, NativeObject.liveCount("OrtAllocator"));
        assertEquals(values, NativeObject.liveCount("OrtValue"), "closing the binding let go of the rest");
    }

    @Test
    void ortAllocatorOfASessionAndWhatOutlivesTheSession() {
        OrtSession s = env.createSession(model("matmul_chain.onnx"));
        OrtMemoryInfo cpu = OrtMemoryInfo.cpu();
        OrtAllocator alloc = s.getAllocator(cpu);
        cpu.close();
        try (OrtMemoryInfo ai = alloc.getMemoryInfo()) {
            assertEquals("Cpu", ai.getName());
            assertTrue(alloc.isHostAccessible());
        }
        MemorySegment block = alloc.alloc(1000);
        assertEquals(1000, block.byteSize());
        block.fill((byte) 7);
        assertEquals(7, block.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 999));
        alloc.free(block);
        assertThrows(OrtException.class, () -> alloc.free(block), "double free is refused");
        // an input tensor whose memory the session's allocator holds
        OnnxTensor x = OnnxTensor.createTensor(alloc, OnnxTensorType.FLOAT, 2, 64);
        float[] xs = ramp(128, -1, 1f / 64);
        x.data().copyFrom(MemorySegment.ofArray(xs));
        OnnxTensor y;
        try (OrtIoBinding b = s.createIoBinding(); OrtMemoryInfo out = OrtMemoryInfo.cpu()) {
            b.bindInput("x", x).bindOutput("y", out);
            s.run(b);
            try (Result r = b.getOutputs()) {
                y = (OnnxTensor) r.take("y");
            }
        }
        float[] expected;
        try (Result r = s.run(Map.of("x", x))) {
            expected = r.tensor("y").getFloatArray();
        }
        // the session goes first: its output, the allocator and the tensor over the allocator live on
        s.close();
        assertArrayEquals(expected, y.getFloatArray(), "an output outlives its session");
        assertArrayEquals(xs, x.getFloatArray());
        alloc.close();
        alloc.close();
        assertThrows(OrtException.class, () -> alloc.alloc(8), "the owner closed it");
        assertEquals(1, NativeObject.liveCount("OrtAllocator") - before.getOrDefault("OrtAllocator", 0L),
                "the tensor keeps ORT's allocator alive");
        assertArrayEquals(xs, x.getFloatArray());
        x.close();
        y.close();
        y.close();
    }

    @Test
    void anImpossibleAllocationIsRefusedAndTheSessionStillRuns() {
        float[] x = ramp(8, 1, 1);
        try (OrtSession s = env.createSession(model("arith.onnx"));
                OrtMemoryInfo cpu = OrtMemoryInfo.cpu();
                OrtAllocator alloc = s.getAllocator(cpu);
                OnnxTensor tx = OnnxTensor.createTensor(x, 2, 4)) {
            // more than 2^62 bytes used to break the session's arena for good (an integer overflow in ORT)
            for (long bytes : new long[] {Long.MAX_VALUE, (1L << 62) + 1, OrtAllocator.MAX_BLOCK_BYTES + 1}) {
                OrtException e = assertThrows(OrtException.class, () -> alloc.alloc(bytes));
                assertEquals("[ORT_INVALID_ARGUMENT] cannot allocate " + bytes
                        + " bytes: more than any address space holds (at most 2^56)", e.getMessage());
            }
            assertThrows(OrtException.class, () -> OnnxTensor.createTensor(alloc, OnnxTensorType.INT8, Long.MAX_VALUE));
            try (Result r = s.run(Map.of("x", tx, "y", tx))) {
                assertArith(x, x, r.tensor("sum").getFloatArray(), null, null);
            }
            MemorySegment m = alloc.alloc(64);
            alloc.free(m);
        }
    }

    @Test
    void javaAllocatorServesACpuSessionAndItsCountersShowIt() {
        JavaAllocator ja = JavaAllocator.cpu();
        env.registerAllocator(ja);
        retainedMemoryInfos = 1; // a registered Java allocator keeps its description for the process's life
        try {
            if (refusesDuplicateAllocators()) {
                assertThrows(OrtException.class, () -> env.registerAllocator(ja), "registering twice is an ORT error");
            }
            float[] x = ramp(16 * 64, -2, 0.004f);
            float[] expected;
            try (OrtSession plain = env.createSession(model("matmul_chain.onnx"));
                    OnnxTensor tx = OnnxTensor.createTensor(x, 16, 64);
                    Result r = plain.run(Map.of("x", tx))) {
                expected = r.tensor("y").getFloatArray();
            }
            assertEquals(0, ja.counters().allocations(), "a session without the config entry does not use it");
            OnnxTensor kept;
            try (SessionOptions o = new SessionOptions()
                    .addConfigEntry(OrtEnvironment.USE_ENV_ALLOCATORS, "1");
                    OrtSession s = env.createSession(model("matmul_chain.onnx"), o);
                    OnnxTensor tx = OnnxTensor.createTensor(x, 16, 64)) {
                JavaAllocator.Counters afterLoad = ja.counters();
                try (Result r = s.run(Map.of("x", tx))) {
                    assertArrayEquals(expected, r.tensor("y").getFloatArray(), 0f);
                }
                try (OrtIoBinding b = s.createIoBinding(); OrtMemoryInfo cpu = OrtMemoryInfo.cpu()) {
                    b.bindInput("x", tx).bindOutput("y", cpu);
                    s.run(b);
                    try (Result r = b.getOutputs()) {
                        kept = (OnnxTensor) r.take("y");
                    }
                }
                JavaAllocator.Counters c = ja.counters();
                System.out.println("JavaAllocator (cpu) after session load: " + afterLoad + "; after two runs: " + c);
                assertTrue(c.allocations() > afterLoad.allocations(), "runs allocated through the Java allocator: " + c);
                assertTrue(c.bytesLive() >= 16 * 8 * 4, "the kept output (512 bytes) is live in it: " + c);
                assertTrue(c.peakBytes() >= c.bytesLive() && c.bytesRequested() >= c.peakBytes());
                assertEquals(0, c.failedAllocations());
            }
            assertArrayEquals(expected, kept.getFloatArray(), 0f, "the output outlives the session");
            assertTrue(ja.counters().bytesLive() > 0);
            kept.close();
            JavaAllocator.Counters end = ja.counters();
            System.out.println("JavaAllocator (cpu) after session and outputs closed: " + end);
            assertEquals(0, end.bytesLive(), "every byte ORT took was given back: " + end);
            assertEquals(end.allocations(), end.frees());
            assertEquals(0, ja.liveBlocks());
        } finally {
            env.unregisterAllocator(ja);
            ja.close();
            ja.close();
        }
        assertThrows(OrtException.class, () -> env.unregisterAllocator(ja));
        assertThrows(OrtException.class, () -> env.registerAllocator(ja), "a closed Java allocator cannot be registered");
    }

    @Test
    void aJavaAllocatorWhoseBackingFailsServesHostMemoryInsteadAndAClosedRegisteredOneKeepsServing() {
        java.util.concurrent.atomic.AtomicInteger calls = new java.util.concurrent.atomic.AtomicInteger();
        JavaAllocator ja = JavaAllocator.create("failing every other block", OrtMemoryInfo.cpu(OrtMemoryInfo.AllocatorType.DEVICE),
                new JavaAllocator.Backing() {
                    @Override
                    public long allocate(long bytes) {
                        if (calls.incrementAndGet() % 2 == 0) {
                            throw new IllegalStateException("quota"); // or 0: both are a failure
                        }
                        return Arena.global().allocate(bytes, 64).address(); // never freed: a test's few KB
                    }

                    @Override
                    public void free(long address) {}
                });
        env.registerAllocator(ja);
        retainedMemoryInfos = 1;
        float[] x = ramp(16 * 64, -2, 0.004f);
        try {
            float[] expected;
            try (OrtSession plain = env.createSession(model("matmul_chain.onnx"));
                    OnnxTensor tx = OnnxTensor.createTensor(x, 16, 64);
                    Result r = plain.run(Map.of("x", tx))) {
                expected = r.tensor("y").getFloatArray();
            }
            try (SessionOptions o = new SessionOptions().addConfigEntry(OrtEnvironment.USE_ENV_ALLOCATORS, "1");
                    OrtSession s = env.createSession(model("matmul_chain.onnx"), o);
                    OnnxTensor tx = OnnxTensor.createTensor(x, 16, 64)) {
                for (int run = 0; run < 3; run++) {
                    try (Result r = s.run(Map.of("x", tx))) {
                        assertArrayEquals(expected, r.tensor("y").getFloatArray(), 0f);
                    }
                }
                JavaAllocator.Counters c = ja.counters();
                assertTrue(c.failedAllocations() > 0 && c.allocations() > c.failedAllocations(), c.toString());
                env.unregisterAllocator(ja);
                ja.close(); // the session took it: it keeps serving (a null pointer would crash ORT)
                try (Result r = s.run(Map.of("x", tx))) {
                    assertArrayEquals(expected, r.tensor("y").getFloatArray(), 0f);
                }
                assertTrue(ja.counters().allocations() > c.allocations(), "served after close: " + ja.counters());
            }
            JavaAllocator.Counters end = ja.counters();
            assertEquals(0, end.bytesLive(), end.toString());
            assertEquals(end.allocations(), end.frees());
        } finally {
            if (!ja.isClosed()) {
                env.unregisterAllocator(ja);
                ja.close();
            }
        }
    }

    @Test
    void aBoundOutputMustHaveTheOutputsTypeAndWritableMemory() {
        try (OrtSession s = env.createSession(model("arith.onnx"));
                OrtIoBinding b = s.createIoBinding();
                OnnxTensor half = OnnxTensor.allocate(OnnxTensorType.FLOAT16, 2, 4);
                Arena arena = Arena.ofConfined()) {
            OrtException e = assertThrows(OrtException.class, () -> b.bindOutput("sum", half));
            assertEquals("[ORT_INVALID_ARGUMENT] output 'sum' is FLOAT but the tensor given for it is FLOAT16", e.getMessage());
            try (OnnxTensor readOnly = OnnxTensor.fromSegment(arena.allocate(32).asReadOnly(), OnnxTensorType.FLOAT, 2, 4)) {
                e = assertThrows(OrtException.class, () -> b.bindOutput("sum", readOnly));
                assertEquals("[ORT_INVALID_ARGUMENT] output 'sum': the tensor's memory is read-only", e.getMessage());
            }
            assertTrue(b.getOutputNames().isEmpty());
        }
    }

    @Test
    void aBindingFailsClearlyOnceItsSessionIsClosed() {
        OrtSession s = env.createSession(model("arith.onnx"));
        try (OnnxTensor x = OnnxTensor.createTensor(ramp(8, 1, 1), 2, 4);
                OrtMemoryInfo cpu = OrtMemoryInfo.cpu();
                OrtIoBinding b = s.createIoBinding()) {
            b.bindInput("x", x).bindInput("y", x).bindOutput("sum", cpu).bindOutput("prod", cpu).bindOutput("affine", cpu);
            s.run(b);
            s.close();
            List<Runnable> uses = List.of(b::synchronizeBoundInputs, b::synchronizeBoundOutputs, b::getOutputNames,
                    () -> b.getOutputs().close(), b::clearBoundInputs, b::clearBoundOutputs, () -> b.bindInput("x", x),
                    () -> b.bindOutput("prod", cpu));
            for (Runnable use : uses) {
                OrtException e = assertThrows(OrtException.class, use::run);
                assertTrue(e.getMessage().contains("OrtSession is closed"), e.getMessage());
            }
        }
    }

    @Test
    void twoThreadsRunningOneBindingTakeTurns() throws Exception {
        // outputs ORT allocates are rebound before every run: two runs of one binding at once used to race in ORT
        float[] x = ramp(64 * 64, -1, 0.001f);
        try (OrtSession s = env.createSession(model("arith.onnx"));
                OnnxTensor tx = OnnxTensor.createTensor(x, 1024, 4);
                OrtMemoryInfo cpu = OrtMemoryInfo.cpu();
                OrtIoBinding b = s.createIoBinding()) {
            b.bindInput("x", tx).bindInput("y", tx).bindOutput("sum", cpu).bindOutput("prod", cpu).bindOutput("affine", cpu);
            java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(2);
            try {
                java.util.concurrent.Callable<Void> runs = () -> {
                    for (int i = 0; i < 5000; i++) {
                        s.run(b);
                    }
                    return null;
                };
                var first = pool.submit(runs);
                var second = pool.submit(runs);
                first.get();
                second.get();
            } finally {
                pool.shutdownNow();
            }
            try (Result r = b.getOutputs()) {
                assertArith(x, x, r.tensor("sum").getFloatArray(), r.tensor("prod").getFloatArray(),
                        r.tensor("affine").getFloatArray());
            }
        }
    }

    @Test
    void environmentArenaIsSharedByTwoSessions() {
        float[] x = ramp(8, 1, 1);
        float[] y = ramp(8, 3, -1);
        try (OrtMemoryInfo arenaInfo = OrtMemoryInfo.cpu()) {
            env.createAndRegisterAllocator(arenaInfo, new OrtArenaConfig()
                    .setExtendStrategy(OrtArenaConfig.ExtendStrategy.SAME_AS_REQUESTED)
                    .setInitialChunkSize(1 << 20));
            try {
                if (refusesDuplicateAllocators()) {
                    assertThrows(OrtException.class, () -> env.createAndRegisterAllocator(arenaInfo, null),
                            "one shared allocator per memory description");
                }
                try (SessionOptions shared = new SessionOptions()
                        .addConfigEntry(OrtEnvironment.USE_ENV_ALLOCATORS, "1");
                        OrtSession a = env.createSession(model("arith.onnx"), shared);
                        OrtSession b = env.createSession(model("arith.onnx"), shared);
                        OrtSession own = env.createSession(model("arith.onnx"));
                        OnnxTensor tx = OnnxTensor.createTensor(x, 2, 4);
                        OnnxTensor ty = OnnxTensor.createTensor(y, 2, 4)) {
                    for (OrtSession s : List.of(a, b, own)) {
                        try (Result r = s.run(Map.of("x", tx, "y", ty))) {
                            assertArith(x, y, r.tensor("sum").getFloatArray(), r.tensor("prod").getFloatArray(),
                                    r.tensor("affine").getFloatArray());
                        }
                    }
                    try (OrtMemoryInfo cpu = OrtMemoryInfo.cpu();
                            OrtAllocator fromA = a.getAllocator(cpu);
                            OrtAllocator fromB = b.getAllocator(cpu);
                            OrtAllocator fromOwn = own.getAllocator(cpu)) {
                        // one arena: a block A frees is the block B gets next; a session's own arena is elsewhere
                        MemorySegment p = fromA.alloc(4096);
                        long address = p.address();
                        fromA.free(p);
                        MemorySegment q = fromB.alloc(4096);
                        MemorySegment r = fromOwn.alloc(4096);
                        System.out.printf("shared arena: A got 0x%x, then B got 0x%x; the unshared session got 0x%x%n",
                                address, q.address(), r.address());
                        assertEquals(address, q.address(), "sessions A and B allocate from the same arena");
                        assertNotEquals(address, r.address(), "a session without the config entry has its own arena");
                        fromB.free(q);
                        fromOwn.free(r);
                    }
                }
            } finally {
                env.unregisterAllocator(arenaInfo);
            }
            assertThrows(OrtException.class, () -> env.unregisterAllocator(arenaInfo), "nothing left to unregister");
        }
    }

    @Test
    void errorsAreClearExceptions() {
        try (OrtSession s = env.createSession(model("arith.onnx"));
                OnnxTensor tx = OnnxTensor.createTensor(ramp(4, 1, 1), 1, 4);
                OrtMemoryInfo cpu = OrtMemoryInfo.cpu();
                OrtIoBinding b = s.createIoBinding()) {
            OrtException unknownIn = assertThrows(OrtException.class, () -> b.bindInput("z", tx));
            assertTrue(unknownIn.getMessage().contains("unknown input 'z'") && unknownIn.getMessage().contains("[x, y]"),
                    unknownIn.getMessage());
            OrtException unknownOut = assertThrows(OrtException.class, () -> b.bindOutput("quotient", cpu));
            assertTrue(unknownOut.getMessage().contains("unknown output 'quotient'"), unknownOut.getMessage());

            OnnxTensor closed = OnnxTensor.createTensor(ramp(4, 1, 1), 1, 4);
            closed.close();
            OrtException c = assertThrows(OrtException.class, () -> b.bindInput("y", closed));
            assertTrue(c.getMessage().contains("input 'y'") && c.getMessage().contains("closed"), c.getMessage());

            // wrong memory type, 1: an output bound to CUDA memory in a session without the CUDA provider
            try (OrtMemoryInfo cuda = OrtMemoryInfo.cuda(0)) {
                assertEquals("Cuda", cuda.getName());
                assertFalse(cuda.isHostAccessible());
                b.bindInput("x", tx).bindInput("y", tx).bindOutput("sum", cuda);
                s.run(b);
                // ORT 1.16 does not refuse this: it places the output where the CPU provider allocates;
                // the tensor reports where it really is, and reading it is safe
                try (Result r = b.getOutputs(); OrtMemoryInfo where = r.tensor("sum").getMemoryInfo()) {
                    System.out.println("output bound to Cuda in a CPU session landed in " + where);
                    assertEquals("Cpu", where.getName());
                    assertFalse(r.tensor("sum").isOnDevice());
                    assertArrayEquals(new float[] {2, 4, 6, 8}, r.tensor("sum").getFloatArray());
                }
                b.clearBoundOutputs();
            }
            // wrong memory type, 2: a tensor described as CUDA memory (here over host bytes ORT never touches)
            try (Arena arena = Arena.ofConfined();
                    OrtMemoryInfo cuda = OrtMemoryInfo.cuda(0);
                    DeviceTensor fake = DeviceTensor.createTensor(cuda, arena.allocate(16), OnnxTensorType.FLOAT, 1, 4)) {
                assertTrue(fake.isOnDevice());
                // a DeviceTensor has no host reads at all (no data(), no getFloatArray()); a host tensor
                // over memory described as a device's is refused
                OrtException read = assertThrows(OrtException.class,
                        () -> OnnxTensor.createTensor(cuda, arena.allocate(16), OnnxTensorType.FLOAT, 1, 4));
                assertTrue(read.getMessage().contains("device memory"), read.getMessage());
                try (OrtMemoryInfo where = fake.getMemoryInfo()) {
                    assertEquals(OrtMemoryInfo.DeviceType.GPU, where.getDeviceType());
                }
                OrtException e = assertThrows(OrtException.class, () -> b.bindInput("x", fake));
                System.out.println("a Cuda input in a CPU session: " + e.getMessage());
                assertTrue(e.getMessage().contains("bind input 'x'") && e.getMessage().contains("DeviceType:1"), e.getMessage());
                assertTrue(b.getBoundInputs().get("x") == tx, "the failed binding left the earlier one in place");
                b.clearBoundInputs();
                b.clearBoundOutputs();
            }
            // a bad memory description name is ORT's error
            assertThrows(OrtException.class, () -> OrtMemoryInfo.create("Tpu", OrtMemoryInfo.AllocatorType.DEVICE, 0,
                    OrtMemoryInfo.MemType.DEFAULT));
            // a binding belongs to its session
            try (OrtSession other = env.createSession(model("arith.onnx"))) {
                OrtException e = assertThrows(OrtException.class, () -> other.run(b));
                assertTrue(e.getMessage().contains("another session"), e.getMessage());
            }
            // no allocator for a memory the session does not have
            try (OrtMemoryInfo cuda = OrtMemoryInfo.cuda(0)) {
                assertThrows(OrtException.class, () -> s.getAllocator(cuda).close());
            }
        }
        // objects used after close
        OrtSession s = env.createSession(model("arith.onnx"));
        OrtIoBinding b = s.createIoBinding();
        s.close();
        try (OnnxTensor t = OnnxTensor.createTensor(ramp(4, 1, 1), 1, 4)) {
            OrtException e = assertThrows(OrtException.class, () -> b.bindInput("x", t));
            assertTrue(e.getMessage().contains("OrtSession is closed"), e.getMessage());
        }
        assertThrows(OrtException.class, () -> s.run(b));
        assertThrows(OrtException.class, s::createIoBinding);
        b.close();
        b.close();
        OrtException e = assertThrows(OrtException.class, b::getOutputs);
        assertTrue(e.getMessage().contains("OrtIoBinding is closed"), e.getMessage());
        OrtMemoryInfo mi = OrtMemoryInfo.cpu();
        mi.close();
        mi.close();
        assertThrows(OrtException.class, () -> OnnxTensor.createTensor(mi, Arena.global().allocate(16), OnnxTensorType.FLOAT, 4));
    }

    /**
     * ORT 1.16 refuses a second environment allocator for the same memory description; 1.24.1
     * accepted it (the H200 run of 2026-11-30), so the refusal is checked on 1.16 only.
     */
    static boolean refusesDuplicateAllocators() {
        return org.pvn3d.ort.OrtRuntime.get().version().startsWith("1.16.");
    }

    /**
     * Says its sessions capture graphs, as the CUDA provider with {@code enable_cuda_graph} does, but adds
     * nothing to ORT: the binding's checks for graph-capturing sessions run here on the CPU provider.
     */
    static final class GraphCapturing extends ExecutionProvider {
        @Override
        public String getName() {
            return "TestGraphCapturingProvider";
        }

        @Override
        protected void appendTo(MemorySegment sessionOptions) {}

        @Override
        public boolean capturesGraphs() {
            return true;
        }
    }

    @Test
    void aGraphCapturingSessionKeepsEveryBindingWhereItsFirstRunFoundIt() {
        float[] x = ramp(8, 1, 1);
        float[] x2 = ramp(8, -3, 0.5f);
        float[] y = ramp(8, 0.5f, -0.25f);
        assertTrue(new OrtCUDAProviderOptions(0).add("enable_cuda_graph", "1").capturesGraphs());
        assertFalse(new OrtCUDAProviderOptions(0).capturesGraphs());
        try (SessionOptions o = new SessionOptions().addExecutionProvider(new GraphCapturing());
                OrtSession s = env.createSession(model("arith.onnx"), o);
                OrtSession plain = env.createSession(model("arith.onnx"));
                OnnxTensor tx = OnnxTensor.createTensor(x, 2, 4);
                OnnxTensor tx2 = OnnxTensor.createTensor(x2, 2, 4);
                OnnxTensor ty = OnnxTensor.createTensor(y, 2, 4);
                OnnxTensor sum = OnnxTensor.allocate(OnnxTensorType.FLOAT, 2, 4);
                OnnxTensor prod = OnnxTensor.allocate(OnnxTensorType.FLOAT, 2, 4);
                OnnxTensor affine = OnnxTensor.allocate(OnnxTensorType.FLOAT, 2, 4);
                OrtMemoryInfo cpu = OrtMemoryInfo.cpu();
                RunOptions graph1 = new RunOptions().addRunConfigEntry(RunOptions.GPU_GRAPH_ID, "1");
                RunOptions noGraph = new RunOptions().addRunConfigEntry(RunOptions.GPU_GRAPH_ID, "-1");
                OrtIoBinding b = s.createIoBinding();
                OrtIoBinding p = plain.createIoBinding()) {
            assertTrue(s.capturesGraphs());
            assertFalse(plain.capturesGraphs());
            b.bindInput("x", tx).bindInput("y", ty).bindOutput("sum", sum).bindOutput("prod", prod).bindOutput("affine", affine);
            s.run(b); // graph 0's first run: its addresses are fixed now
            assertArith(x, y, sum.getFloatArray(), prod.getFloatArray(), affine.getFloatArray());

            b.bindInput("x", tx2); // other memory: a replay would still read tx's
            OrtException e = assertThrows(OrtException.class, () -> s.run(b));
            assertTrue(e.getMessage().contains("input 'x' is bound to data at 0x" + Long.toHexString(tx2.data().address())
                    + ", but graph 0 of this session was captured with 0x" + Long.toHexString(tx.data().address())), e.getMessage());
            assertTrue(e.getMessage().contains("Copy the new data into the tensor bound then"), e.getMessage());
            // the way to feed new data: into the tensor the graph was captured with
            MemorySegment.copy(tx2.data(), 0, tx.data(), 0, tx.byteSize());
            b.bindInput("x", tx);
            s.run(b);
            assertArith(x2, y, sum.getFloatArray(), prod.getFloatArray(), affine.getFloatArray());

            // each graph id keeps the addresses of its own first run; -1 (no graph) is not checked
            b.bindInput("x", tx2);
            s.run(b, graph1);
            s.run(b, graph1);
            s.run(b, noGraph);
            assertThrows(OrtException.class, () -> s.run(b));
            b.bindInput("x", tx);
            s.run(b);
            assertThrows(OrtException.class, () -> s.run(b, graph1));

            // an output ORT allocates anew for every run cannot follow a replay: refused, with the way out
            b.bindOutput("sum", cpu);
            OrtException d = assertThrows(OrtException.class, () -> s.run(b));
            assertTrue(d.getMessage().contains("output 'sum' is bound to a device") && d.getMessage().contains("preallocated"),
                    d.getMessage());
            b.bindOutput("sum", sum);
            s.run(b);
            assertArith(x2, y, sum.getFloatArray(), prod.getFloatArray(), affine.getFloatArray());

            // a session without graphs lets a binding move freely
            p.bindInput("x", tx).bindInput("y", ty).bindOutput("sum", cpu).bindOutput("prod", prod).bindOutput("affine", affine);
            plain.run(p);
            p.bindInput("x", tx2);
            plain.run(p);
        }
    }
}
