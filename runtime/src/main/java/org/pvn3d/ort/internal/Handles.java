package org.pvn3d.ort.internal;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import org.pvn3d.ort.NativeObject;

/**
 * How the runtime's classes reach the handle of a native object, their own or another's (a session its
 * tensors', a CUDA copy its stream's): through a {@link Lease}, for try-with-resources, or, on the
 * per-run paths, a use begun and ended by hand (see {@link RefCount}). {@link NativeObject} is public
 * API; its handle and lifetime are not: they live in its private {@link RefCount}, which only this
 * class reads. This package is not exported, so user code never sees a handle.
 */
public final class Handles {
    /** {@code NativeObject.refs}, read like a plain field once compiled. */
    private static final VarHandle REFS;

    static {
        try {
            REFS = MethodHandles.privateLookupIn(NativeObject.class, MethodHandles.lookup())
                    .findVarHandle(NativeObject.class, "refs", RefCount.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private Handles() {}

    private static RefCount refs(NativeObject object) {
        return (RefCount) REFS.get(object);
    }

    /** A use of {@code object}'s handle for the length of a native call; throws if it is closed. */
    public static Lease acquire(NativeObject object) {
        return refs(object).acquire();
    }

    /** A use still allowed after {@code object} closed while dependents hold its handle. */
    public static Lease acquireUnlessReleased(NativeObject object) {
        return refs(object).acquireUnlessReleased();
    }

    /** A hold that keeps {@code object}'s handle alive beyond its close, until the hold is closed. */
    public static Lease retain(NativeObject object) {
        return refs(object).retain();
    }

    /** A hold still allowed after {@code object} closed while other holds keep its handle. */
    public static Lease retainUnlessReleased(NativeObject object) {
        return refs(object).retainUnlessReleased();
    }

    /**
     * {@code object}'s handle without a use: for a handle whose lifetime is already guaranteed (for
     * example one passed to ORT while its owner cannot be closed). Throws once {@code object} is closed.
     */
    public static MemorySegment handle(NativeObject object) {
        return refs(object).handle();
    }

    /** Begins a use of {@code object}'s handle without a lease, for the per-run paths (see {@link RefCount}). */
    public static void beginUse(NativeObject object) {
        refs(object).enter();
    }

    /** Like {@link #beginUse}, but {@code false} instead of a throw when {@code object} is closed. */
    public static boolean tryBeginUse(NativeObject object) {
        return refs(object).tryEnter();
    }

    /** Ends a use begun by {@link #beginUse} or {@link #tryBeginUse}. */
    public static void endUse(NativeObject object) {
        refs(object).exit();
    }

    /** {@code object}'s handle address, unchecked: for a caller inside a use of it. */
    public static long address(NativeObject object) {
        return refs(object).address();
    }

    /** One ORT call on a native handle: {@code (handle, arena for its strings) -> OrtStatus*}. */
    @FunctionalInterface
    public interface StatusCall {
        MemorySegment call(MemorySegment handle, Arena arena);
    }

    /**
     * Makes one ORT call on {@code object}'s handle, held open for the call (a close from another thread
     * waits for it), and checks its status; {@code context} (may be null) goes in front of ORT's message.
     * Returns {@code object}, for setters that return it.
     */
    public static <T extends NativeObject> T call(T object, String context, StatusCall call) {
        try (Lease use = refs(object).acquire(); Arena arena = Arena.ofConfined()) {
            Api.checkStatus(call.call(use.handle(), arena), context);
        }
        return object;
    }

    /** Whether {@code object}'s native handle has been released (closed and no hold left). */
    public static boolean isReleased(NativeObject object) {
        return refs(object).isReleased();
    }
}
