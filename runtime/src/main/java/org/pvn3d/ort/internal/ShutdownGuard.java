package org.pvn3d.ort.internal;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;

/**
 * Keeps the JVM's exit from tearing ONNX Runtime down under a thread that is still loading a model.
 *
 * <p>{@code System.exit} (and SIGINT or SIGTERM, which lead to it, and the end of {@code main} with
 * only daemon threads left) runs the shutdown hooks and then the C library's {@code exit}, which runs
 * libonnxruntime's static destructors: its operator-schema and kernel registries go away. A thread
 * still inside {@code CreateSession} (a pool's daemon worker, say) then reads freed registries and
 * the process dies with SIGSEGV instead of exiting (a hostile test: 32 threads creating sessions,
 * {@code System.exit} after 1.8 s).
 *
 * <p>So session loading is bracketed by {@link #enter}/{@link #leave}, and a shutdown hook stops new
 * loads (they fail with an {@link OrtException}, which the caller sees as any failed load) and waits
 * for the ones in progress, at most {@link #WAIT_MS} (a large model with CUDA takes seconds to load;
 * after that the exit goes on, as it would have). It waits only while a loading thread is running:
 * one that is blocked or waiting cannot finish before the exit does (it called {@code System.exit}
 * from a custom-op kernel factory, or waits for a lock the exiting thread holds; a hostile review saw
 * both hold the exit for the whole 30 s), and a thread inside ORT's native code counts as running.
 * A shutdown hook cannot load a model: it is refused like any load that begins during the exit.
 * Runs are not bracketed: a counter shared by every run of every session would cost each run a
 * contended atomic, and no crash at exit with runs in flight was seen (the same test with runs
 * instead of loads).
 */
public final class ShutdownGuard {
    /** How long the exit waits for loads in progress, in milliseconds ({@code -Dpvn3d.ort.exitWaitMs}). */
    public static final long WAIT_MS = Long.getLong("pvn3d.ort.exitWaitMs", 30_000L);

    private static final AtomicInteger LOADING = new AtomicInteger();
    /** The threads inside a load, with how many loads each is inside (a kernel factory may load another model). */
    private static final ConcurrentHashMap<Thread, Integer> LOADERS = new ConcurrentHashMap<>();
    /** How often the exit looks at the loading threads' states while it waits. */
    private static final long POLL_MS = 20;
    private static final Object DONE = new Object();
    private static volatile boolean exiting;

    static {
        try {
            Runtime.getRuntime().addShutdownHook(new Thread(ShutdownGuard::awaitLoads, "pvn3d-ort-exit"));
        } catch (IllegalStateException alreadyExiting) {
            exiting = true; // first used during the exit itself: nothing new may start
        }
    }

    private ShutdownGuard() {}

    /**
     * Marks the calling thread as inside a model load; refuses when the JVM is exiting. Every
     * successful call must be followed by one {@link #leave()}.
     */
    public static void enter(String what) {
        if (!exiting) {
            LOADERS.merge(Thread.currentThread(), 1, Integer::sum);
            LOADING.incrementAndGet();
            // the hook sets the flag and then reads the count; this thread counts and then reads the
            // flag: one of the two sees the other (both are sequentially consistent)
            if (!exiting) {
                return;
            }
            leave();
        }
        throw new OrtException(OrtErrorCode.ORT_FAIL, what + ": the JVM is exiting");
    }

    /** Ends what {@link #enter} began. */
    public static void leave() {
        LOADERS.computeIfPresent(Thread.currentThread(), (t, n) -> n == 1 ? null : n - 1);
        if (LOADING.decrementAndGet() == 0 && exiting) {
            synchronized (DONE) {
                DONE.notifyAll();
            }
        }
    }

    /** Loads in progress now (for tests). */
    public static int loading() {
        return LOADING.get();
    }

    /** The shutdown hook: no new loads, and the ones in progress finish (bounded) before the exit goes on. */
    static void awaitLoads() {
        exiting = true;
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MS);
        synchronized (DONE) {
            long left;
            while (LOADING.get() > 0 && anyLoaderRunning() && (left = deadline - System.nanoTime()) > 0) {
                try {
                    TimeUnit.NANOSECONDS.timedWait(DONE, Math.min(left, TimeUnit.MILLISECONDS.toNanos(POLL_MS)));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    /** Whether a thread inside a load is running (inside ORT's native code it is RUNNABLE too) and so can finish it. */
    private static boolean anyLoaderRunning() {
        for (Thread t : LOADERS.keySet()) {
            if (t.getState() == Thread.State.RUNNABLE) {
                return true;
            }
        }
        return false;
    }
}
