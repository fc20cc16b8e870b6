package org.pvn3d.ort.internal;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * How the runtime's classes reach the handle of another native object (a session its tensors', a CUDA
 * copy its stream's): through a {@link Lease}, for try-with-resources. This package is not exported,
 * so user code never sees a handle.
 */
public final class Handles {
    private Handles() {}

    /** A use of {@code object}'s handle for the length of a native call; throws if it is closed. */
    public static Lease acquire(NativeObject object) {
        return object.acquire();
    }

    /** A use still allowed after {@code object} closed while dependents hold its handle. */
    public static Lease acquireUnlessReleased(NativeObject object) {
        return object.acquireUnlessReleased();
    }

    /** A hold that keeps {@code object}'s handle alive beyond its close, until the hold is closed. */
    public static Lease retain(NativeObject object) {
        return object.retain();
    }

    /** Begins a use of {@code object}'s handle without a lease, for the per-run paths (see {@link RefCount}). */
    public static void beginUse(NativeObject object) {
        object.beginUse();
    }

    /** Like {@link #beginUse}, but {@code false} instead of a throw when {@code object} is closed. */
    public static boolean tryBeginUse(NativeObject object) {
        return object.tryBeginUse();
    }

    /** Ends a use begun by {@link #beginUse} or {@link #tryBeginUse}. */
    public static void endUse(NativeObject object) {
        object.endUse();
    }

    /** {@code object}'s handle address, unchecked: for a caller inside a use of it. */
    public static long address(NativeObject object) {
        return object.handleAddress();
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
        try (Lease use = object.acquire(); Arena arena = Arena.ofConfined()) {
            Api.checkStatus(call.call(use.handle(), arena), context);
        }
        return object;
    }

    /** Whether {@code object}'s native handle has been released (closed and no hold left). */
    public static boolean isReleased(NativeObject object) {
        return object.isReleased();
    }
}
