package org.pvn3d.ort.internal;

import java.util.ArrayList;
import java.util.List;

/**
 * The leases one native call needs (a run's session, tensors and run options), taken one after
 * another and ended together by {@link #close()}, also when taking one of them failed halfway.
 */
public final class LeaseGroup implements AutoCloseable {
    private final List<Lease> leases = new ArrayList<>();

    /** Keeps {@code lease} until this group closes, and returns its handle. */
    public java.lang.foreign.MemorySegment add(Lease lease) {
        leases.add(lease);
        return lease.handle();
    }

    @Override
    public void close() {
        for (int i = leases.size() - 1; i >= 0; i--) {
            leases.get(i).close();
        }
        leases.clear();
    }
}
