package org.pvn3d.ort;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** Closing is idempotent, use after close is a clear exception, and closing under use is safe. */
class LifecycleTest {
    final OrtEnvironment env = OrtEnvironment.getEnvironment();

    @Test
    void closingTwiceIsHarmlessEverywhere() {
        OrtSession s = env.createSession(TestModels.model("arith.onnx"));
        s.close();
        s.close();
        OnnxTensor t = OnnxTensor.createTensor(new float[4], 1, 4);
        t.close();
        t.close();
        SessionOptions o = new SessionOptions();
        o.close();
        o.close();
        RunOptions r = new RunOptions();
        r.close();
        r.close();
        assertTrue(s.isClosed() && t.isClosed() && o.isClosed() && r.isClosed());
    }

    @Test
    void useAfterCloseIsAClearException() {
        OrtSession s = env.createSession(TestModels.model("arith.onnx"));
        s.close();
        try (OnnxTensor x = OnnxTensor.createTensor(new float[4], 1, 4)) {
            OrtException e = assertThrows(OrtException.class, () -> s.run(Map.of("x", x, "y", x)));
            assertTrue(e.getMessage().contains("OrtSession is closed"), e.getMessage());
        }
        OnnxTensor t = OnnxTensor.createTensor(new float[4], 1, 4);
        t.close();
        assertThrows(OrtException.class, t::getFloatArray);
        try (OrtSession live = env.createSession(TestModels.model("arith.onnx"));
                OnnxTensor y = OnnxTensor.createTensor(new float[4], 1, 4)) {
            OrtException e = assertThrows(OrtException.class, () -> live.run(Map.of("x", t, "y", y)));
            assertTrue(e.getMessage().contains("input 'x'") && e.getMessage().contains("closed"), e.getMessage());
        }
        SessionOptions o = new SessionOptions();
        o.close();
        assertThrows(OrtException.class, () -> o.setIntraOpNumThreads(1));
        assertThrows(OrtException.class, () -> env.createSession(TestModels.model("arith.onnx"), o));
    }

    @Test
    void closingASessionUnderUseWaitsForTheRunsAndThenRefusesNewOnes() throws Exception {
        OrtSession s = env.createSession(TestModels.model("matmul_chain.onnx"));
        int threads = 4;
        CountDownLatch started = new CountDownLatch(threads);
        AtomicInteger good = new AtomicInteger();
        AtomicInteger refused = new AtomicInteger();
        AtomicReference<Throwable> unexpected = new AtomicReference<>();
        Thread[] workers = new Thread[threads];
        for (int w = 0; w < threads; w++) {
            workers[w] = new Thread(() -> {
                try (OnnxTensor x = OnnxTensor.createTensor(new float[64 * 16], 16, 64)) {
                    started.countDown();
                    while (true) {
                        try (Result r = s.run(Map.of("x", x))) {
                            assertEquals(16 * 8, r.tensor("y").getFloatArray().length);
                            good.incrementAndGet();
                        } catch (OrtException e) {
                            if (e.getMessage().contains("OrtSession is closed")) {
                                refused.incrementAndGet();
                                return;
                            }
                            throw e;
                        }
                    }
                } catch (Throwable t) {
                    unexpected.set(t);
                }
            });
            workers[w].start();
        }
        started.await();
        Thread.sleep(200);
        s.close();
        for (Thread w : workers) {
            w.join(10_000);
        }
        if (unexpected.get() != null) {
            throw new AssertionError(unexpected.get());
        }
        assertTrue(good.get() > 0, "runs completed before the close");
        assertEquals(threads, refused.get(), "every worker saw a clear refusal after the close");
    }

    @Test
    void closingATensorWhileAnotherThreadCopiesItOutWaitsForTheCopy() throws Exception {
        // 64 MB: glibc maps it on its own and unmaps it at free(), so a copy racing the free crashed the JVM
        int n = 16 << 20;
        for (int round = 0; round < 3; round++) {
            float[] ones = new float[n];
            java.util.Arrays.fill(ones, 1f);
            OnnxTensor x = OnnxTensor.createTensor(ones, n);
            java.util.concurrent.atomic.AtomicReference<String> outcome = new java.util.concurrent.atomic.AtomicReference<>();
            Thread reader = new Thread(() -> {
                try {
                    while (true) {
                        float[] got = x.getFloatArray();
                        for (float f : got) {
                            if (f != 1f) {
                                outcome.set("wrong value " + f);
                                return;
                            }
                        }
                    }
                } catch (OrtException e) {
                    outcome.set(e.getMessage());
                }
            });
            reader.start();
            Thread.sleep(30);
            x.close();
            reader.join(60_000);
            assertTrue(outcome.get() != null && outcome.get().contains("is closed"), String.valueOf(outcome.get()));
        }
    }

    @Test
    void theEnvironmentOutlivesItsSessions() {
        OrtEnvironment e = OrtEnvironment.getEnvironment();
        try (OrtSession s = e.createSession(TestModels.model("arith.onnx"));
                OnnxTensor x = OnnxTensor.createTensor(new float[] {1, 1, 1, 1}, 1, 4);
                Result r = s.run(Map.of("x", x, "y", x))) {
            assertArrayEquals(new float[] {2, 2, 2, 2}, r.tensor("sum").getFloatArray());
        }
        assertEquals(e, OrtEnvironment.getEnvironment(), "one environment per process");
    }
}
