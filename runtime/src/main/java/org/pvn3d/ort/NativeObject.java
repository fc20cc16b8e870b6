package org.pvn3d.ort;

import java.lang.System.Logger.Level;
import java.lang.foreign.MemorySegment;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.pvn3d.ort.internal.RefCount;

/**
 * A Java object that owns one native handle (a session, a tensor, an IO binding, a CUDA stream...):
 * {@link #close()} gives it up. Closing is idempotent and waits for the native calls in flight on the
 * handle; use after close is a clear {@link OrtException}; objects that depend on this one (a session
 * on its environment, a tensor on the memory under it) may keep the handle beyond this object's close,
 * and the handle is released when the last of them lets go. A process-wide count of live objects per
 * kind ({@link #liveCounts()}) lets tests check that nothing leaks; at DEBUG level (logger
 * {@code org.pvn3d.ort.native}) every creation and release is logged too.
 *
 * <p>The classes of this library extend it; it is not meant to be extended elsewhere. The handle and
 * its lifetime (a {@code RefCount}) are not part of the API: the library's classes reach them through
 * {@code org.pvn3d.ort.internal.Handles}, in a package this module does not export.
 */
public abstract class NativeObject implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger("org.pvn3d.ort.native");
    private static final Map<String, AtomicLong> LIVE = new ConcurrentHashMap<>();

    private final String kind;
    private final RefCount refs; // read by Handles

    /** Takes ownership of {@code handle} (not null), counted under {@code kind}. */
    protected NativeObject(String kind, MemorySegment handle) {
        if (handle == null || handle.address() == 0) {
            throw new OrtException(kind + ": native handle is null");
        }
        this.kind = kind;
        this.refs = new RefCount(handle, new RefCount.Owner() { // one small object, not two method references
            @Override
            public void releaseHandle(MemorySegment h) {
                release(h);
            }

            @Override
            public OrtException closedError() {
                return closedException();
            }
        });
        LIVE.computeIfAbsent(kind, k -> new AtomicLong()).incrementAndGet();
        if (LOG.isLoggable(Level.DEBUG)) {
            LOG.log(Level.DEBUG, "created {0} 0x{1}", kind, Long.toHexString(handle.address()));
        }
    }

    /** Whether this object has been closed (its handle may still be held by dependents). */
    public final boolean isClosed() {
        return refs.isClosed();
    }

    /**
     * Closes this object: waits for the uses in progress, then releases the native handle, or leaves
     * that to the last dependent still holding it. Later calls do nothing.
     */
    @Override
    public final void close() {
        refs.close();
    }

    /** The exception for using this object after it was closed. */
    protected OrtException closedException() {
        return new OrtException(kind + " is closed");
    }

    /** Releases the native handle (called once, with no use in flight). */
    protected abstract void releaseNative(MemorySegment handle);

    /** Drops what this object kept alive (parents, buffers); runs after the handle was released. */
    protected void afterClose() {}

    private void release(MemorySegment handle) {
        try {
            releaseNative(handle);
        } finally {
            LIVE.get(kind).decrementAndGet();
            if (LOG.isLoggable(Level.DEBUG)) {
                LOG.log(Level.DEBUG, "released {0} 0x{1}", kind, Long.toHexString(handle.address()));
            }
            afterClose();
        }
    }

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
        return kind + (refs.isClosed() ? "(closed)" : "(" + refs + ")");
    }
}
