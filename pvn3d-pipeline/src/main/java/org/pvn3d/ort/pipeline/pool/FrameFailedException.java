package org.pvn3d.ort.pipeline.pool;

/**
 * A frame the pool could not estimate: its session failed on it (the cause says how), or it was still
 * queued when no session was left. {@link #sessionFailed()} tells whether the session was taken down
 * with it (and reopened or taken out of the pool) or only this frame failed (bad input).
 */
public final class FrameFailedException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String source;
    private final String session;
    private final boolean sessionFailed;

    FrameFailedException(String source, String session, boolean sessionFailed, String message, Throwable cause) {
        super(message, cause);
        this.source = source;
        this.session = session;
        this.sessionFailed = sessionFailed;
    }

    /** The frame's sample name. */
    public String source() {
        return source;
    }

    /** The session that ran the frame ({@code cuda:0#1}), or null when no session took it. */
    public String session() {
        return session;
    }

    /** Whether the failure took the session down too (it was then reopened, or taken out). */
    public boolean sessionFailed() {
        return sessionFailed;
    }
}
