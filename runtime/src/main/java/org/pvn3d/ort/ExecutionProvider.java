package org.pvn3d.ort;

import java.lang.foreign.MemorySegment;

/**
 * An execution provider that session options add ahead of ORT's CPU provider
 * ({@link SessionOptions#addExecutionProvider}), with its settings: for example
 * {@code org.pvn3d.ort.providers.OrtCUDAProviderOptions}.
 *
 * <p>Why an abstract class and not an interface: the options hand the provider their native handle,
 * and a protected method keeps that handle out of what user code can call.
 */
public abstract class ExecutionProvider {
    protected ExecutionProvider() {}

    /** ORT's name of the provider, e.g. {@code CUDAExecutionProvider}. */
    public abstract String getName();

    /**
     * Whether sessions with this provider capture their runs as graphs and replay them (ORT's CUDA graphs):
     * a replay reads and writes the memory addresses of its capture, so an {@link OrtIoBinding} of such a
     * session must keep what it binds where it was (checked at each run). False unless a provider says so.
     */
    public boolean capturesGraphs() {
        return false;
    }

    /**
     * Appends this provider with its settings to the native session options ({@code OrtSessionOptions*}),
     * which the options hold open for the call; throws an {@link OrtException} saying what ORT reported.
     */
    protected abstract void appendTo(MemorySegment sessionOptions);
}
