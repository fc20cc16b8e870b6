package org.pvn3d.ort.customop;

import java.lang.ref.Cleaner;
import java.util.List;
import java.util.Objects;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.SessionOptions;
import org.pvn3d.ort.ffm.OrtApi;
import org.pvn3d.ort.internal.Api;
import org.pvn3d.ort.internal.SessionDependency;

/**
 * A set of custom operators under one ONNX domain name (e.g. {@code ai.onnx.contrib}), built into
 * ORT's native structures at construction and added to session options with {@link #registerOn}.
 *
 * <p><b>Lifetime.</b> ORT calls into the operator structs and upcall stubs for as long as any
 * session created with them exists, so the native memory must outlive every such session. The
 * native memory is held by claims: the owner's (until {@link #close()}), one per options object the
 * domain was registered on (a lease in the options' {@code keepAlive} list, dropped when the options
 * are closed), and one per session created from such options (taken at creation, dropped when the
 * session is closed). The last claim dropped releases everything, so closing this domain early is
 * always safe. A lease or domain that is dropped without being closed is noticed by a {@link Cleaner}.
 *
 * <p>After each successful run of such a session, the kernels' deferred errors (a CUDA kernel's bad
 * index, known only once the device work finished) are checked and fail that run.
 */
public final class CustomOpDomain implements AutoCloseable {
    private static final Cleaner CLEANER = Cleaner.create();

    private final String name;
    private final List<CustomOp> ops;
    private final DomainState state;
    private final Cleaner.Cleanable ownerClaim;
    private volatile boolean closed;

    public CustomOpDomain(String name, List<CustomOp> ops) {
        this.name = Objects.requireNonNull(name, "domain name");
        this.ops = List.copyOf(ops);
        if (this.ops.isEmpty()) {
            throw new IllegalArgumentException("custom-op domain " + name + " has no operators");
        }
        this.state = new DomainState(name, this.ops);
        // the action captures the state, never this object, so this object can become unreachable
        this.ownerClaim = CLEANER.register(this, state::drop);
    }

    public static CustomOpDomain of(String name, CustomOp... ops) {
        return new CustomOpDomain(name, List.of(ops));
    }

    /** The ONNX domain name. */
    public String name() {
        return name;
    }

    public List<CustomOp> ops() {
        return ops;
    }

    /**
     * Adds this domain to {@code options} ({@code AddCustomOpDomain}) and makes the options, and every
     * session created from them, keep the native structures alive.
     */
    public void registerOn(SessionOptions options) {
        if (closed) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "custom-op domain " + name + " is closed");
        }
        state.claim();
        Lease lease = new Lease(state); // from here on, the claim is dropped exactly once
        var opts = options.acquire();
        try {
            var domainHandle = state.acquire();
            try {
                Api.checkStatus(OrtApi.AddCustomOpDomain.invoke(Api.Options.AddCustomOpDomain, opts, domainHandle),
                        "registering custom-op domain " + name);
            } finally {
                state.release();
            }
        } catch (RuntimeException e) {
            lease.close();
            throw e;
        } finally {
            options.release();
        }
        options.keepAlive(lease);
    }

    /**
     * Asks every live kernel of this domain to report errors that were only known after a run's
     * device work finished (see {@link CustomKernel#checkDeferred()}), throwing the first. Call it
     * after a run whose outputs have been read back (ORT synchronises its streams when a run ends).
     */
    public void checkDeferredErrors() {
        state.checkDeferredErrors();
    }

    /** Kernels ORT has created from this domain and not yet destroyed (one per node per session). */
    public int liveKernelCount() {
        return state.liveKernels().size();
    }

    /** True once the native structures have been released (no owner and no session left). */
    public boolean isReleased() {
        return state.isClosed();
    }

    /** Gives up the owner's claim; the native structures go once no session or options use them. */
    @Override
    public void close() {
        if (!closed) {
            closed = true;
            ownerClaim.clean();
        }
    }

    @Override
    public String toString() {
        return "CustomOpDomain(" + name + ", " + ops.size() + " operators" + (state.isClosed() ? ", released" : "") + ")";
    }

    /**
     * What options and sessions keep alive. When it becomes unreachable the Cleaner drops its claim;
     * {@link #close()} drops it at once (idempotent) for holders that close their dependencies.
     */
    static final class Lease implements AutoCloseable, SessionDependency {
        private final DomainState state;
        private final Cleaner.Cleanable cleanable;

        private Lease(DomainState state) {
            this.state = state;
            this.cleanable = CLEANER.register(this, state::drop);
        }

        @Override
        public void close() {
            cleanable.clean();
        }

        /** Each session created from the options holds a claim of its own until it is closed. */
        @Override
        public void attach() {
            state.claim();
        }

        @Override
        public void detach() {
            state.drop();
        }

        /** CUDA kernels' index errors are known once the run's device work is done: report them. */
        @Override
        public void afterRun() {
            state.checkDeferredErrors();
        }

        @Override
        public String toString() {
            return "lease on custom-op domain " + state.name;
        }
    }
}
