package org.pvn3d.ort.customop;

import java.lang.foreign.MemorySegment;
import java.lang.ref.Cleaner;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.pvn3d.ort.OrtCustomOpDomain;
import org.pvn3d.ort.SessionOptions;
import org.pvn3d.ort.ffm.OrtApi;
import org.pvn3d.ort.internal.Api;
import org.pvn3d.ort.internal.Lease;

/**
 * A set of custom operators under one ONNX domain name (e.g. {@code ai.onnx.contrib}), built into
 * ORT's native structures at construction and added to session options with
 * {@link SessionOptions#registerCustomOps(org.pvn3d.ort.OrtCustomOpDomain)}.
 *
 * <p><b>Lifetime.</b> ORT calls into the operator structs and upcall stubs for as long as any
 * session created with them exists, so the native memory must outlive every such session. This
 * domain owns it until {@link #close()}; every options object the domain was registered on holds it
 * until the options are closed, and every session created from such options until the session is
 * closed. Whichever of them ends last releases everything, so closing this domain early is always
 * safe. A domain or an options' hold that is dropped without being closed is noticed by a
 * {@link Cleaner}.
 *
 * <p>After each successful run of such a session, the kernels' deferred errors (a CUDA kernel's bad
 * index, known only once the device work finished) are checked and fail that run.
 */
public final class CustomOpDomain extends OrtCustomOpDomain implements AutoCloseable {
    private static final Cleaner CLEANER = Cleaner.create();
    private static final Set<String> OPERATOR_NAMES = ConcurrentHashMap.newKeySet();

    private final String name;
    private final List<CustomOp> ops;
    private final DomainState state;
    private final Cleaner.Cleanable owner;

    public CustomOpDomain(String name, List<CustomOp> ops) {
        this.name = Objects.requireNonNull(name, "domain name");
        this.ops = List.copyOf(ops);
        if (this.ops.isEmpty()) {
            throw new IllegalArgumentException("custom-op domain " + name + " has no operators");
        }
        this.state = new DomainState(name, this.ops);
        for (CustomOp op : this.ops) {
            OPERATOR_NAMES.add(op.name());
        }
        // the action captures the state, never this object, so this object can become unreachable
        this.owner = CLEANER.register(this, state::close);
    }

    public static CustomOpDomain of(String name, CustomOp... ops) {
        return new CustomOpDomain(name, List.of(ops));
    }

    /** The names of the operators of every domain created in this process (what a profile summary calls custom; a live view). */
    public static Set<String> operatorNames() {
        return java.util.Collections.unmodifiableSet(OPERATOR_NAMES);
    }

    /** The ONNX domain name. */
    @Override
    public String name() {
        return name;
    }

    public List<CustomOp> ops() {
        return ops;
    }

    /**
     * Adds the native domain to session options ({@code AddCustomOpDomain}) and returns the options' hold
     * on it (see {@link SessionOptions#registerCustomOps(org.pvn3d.ort.OrtCustomOpDomain)}).
     */
    @Override
    protected AutoCloseable addTo(MemorySegment sessionOptions) {
        Hold hold = new Hold(state);
        try (Lease domain = state.use()) {
            Api.checkStatus(OrtApi.AddCustomOpDomain.invoke(Api.Options.AddCustomOpDomain, sessionOptions, domain.handle()),
                    "registering custom-op domain " + name);
            return hold;
        } catch (RuntimeException e) {
            hold.close();
            throw e;
        }
    }

    /** A session created from options that hold this domain holds it too, also after this domain closed. */
    @Override
    protected AutoCloseable holdForSession() {
        return state.holdForSession();
    }

    /** CUDA kernels' index errors are known once the run's device work is done: report them. */
    @Override
    protected void afterRun(Object session) {
        state.checkDeferredErrors(session);
    }

    /**
     * Asks every live kernel of this domain to report errors that were only known after a run's
     * device work finished (see {@link CustomKernel#checkDeferred()}), throwing the first. Call it
     * after a run whose outputs have been read back (ORT synchronises its streams when a run ends).
     */
    public void checkDeferredErrors() {
        state.checkDeferredErrors(null);
    }

    /** Kernels ORT has created from this domain and not yet destroyed (one per node per session). */
    public int liveKernelCount() {
        return state.liveKernels().size();
    }

    /** True once the native structures have been released (no owner and no session left). */
    public boolean isReleased() {
        return state.released();
    }

    /** Gives up the owner's reference; the native structures go once no session or options hold them. */
    @Override
    public void close() {
        owner.clean();
    }

    @Override
    public String toString() {
        return "CustomOpDomain(" + name + ", " + ops.size() + " operators" + (state.released() ? ", released" : "") + ")";
    }

    /**
     * What options keep: a hold on the native structures. When it becomes unreachable (options dropped
     * without being closed) the Cleaner ends the hold; {@link #close()} ends it at once (idempotent).
     */
    private static final class Hold implements AutoCloseable {
        private final String domain;
        private final Cleaner.Cleanable cleanable;

        Hold(DomainState state) {
            this.domain = state.name;
            Lease lease = state.hold();
            // the action captures the lease, never this object, so this object can become unreachable
            this.cleanable = CLEANER.register(this, lease::close);
        }

        @Override
        public void close() {
            cleanable.clean();
        }

        @Override
        public String toString() {
            return "hold on custom-op domain " + domain;
        }
    }
}
