package org.pvn3d.ort.internal;

/**
 * Which session the custom kernels ORT creates on this thread belong to: ORT creates a session's kernels
 * while {@code CreateSession} runs, on the calling thread, and a domain shared by several sessions must
 * ask only the kernels of the session that ran for their deferred errors (another session's error is not
 * this run's). The token is an identity, nothing more; kernels created outside a scope have none (and are
 * asked after every run, as before).
 */
public final class SessionScope {
    private static final ThreadLocal<Object> CREATING = new ThreadLocal<>();

    private SessionScope() {}

    /** Marks the kernels created on this thread from now on as {@code token}'s, until {@link #exit()}. */
    public static void enter(Object token) {
        CREATING.set(token);
    }

    public static void exit() {
        CREATING.remove();
    }

    /** The token of the session being created on this thread, or null. */
    public static Object current() {
        return CREATING.get();
    }
}
