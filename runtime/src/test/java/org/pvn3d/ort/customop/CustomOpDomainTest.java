package org.pvn3d.ort.customop;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.pvn3d.ort.NativeObject;
import org.pvn3d.ort.OnnxTensor;
import org.pvn3d.ort.OnnxTensorType;
import org.pvn3d.ort.OrtEnvironment;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.OrtSession;
import org.pvn3d.ort.Result;
import org.pvn3d.ort.SessionOptions;

/**
 * The general bridge with an operator written entirely in Java ("JavaScale": y = x * factor + bias,
 * bias optional): compute through the upcalls, attributes, optional inputs, every kind of failure
 * turned into an ORT status (and the session still usable), and no native leak.
 */
class CustomOpDomainTest {
    private static OrtEnvironment env;

    @BeforeAll
    static void environment() {
        env = OrtEnvironment.getEnvironment();
    }

    /** Leaves no domain waiting for the Cleaner behind for other test classes' leak counts. */
    @AfterAll
    static void domainsReleased() throws InterruptedException {
        awaitReleased();
    }

    static Path model(String name) {
        return JavaScaleOp.model(name);
    }

    /** What the kernel does on an input whose first element is a given sentinel. */
    static final float THROW_ORT = -1000f;
    static final float THROW_RUNTIME = -2000f;
    static final float THROW_ERROR = -3000f;

    static final AtomicInteger CLOSED_KERNELS = new AtomicInteger();

    static final class ScaleKernel implements CustomKernel {
        private final float factor;

        ScaleKernel(KernelInfo info) {
            factor = info.getFloat("factor");
            if (info.getInt("times", 1) != 1) {
                throw info.invalidAttribute("times", "is not supported");
            }
        }

        @Override
        public void compute(KernelContext ctx) {
            KernelTensor x = ctx.input(0, OnnxTensorType.FLOAT, -1);
            KernelTensor bias = ctx.inputOrNull(1);
            float first = x.elementCount() > 0 ? x.data().get(JAVA_FLOAT, 0) : 0;
            if (first == THROW_ORT) {
                throw ctx.invalid("input x starts with the forbidden value " + first);
            } else if (first == THROW_RUNTIME) {
                throw new IllegalStateException("plain Java failure");
            } else if (first == THROW_ERROR) {
                throw new StackOverflowError("simulated");
            }
            KernelTensor y = ctx.output(0, x.shape());
            MemorySegment in = x.data();
            MemorySegment out = y.data();
            float b = bias == null ? 0f : bias.data().get(JAVA_FLOAT, 0);
            for (long i = 0; i < x.elementCount(); i++) {
                out.setAtIndex(JAVA_FLOAT, i, in.getAtIndex(JAVA_FLOAT, i) * factor + b);
            }
        }

        @Override
        public void close() {
            CLOSED_KERNELS.incrementAndGet();
        }
    }

    static CustomOpDomain scaleDomain() {
        return JavaScaleOp.domain(ScaleKernel::new);
    }

    static float[] run(OrtSession s, float[] x, float[] bias) {
        try (OnnxTensor xt = OnnxTensor.createTensor(x, 2, x.length / 2)) {
            Map<String, OnnxTensor> feeds = bias == null ? Map.of("x", xt) : Map.of("x", xt, "bias", OnnxTensor.createTensor(bias, 1));
            try (Result r = s.run(feeds)) {
                return r.tensor("y").getFloatArray();
            } finally {
                if (bias != null) {
                    feeds.get("bias").close();
                }
            }
        }
    }

    @Test
    void javaKernelComputesWithAttributesAndOptionalInputs() {
        try (CustomOpDomain domain = scaleDomain(); SessionOptions options = new SessionOptions()) {
            options.registerCustomOps(domain);
            try (OrtSession s = env.createSession(model("java_scale.onnx"), options);
                    OrtSession withBias = env.createSession(model("java_scale_bias.onnx"), options)) {
                assertEquals(2, domain.liveKernelCount());
                assertArrayEquals(new float[] {2.5f, 5f, 7.5f, 10f}, run(s, new float[] {1, 2, 3, 4}, null));
                assertArrayEquals(new float[] {3.5f, 6f}, run(withBias, new float[] {1, 2}, new float[] {1}));
                // another shape through the same session
                assertArrayEquals(new float[] {0f, 25f}, run(s, new float[] {0, 10}, null));
            }
            assertEquals(0, domain.liveKernelCount());
        }
    }

    @Test
    void everyKindOfComputeFailureFailsOnlyThatRun() {
        try (CustomOpDomain domain = scaleDomain(); SessionOptions options = new SessionOptions()) {
            options.registerCustomOps(domain);
            try (OrtSession s = env.createSession(model("java_scale.onnx"), options)) {
                OrtException ort = assertThrows(OrtException.class, () -> run(s, new float[] {THROW_ORT, 0}, null));
                assertTrue(ort.getMessage().contains("JavaScale (node 'scale'): input x starts with the forbidden value"),
                        ort.getMessage());
                assertEquals(OrtErrorCode.ORT_INVALID_ARGUMENT, ort.getCode());
                assertArrayEquals(new float[] {2.5f, 5f}, run(s, new float[] {1, 2}, null));

                OrtException runtime = assertThrows(OrtException.class, () -> run(s, new float[] {THROW_RUNTIME, 0}, null));
                assertTrue(runtime.getMessage().contains("JavaScale"), runtime.getMessage());
                assertTrue(runtime.getMessage().contains("IllegalStateException: plain Java failure"), runtime.getMessage());
                assertArrayEquals(new float[] {2.5f, 5f}, run(s, new float[] {1, 2}, null));

                OrtException error = assertThrows(OrtException.class, () -> run(s, new float[] {THROW_ERROR, 0}, null));
                assertTrue(error.getMessage().contains("StackOverflowError"), error.getMessage());
                assertArrayEquals(new float[] {2.5f, 5f}, run(s, new float[] {1, 2}, null));
            }
        }
    }

    @Test
    void aKernelClosingItsOwnRunsSessionAndInputDoesNotWaitForItself() throws Exception {
        // close() waits for the uses in flight; from inside compute one of them is the run that called it
        java.util.concurrent.atomic.AtomicReference<AutoCloseable[]> toClose = new java.util.concurrent.atomic.AtomicReference<>();
        CustomOpDomain domain = JavaScaleOp.domain(info -> ctx -> {
            KernelTensor x = ctx.input(0, OnnxTensorType.FLOAT, -1);
            KernelTensor y = ctx.output(0, x.shape());
            y.data().copyFrom(x.data());
            for (AutoCloseable c : toClose.get()) {
                try {
                    c.close();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }
        });
        try (SessionOptions options = new SessionOptions().registerCustomOps(domain)) {
            OrtSession s = env.createSession(model("java_scale.onnx"), options);
            OnnxTensor x = OnnxTensor.createTensor(new float[] {1, 2, 3, 4}, 2, 2);
            toClose.set(new AutoCloseable[] {s, x});
            java.util.concurrent.Future<float[]> run = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()
                    .submit(() -> {
                        try (Result r = s.run(Map.of("x", x))) {
                            return r.tensor("y").getFloatArray();
                        }
                    });
            assertArrayEquals(new float[] {1, 2, 3, 4}, run.get(60, java.util.concurrent.TimeUnit.SECONDS), "the run finished");
            assertTrue(s.isClosed() && x.isClosed());
            OrtException e = assertThrows(OrtException.class, () -> s.run(Map.of()));
            assertTrue(e.getMessage().contains("OrtSession is closed"), e.getMessage());
            assertEquals(0, domain.liveKernelCount(), "the session was released when its run ended");
        } finally {
            domain.close();
        }
    }

    @Test
    void aDeferredErrorFailsTheRunOfItsOwnSessionOnly() throws Exception {
        // two sessions share one domain; a kernel flags its negative input and reports it after the run: only
        // runs of the session whose kernel saw it may fail (every live kernel of the domain used to be asked)
        CustomOpDomain domain = JavaScaleOp.domain(info -> new CustomKernel() {
            final java.util.concurrent.atomic.AtomicBoolean negative = new java.util.concurrent.atomic.AtomicBoolean();

            @Override
            public void compute(KernelContext ctx) {
                KernelTensor x = ctx.input(0, OnnxTensorType.FLOAT, -1);
                if (x.data().get(JAVA_FLOAT, 0) < 0) {
                    negative.set(true);
                }
                ctx.output(0, x.shape()).data().copyFrom(x.data());
            }

            @Override
            public void checkDeferred() {
                if (negative.getAndSet(false)) {
                    throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "a negative input (deferred)");
                }
            }
        });
        try (SessionOptions options = new SessionOptions().registerCustomOps(domain);
                OrtSession bad = env.createSession(model("java_scale.onnx"), options);
                OrtSession good = env.createSession(model("java_scale.onnx"), options)) {
            java.util.concurrent.atomic.AtomicInteger goodFailed = new java.util.concurrent.atomic.AtomicInteger();
            java.util.concurrent.atomic.AtomicInteger badPassed = new java.util.concurrent.atomic.AtomicInteger();
            Thread badRuns = Thread.ofPlatform().start(() -> {
                for (int i = 0; i < 1500; i++) {
                    try {
                        run(bad, new float[] {-1, 1}, null);
                        badPassed.incrementAndGet();
                    } catch (OrtException e) {
                        // its own error
                    }
                }
            });
            Thread goodRuns = Thread.ofPlatform().start(() -> {
                for (int i = 0; i < 1500; i++) {
                    try {
                        run(good, new float[] {1, 2}, null);
                    } catch (OrtException e) {
                        goodFailed.incrementAndGet();
                    }
                }
            });
            badRuns.join();
            goodRuns.join();
            assertEquals(0, goodFailed.get(), "runs of the good session failed with the other session's error");
            assertEquals(0, badPassed.get(), "runs of the bad session passed (their error went elsewhere)");
        } finally {
            domain.close();
        }
    }

    @Test
    void aScalarAttributeReadAsAnArrayIsAnError() {
        // ORT's array readers answer a single float with an empty array: it was returned as "no values"
        List<String> seen = new java.util.ArrayList<>();
        CustomOpDomain domain = JavaScaleOp.domain(info -> {
            for (java.util.function.Supplier<Object> read : List.<java.util.function.Supplier<Object>>of(() -> info.getInts("factor"),
                    () -> info.getFloats("factor"))) {
                try {
                    seen.add("returned " + read.get());
                } catch (OrtException e) {
                    seen.add(e.getMessage());
                }
            }
            return new ScaleKernel(info);
        });
        try (SessionOptions options = new SessionOptions().registerCustomOps(domain);
                OrtSession s = env.createSession(model("java_scale.onnx"), options)) {
            assertArrayEquals(new float[] {2.5f, 5f}, run(s, new float[] {1, 2}, null), "the float reads as a float");
        } finally {
            domain.close();
        }
        assertEquals(List.of("[ORT_INVALID_ARGUMENT] JavaScale (node 'scale'): attribute factor is a float, not ints",
                "[ORT_INVALID_ARGUMENT] JavaScale (node 'scale'): attribute factor is a float, not floats"), seen);
    }

    @Test
    void aKeptContextCannotReachAnotherThreadsCall() throws Exception {
        // contexts are pooled: the one kept from run 1 is the object run 2 uses, on another thread
        java.util.concurrent.atomic.AtomicReference<KernelContext> kept = new java.util.concurrent.atomic.AtomicReference<>();
        java.util.concurrent.CountDownLatch computing = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch tried = new java.util.concurrent.CountDownLatch(1);
        CustomOpDomain domain = JavaScaleOp.domain(info -> ctx -> {
            KernelTensor x = ctx.input(0, OnnxTensorType.FLOAT, -1);
            ctx.output(0, x.shape()).data().copyFrom(x.data());
            if (kept.compareAndSet(null, ctx)) {
                return; // run 1 keeps its context
            }
            computing.countDown();
            try {
                tried.await(30, java.util.concurrent.TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        try (SessionOptions options = new SessionOptions().registerCustomOps(domain);
                OrtSession s = env.createSession(model("java_scale.onnx"), options)) {
            assertArrayEquals(new float[] {1, 2}, run(s, new float[] {1, 2}, null));
            OrtException between = assertThrows(OrtException.class, () -> kept.get().input(0));
            assertTrue(between.getMessage().contains("only valid while compute runs"), between.getMessage());
            java.util.concurrent.Future<float[]> second = java.util.concurrent.Executors.newSingleThreadExecutor(r -> {
                Thread t = new Thread(r);
                t.setDaemon(true);
                return t;
            }).submit(() -> run(s, new float[] {3, 4}, null));
            assertTrue(computing.await(30, java.util.concurrent.TimeUnit.SECONDS));
            OrtException during = assertThrows(OrtException.class, () -> kept.get().input(0));
            assertTrue(during.getMessage().contains("only valid on the thread running its compute call"), during.getMessage());
            tried.countDown();
            assertArrayEquals(new float[] {3, 4}, second.get(30, java.util.concurrent.TimeUnit.SECONDS), "run 2 is untouched");
        } finally {
            domain.close();
        }
    }

    @Test
    void kernelScratchOfANegativeSizeIsRefused() {
        List<String> seen = new java.util.ArrayList<>();
        CustomOpDomain domain = JavaScaleOp.domain(info -> ctx -> {
            KernelTensor x = ctx.input(0, OnnxTensorType.FLOAT, -1);
            try (KernelAllocator a = ctx.allocator(x)) {
                for (long bytes : new long[] {-1, Long.MAX_VALUE}) {
                    try {
                        a.alloc(bytes);
                        seen.add("allocated " + bytes);
                    } catch (OrtException e) {
                        seen.add(e.getMessage());
                    }
                }
                MemorySegment ok = a.alloc(64);
                a.free(ok);
            }
            ctx.output(0, x.shape()).data().copyFrom(x.data());
        });
        try (SessionOptions options = new SessionOptions().registerCustomOps(domain);
                OrtSession s = env.createSession(model("java_scale.onnx"), options)) {
            assertArrayEquals(new float[] {1, 2}, run(s, new float[] {1, 2}, null));
        } finally {
            domain.close();
        }
        assertEquals(List.of("[ORT_INVALID_ARGUMENT] cannot allocate -1 bytes of kernel scratch", "[ORT_INVALID_ARGUMENT] cannot "
                + "allocate 9223372036854775807 bytes of kernel scratch: more than any address space holds (at most 2^56)"), seen);
    }

    @Test
    void factoryFailuresFailSessionCreationWithTheirMessage() {
        CustomOp throwing = JavaScaleOp.withKernel(info -> {
            throw new IllegalArgumentException("factory refuses node " + info.nodeName());
        });
        try (CustomOpDomain domain = CustomOpDomain.of("test.java", throwing);
                SessionOptions options = new SessionOptions()) {
            options.registerCustomOps(domain);
            OrtException e = assertThrows(OrtException.class, () -> env.createSession(model("java_scale.onnx"), options));
            assertTrue(e.getMessage().contains("factory refuses node scale"), e.getMessage());
        }
        CustomOp needsMissing = CustomOp.builder("JavaScale")
                .input("x", OnnxTensorType.FLOAT).input(Port.optional("bias", OnnxTensorType.FLOAT))
                .output("y", OnnxTensorType.FLOAT)
                .attribute("offset", AttributeSpec.Type.FLOAT, true, "absent from the model")
                .kernel(ScaleKernel::new).build();
        try (CustomOpDomain domain = CustomOpDomain.of("test.java", needsMissing);
                SessionOptions options = new SessionOptions()) {
            options.registerCustomOps(domain);
            OrtException e = assertThrows(OrtException.class, () -> env.createSession(model("java_scale.onnx"), options));
            assertTrue(e.getMessage().contains("JavaScale (node 'scale'): attribute offset (float) is required but missing"),
                    e.getMessage());
        }
    }

    @Test
    void kernelInfoIsOnlyValidDuringCreation() {
        KernelInfo[] kept = new KernelInfo[1];
        CustomOp keeping = JavaScaleOp.withKernel(info -> {
            kept[0] = info;
            return new ScaleKernel(info);
        });
        try (CustomOpDomain domain = CustomOpDomain.of("test.java", keeping);
                SessionOptions options = new SessionOptions()) {
            options.registerCustomOps(domain);
            try (OrtSession s = env.createSession(model("java_scale.onnx"), options)) {
                assertEquals("scale", kept[0].nodeName());
                assertThrows(OrtException.class, () -> kept[0].getFloat("factor"));
            }
        }
    }

    @Test
    void domainOutlivesItsOwnerWhileSessionsUseIt() {
        OrtSession s;
        CustomOpDomain domain = scaleDomain();
        try (SessionOptions options = new SessionOptions()) {
            options.registerCustomOps(domain);
            s = env.createSession(model("java_scale.onnx"), options);
        }
        domain.close();
        domain.close(); // idempotent
        try (SessionOptions other = new SessionOptions()) {
            assertThrows(OrtException.class, () -> other.registerCustomOps(domain), "a closed domain is not registered again");
        }
        try (s) {
            System.gc();
            assertFalse(domain.isReleased(), "the session still holds the domain");
            assertArrayEquals(new float[] {2.5f, 5f}, run(s, new float[] {1, 2}, null));
        }
    }

    @Test
    void noNativeLeaksAcrossRegistrationsAndSessions() throws InterruptedException {
        // warm up the classes (and the process-wide upcall stubs) before taking the baseline
        runCycle();
        awaitReleased();
        Map<String, Long> baseline = NativeObject.liveCounts();
        int closedBefore = CLOSED_KERNELS.get();
        for (int i = 0; i < 25; i++) {
            runCycle();
        }
        assertEquals(closedBefore + 25 * 2, CLOSED_KERNELS.get(), "every kernel was destroyed");
        awaitReleased();
        assertEquals(baseline, NativeObject.liveCounts());
    }

    private static void runCycle() {
        try (CustomOpDomain domain = scaleDomain(); SessionOptions options = new SessionOptions()) {
            options.registerCustomOps(domain);
            try (OrtSession a = env.createSession(model("java_scale.onnx"), options);
                    OrtSession b = env.createSession(model("java_scale.onnx"), options)) {
                run(a, new float[] {1, 2}, null);
                run(b, new float[] {3, 4}, null);
            }
        }
    }

    /**
     * Closed options and sessions hold their domain leases until collected; wait (bounded) for the
     * Cleaner to release every domain.
     */
    private static void awaitReleased() throws InterruptedException {
        for (int i = 0; i < 200 && NativeObject.liveCount("OrtCustomOpDomain") > 0; i++) {
            System.gc();
            Thread.sleep(25);
        }
        assertEquals(0, NativeObject.liveCount("OrtCustomOpDomain"), "custom-op domains still alive");
    }
}
