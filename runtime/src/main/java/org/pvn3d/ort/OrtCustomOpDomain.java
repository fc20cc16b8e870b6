package org.pvn3d.ort;

import java.lang.foreign.MemorySegment;

/**
 * A set of custom operators under one ONNX domain that session options add to ORT
 * ({@link SessionOptions#registerCustomOps}, ORT's {@code AddCustomOpDomain}) and keep alive for every
 * session created from them: {@code org.pvn3d.ort.customop.CustomOpDomain} defines them in Java.
 *
 * <p>The methods here are what the options and their sessions ask of a domain. They are protected,
 * like {@link ExecutionProvider}'s, because they pass native handles and holds that user code must not
 * manage by hand.
 */
public abstract class OrtCustomOpDomain {
    protected OrtCustomOpDomain() {}

    /** The ONNX domain name, e.g. {@code ai.onnx.contrib}. */
    public abstract String name();

    /**
     * Adds the native domain to the native session options ({@code OrtSessionOptions*}, held open by the
     * options for the call) and returns the hold by which the options keep it alive until they close.
     * Throws an {@link OrtException} if the domain is closed or ORT refuses it.
     */
    protected abstract AutoCloseable addTo(MemorySegment sessionOptions);

    /**
     * A hold for a session created from options this domain was added to, which keeps the native
     * domain alive until the session closes.
     */
    protected abstract AutoCloseable holdForSession();

    /**
     * Called after each successful run of such a session: throw an {@link OrtException} to fail the run
     * after all (errors the kernels could only know once the run's device work finished). {@code session}
     * identifies the session that ran: the kernels ORT created while it was being created carry the same
     * identity ({@code org.pvn3d.ort.internal.SessionScope}), so that a domain shared by several sessions
     * asks only that session's kernels. Does nothing by default.
     */
    protected void afterRun(Object session) {}
}
