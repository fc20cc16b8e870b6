package org.pvn3d.ort.customop;

import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * A live kernel: what {@code KernelComputeV2} and {@code KernelDestroy} find by ORT's kernel pointer,
 * and the contexts its compute calls reuse. ORT may run one kernel on several threads at once (runs of
 * one session in parallel), so the kernel keeps a few idle contexts; a call takes one (or makes one
 * when all are out) and gives it back, so a steady state makes none.
 */
final class KernelHolder {
    private static final int IDLE_CONTEXTS = 4;

    final long id;
    final OpBinding binding;
    final CustomKernel kernel;
    final String nodeName;
    final Object session; // the session whose creation made this kernel (SessionScope), or null
    private final AtomicReferenceArray<KernelContext> idle = new AtomicReferenceArray<>(IDLE_CONTEXTS);

    KernelHolder(long id, OpBinding binding, CustomKernel kernel, String nodeName) {
        this.id = id;
        this.session = org.pvn3d.ort.internal.SessionScope.current();
        this.binding = binding;
        this.kernel = kernel;
        this.nodeName = nodeName;
        idle.set(0, new KernelContext(binding.op, nodeName));
    }

    /** An idle context of this kernel, or a new one when every kept one is in use. */
    KernelContext takeContext() {
        for (int i = 0; i < IDLE_CONTEXTS; i++) {
            KernelContext c = idle.getAndSet(i, null);
            if (c != null) {
                return c;
            }
        }
        return new KernelContext(binding.op, nodeName);
    }

    /** Keeps {@code c} for a later call (or drops it when enough are kept). */
    void giveContext(KernelContext c) {
        for (int i = 0; i < IDLE_CONTEXTS; i++) {
            if (idle.compareAndSet(i, null, c)) {
                return;
            }
        }
    }

    String where() {
        return binding.op.name() + (nodeName.isEmpty() ? "" : " (node '" + nodeName + "')");
    }
}
