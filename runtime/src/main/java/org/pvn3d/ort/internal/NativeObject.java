package org.pvn3d.ort.internal;

import java.lang.System.Logger.Level;
import java.lang.foreign.MemorySegment;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.pvn3d.ort.OrtException;

/**
 * The one owner of one native handle. Subclasses say how to release it; its lifetime is a
 * {@link RefCount}: closing is idempotent and waits for the uses in flight, use after close is a clear
 * {@link OrtException}, and dependents may hold the handle beyond the owner's close. A process-wide
 * count of live objects per kind lets tests check that nothing leaks (at DEBUG level every creation and
 * release is logged too).
 *
 * <p>The handle is not part of any public API: a subclass reaches its own through {@link #acquire()}
 * (a {@link Lease}, for try-with-resources) and the runtime's other classes reach another object's
 * through {@link Handles}.
 */
public abstract class NativeObject implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger("org.pvn3d.ort.native");
    private static final Map<String, AtomicLong> LIVE = new ConcurrentHashMap<>();

    private final String kind;
    private final RefCount refs;

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

    /** A use of the handle for the length of a native call; throws once closed. */
    protected final Lease acquire() {
        return refs.acquire();
    }

    /**
     * Begins a use without a {@link Lease}, for the per-run paths only, which end it with
     * {@link #endUse()} in a {@code finally} (see {@link RefCount}); throws once closed.
     */
    protected final void beginUse() {
        refs.enter();
    }

    /** Like {@link #beginUse()}, but says {@code false} instead of throwing when this object is closed. */
    protected final boolean tryBeginUse() {
        return refs.tryEnter();
    }

    /** Ends a use begun by {@link #beginUse()} or {@link #tryBeginUse()}. */
    protected final void endUse() {
        refs.exit();
    }

    /** The native handle's address, unchecked: for a caller inside a use. */
    protected final long handleAddress() {
        return refs.address();
    }

    /** A use still allowed after close while dependents hold the handle (see {@link RefCount#acquireUnlessReleased()}). */
    protected final Lease acquireUnlessReleased() {
        return refs.acquireUnlessReleased();
    }

    /** A hold that keeps the handle alive beyond this object's close, until the hold is closed. */
    protected final Lease retain() {
        return refs.retain();
    }

    /** A hold still allowed after close while other holds keep the handle (see {@link RefCount#retainUnlessReleased()}). */
    protected final Lease retainUnlessReleased() {
        return refs.retainUnlessReleased();
    }

    /**
     * The handle without a use: for a handle this object's own lifetime already guarantees (for
     * example one passed to ORT while its owner cannot be closed). Throws once closed.
     */
    protected final MemorySegment handle() {
        return refs.handle();
    }

    /** Whether the native handle has been released (owner closed and no hold left). */
    protected final boolean isReleased() {
        return refs.isReleased();
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
