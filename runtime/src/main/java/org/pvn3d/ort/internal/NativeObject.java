package org.pvn3d.ort.internal;

import java.lang.foreign.MemorySegment;
import java.lang.System.Logger.Level;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.pvn3d.ort.OrtException;

/**
 * The one owner of one native handle. Subclasses say how to release it; this class makes closing
 * idempotent, makes use after close a clear {@link OrtException}, and keeps a process-wide count of
 * live objects per kind so that tests can check nothing leaks (at DEBUG level every creation and
 * release is logged too).
 *
 * <p>Use and close are ordered by a read-write lock: {@link #acquire()} (held for the length of a
 * native call that reads the handle, e.g. a run) and {@link #close()} exclude each other, so closing
 * an object that another thread is using waits for that use to end instead of freeing memory under it.
 */
public abstract class NativeObject implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger("org.pvn3d.ort.native");
    private static final Map<String, AtomicLong> LIVE = new ConcurrentHashMap<>();

    private final String kind;
    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
    private volatile MemorySegment handle;

    protected NativeObject(String kind, MemorySegment handle) {
        if (handle == null || handle.address() == 0) {
            throw new OrtException(kind + ": native handle is null");
        }
        this.kind = kind;
        this.handle = handle;
        LIVE.computeIfAbsent(kind, k -> new AtomicLong()).incrementAndGet();
        if (LOG.isLoggable(Level.DEBUG)) {
            LOG.log(Level.DEBUG, "created {0} 0x{1}", kind, Long.toHexString(handle.address()));
        }
    }

    /** The native handle; throws if this object has been closed. */
    public final MemorySegment handle() {
        MemorySegment h = handle;
        if (h == null) {
            throw new OrtException(kind + " is closed");
        }
        return h;
    }

    public final boolean isClosed() {
        return handle == null;
    }

    /**
     * Marks the start of a use that must not overlap a close: the caller pairs it with
     * {@link #release()} in a finally block. Throws if already closed.
     */
    public final MemorySegment acquire() {
        lock.readLock().lock();
        MemorySegment h = handle;
        if (h == null) {
            lock.readLock().unlock();
            throw new OrtException(kind + " is closed");
        }
        return h;
    }

    public final void release() {
        lock.readLock().unlock();
    }

    /** Releases the native handle once; later calls do nothing. Waits for uses in progress. */
    @Override
    public final void close() {
        lock.writeLock().lock();
        try {
            MemorySegment h = handle;
            if (h == null) {
                return;
            }
            handle = null;
            try {
                releaseNative(h);
            } finally {
                LIVE.get(kind).decrementAndGet();
                if (LOG.isLoggable(Level.DEBUG)) {
                    LOG.log(Level.DEBUG, "released {0} 0x{1}", kind, Long.toHexString(h.address()));
                }
                afterClose();
            }
        } finally {
            lock.writeLock().unlock();
        }
    }

    /** Releases the native handle (called once, under the close lock). */
    protected abstract void releaseNative(MemorySegment handle);

    /** Drops what this object kept alive (parents, buffers); runs after the handle was released. */
    protected void afterClose() {}

    /** Live objects per kind, for leak checks. */
    public static Map<String, Long> liveCounts() {
        Map<String, Long> out = new TreeMap<>();
        LIVE.forEach((k, v) -> out.put(k, v.get()));
        return out;
    }

    /** Live objects of one kind. */
    public static long liveCount(String kind) {
        AtomicLong n = LIVE.get(kind);
        return n == null ? 0 : n.get();
    }

    @Override
    public String toString() {
        MemorySegment h = handle;
        return kind + (h == null ? "(closed)" : "(0x" + Long.toHexString(h.address()) + ")");
    }
}
