package org.pvn3d.ort.ops;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_cuda_event_create;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_cuda_event_destroy;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_cuda_event_elapsed_ms;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_cuda_event_record;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_last_error;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Device time of one CUDA kernel's launches, from CUDA events on ORT's compute stream: a start event
 * when the kernel takes the stream, an end event once its launch is enqueued, both from a pool the
 * kernel keeps. Nothing waits inside a run: after each run (when ORT has synchronised its stream and
 * the domain asks its kernels for deferred errors) {@link #collect()} reads the pairs that are complete
 * and adds their elapsed times to the operator's totals ({@link Pvn3dOps#deviceTimes()}); a pair not
 * complete yet stays for the next collection.
 *
 * <p>Off by default ({@link Pvn3dOps#setDeviceTiming(boolean)} or {@code -Dpvn3d.deviceTiming=true});
 * while off the kernels record nothing.
 */
final class LaunchTimer implements AutoCloseable {
    private static volatile boolean enabled = Boolean.getBoolean("pvn3d.deviceTiming");
    /** Per operator: launches timed and their device time. */
    private static final ConcurrentHashMap<String, Totals> TOTALS = new ConcurrentHashMap<>();

    private final String op;
    private final ThreadLocal<MemorySegment[]> started = new ThreadLocal<>(); // {start event, stream}
    private final ArrayDeque<MemorySegment> free = new ArrayDeque<>();
    private final ArrayDeque<MemorySegment[]> pending = new ArrayDeque<>(); // {start, end}
    private boolean closed;

    LaunchTimer(String op) {
        this.op = op;
    }

    static boolean isEnabled() {
        return enabled;
    }

    static void setEnabled(boolean on) {
        enabled = on;
    }

    /** Records the start event of a launch on {@code stream} (this thread's compute call). */
    void start(MemorySegment stream) {
        MemorySegment event = take();
        if (event == null) {
            return;
        }
        if (pvn3d_cuda_event_record(event, stream) != OpsLibrary.OK) {
            give(event);
            return;
        }
        started.set(new MemorySegment[] {event, stream});
    }

    /** Records the end event after this thread's launch, if its start was recorded. */
    void stop() {
        MemorySegment[] s = started.get();
        if (s == null) {
            return;
        }
        started.remove();
        MemorySegment end = take();
        if (end == null || pvn3d_cuda_event_record(end, s[1]) != OpsLibrary.OK) {
            give(s[0]);
            if (end != null) {
                give(end);
            }
            return;
        }
        synchronized (this) {
            pending.add(new MemorySegment[] {s[0], end});
        }
    }

    /** Adds the complete pairs' times to the totals and returns their events to the pool; never waits. */
    synchronized void collect() {
        if (pending.isEmpty()) {
            return;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment ms = arena.allocate(JAVA_FLOAT);
            while (!pending.isEmpty()) {
                MemorySegment[] pair = pending.peekFirst();
                int status = pvn3d_cuda_event_elapsed_ms(ms, pair[0], pair[1]);
                if (status != OpsLibrary.OK && lastError().contains("NotReady")) {
                    return; // later launches are later on the stream: none of them is complete either
                }
                pending.removeFirst();
                free.add(pair[0]);
                free.add(pair[1]);
                if (status == OpsLibrary.OK) {
                    TOTALS.computeIfAbsent(op, k -> new Totals()).add(ms.get(JAVA_FLOAT, 0));
                }
            }
        }
    }

    /** An event from the pool, or a new one (null when CUDA cannot make one: that launch goes untimed). */
    private synchronized MemorySegment take() {
        if (closed) {
            return null;
        }
        MemorySegment e = free.pollFirst();
        if (e != null) {
            return e;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            return pvn3d_cuda_event_create(out) == OpsLibrary.OK ? out.get(ADDRESS, 0) : null;
        }
    }

    private synchronized void give(MemorySegment event) {
        free.add(event);
    }

    private static String lastError() {
        MemorySegment m = pvn3d_last_error();
        return m.address() == 0 ? "" : m.reinterpret(Long.MAX_VALUE).getString(0);
    }

    /** Destroys the events (CUDA frees one still pending once it completes). */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (MemorySegment[] pair : pending) {
            free.add(pair[0]);
            free.add(pair[1]);
        }
        pending.clear();
        for (MemorySegment e : free) {
            pvn3d_cuda_event_destroy(e);
        }
        free.clear();
    }

    /** Launches timed per operator and their device time in all (milliseconds), by operator name. */
    static Map<String, double[]> totals() {
        Map<String, double[]> m = new TreeMap<>();
        TOTALS.forEach((k, v) -> m.put(k, v.snapshot()));
        return m;
    }

    static void reset() {
        TOTALS.clear();
    }

    private static final class Totals {
        private long count;
        private double ms;
        private double min = Double.MAX_VALUE;
        private double max;

        synchronized void add(float elapsed) {
            count++;
            ms += elapsed;
            min = Math.min(min, elapsed);
            max = Math.max(max, elapsed);
        }

        /** {count, total ms, min ms, max ms}. */
        synchronized double[] snapshot() {
            return new double[] {count, ms, count == 0 ? 0 : min, max};
        }
    }
}
