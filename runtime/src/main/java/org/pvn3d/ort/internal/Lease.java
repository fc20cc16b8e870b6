package org.pvn3d.ort.internal;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A use of a native handle or a hold on it (see {@link RefCount}), ended by {@link #close()}: made for
 * try-with-resources. Closing twice is a no-op.
 */
public final class Lease implements AutoCloseable {
    private static final VarHandle ENDED;

    static {
        try {
            ENDED = MethodHandles.lookup().findVarHandle(Lease.class, "ended", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final RefCount refs;
    private final boolean use;
    @SuppressWarnings("unused") // through ENDED
    private volatile boolean ended;

    Lease(RefCount refs, boolean use) {
        this.refs = refs;
        this.use = use;
    }

    /** The native handle, valid until this lease is closed. */
    public MemorySegment handle() {
        return refs.leasedHandle();
    }

    boolean isUse() {
        return use;
    }

    @Override
    public void close() {
        if (ENDED.compareAndSet(this, false, true)) {
            refs.end(this);
        }
    }
}
