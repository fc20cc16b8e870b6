package org.pvn3d.ort.customop;

/**
 * Creates the kernel of one graph node from what ORT knows about that node at session creation (its
 * attributes and name). Throwing here fails the session's creation with the exception's message.
 */
@FunctionalInterface
public interface KernelFactory {
    CustomKernel create(KernelInfo info);
}
