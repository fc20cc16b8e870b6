package org.pvn3d.ort.internal;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantReadWriteLock;
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
 * <p>Why a read-write lock for the uses: a run's use costs one uncontended read lock, and the write
 * lock taken by {@link #close()} is exactly "wait for the calls in flight, then refuse new ones".
 */
public final class RefCount {
    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
    private final AtomicInteger holds = new AtomicInteger();
    private final MemorySegment handle;
    private final Consumer<MemorySegment> release;
    private final Supplier<OrtException> closedError;
    private volatile boolean ownerClosed;
    private volatile boolean released;

    /**
     * @param handle      the native handle
     * @param release     releases it; called once, with no use in flight
     * @param closedError the exception for a use or hold asked for after the owner closed
     */
    public RefCount(MemorySegment handle, Consumer<MemorySegment> release, Supplier<OrtException> closedError) {
        this.handle = handle;
        this.release = release;
        this.closedError = closedError;
    }

    /** Begins a use of the handle (see the class comment); throws once the owner has closed. */
    public Lease acquire() {
        lock.readLock().lock();
        if (ownerClosed) {
            lock.readLock().unlock();
            throw closedError.get();
        }
        return new Lease(this, true);
    }

    /**
     * Begins a use that is still allowed after the owner closed, as long as holds keep the handle (an
     * allocator taking back memory a tensor still holds, say); throws once the handle is released.
     */
    public Lease acquireUnlessReleased() {
        lock.readLock().lock();
        if (released) {
            lock.readLock().unlock();
            throw closedError.get();
        }
        return new Lease(this, true);
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
        lock.readLock().lock(); // excludes the release decisions: they see every hold counted before them
        try {
            if (refuseAfterClose ? ownerClosed : released) {
                throw closedError.get();
            }
            holds.incrementAndGet();
            return new Lease(this, false);
        } finally {
            lock.readLock().unlock();
        }
    }

    /** The handle; throws once the owner has closed (inside a lease it is always there). */
    public MemorySegment handle() {
        if (ownerClosed) {
            throw closedError.get();
        }
        return handle;
    }

    /** Whether the owner has closed (the handle may still be held). */
    public boolean isClosed() {
        return ownerClosed;
    }

    /** Whether the handle has been released. */
    public boolean isReleased() {
        return released;
    }

    /**
     * Gives up the owner's reference: waits for the uses in flight, refuses new uses and holds, and
     * releases the handle now unless holds keep it. Later calls do nothing.
     */
    public void close() {
        lock.writeLock().lock();
        try {
            if (ownerClosed) {
                return;
            }
            ownerClosed = true;
            if (holds.get() == 0) {
                releaseOnce();
            }
        } finally {
            lock.writeLock().unlock();
        }
    }

    void end(Lease lease) {
        if (lease.isUse()) {
            lock.readLock().unlock();
        } else if (holds.decrementAndGet() == 0 && ownerClosed) {
            lock.writeLock().lock();
            try {
                if (holds.get() == 0) { // no hold taken in between
                    releaseOnce();
                }
            } finally {
                lock.writeLock().unlock();
            }
        }
    }

    /** Under the write lock. */
    private void releaseOnce() {
        if (!released) {
            released = true;
            release.accept(handle);
        }
    }

    MemorySegment leasedHandle() {
        return handle;
    }

    @Override
    public String toString() {
        return "0x" + Long.toHexString(handle.address()) + (released ? " (released)" : ownerClosed ? " (closed, "
                + holds.get() + " holds)" : "");
    }
}
