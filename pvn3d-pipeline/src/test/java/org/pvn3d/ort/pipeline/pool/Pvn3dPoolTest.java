package org.pvn3d.ort.pipeline.pool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.io.PvtFile;
import org.pvn3d.ort.ops.Pvn3dOps;
import org.pvn3d.ort.pipeline.FolderEvaluationTestSamples;
import org.pvn3d.ort.pipeline.NativePoseSolver;
import org.pvn3d.ort.pipeline.Pvn3dPipeline;
import org.pvn3d.ort.pipeline.Pvn3dSample;

/**
 * The pool on the CPU provider: frames spread over sessions give the single pipeline's poses; a session
 * that fails fails only its frame and is reopened; when every session dies nothing hangs; close waits
 * for the frames in flight; a full queue pushes back. Failures are injected through the session factory.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class Pvn3dPoolTest {
    static byte[] model;
    static Pvn3dSample shipped;
    /** A real result of the shipped sample, for the sessions that only pretend to run. */
    static Pvn3dPipeline.Result cached;

    @BeforeAll
    static void load() throws Exception {
        try (var in = Pvn3dPipeline.class.getResourceAsStream(Pvn3dPipeline.MODEL_RESOURCE)) {
            model = in.readAllBytes();
        }
        shipped = Pvn3dSample.resource(Pvn3dSample.RESOURCE);
        try (Pvn3dPipeline p = new Pvn3dPipeline(model, Pvn3dPipeline.Config.cpu().withPoseSolver(new NativePoseSolver()))) {
            cached = p.run(shipped);
        }
    }

    /** Sessions that return {@link #cached} after {@code gate} opens (or at once), counting their runs. */
    static Pvn3dPool.SessionFactory fake(CountDownLatch gate, AtomicInteger runs, AtomicInteger opened) {
        return slot -> {
            opened.incrementAndGet();
            return new Pvn3dPool.PoolSession() {
                @Override
                public PoseResult.Frame run(Pvn3dSample sample) {
                    runs.incrementAndGet();
                    try {
                        gate.await();
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                    return PoseResult.Frame.of(cached);
                }

                @Override
                public void close() {}
            };
        };
    }

    @Test
    void framesSpreadOverTwoSessionsGiveTheSinglePipelinesPoses(@TempDir Path dir) throws Exception {
        List<Pvn3dSample> samples = new ArrayList<>(FolderEvaluationTestSamples.writeAndRead(dir));
        samples.addAll(List.copyOf(samples));
        Map<String, Pvn3dPipeline.Result> direct = new java.util.HashMap<>();
        try (Pvn3dPipeline p = new Pvn3dPipeline(model, Pvn3dPipeline.Config.cpu().withPoseSolver(new NativePoseSolver()).withThreads(1))) {
            for (Pvn3dSample s : samples.subList(0, 3)) {
                direct.put(s.source(), p.run(s));
            }
        }
        List<CompletableFuture<PoseResult>> futures = new ArrayList<>();
        Pvn3dPool.Stats stats;
        try (Pvn3dPool pool = Pvn3dPool.builder(model).sessionsPerDevice(2).threadsPerSession(1).build()) {
            assertEquals(2, pool.sessions());
            assertEquals(2, pool.liveSessions());
            assertEquals(4, pool.queueCapacity());
            for (Pvn3dSample s : samples) {
                futures.add(pool.submit(s));
            }
            for (int i = 0; i < futures.size(); i++) {
                PoseResult r = futures.get(i).get();
                Pvn3dPipeline.Result d = direct.get(samples.get(i).source());
                assertEquals(samples.get(i).source(), r.source());
                assertEquals(d.pose().pose(), r.pose(), r.source() + " on " + r.session());
                assertEquals(d.pose().inliers(), r.inliers());
                assertEquals(d.votes().maskedCount(), r.masked());
                assertEquals(d.metrics().add(), r.metrics().add(), 0.0);
                assertTrue(r.latencyMs() >= r.serviceMs() && r.serviceMs() > 0, r.toString());
            }
            stats = pool.stats();
        }
        assertEquals(6, stats.completed());
        assertEquals(0, stats.failed());
        assertEquals(2, stats.sessions().size());
        for (Pvn3dPool.SessionStats s : stats.sessions()) {
            assertTrue(s.frames() > 0, "both sessions served frames: " + stats);
        }
    }

    @Test
    void aFailingSessionFailsOnlyItsFrameAndIsReopened() throws Exception {
        AtomicInteger opened = new AtomicInteger();
        AtomicInteger runs = new AtomicInteger();
        Pvn3dPool.SessionFactory real = Pvn3dPool.pipelines(model);
        Pvn3dPool.SessionFactory failingThirdRun = slot -> {
            opened.incrementAndGet();
            Pvn3dPool.PoolSession s = real.open(slot);
            return new Pvn3dPool.PoolSession() {
                @Override
                public PoseResult.Frame run(Pvn3dSample sample) {
                    if (runs.incrementAndGet() == 3) {
                        throw new OrtException(OrtErrorCode.ORT_EP_FAIL, "injected: CUDA error 700, an illegal memory access");
                    }
                    return s.run(sample);
                }

                @Override
                public void close() {
                    s.close();
                }
            };
        };
        Pvn3dSample noRgb = new Pvn3dSample("no_rgb", withoutEntry(shipped.entries(), "rgb"));
        List<CompletableFuture<PoseResult>> f = new ArrayList<>();
        try (Pvn3dPool pool = Pvn3dPool.builder(model).sessionFactory(failingThirdRun).threadsPerSession(1).build()) {
            for (int i = 0; i < 5; i++) {
                f.add(pool.submit(i == 4 ? noRgb : shipped));
            }
            for (int i = 0; i < 5; i++) {
                if (i == 2 || i == 4) {
                    ExecutionException e = assertThrows(ExecutionException.class, f.get(i)::get);
                    FrameFailedException ff = assertInstanceOf(FrameFailedException.class, e.getCause());
                    assertEquals("cpu#0", ff.session());
                    if (i == 2) {
                        assertTrue(ff.sessionFailed());
                        assertTrue(ff.getMessage().contains("illegal memory access") && ff.getMessage().contains("reopened"), ff.getMessage());
                        assertInstanceOf(OrtException.class, ff.getCause());
                    } else {
                        assertFalse(ff.sessionFailed(), "bad input fails the frame, not the session");
                        assertEquals("no_rgb", ff.source());
                        assertTrue(ff.getMessage().contains("no entry 'rgb'"), ff.getMessage());
                    }
                } else {
                    assertEquals(cached.pose().pose(), f.get(i).get().pose());
                }
            }
            Pvn3dPool.Stats s = pool.stats();
            assertEquals(3, s.completed());
            assertEquals(2, s.failed());
            assertEquals(1, s.sessions().get(0).reopens());
            assertTrue(s.sessions().get(0).live());
            assertEquals(2, opened.get(), "opened once, reopened once after the injected failure");
            // the pool goes on serving
            assertEquals(cached.pose().pose(), pool.submit(shipped).get().pose());
        }
    }

    @Test
    void whenEverySessionDiesQueuedFramesFailAndSubmitFailsFast() throws Exception {
        AtomicInteger opened = new AtomicInteger();
        Pvn3dPool.SessionFactory dying = slot -> {
            opened.incrementAndGet();
            return new Pvn3dPool.PoolSession() {
                @Override
                public PoseResult.Frame run(Pvn3dSample sample) {
                    throw new OutOfMemoryError("injected: out of device memory");
                }

                @Override
                public void close() {}
            };
        };
        List<CompletableFuture<PoseResult>> f = new ArrayList<>();
        try (Pvn3dPool pool = Pvn3dPool.builder(model).sessionsPerDevice(2).maxRestarts(1).queueCapacity(3).sessionFactory(dying).build()) {
            RejectedExecutionException rejected = null;
            for (int i = 0; i < 20 && rejected == null; i++) {
                try {
                    f.add(pool.submit(shipped));
                } catch (RejectedExecutionException e) {
                    rejected = e;
                }
            }
            for (CompletableFuture<PoseResult> x : f) {
                ExecutionException e = assertThrows(ExecutionException.class, () -> x.get(30, TimeUnit.SECONDS));
                assertInstanceOf(FrameFailedException.class, e.getCause());
            }
            long sessionFailures = f.stream().map(x -> (FrameFailedException) x.exceptionNow()).filter(FrameFailedException::sessionFailed).count();
            assertEquals(4, sessionFailures, "two sessions, each failing once, reopened once, failing again");
            assertEquals(4, opened.get());
            assertTrue(f.stream().map(x -> x.exceptionNow().getMessage()).anyMatch(m -> m.contains("taken out of the pool")));
            // no session left: submit does not wait
            RejectedExecutionException e = assertThrows(RejectedExecutionException.class, () -> pool.submit(shipped));
            assertTrue(e.getMessage().contains("no session left") && e.getMessage().contains("out of device memory"), e.getMessage());
            assertEquals(0, pool.liveSessions());
        }
        // a pool whose sessions cannot even open is refused at build time
        OrtException e = assertThrows(OrtException.class, () -> Pvn3dPool.builder(model).maxRestarts(1).sessionFactory(slot -> {
            throw new OrtException(OrtErrorCode.ORT_EP_FAIL, "injected: no CUDA device");
        }).build());
        assertTrue(e.getMessage().contains("no session of the pool could be opened") && e.getMessage().contains("no CUDA device"), e.getMessage());
        assertEquals(OrtErrorCode.ORT_EP_FAIL, e.getCode());
    }

    @Test
    void closeWaitsForTheFramesInFlightAndQueued() throws Exception {
        CountDownLatch gate = new CountDownLatch(1);
        AtomicInteger runs = new AtomicInteger();
        Pvn3dPool pool = Pvn3dPool.builder(model).sessionFactory(fake(gate, runs, new AtomicInteger())).build();
        List<CompletableFuture<PoseResult>> f = List.of(pool.submit(shipped), pool.submit(shipped));
        Thread closer = new Thread(pool::close);
        closer.start();
        closer.join(300);
        assertTrue(closer.isAlive(), "close waits while a frame runs");
        assertThrows(RejectedExecutionException.class, () -> pool.submit(shipped), "a closing pool takes no new frames");
        assertFalse(f.get(0).isDone());
        gate.countDown();
        closer.join(10_000);
        assertFalse(closer.isAlive());
        for (CompletableFuture<PoseResult> x : f) {
            assertTrue(x.isDone() && !x.isCompletedExceptionally(), "every accepted frame ran before close returned");
        }
        assertEquals(2, runs.get());
        pool.close(); // twice: nothing
    }

    @Test
    void aFrameCallbackClosingThePoolWhileAnotherThreadClosesItDoesNotDeadlock() throws Exception {
        CountDownLatch gate = new CountDownLatch(1);
        Pvn3dPool pool = Pvn3dPool.builder(model).sessionFactory(fake(gate, new AtomicInteger(), new AtomicInteger()))
                .sessionsPerDevice(2).build();
        List<CompletableFuture<PoseResult>> f = List.of(pool.submit(shipped), pool.submit(shipped));
        List<CompletableFuture<Void>> callbacks = new ArrayList<>();
        for (CompletableFuture<PoseResult> x : f) {
            callbacks.add(x.thenRun(pool::close)); // runs on the worker that completes the frame
        }
        Thread closer = new Thread(pool::close);
        closer.setDaemon(true); // a regression leaves it waiting: it must not keep the test JVM alive
        closer.start();
        gate.countDown();
        closer.join(30_000);
        assertFalse(closer.isAlive(), "close returned (it used to wait forever for a worker stuck in its callback's close)");
        for (CompletableFuture<Void> c : callbacks) {
            c.get(30, java.util.concurrent.TimeUnit.SECONDS);
        }
        for (CompletableFuture<PoseResult> x : f) {
            assertEquals(cached.pose().pose(), x.get().pose());
        }
    }

    @Test
    void whateverGoesWrongAroundARunTheFrameStillCompletes() throws Exception {
        Pvn3dPool.SessionFactory nulls = slot -> new Pvn3dPool.PoolSession() {
            @Override
            public PoseResult.Frame run(Pvn3dSample sample) {
                return null;
            }

            @Override
            public void close() {}
        };
        try (Pvn3dPool pool = Pvn3dPool.builder(model).sessionFactory(nulls).build()) {
            ExecutionException e = assertThrows(ExecutionException.class, () -> pool.submit(shipped).get(30, java.util.concurrent.TimeUnit.SECONDS));
            assertTrue(e.getCause().getMessage().contains("the session returned no result"), e.getCause().getMessage());
            assertEquals(0, pool.stats().completed());
            assertEquals(1, pool.stats().failed());
        }
        java.util.concurrent.atomic.AtomicBoolean throwOnce = new java.util.concurrent.atomic.AtomicBoolean(true);
        Pvn3dPool.SessionFactory failing = slot -> new Pvn3dPool.PoolSession() {
            @Override
            public PoseResult.Frame run(Pvn3dSample sample) {
                if (throwOnce.getAndSet(false)) {
                    throw new IllegalStateException("injected");
                }
                return PoseResult.Frame.of(cached);
            }

            @Override
            public void close() {}
        };
        try (Pvn3dPool pool = Pvn3dPool.builder(model).sessionFactory(failing).sessionFailure(t -> {
            throw new IllegalArgumentException("a predicate that fails");
        }).build()) {
            ExecutionException e = assertThrows(ExecutionException.class, () -> pool.submit(shipped).get(30, java.util.concurrent.TimeUnit.SECONDS));
            assertTrue(e.getCause().getMessage().contains("injected"), e.getCause().getMessage());
            assertEquals(cached.pose().pose(), pool.submit(shipped).get(30, java.util.concurrent.TimeUnit.SECONDS).pose(),
                    "the session was reopened and serves");
        }
    }

    @Test
    void sizesBeyondWhatAPoolCanHoldAreRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Pvn3dPool.builder(model).queueCapacity(Integer.MAX_VALUE));
        assertEquals("queueCapacity <= 1048576, not 2147483647", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> Pvn3dPool.builder(model).sessionsPerDevice(1 << 30));
        assertEquals("sessionsPerDevice <= 4096, not 1073741824", e.getMessage());
    }

    @Test
    void aFullQueuePushesBack() throws Exception {
        CountDownLatch gate = new CountDownLatch(1);
        AtomicInteger runs = new AtomicInteger();
        try (Pvn3dPool pool = Pvn3dPool.builder(model).queueCapacity(1).sessionFactory(fake(gate, runs, new AtomicInteger())).build()) {
            CompletableFuture<PoseResult> first = pool.submit(shipped);
            while (runs.get() == 0) {
                Thread.sleep(5); // the session took the first frame
            }
            CompletableFuture<PoseResult> second = pool.submit(shipped); // waits in the queue
            assertTrue(pool.offer(shipped, Duration.ofMillis(100)).isEmpty(), "no room: offer gives up");
            assertTrue(second.cancel(false)); // a frame cancelled while it waits is not run ...
            second = pool.submit(shipped); // ... and its place in the queue is taken
            CompletableFuture<CompletableFuture<PoseResult>> third = CompletableFuture.supplyAsync(() -> pool.submit(shipped));
            Thread.sleep(200);
            assertFalse(third.isDone(), "submit blocks while the queue is full");
            gate.countDown();
            assertEquals(cached.pose().pose(), third.get(10, TimeUnit.SECONDS).get(10, TimeUnit.SECONDS).pose());
            first.get();
            second.get();
            assertEquals(3, runs.get(), "the cancelled frame did not run");
        }
    }

    @Test
    void cudaPoolOverEveryDevice() throws Exception {
        Assumptions.assumeTrue(Pvn3dOps.nativeBuiltWithCuda() && Pvn3dOps.cudaDeviceCount() > 0,
                "no CUDA device (or a CPU-only libpvn3d_ops): this run is made on the GPU machine");
        int[] devices = java.util.stream.IntStream.range(0, Pvn3dOps.cudaDeviceCount()).toArray();
        try (Pvn3dPool pool = Pvn3dPool.builder(model).provider(Pvn3dPipeline.Provider.CUDA).devices(devices).sessionsPerDevice(2)
                .warmup(shipped, 1).build()) {
            List<CompletableFuture<PoseResult>> f = new ArrayList<>();
            for (int i = 0; i < 8 * devices.length; i++) {
                f.add(pool.submit(shipped));
            }
            for (CompletableFuture<PoseResult> x : f) {
                PoseResult r = x.get();
                assertTrue(r.pose().rotationErrorDegrees(cached.pose().pose()) < 0.05, r.session() + ": " + r.pose());
                assertTrue(r.session().startsWith("cuda:"), r.session());
            }
        }
    }

    static Map<String, PvtFile.Entry> withoutEntry(Map<String, PvtFile.Entry> entries, String name) {
        Map<String, PvtFile.Entry> m = new java.util.LinkedHashMap<>(entries);
        m.remove(name);
        return m;
    }
}
