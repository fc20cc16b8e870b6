package org.pvn3d.ort.customop;

import static java.lang.foreign.ValueLayout.ADDRESS;

import java.lang.System.Logger.Level;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.pvn3d.ort.NativeObject;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.ffm.OrtApi;
import org.pvn3d.ort.internal.Api;
import org.pvn3d.ort.internal.Handles;
import org.pvn3d.ort.internal.Lease;
import org.pvn3d.ort.internal.CString;

/**
 * The native side of a {@link CustomOpDomain}: the {@code OrtCustomOpDomain}, the
 * {@code OrtCustomOp} structs and their strings (in one shared arena), and the live kernels.
 *
 * <p>Its owner is the {@link CustomOpDomain}; every set of session options it was registered on, and
 * every session created from them, holds it ({@link #hold()}). It is released when the owner has
 * closed and the last hold has ended: ORT reads the structs for as long as any such session exists,
 * so freeing them earlier would crash the process.
 */
final class DomainState extends NativeObject {
    private static final System.Logger LOG = System.getLogger("org.pvn3d.ort.customop");

    final String name;
    private final Arena arena;
    private final List<OpBinding> bindings = new ArrayList<>();
    /** The live kernels, copied on each change, so that the check after every run iterates an array. */
    private volatile KernelHolder[] kernels = new KernelHolder[0];

    DomainState(String name, List<CustomOp> ops) {
        super("OrtCustomOpDomain", createDomain(name));
        this.name = name;
        this.arena = Arena.ofShared();
        try {
            for (CustomOp op : ops) {
                OpBinding b = new OpBinding(op, this, arena);
                Upcalls.bind(b);
                bindings.add(b);
                Api.checkStatus(OrtApi.CustomOpDomain_Add.invoke(Api.CustomOpDomain.CustomOpDomain_Add, Handles.handle(this),
                        b.struct), "adding " + op.name() + " to custom-op domain " + name);
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    private static MemorySegment createDomain(String name) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(ADDRESS);
            Api.checkStatus(OrtApi.CreateCustomOpDomain.invoke(Api.CustomOpDomain.CreateCustomOpDomain, CString.of(a, name), out),
                    "creating custom-op domain " + name);
            return out.get(ADDRESS, 0);
        }
    }

    /** A hold for options the domain is registered on; refused once the owner closed the domain. */
    Lease hold() {
        return Handles.retain(this);
    }

    /** A hold for a session created from such options: allowed while the options still hold the domain. */
    Lease holdForSession() {
        return Handles.retainUnlessReleased(this);
    }

    /** A use of the {@code OrtCustomOpDomain*} for the length of a native call. */
    Lease use() {
        return Handles.acquire(this);
    }

    boolean released() {
        return Handles.isReleased(this);
    }

    @Override
    protected OrtException closedException() {
        return new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "custom-op domain " + name + " is closed");
    }

    void kernelCreated(KernelHolder k) {
        synchronized (bindings) {
            KernelHolder[] now = Arrays.copyOf(kernels, kernels.length + 1);
            now[now.length - 1] = k;
            kernels = now;
        }
    }

    void kernelDestroyed(KernelHolder k) {
        synchronized (bindings) {
            KernelHolder[] now = kernels;
            for (int i = 0; i < now.length; i++) {
                if (now[i] == k) {
                    KernelHolder[] less = new KernelHolder[now.length - 1];
                    System.arraycopy(now, 0, less, 0, i);
                    System.arraycopy(now, i + 1, less, i, now.length - i - 1);
                    kernels = less;
                    return;
                }
            }
        }
    }

    /**
     * Throws the first error a live kernel learned after its device work finished (others suppressed):
     * the kernels of {@code session} (and those created outside any session's creation), or every kernel
     * when it is null. Another session's kernels keep their errors for that session's next run.
     */
    void checkDeferredErrors(Object session) {
        OrtException first = null;
        for (KernelHolder k : kernels) {
            if (session != null && k.session != null && k.session != session) {
                continue;
            }
            try {
                k.kernel.checkDeferred();
            } catch (OrtException e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }

    List<KernelHolder> liveKernels() {
        return List.of(kernels);
    }

    @Override
    protected void releaseNative(MemorySegment handle) {
        KernelHolder[] live = kernels;
        if (live.length > 0) {
            // cannot happen while sessions keep their leases; if it does, keep the memory (a leak)
            // rather than free structs ORT may still call through
            LOG.log(Level.ERROR, "custom-op domain {0} released with {1} live kernels; keeping its memory",
                    name, live.length);
            return;
        }
        OrtApi.ReleaseCustomOpDomain.invoke(Api.CustomOpDomain.ReleaseCustomOpDomain, handle);
        for (OpBinding b : bindings) {
            Upcalls.unbind(b);
        }
        arena.close();
    }
}
