package org.pvn3d.ort.pipeline.pool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.pvn3d.ort.OnnxTensorType;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.pipeline.NativePoseSolver;
import org.pvn3d.ort.pipeline.Pvn3dPipeline;
import org.pvn3d.ort.pipeline.Pvn3dSample;

/** The pool under misuse: bad frames, callbacks that close or submit, a factory that returns nothing, many submitters racing close. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class Pvn3dPoolMisuseTest {
    static byte[] model;
    static Pvn3dSample shipped;
    static Pvn3dPipeline.Result cached;

    @BeforeAll
    static void load() {
        model = Pvn3dPipeline.tinyModelBytes();
        shipped = Pvn3dSample.resource(Pvn3dSample.RESOURCE);
        try (Pvn3dPipeline p = new Pvn3dPipeline(model, Pvn3dPipeline.Config.cpu().withPoseSolver(new NativePoseSolver()).withThreads(1))) {
            cached = p.run(shipped);
        }
    }

    /** Sessions that wait on {@code gates[run]} (when there is one) and return {@link #cached}; counts runs and closes. */
    static Pvn3dPool.SessionFactory gated(List<CountDownLatch> gates, AtomicInteger runs, AtomicInteger closes) {
        return slot -> new Pvn3dPool.PoolSession() {
            @Override
            public PoseResult.Frame run(Pvn3dSample sample) {
                int i = runs.getAndIncrement();
                if (i < gates.size()) {
                    try {
                        gates.get(i).await();
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                }
                return PoseResult.Frame.of(cached);
            }

            @Override
            public void close() {
                closes.incrementAndGet();
            }
        };
    }

    /** The shipped sample with one {@code choose} index outside the 64x64 image. */
    static Pvn3dSample badChoose() {
        long[] c = shipped.entry("choose").longs().clone();
        c[7] = 64 * 64 + 10;
        return shipped.with("choose", OnnxTensorType.INT64, shipped.entry("choose").shape(), c);
    }

    /**
     * A frame whose choose names a pixel outside the image is bad input: it fails alone (as NaN clouds and wrong
     * shapes do) and leaves the session serving. (It used to fail inside the network with a code the pool took
     * for a broken session: the session was reopened for each such frame and then taken out.)
     */
    @Test
    void aFrameWithAnOutOfRangeChooseIsBadInputNotASessionFailure() throws Exception {
        try (Pvn3dPool pool = Pvn3dPool.builder(model).threadsPerSession(1).maxRestarts(1).build()) {
            List<String> failures = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                ExecutionException e = assertThrows(ExecutionException.class, () -> pool.submit(badChoose()).get(30, TimeUnit.SECONDS));
                FrameFailedException f = assertInstanceOf(FrameFailedException.class, e.getCause());
                failures.add("sessionFailed=" + f.sessionFailed() + " code=" + ((OrtException) f.getCause()).getCode());
            }
            assertEquals(1, pool.liveSessions(), "three bad frames took the only session out of the pool: " + failures);
            assertEquals(cached.pose().pose(), pool.submit(shipped).get(30, TimeUnit.SECONDS).pose());
            assertTrue(failures.stream().allMatch(f -> f.equals("sessionFailed=false code=ORT_INVALID_ARGUMENT")), failures.toString());
        }
    }

    /** A NaN in the image is refused as a NaN in the cloud is, not answered with a NaN pose as if no object were there. */
    @Test
    void aNaNInTheImageIsRefusedLikeANaNInTheCloud() throws Exception {
        float[] rgb = shipped.entry("rgb").floats().clone();
        java.util.Arrays.fill(rgb, Float.NaN);
        Pvn3dSample bad = shipped.with("rgb", OnnxTensorType.FLOAT, shipped.entry("rgb").shape(), rgb);
        try (Pvn3dPool pool = Pvn3dPool.builder(model).threadsPerSession(1).build()) {
            CompletableFuture<PoseResult> f = pool.submit(bad);
            PoseResult r = null;
            try {
                r = f.get(30, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                OrtException cause = assertInstanceOf(OrtException.class, e.getCause().getCause());
                assertEquals(OrtErrorCode.ORT_INVALID_ARGUMENT, cause.getCode());
                return;
            }
            throw new AssertionError("a NaN image gave a result: pose " + r.pose() + ", " + r.inliers() + " inliers, " + r.masked() + " masked");
        }
    }

    /** Same with a choose of another length than the cloud (ORT_FAIL from the Concat node). */
    @Test
    void aChooseOfTheWrongLengthIsBadInputNotASessionFailure() throws Exception {
        long[] c = java.util.Arrays.copyOf(shipped.entry("choose").longs(), 1000);
        Pvn3dSample bad = shipped.with("choose", OnnxTensorType.INT64, new long[] {1, 1, 1000}, c);
        try (Pvn3dPool pool = Pvn3dPool.builder(model).threadsPerSession(1).maxRestarts(0).build()) {
            ExecutionException e = assertThrows(ExecutionException.class, () -> pool.submit(bad).get(30, TimeUnit.SECONDS));
            FrameFailedException f = assertInstanceOf(FrameFailedException.class, e.getCause());
            assertFalse(f.sessionFailed(), "bad input must not take the session down: " + f.getMessage());
            assertEquals(cached.pose().pose(), pool.submit(shipped).get(30, TimeUnit.SECONDS).pose());
        }
    }

    /**
     * A frame callback closes the pool (allowed: it waits for the other workers only). A later close() on
     * another thread still waits for every frame and for the sessions to close.
     */
    @Test
    void closeAfterACallbackClosedThePoolWaitsForTheFramesStillRunning() throws Exception {
        CountDownLatch gate0 = new CountDownLatch(1);
        CountDownLatch gate1 = new CountDownLatch(1);
        AtomicInteger runs = new AtomicInteger();
        AtomicInteger closes = new AtomicInteger();
        Pvn3dPool pool = Pvn3dPool.builder(model).sessionFactory(gated(List.of(gate0, gate1), runs, closes)).build();
        try {
            CompletableFuture<PoseResult> f1 = pool.submit(shipped);
            CompletableFuture<PoseResult> f2 = pool.submit(shipped);
            CompletableFuture<Void> cb = f1.thenRun(pool::close); // runs on the worker
            gate0.countDown();
            cb.get(10, TimeUnit.SECONDS);
            while (runs.get() < 2) {
                Thread.sleep(5); // the worker took the queued frame
            }
            Thread closer = new Thread(pool::close);
            closer.setDaemon(true);
            closer.start();
            closer.join(500);
            assertTrue(closer.isAlive() || f2.isDone(), "close() returned while a frame was still running");
            assertTrue(closer.isAlive() || closes.get() == 1, "close() returned with the session still open");
        } finally {
            gate1.countDown();
        }
    }


    /**
     * A chain of frames: a frame's callback submits the next one (thenCompose). Callbacks run on the worker
     * thread, so with the queue full the submit is refused rather than wait for room only that worker can make.
     */
    @Test
    void aCallbackThatSubmitsWhileTheQueueIsFullDoesNotHangThePool() throws Exception {
        CountDownLatch gate0 = new CountDownLatch(1);
        AtomicInteger runs = new AtomicInteger();
        Pvn3dPool pool = Pvn3dPool.builder(model).queueCapacity(1).sessionFactory(gated(List.of(gate0), runs, new AtomicInteger())).build();
        CompletableFuture<PoseResult> f1 = pool.submit(shipped);
        while (runs.get() == 0) {
            Thread.sleep(5);
        }
        CompletableFuture<PoseResult> f2 = pool.submit(shipped); // fills the queue
        CompletableFuture<PoseResult> next = f1.thenCompose(r -> pool.submit(shipped));
        gate0.countDown();
        try {
            // either the follow-up runs, or submit refuses it (RejectedExecutionException): anything but waiting forever
            try {
                next.get(10, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                assertInstanceOf(java.util.concurrent.RejectedExecutionException.class, e.getCause());
            }
            f2.get(10, TimeUnit.SECONDS);
        } finally {
            f2.cancel(false); // frees the queue slot the stuck worker waits for, so the pool can close
            pool.close();
        }
    }

    /** Many threads submit while another closes: every future submit returned completes, none twice, none lost. */
    @Test
    void manySubmittersRacingCloseLoseNoFrame() throws Exception {
        for (int round = 0; round < 20; round++) {
            AtomicInteger runs = new AtomicInteger();
            Pvn3dPool pool = Pvn3dPool.builder(model).sessionsPerDevice(2).queueCapacity(2)
                    .sessionFactory(gated(List.of(), runs, new AtomicInteger())).build();
            List<CompletableFuture<PoseResult>> all = java.util.Collections.synchronizedList(new ArrayList<>());
            List<Thread> submitters = new ArrayList<>();
            for (int t = 0; t < 6; t++) {
                Thread th = new Thread(() -> {
                    for (int i = 0; i < 300; i++) {
                        try {
                            all.add(pool.submit(shipped));
                        } catch (java.util.concurrent.RejectedExecutionException e) {
                            return;
                        }
                    }
                });
                th.start();
                submitters.add(th);
            }
            Thread.sleep(round % 5);
            pool.close();
            for (Thread th : submitters) {
                th.join(10_000);
                assertFalse(th.isAlive(), "a submitter hangs");
            }
            long ok = 0;
            for (CompletableFuture<PoseResult> f : all) {
                try {
                    f.get(10, TimeUnit.SECONDS);
                    ok++;
                } catch (ExecutionException e) {
                    assertInstanceOf(FrameFailedException.class, e.getCause());
                }
            }
            assertEquals(runs.get(), ok, "every run gave exactly one result");
        }
    }

    /** A factory that returns null: the slot fails to open with a clear message, instead of serving NPEs forever. */
    @Test
    void aFactoryThatReturnsNoSessionIsRefusedClearly() throws Exception {
        Pvn3dPool pool;
        try {
            pool = Pvn3dPool.builder(model).sessionFactory(slot -> null).build();
        } catch (OrtException e) {
            return; // refused at build time: fine
        }
        try (pool) {
            ExecutionException e = assertThrows(ExecutionException.class, () -> pool.submit(shipped).get(10, TimeUnit.SECONDS));
            assertFalse(e.getCause().getCause() instanceof NullPointerException, "an NPE from the pool itself: " + e.getCause().getMessage());
        }
    }
}
