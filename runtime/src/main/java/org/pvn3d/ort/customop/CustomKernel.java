package org.pvn3d.ort.customop;

/**
 * The compute half of a custom operator: ORT creates one kernel per graph node (through the
 * operator's {@link KernelFactory}) when a session is created, calls {@link #compute} for every run
 * of that node, possibly from several threads at once, and {@linkplain #close() closes} it when the
 * session is released.
 *
 * <p>Anything {@code compute} throws fails that run with the exception's message (as an ORT status;
 * nothing crosses into ORT as a Java exception) and the session stays usable.
 */
@FunctionalInterface
public interface CustomKernel extends AutoCloseable {
    /** Reads the inputs, allocates and writes the outputs. Must be thread-safe. */
    void compute(KernelContext context);

    /**
     * Reports an error that could only be known after the run's device work finished (for example a
     * bad index seen by a CUDA kernel that ran asynchronously), by throwing an
     * {@link org.pvn3d.ort.OrtException}. Called by {@link CustomOpDomain#checkDeferredErrors()}; the
     * default has nothing to report.
     */
    default void checkDeferred() {}

    /** Releases what the kernel holds (called once, when ORT destroys the kernel). */
    @Override
    default void close() {}
}
