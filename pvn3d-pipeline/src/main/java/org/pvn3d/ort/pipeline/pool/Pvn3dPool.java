package org.pvn3d.ort.pipeline.pool;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntFunction;
import java.util.function.Predicate;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.pipeline.CudaPoseSolver;
import org.pvn3d.ort.pipeline.IcpRefinement;
import org.pvn3d.ort.pipeline.NativePoseSolver;
import org.pvn3d.ort.pipeline.PoseSolver;
import org.pvn3d.ort.pipeline.Pvn3dPipeline;
import org.pvn3d.ort.pipeline.Pvn3dSample;

/**
 * Sessions of one PVN3D model spread over CUDA devices (one or several per device) or over the CPU
 * provider, serving frames from one bounded queue: {@link #submit} a sample, get a future pose.
 *
 * <p>Each session is a {@link Pvn3dPipeline} (its ORT session with the custom operators; on CUDA the
 * provider's own compute stream, the device-resident run with its IO binding and device buffers, and
 * the pose stage on that GPU) owned by one worker thread, which opens it, runs every frame it takes on
 * it and closes it: a pipeline is never shared between threads. Workers take frames from the shared
 * queue whenever they are free, so a faster device simply serves more frames.
 *
 * <p><b>Back-pressure.</b> The queue holds at most {@link Builder#queueCapacity} frames waiting for a
 * session; {@link #submit} blocks while it is full and {@link #offer} waits at most a given time.
 * Cancelling a frame's future while it waits takes it out of the queue (a running frame runs on).
 *
 * <p><b>Failures.</b> A frame whose run throws fails alone, with a {@link FrameFailedException} that
 * names the frame and the session. When the failure looks like the session's or the device's own (by
 * default: any {@link Error}, or an {@link OrtException} other than a bad-input code; see
 * {@link #isSessionFailure}), the worker also closes its session and opens a new one; a session that
 * keeps failing (more than {@link Builder#maxRestarts} times without a good frame in between, reopen
 * attempts included) is taken out of the pool, and its worker ends. When the last session is gone,
 * the frames still queued fail at once and {@link #submit} throws {@link RejectedExecutionException}
 * instead of waiting: the pool never hangs on dead sessions. The warm-up sample
 * ({@link Builder#warmup}) doubles as the health check of a reopened session.
 *
 * <p><b>Shutdown.</b> {@link #close()} takes no new frames, waits until every frame already queued or
 * in flight is done, then closes the sessions.
 */
public final class Pvn3dPool implements AutoCloseable {
    /**
     * A session as the pool drives it: frames run one at a time, on the worker thread that opened it.
     * {@link #pipelines} makes {@link Pvn3dPipeline} sessions, {@link FrameToPoseSession#factory} sessions
     * with the pose head in the graph (precision modes, CUDA graphs).
     */
    public interface PoolSession extends AutoCloseable {
        PoseResult.Frame run(Pvn3dSample sample);

        @Override
        void close();
    }

    /** Opens the session of a slot; {@link #pipelines} is the default. Wrap it to observe or to inject failures. */
    @FunctionalInterface
    public interface SessionFactory {
        PoolSession open(Slot slot);
    }

    /**
     * One session's place: its index in the pool, the device (0 on the CPU provider), its ordinal on that
     * device, and the pipeline settings it opens with.
     */
    public record Slot(int index, int device, int ordinal, Pvn3dPipeline.Config config) {
        /** {@code cpu#0}, or {@code cuda:1#0} for the first session on device 1. */
        public String name() {
            return config.provider() == Pvn3dPipeline.Provider.CPU ? "cpu#" + ordinal : "cuda:" + device + "#" + ordinal;
        }
    }

    /** One session's counters: frames done, frames failed, reopens, whether it is still in the pool, its last error. */
    public record SessionStats(String name, boolean live, long frames, long failures, int reopens, String lastError) {}

    /** The pool's counters: sessions still serving, frames waiting, and each session's own. */
    public record Stats(int live, int queued, long completed, long failed, List<SessionStats> sessions) {}

    /** The default factory: a {@link Pvn3dPipeline} of {@code model} (ONNX bytes) with the slot's settings. */
    public static SessionFactory pipelines(byte[] model) {
        Objects.requireNonNull(model, "model");
        return slot -> {
            Pvn3dPipeline p = new Pvn3dPipeline(model, slot.config());
            return new PoolSession() {
                @Override
                public PoseResult.Frame run(Pvn3dSample sample) {
                    return PoseResult.Frame.of(p.run(sample));
                }

                @Override
                public void close() {
                    p.close();
                }
            };
        };
    }

    /**
     * The default test of whether a failure is the session's (close, reopen) rather than the frame's alone:
     * any {@link Error}, and any {@link OrtException} except the codes of bad input (invalid argument, no such
     * file, not implemented, invalid graph). A CUDA error reported by the device API is {@code ORT_EP_FAIL};
     * an out-of-memory inside a run comes back from ORT as a runtime exception or a failure.
     */
    public static boolean isSessionFailure(Throwable t) {
        if (t instanceof Error) {
            return true;
        }
        if (t instanceof OrtException e) {
            return switch (e.getCode()) {
                case ORT_INVALID_ARGUMENT, ORT_NO_SUCHFILE, ORT_NOT_IMPLEMENTED, ORT_INVALID_GRAPH, ORT_INVALID_PROTOBUF -> false;
                default -> true;
            };
        }
        return false;
    }

    /** The most sessions one pool opens (a thread each), and the longest queue it keeps. */
    public static final int MAX_SESSIONS = 4096;
    public static final int MAX_QUEUE = 1 << 20;

    public static Builder builder(byte[] model) {
        return new Builder(model);
    }

    /** Settings of a pool; {@link #build()} opens every session before it returns. */
    public static final class Builder {
        private final byte[] model;
        private Pvn3dPipeline.Provider provider = Pvn3dPipeline.Provider.CPU;
        private int[] devices = {0};
        private int sessionsPerDevice = 1;
        private int queueCapacity;
        private int threadsPerSession;
        private int objectClass = 1;
        private boolean ioBinding = true;
        private java.nio.file.Path profileDir;
        private IntFunction<PoseSolver> poseSolver;
        private IcpRefinement refinement = IcpRefinement.DEFAULT;
        private Pvn3dSample warmupSample;
        private int warmupRuns;
        private int maxRestarts = 3;
        private Predicate<Throwable> sessionFailure = Pvn3dPool::isSessionFailure;
        private SessionFactory factory;
        private String name = "pvn3d-pool";

        private Builder(byte[] model) {
            this.model = model;
        }

        /** CPU (default) or CUDA. */
        public Builder provider(Pvn3dPipeline.Provider p) {
            this.provider = Objects.requireNonNull(p);
            return this;
        }

        /** The CUDA devices to use (default: device 0). Ignored on the CPU provider. */
        public Builder devices(int... ids) {
            if (ids.length == 0 || Arrays.stream(ids).anyMatch(d -> d < 0) || Arrays.stream(ids).distinct().count() != ids.length) {
                throw new IllegalArgumentException("devices: distinct non-negative ids, not " + Arrays.toString(ids));
            }
            this.devices = ids.clone();
            return this;
        }

        /** Sessions on each device (on the CPU provider: sessions in all), 1 to {@link #MAX_SESSIONS}; default 1. */
        public Builder sessionsPerDevice(int n) {
            this.sessionsPerDevice = atMost(positive(n, "sessionsPerDevice"), MAX_SESSIONS, "sessionsPerDevice");
            return this;
        }

        /**
         * Frames that may wait for a session before {@link #submit} blocks, 1 to {@link #MAX_QUEUE}; default
         * twice the sessions. (The queue is an array of this size, made at once.)
         */
        public Builder queueCapacity(int n) {
            this.queueCapacity = atMost(positive(n, "queueCapacity"), MAX_QUEUE, "queueCapacity");
            return this;
        }

        /** ORT's intra-op threads in each session; default: the machine's cores shared out among the sessions. */
        public Builder threadsPerSession(int n) {
            this.threadsPerSession = positive(n, "threadsPerSession");
            return this;
        }

        /** The object's class index in {@code pred_rgbd_seg}; default 1. */
        public Builder objectClass(int c) {
            if (c < 0) {
                throw new IllegalArgumentException("objectClass >= 0, not " + c);
            }
            this.objectClass = c;
            return this;
        }

        /** On CUDA: device-resident runs through IO binding (default) or host tensors. */
        public Builder ioBinding(boolean b) {
            this.ioBinding = b;
            return this;
        }

        /**
         * ORT's profiler on for every session, each writing {@code dir/pvn3d_<n>_<date and time>.json} (ended
         * when the session closes: a reopened session starts a new file); null: off.
         */
        public Builder profiling(java.nio.file.Path dir) {
            this.profileDir = dir;
            return this;
        }

        /** The pose stage of the session on a device; default the fused kernel on the provider's side (GPU or CPU). */
        public Builder poseSolver(IntFunction<PoseSolver> perDevice) {
            this.poseSolver = Objects.requireNonNull(perDevice);
            return this;
        }

        /**
         * The refinement of the voting pose ({@link Pvn3dPipeline.Config#withRefinement}): ICP with these settings,
         * {@link IcpRefinement#DEFAULT} by default, or null for none.
         */
        public Builder refinement(IcpRefinement r) {
            this.refinement = r;
            return this;
        }

        /**
         * Runs {@code sample} {@code runs} times on every session right after it opens (and after each
         * reopen, where it is also the health check) before the session takes frames.
         */
        public Builder warmup(Pvn3dSample sample, int runs) {
            if (runs < 0 || (runs > 0 && sample == null)) {
                throw new IllegalArgumentException("warmup: a sample and runs >= 0");
            }
            this.warmupSample = sample;
            this.warmupRuns = runs;
            return this;
        }

        /** How often a session may fail in a row (reopen attempts included) before it is taken out; default 3. */
        public Builder maxRestarts(int n) {
            if (n < 0) {
                throw new IllegalArgumentException("maxRestarts >= 0, not " + n);
            }
            this.maxRestarts = n;
            return this;
        }

        /** Which failures take the session down with the frame; default {@link Pvn3dPool#isSessionFailure}. */
        public Builder sessionFailure(Predicate<Throwable> test) {
            this.sessionFailure = Objects.requireNonNull(test);
            return this;
        }

        /** How sessions are opened; default {@link Pvn3dPool#pipelines(byte[])} of the model. */
        public Builder sessionFactory(SessionFactory f) {
            this.factory = Objects.requireNonNull(f);
            return this;
        }

        /** The prefix of the worker threads' names. */
        public Builder name(String n) {
            this.name = Objects.requireNonNull(n);
            return this;
        }

        /** Opens the sessions (in parallel, one per worker); fails when none opens. */
        public Pvn3dPool build() {
            if (factory == null && model == null) {
                throw new IllegalArgumentException("a pool needs the model's bytes or a session factory");
            }
            int devicesUsed = provider == Pvn3dPipeline.Provider.CPU ? 1 : devices.length;
            if ((long) devicesUsed * sessionsPerDevice > MAX_SESSIONS) {
                throw new IllegalArgumentException("at most " + MAX_SESSIONS + " sessions in a pool, not " + devicesUsed + " devices x "
                        + sessionsPerDevice);
            }
            return new Pvn3dPool(this);
        }

        private static int atMost(int n, int max, String what) {
            if (n > max) {
                throw new IllegalArgumentException(what + " <= " + max + ", not " + n);
            }
            return n;
        }

        private static int positive(int n, String what) {
            if (n < 1) {
                throw new IllegalArgumentException(what + " >= 1, not " + n);
            }
            return n;
        }
    }

    private record Job(Pvn3dSample sample, CompletableFuture<PoseResult> future, long submitted) {}

    private final BlockingQueue<Job> queue;
    private final List<Worker> workers = new ArrayList<>();
    private final AtomicInteger running = new AtomicInteger();
    private final SessionFactory factory;
    private final Predicate<Throwable> sessionFailure;
    private final Pvn3dSample warmupSample;
    private final int warmupRuns;
    private final int maxRestarts;
    private final int capacity;
    private volatile boolean closing;
    private final Object closeLock = new Object();

    private Pvn3dPool(Builder b) {
        Pvn3dPipeline.Provider provider = b.provider;
        int[] devices = provider == Pvn3dPipeline.Provider.CPU ? new int[] {0} : b.devices;
        int total = devices.length * b.sessionsPerDevice; // at most MAX_SESSIONS (build)
        int threads = b.threadsPerSession > 0 ? b.threadsPerSession : Math.max(1, Runtime.getRuntime().availableProcessors() / total);
        this.capacity = b.queueCapacity > 0 ? b.queueCapacity : 2 * total;
        this.queue = new ArrayBlockingQueue<>(capacity);
        this.factory = b.factory != null ? b.factory : pipelines(b.model);
        this.sessionFailure = b.sessionFailure;
        this.warmupSample = b.warmupSample;
        this.warmupRuns = b.warmupRuns;
        this.maxRestarts = b.maxRestarts;
        IntFunction<PoseSolver> solver = b.poseSolver != null ? b.poseSolver
                : provider == Pvn3dPipeline.Provider.CUDA ? CudaPoseSolver::new : d -> new NativePoseSolver();
        CountDownLatch opened = new CountDownLatch(total);
        int index = 0;
        for (int ordinal = 0; ordinal < b.sessionsPerDevice; ordinal++) {
            for (int device : devices) {
                // frames run one at a time per session: no warm-up or repeats inside a run
                Pvn3dPipeline.Config config = new Pvn3dPipeline.Config(provider, device, threads, solver.apply(device), b.objectClass,
                        0, 1, b.ioBinding, b.profileDir, b.refinement);
                workers.add(new Worker(new Slot(index++, device, ordinal, config), opened, b.name));
            }
        }
        running.set(total);
        workers.forEach(w -> w.thread.start());
        awaitUninterruptibly(opened);
        if (workers.stream().noneMatch(w -> w.live)) {
            close();
            Throwable cause = workers.get(0).lastCause;
            OrtErrorCode code = cause instanceof OrtException e ? e.getCode() : OrtErrorCode.ORT_FAIL;
            throw new OrtException(code, "no session of the pool could be opened: " + errors(), cause);
        }
    }

    /**
     * Queues a frame, waiting while the queue is full; the future completes with its pose or with a
     * {@link FrameFailedException}.
     *
     * @throws RejectedExecutionException when the pool is closed or has no session left, the caller is
     *                                    interrupted while waiting for room (its interrupt flag is set again), or
     *                                    the queue is full and the caller is one of the pool's own threads (a
     *                                    frame's completion callback), which would wait for itself
     */
    public CompletableFuture<PoseResult> submit(Pvn3dSample sample) {
        Job job = admit(sample);
        try {
            if (onWorker()) {
                // a frame's callback (they run on the workers): waiting for room only this thread can make
                // would stop the pool for good
                if (!queue.offer(job)) {
                    throw new RejectedExecutionException("the pool's queue is full and this is one of its own threads "
                            + "(a frame's completion callback): waiting for room would stop the pool; use offer, "
                            + "or a callback that runs elsewhere (thenComposeAsync)");
                }
            } else {
                queue.put(job);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RejectedExecutionException("interrupted while waiting for room in the pool's queue", e);
        }
        afterEnqueue();
        return job.future;
    }

    /**
     * Queues a frame if there is room within {@code timeout}; empty when there was none (the frame was
     * not taken). Same exceptions as {@link #submit}.
     */
    public Optional<CompletableFuture<PoseResult>> offer(Pvn3dSample sample, Duration timeout) {
        Job job = admit(sample);
        try {
            if (!queue.offer(job, timeout.toNanos(), TimeUnit.NANOSECONDS)) {
                return Optional.empty();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RejectedExecutionException("interrupted while waiting for room in the pool's queue", e);
        }
        afterEnqueue();
        return Optional.of(job.future);
    }

    private Job admit(Pvn3dSample sample) {
        Objects.requireNonNull(sample, "sample");
        if (closing) {
            throw new RejectedExecutionException("the pool is closed");
        }
        if (running.get() == 0) {
            throw new RejectedExecutionException("no session left in the pool: " + errors());
        }
        Job job = new Job(sample, new CompletableFuture<>(), System.nanoTime());
        // a frame cancelled while it waits gives its place in the queue back
        job.future.whenComplete((r, e) -> {
            if (job.future.isCancelled()) {
                queue.remove(job);
            }
        });
        return job;
    }

    /** A frame that got in after the last worker ended would wait forever: fail it now. */
    private void afterEnqueue() {
        if (running.get() == 0) {
            failQueued();
        }
    }

    private void failQueued() {
        String why = closing ? "the pool was closed before a session took the frame" : "no session left in the pool: " + errors();
        Throwable cause = closing ? null : workers.stream().map(w -> w.lastCause).filter(Objects::nonNull).findFirst().orElse(null);
        for (Job j; (j = queue.poll()) != null; ) {
            j.future.completeExceptionally(new FrameFailedException(j.sample.source(), null, false,
                    "frame " + j.sample.source() + " was not run: " + why, cause));
        }
    }

    /** Sessions in the pool now (opened and not taken out). */
    public int liveSessions() {
        return (int) workers.stream().filter(w -> w.live).count();
    }

    /** Sessions the pool was built with. */
    public int sessions() {
        return workers.size();
    }

    /** How many frames may wait for a session. */
    public int queueCapacity() {
        return capacity;
    }

    public List<Slot> slots() {
        return workers.stream().map(w -> w.slot).toList();
    }

    public Stats stats() {
        List<SessionStats> per = workers.stream().map(w -> new SessionStats(w.slot.name(), w.live, w.frames.get(), w.failures.get(),
                w.reopens.get(), w.lastError)).toList();
        return new Stats((int) per.stream().filter(SessionStats::live).count(), queue.size(),
                per.stream().mapToLong(SessionStats::frames).sum(), per.stream().mapToLong(SessionStats::failures).sum(), per);
    }

    private String errors() {
        List<String> e = workers.stream().filter(w -> w.lastError != null).map(w -> w.slot.name() + ": " + w.lastError).toList();
        return e.isEmpty() ? "no error recorded" : String.join("; ", e);
    }

    /** Whether the calling thread is one of the pool's workers (a frame's completion callback runs there). */
    private boolean onWorker() {
        return workers.stream().anyMatch(w -> w.thread == Thread.currentThread());
    }

    /**
     * Takes no new frames, waits for every queued and running frame, closes the sessions (each worker closes
     * its own as it ends). Every call from outside the pool waits for all of that, however often close was
     * called before. Called on one of the pool's own threads (a frame's completion callback runs there) it
     * waits for the other workers only, and a second call there returns at once: that worker cannot wait for a
     * close that waits for it.
     */
    @Override
    public void close() {
        boolean onWorker = onWorker();
        synchronized (closeLock) {
            if (closing && onWorker) {
                return;
            }
            closing = true;
        }
        // every worker ends once the queue is empty: wait for each, outside the lock (a worker's callback may
        // call close() meanwhile); a worker that closed the pool from a callback is waited for here too
        for (Worker w : workers) {
            if (w.thread != Thread.currentThread()) {
                joinUninterruptibly(w.thread);
            }
        }
    }


    private static void awaitUninterruptibly(CountDownLatch latch) {
        boolean interrupted = false;
        while (true) {
            try {
                latch.await();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    private static void joinUninterruptibly(Thread t) {
        boolean interrupted = false;
        while (true) {
            try {
                t.join();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** A failure in words: an OrtException's message without its [code] prefix; any other exception with its class. */
    private static String describe(Throwable t) {
        String m = t.getMessage();
        if (t instanceof OrtException o && m != null) {
            String prefix = "[" + o.getCode() + "] ";
            return m.startsWith(prefix) ? m.substring(prefix.length()) : m;
        }
        return t.getClass().getSimpleName() + (m == null ? "" : ": " + m);
    }

    /** The thread that owns one session. */
    private final class Worker implements Runnable {
        final Slot slot;
        final Thread thread;
        final CountDownLatch opened;
        final AtomicLong frames = new AtomicLong();
        final AtomicLong failures = new AtomicLong();
        final AtomicInteger reopens = new AtomicInteger();
        volatile boolean live;
        volatile String lastError;
        volatile Throwable lastCause;
        PoolSession session;
        int budget = maxRestarts;

        Worker(Slot slot, CountDownLatch opened, String prefix) {
            this.slot = slot;
            this.opened = opened;
            this.thread = new Thread(this, prefix + "-" + slot.name());
            this.thread.setDaemon(true);
        }

        @Override
        public void run() {
            boolean signalled = false;
            try {
                live = open();
                opened.countDown();
                signalled = true;
                while (live) {
                    Job job;
                    try {
                        job = queue.poll(20, TimeUnit.MILLISECONDS);
                    } catch (InterruptedException e) {
                        continue; // nobody interrupts the workers; shutdown goes through `closing`
                    }
                    if (job == null) {
                        if (closing) {
                            break;
                        }
                        continue;
                    }
                    if (job.future.isDone()) {
                        continue; // cancelled while it waited
                    }
                    live = serve(job);
                }
            } finally {
                live = false;
                closeSession();
                if (!signalled) {
                    opened.countDown();
                }
                if (running.decrementAndGet() == 0) {
                    failQueued();
                }
            }
        }

        /** Opens and warms the session, retrying while the budget lasts; false when the slot is taken out. */
        private boolean open() {
            while (true) {
                try {
                    session = Objects.requireNonNull(factory.open(slot), "the session factory returned no session for " + slot.name());
                    for (int i = 0; i < warmupRuns; i++) {
                        session.run(warmupSample);
                    }
                    if (warmupRuns > 0) {
                        budget = maxRestarts; // it ran a frame: healthy
                    }
                    return true;
                } catch (Throwable t) {
                    record(t);
                    closeSession();
                    if (budget-- <= 0) {
                        return false;
                    }
                    sleep(50L * (maxRestarts - budget));
                }
            }
        }

        /** Runs one frame; false when the session failed for good and the slot is out of the pool. */
        private boolean serve(Job job) {
            long start = System.nanoTime();
            PoseResult result;
            try {
                PoseResult.Frame r = session.run(job.sample);
                if (r == null) {
                    throw new IllegalStateException("the session returned no result");
                }
                long end = System.nanoTime();
                result = PoseResult.of(job.sample.source(), r, slot.name(), (start - job.submitted) / 1e6, (end - start) / 1e6,
                        (System.nanoTime() - job.submitted) / 1e6);
            } catch (Throwable t) {
                // whatever went wrong, the frame's future completes (a worker that died here left it pending)
                failures.incrementAndGet();
                record(t);
                boolean fatal;
                try {
                    fatal = sessionFailure.test(t);
                } catch (Throwable p) {
                    t.addSuppressed(p);
                    fatal = true; // a predicate that cannot decide: the session is reopened, to be safe
                }
                boolean out = fatal && budget <= 0;
                String what = !fatal ? "" : out ? "; the session keeps failing and is taken out of the pool"
                        : "; the session is closed and reopened";
                job.future.completeExceptionally(new FrameFailedException(job.sample.source(), slot.name(), fatal,
                        "frame " + job.sample.source() + " failed on session " + slot.name() + ": " + describe(t) + what, t));
                if (!fatal) {
                    return true;
                }
                closeSession();
                if (budget-- <= 0) {
                    return false;
                }
                reopens.incrementAndGet();
                return open();
            }
            budget = maxRestarts;
            frames.incrementAndGet();
            job.future.complete(result);
            return true;
        }

        private void record(Throwable t) {
            lastCause = t;
            lastError = describe(t);
        }

        private void closeSession() {
            if (session != null) {
                try {
                    session.close();
                } catch (Throwable t) {
                    // the session is gone either way; keep the first error, which says why it was closed
                    if (lastError == null) {
                        record(t);
                    }
                }
                session = null;
            }
        }

        private void sleep(long ms) {
            try {
                Thread.sleep(ms);
            } catch (InterruptedException e) {
                // nobody interrupts the workers
            }
        }

        @Override
        public String toString() {
            return String.format(Locale.ROOT, "%s (%d frames, %d failures)", slot.name(), frames.get(), failures.get());
        }
    }
}
