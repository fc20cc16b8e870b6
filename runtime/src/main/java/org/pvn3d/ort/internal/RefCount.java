package org.pvn3d.ort.internal;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.pvn3d.ort.OrtException;

/**
 * The lifetime of one native handle, the one reference-counting mechanism of this library. Three kinds
 * of reference keep the handle:
 * <ul>
 *   <li>the owner's, given up by {@link #close()} (idempotent);</li>
 *   <li>uses ({@link #acquire()}): a native call in flight on the handle, such as a run. Closing waits
 *       for them, so the handle is never released under a call. A use is ended on the thread that
 *       began it;</li>
 *   <li>holds ({@link #retain()}): a dependent that keeps the handle beyond its owner's close, such as a
 *       session its environment, or a tensor the buffer under it. Closing does not wait for them: the
 *       handle is released when the owner has closed and the last hold has ended, whichever comes last.
 *       A hold may be ended on any thread (a {@link java.lang.ref.Cleaner} included).</li>
 * </ul>
 * New uses and holds are refused, with the owner's "is closed" exception, once the owner has closed
 * (the {@code ...UnlessReleased} variants only once the handle is released). Each is a {@link Lease} for
 * try-with-resources, so no caller pairs a begin with an end by hand.
 *
 * <p>The exception: the per-run paths (a session run, a bound run) begin and end their uses with
 * {@link #enter()} / {@link #tryEnter()} and {@link #exit()} in a {@code try}/{@code finally}, because a
 * {@link Lease} per use is an object per run and those paths allocate nothing.
 *
 * <p>How: one atomic word holds the count of uses in flight and the "owner closed" and "released"
 * bits, so a use costs one compare-and-set to begin and one atomic add to end, with no lock, no
 * thread-local and no allocation. The rare operations (closing, holds, releasing) take this object's
 * monitor; the release waits on it until the uses in flight have ended (the last use to end while
 * the owner has closed wakes it) and then sets "released" only while no use is in flight, in one
 * compare-and-set, so a use can never begin on a released handle.
 */
public final class RefCount {
    /** What a {@link RefCount} asks of the object that owns the handle. */
    public interface Owner {
        /** Releases the handle; called once, with no use in flight. */
        void releaseHandle(MemorySegment handle);

        /** The exception for a use or hold asked for after the owner closed. */
        OrtException closedError();
    }

    private static final long OWNER_CLOSED = 1L << 62;
    private static final long RELEASED = 1L << 61;
    private static final long USES = (1L << 40) - 1;
    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(RefCount.class, "state", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final MemorySegment handle;
    private final long address;
    private final Owner owner;
    @SuppressWarnings("unused") // through STATE
    private volatile long state;
    private int holds; // guarded by this
    // set by a close() that could not wait for the uses in flight (see close): the last use to end releases
    private boolean releaseOnLastUse; // guarded by this

    // How deep the current thread is in callbacks from native code that can run inside a native call
    // holding uses (a custom kernel's compute inside a run): a close() there must not wait for them
    private static final ThreadLocal<int[]> CALLBACK_DEPTH = ThreadLocal.withInitial(() -> new int[1]);

    /**
     * @param handle      the native handle
     * @param release     releases it; called once, with no use in flight
     * @param closedError the exception for a use or hold asked for after the owner closed
     */
    public RefCount(MemorySegment handle, Consumer<MemorySegment> release, Supplier<OrtException> closedError) {
        this(handle, new Owner() {
            @Override
            public void releaseHandle(MemorySegment h) {
                release.accept(h);
            }

            @Override
            public OrtException closedError() {
                return closedError.get();
            }
        });
    }

    /** A count for {@code handle} that {@code owner} releases and names in "is closed" errors. */
    public RefCount(MemorySegment handle, Owner owner) {
        this.handle = handle;
        this.address = handle.address();
        this.owner = owner;
    }

    /** Begins a use of the handle (see the class comment); throws once the owner has closed. */
    public Lease acquire() {
        enter();
        return new Lease(this, true);
    }

    /**
     * Begins a use that is still allowed after the owner closed, as long as holds keep the handle (an
     * allocator taking back memory a tensor still holds, say); throws once the handle is released.
     */
    public Lease acquireUnlessReleased() {
        long s;
        do {
            s = state;
            if ((s & RELEASED) != 0) {
                throw owner.closedError();
            }
        } while (!STATE.compareAndSet(this, s, s + 1));
        return new Lease(this, true);
    }

    /**
     * Begins a use without a {@link Lease} (for the per-run paths, which end it with {@link #exit()} in a
     * {@code finally}); throws the owner's "is closed" exception once the owner has closed.
     */
    public void enter() {
        if (!tryEnter()) {
            throw owner.closedError();
        }
    }

    /** Like {@link #enter()}, but says {@code false} instead of throwing when the owner has closed. */
    public boolean tryEnter() {
        long s;
        do {
            s = state;
            if ((s & OWNER_CLOSED) != 0) {
                return false;
            }
        } while (!STATE.compareAndSet(this, s, s + 1));
        return true;
    }

    /** Ends a use begun by {@link #enter()} or {@link #tryEnter()} (or a use lease). */
    public void exit() {
        long s = (long) STATE.getAndAdd(this, -1L) - 1;
        if ((s & USES) == 0 && (s & OWNER_CLOSED) != 0) {
            synchronized (this) {
                notifyAll(); // a close or a release waits for the last use
                if (releaseOnLastUse && holds == 0) {
                    releaseLocked();
                }
            }
        }
    }

    /**
     * Marks the current thread as inside a callback from native code that may run within a native call
     * holding uses (a custom kernel's compute, inside a run), until {@link #callbackEnd}; returns the
     * marker to give back there (one thread-local lookup per callback, no allocation after the first).
     */
    public static int[] callbackBegin() {
        int[] depth = CALLBACK_DEPTH.get();
        depth[0]++;
        return depth;
    }

    /** Ends what {@link #callbackBegin} began. */
    public static void callbackEnd(int[] depth) {
        depth[0]--;
    }

    /** Begins a hold on the handle (see the class comment); throws once the owner has closed. */
    public Lease retain() {
        return hold(true);
    }

    /**
     * Begins a hold that is still allowed after the owner closed, as long as other holds keep the
     * handle (a session created from options that hold a custom-op domain whose owner closed, say);
     * throws once the handle is released.
     */
    public Lease retainUnlessReleased() {
        return hold(false);
    }

    private Lease hold(boolean refuseAfterClose) {
        synchronized (this) { // excludes the release decisions: they see every hold counted before them
            long s = state;
            if ((s & (refuseAfterClose ? OWNER_CLOSED : RELEASED)) != 0) {
                throw owner.closedError();
            }
            holds++;
        }
        return new Lease(this, false);
    }

    /** The handle; throws once the owner has closed (inside a lease it is always there). */
    public MemorySegment handle() {
        if ((state & OWNER_CLOSED) != 0) {
            throw owner.closedError();
        }
        return handle;
    }

    /** The handle's address, unchecked: for a caller inside a use, which keeps it valid. */
    public long address() {
        return address;
    }

    /** Whether the owner has closed (the handle may still be held). */
    public boolean isClosed() {
        return (state & OWNER_CLOSED) != 0;
    }

    /** Whether the handle has been released. */
    public boolean isReleased() {
        return (state & RELEASED) != 0;
    }

    /**
     * Gives up the owner's reference: refuses new uses and holds, waits for the uses in flight, and
     * releases the handle now unless holds keep it. Later calls do nothing (a call made while another
     * is still waiting for uses waits too). Inside a callback ({@link #callbackBegin}) with uses in
     * flight it does not wait, since one of them may be the native call the callback runs in (a kernel
     * closing its own run's session would wait for itself): the last use to end releases the handle.
     */
    public void close() {
        synchronized (this) {
            long s;
            do {
                s = state;
            } while ((s & OWNER_CLOSED) == 0 && !STATE.compareAndSet(this, s, s | OWNER_CLOSED));
            if ((s & USES) != 0 && CALLBACK_DEPTH.get()[0] > 0) {
                releaseOnLastUse = true;
                return;
            }
            awaitNoUse();
            if (holds == 0) {
                releaseLocked();
            }
        }
    }

    void end(Lease lease) {
        if (lease.isUse()) {
            exit();
        } else {
            synchronized (this) {
                if (--holds == 0 && (state & OWNER_CLOSED) != 0 && !(releaseOnLastUse && (state & USES) != 0)) {
                    releaseLocked(); // (with uses left after a close in a callback, the last use releases)
                }
            }
        }
    }

    /** Under the monitor, owner closed and no hold left: releases once no use is in flight. */
    private void releaseLocked() {
        for (;;) {
            long s = state;
            if ((s & RELEASED) != 0) {
                return;
            }
            if ((s & USES) != 0) {
                awaitNoUse(); // uses allowed after close (acquireUnlessReleased) may still be in flight
            } else if (STATE.compareAndSet(this, s, s | RELEASED)) {
                break;
            }
        }
        owner.releaseHandle(handle);
    }

    /** Under the monitor: waits until no use is in flight (not interruptible; the interrupt is kept). */
    private void awaitNoUse() {
        boolean interrupted = false;
        while ((state & USES) != 0) {
            try {
                wait();
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    MemorySegment leasedHandle() {
        return handle;
    }

    @Override
    public String toString() {
        long s = state;
        return "0x" + Long.toHexString(address) + ((s & RELEASED) != 0 ? " (released)" : (s & OWNER_CLOSED) != 0
                ? " (closed, " + holdCount() + " holds)" : "");
    }

    private synchronized int holdCount() {
        return holds;
    }
}
