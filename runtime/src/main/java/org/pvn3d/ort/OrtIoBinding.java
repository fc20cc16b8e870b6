package org.pvn3d.ort;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import org.pvn3d.ort.ffm.OrtApi;
import org.pvn3d.ort.internal.Api;
import org.pvn3d.ort.internal.Handles;
import org.pvn3d.ort.internal.Lease;
import org.pvn3d.ort.internal.LeaseGroup;
import org.pvn3d.ort.internal.Memory;
import org.pvn3d.ort.internal.RunScratch;
import org.pvn3d.ort.internal.CString;

/**
 * An IO binding ({@code OrtIoBinding}) of one session: inputs and outputs bound by name to tensors
 * (host or device), or outputs bound to a device where ORT allocates them, then
 * {@link OrtSession#run(OrtIoBinding)}. Bindings stay until cleared or rebound, so a loop can rebind
 * only what changes. Create one with {@link OrtSession#createIoBinding()}.
 *
 * <p><b>Ownership.</b> The binding does not own the Java tensors bound to it: the caller closes them.
 * But ORT's binding keeps its own reference to each bound value until the name is rebound, cleared or
 * the binding is closed, and dropping it may call back into what the tensor was made from (a tensor
 * from an {@link OrtAllocator} frees its data through that allocator's native object). So the binding
 * holds each bound tensor's native value, and with it the allocator or memory behind it, until ORT has
 * let go of it: a tensor closed while bound is released then, not before. A run still refuses (with an
 * {@link OrtException} naming it) a binding whose bound tensor was closed; rebind it first. Each run
 * holds every bound tensor open until it returns. Outputs ORT allocated are
 * read with {@link #getOutputs()}: each call returns new tensors that the caller owns, independent of
 * the binding and the session. ORT by itself would write the next run into the same memory (it keeps
 * a run's outputs bound and reuses them, and refuses a run whose output shape changed); this binding
 * instead rebinds every output bound to a device before each run, so every run gets fresh outputs
 * and earlier results stay as they were. For a steady state without allocations, bind outputs to
 * preallocated tensors ({@link #bindOutput(String, OnnxTensorLike)}), which every run overwrites.
 * Closing the session first makes every later use of the binding fail clearly; closing the binding
 * releases ORT's references. Closing twice is a no-op.
 *
 * <p><b>Threads.</b> ORT's binding is one object that a run reads and rebinds (outputs bound to a device
 * are allocated into it): two runs of one binding at once, or a run and a rebind, would race inside ORT.
 * So the runs of a binding, its binds and clears, and reading its outputs take turns (one lock per
 * binding); runs of different bindings, or of the session without a binding, go on in parallel. Give each
 * thread its own binding for parallel runs.
 *
 * <p><b>Sessions that capture graphs</b> ({@link OrtSession#capturesGraphs()}: the CUDA provider with
 * {@code enable_cuda_graph}). ORT captures the first runs as a CUDA graph and then only replays it, and a
 * replay reads and writes the device addresses of the capture: rebinding a name to other memory would
 * silently leave the run reading the old buffer (or writing into memory freed since). So the first
 * successful run of a binding fixes, per graph ({@link RunOptions#GPU_GRAPH_ID}, 0 unless set; "-1" runs
 * without a graph and is not checked), the data address of every bound tensor, and a later run with a
 * name bound elsewhere fails before it starts, naming both addresses: copy new data into the bound tensor
 * instead (or rebind the original). Outputs bound to a device ({@link #bindOutput(String, OrtMemoryInfo)})
 * are allocated anew for every run, which a replay cannot follow: such a session refuses them at run.
 */
public final class OrtIoBinding extends NativeObject {
    private final OrtSession session;
    // One lock for the three maps, held across each native bind and clear as well: ORT's bindings and
    // the maps change in the same order, so a name is bound in the maps as it is in ORT (last call wins)
    private final Object lock = new Object();
    // Taken for a run of this binding and for every call on ORT's binding (see Threads in the class
    // comment), before `lock` when both are; uncontended it is one compare-and-set, no allocation
    private final ReentrantLock turns = new ReentrantLock();
    private final Map<String, BoundTensor> inputs = new LinkedHashMap<>();
    private final Map<String, BoundTensor> outputs = new LinkedHashMap<>();
    private final Map<String, OrtMemoryInfo> deviceOutputs = new LinkedHashMap<>(); // copies this binding owns
    // what a run reads, rebuilt (under the lock) whenever a binding changes, so that a run iterates
    // arrays, builds no string and takes no lock: the bound Java tensors, and the outputs bound to a
    // device with their names as C strings
    private volatile Bound[] boundSnapshot = new Bound[0];
    private volatile DeviceOutput[] deviceSnapshot = new DeviceOutput[0];
    // in a graph-capturing session: per graph id, the data address of each name at the graph's first run
    private final Map<String, Map<String, Long>> captured = new ConcurrentHashMap<>();

    private record Bound(String name, boolean input, OnnxTensorLike tensor, long data) {}

    /**
     * A bound tensor, the binding's hold on it (see the class comment), ended once ORT has dropped its
     * reference, and its data address when bound (0 if ORT gave none).
     */
    private record BoundTensor(OnnxTensorLike tensor, Lease hold, long data) {}

    private record DeviceOutput(String name, MemorySegment cName, OrtMemoryInfo info) {}

    OrtIoBinding(OrtSession session, MemorySegment handle) {
        super("OrtIoBinding", handle);
        this.session = session;
    }

    public OrtSession getSession() {
        return session;
    }

    /** Binds input {@code name} to {@code tensor} (host or device); replaces an earlier binding of it. */
    public OrtIoBinding bindInput(String name, OnnxTensorLike tensor) {
        if (!session.getInputInfo().containsKey(name)) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "cannot bind unknown input '" + name
                    + "'; the model's inputs are " + session.getInputNames());
        }
        bindValue(name, tensor, true);
        return this;
    }

    /** Binds output {@code name} to a preallocated tensor that ORT writes into (shape and type must match). */
    public OrtIoBinding bindOutput(String name, OnnxTensorLike tensor) {
        checkOutput(name);
        if (tensor != null) {
            NodeInfo node = session.getOutputInfo().get(name);
            tensor.checkCanReceive(name, node.isTensor() ? node.tensorInfo().getType() : null);
        }
        bindValue(name, tensor, false);
        return this;
    }

    /**
     * Binds output {@code name} to memory described by {@code device} ({@code BindOutputToDevice}): ORT
     * allocates the output there on each run (e.g. {@link OrtMemoryInfo#cuda(int)} keeps it on the GPU).
     * The description may be closed after this call.
     */
    public OrtIoBinding bindOutput(String name, OrtMemoryInfo device) {
        checkOutput(name);
        turns.lock();
        try (LeaseGroup held = new LeaseGroup(); Arena arena = Arena.ofConfined()) {
            MemorySegment b = useWithSession(held);
            MemorySegment info = held.add(Handles.acquire(device));
            MemorySegment cName = CString.of(arena, name);
            OrtMemoryInfo copy = OrtMemoryInfo.copyOf(info);
            OrtMemoryInfo old;
            BoundTensor replaced;
            synchronized (lock) {
                try {
                    Api.checkStatus(OrtApi.BindOutputToDevice.invoke(Api.IoBinding.BindOutputToDevice, b, cName, info),
                            "bind output '" + name + "' to " + device);
                } catch (RuntimeException | Error e) {
                    copy.close();
                    throw e;
                }
                replaced = outputs.remove(name);
                old = deviceOutputs.put(name, copy);
                snapshot();
            }
            endHold(replaced);
            if (old != null) {
                old.close();
            }
        } finally {
            turns.unlock();
        }
        return this;
    }

    /**
     * Uses of this binding and of its session (ORT's binding points into the session: a closed one is
     * reported as such), kept by {@code held}; returns the binding's handle.
     */
    private MemorySegment useWithSession(LeaseGroup held) {
        MemorySegment b = held.add(Handles.acquire(this));
        held.add(Handles.acquire(session));
        return b;
    }

    /** Takes this binding's turn for a run ({@link OrtSession#run(OrtIoBinding, RunOptions)}; see Threads). */
    void lockForRun() {
        turns.lock();
    }

    void unlockAfterRun() {
        turns.unlock();
    }

    /**
     * Begins what a run of this binding needs, kept (and ended) by {@code s}: a use of the binding and
     * of every bound Java tensor (a closed one fails the run, naming it), and rebinds the outputs bound
     * to a device so that the coming run allocates fresh ones (see the class comment); with a
     * {@code graph} id (a graph-capturing session's run), checks the binding against that graph's capture.
     * Returns the binding's {@code OrtIoBinding*}.
     */
    long beginRun(RunScratch s, String graph) {
        s.beginUse(this);
        if (graph != null) {
            checkCaptured(graph);
        }
        for (Bound b : boundSnapshot) {
            if (!s.tryBeginUse(b.tensor())) {
                throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "bound " + (b.input() ? "input" : "output")
                        + " '" + b.name() + "' was closed; rebind it before running");
            }
            b.tensor().checkMemoryAlive();
        }
        for (DeviceOutput d : deviceSnapshot) {
            s.beginUse(d.info());
            long status = Api.Direct.bindOutputToDevice(Handles.address(this), d.cName().address(), Handles.address(d.info()));
            if (status != 0) {
                throw Api.toException(MemorySegment.ofAddress(status), "rebind output '" + d.name() + "'");
            }
        }
        return Handles.address(this);
    }

    /**
     * In a graph-capturing session, before a run with graph {@code graph}: device outputs are refused, and
     * once the graph has run, every bound tensor must be where it was then. Allocates nothing when all is well.
     */
    private void checkCaptured(String graph) {
        DeviceOutput[] device = deviceSnapshot;
        if (device.length > 0) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "output '" + device[0].name() + "' is bound to a "
                    + "device, where ORT allocates it anew for each run, but this session replays captured CUDA graphs, "
                    + "which write where the capture did: bind it to a preallocated tensor instead");
        }
        Map<String, Long> at = captured.get(graph);
        if (at == null) {
            return; // this graph's first run: afterRun records it
        }
        for (Bound b : boundSnapshot) {
            Long then = at.get(b.name());
            if (then == null || then != b.data()) {
                String now = then == null ? "a tensor, but graph " + graph + " of this session was captured without it"
                        : "data at 0x" + Long.toHexString(b.data()) + ", but graph " + graph
                                + " of this session was captured with 0x" + Long.toHexString(then);
                throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, (b.input() ? "input '" : "output '") + b.name()
                        + "' is bound to " + now + ": a CUDA graph replays the addresses of its capture. Copy the new "
                        + "data into the tensor bound then, or rebind that tensor");
            }
        }
    }

    /** After a successful run with graph {@code graph} (null: none, or the session captures none): records its first run's addresses. */
    void afterRun(String graph) {
        if (graph == null || captured.containsKey(graph)) {
            return;
        }
        Map<String, Long> at = new HashMap<>();
        for (Bound b : boundSnapshot) {
            at.put(b.name(), b.data());
        }
        captured.putIfAbsent(graph, Map.copyOf(at));
    }

    /** Rebuilds what a run reads; under the lock. */
    private void snapshot() {
        java.util.List<Bound> b = new ArrayList<>();
        inputs.forEach((name, t) -> b.add(new Bound(name, true, t.tensor(), t.data())));
        outputs.forEach((name, t) -> b.add(new Bound(name, false, t.tensor(), t.data())));
        boundSnapshot = b.toArray(Bound[]::new);
        java.util.List<DeviceOutput> d = new ArrayList<>();
        deviceOutputs.forEach((name, info) -> d.add(new DeviceOutput(name, CString.of(Arena.ofAuto(), name), info)));
        deviceSnapshot = d.toArray(DeviceOutput[]::new);
    }

    private void checkOutput(String name) {
        if (!session.getOutputInfo().containsKey(name)) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "cannot bind unknown output '" + name
                    + "'; the model's outputs are " + session.getOutputNames());
        }
    }

    private void bindValue(String name, OnnxTensorLike tensor, boolean input) {
        if (tensor == null) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, (input ? "input '" : "output '") + name + "': tensor is null");
        }
        turns.lock();
        try (LeaseGroup held = new LeaseGroup(); Arena arena = Arena.ofConfined()) {
            MemorySegment b = useWithSession(held);
            MemorySegment v = held.add(tensor.acquireFor((input ? "input '" : "output '") + name + "'"));
            MemorySegment cName = CString.of(arena, name);
            long data = dataAddress(v, arena);
            BoundTensor bound = new BoundTensor(tensor, Handles.retain(tensor), data); // open: the use above holds it
            OrtMemoryInfo old = null;
            BoundTensor replaced;
            try {
                synchronized (lock) {
                    Api.checkStatus(input ? OrtApi.BindInput.invoke(Api.IoBinding.BindInput, b, cName, v)
                            : OrtApi.BindOutput.invoke(Api.IoBinding.BindOutput, b, cName, v),
                            (input ? "bind input '" : "bind output '") + name + "'");
                    if (input) {
                        replaced = inputs.put(name, bound);
                    } else {
                        old = deviceOutputs.remove(name);
                        replaced = outputs.put(name, bound);
                    }
                    bound = null;
                    snapshot();
                }
            } finally {
                endHold(bound); // not bound after all
            }
            endHold(replaced); // ORT has dropped its reference to what was bound before: that tensor may go now
            if (old != null) {
                old.close();
            }
        } finally {
            turns.unlock();
        }
    }

    /** The data address of tensor value {@code v} (host or device), or 0 where ORT gives none. */
    private static long dataAddress(MemorySegment v, Arena arena) {
        MemorySegment out = arena.allocate(ADDRESS);
        long status = Api.Direct.getTensorMutableData(v.address(), out.address());
        if (status != 0) {
            Api.toException(MemorySegment.ofAddress(status), null); // releases the status; the address stays unknown
            return 0;
        }
        return out.get(ADDRESS, 0).address();
    }

    /** Ends the hold on a tensor ORT no longer references (outside the lock: ending it may release the tensor). */
    private static void endHold(BoundTensor t) {
        if (t != null) {
            t.hold().close();
        }
    }

    /** Empties {@code bound}, returning what was in it for {@link #endHold}. Under the lock. */
    private static List<BoundTensor> unbindAll(Map<String, BoundTensor> bound) {
        List<BoundTensor> out = new ArrayList<>(bound.values());
        bound.clear();
        return out;
    }

    /** Unbinds every input ({@code ClearBoundInputs}). */
    public void clearBoundInputs() {
        turns.lock();
        try (LeaseGroup held = new LeaseGroup()) {
            MemorySegment b = useWithSession(held);
            List<BoundTensor> unbound;
            synchronized (lock) {
                OrtApi.ClearBoundInputs.invoke(Api.IoBinding.ClearBoundInputs, b);
                unbound = unbindAll(inputs);
                snapshot();
            }
            unbound.forEach(OrtIoBinding::endHold);
        } finally {
            turns.unlock();
        }
    }

    /** Unbinds every output ({@code ClearBoundOutputs}), including the values of earlier runs. */
    public void clearBoundOutputs() {
        turns.lock();
        try (LeaseGroup held = new LeaseGroup()) {
            MemorySegment b = useWithSession(held);
            List<BoundTensor> unbound = new ArrayList<>();
            List<OrtMemoryInfo> infos;
            synchronized (lock) {
                OrtApi.ClearBoundOutputs.invoke(Api.IoBinding.ClearBoundOutputs, b);
                infos = forgetOutputs(unbound);
            }
            unbound.forEach(OrtIoBinding::endHold);
            infos.forEach(OrtMemoryInfo::close);
        } finally {
            turns.unlock();
        }
    }

    /** Waits until bound inputs are ready on their devices ({@code SynchronizeBoundInputs}). */
    public void synchronizeBoundInputs() {
        turns.lock();
        try (LeaseGroup held = new LeaseGroup()) {
            MemorySegment b = useWithSession(held);
            Api.checkStatus(OrtApi.SynchronizeBoundInputs.invoke(Api.IoBinding.SynchronizeBoundInputs, b), "SynchronizeBoundInputs");
        } finally {
            turns.unlock();
        }
    }

    /** Waits until the outputs of the last run are complete ({@code SynchronizeBoundOutputs}). */
    public void synchronizeBoundOutputs() {
        turns.lock();
        try (LeaseGroup held = new LeaseGroup()) {
            MemorySegment b = useWithSession(held);
            Api.checkStatus(OrtApi.SynchronizeBoundOutputs.invoke(Api.IoBinding.SynchronizeBoundOutputs, b), "SynchronizeBoundOutputs");
        } finally {
            turns.unlock();
        }
    }

    /** Names of the bound outputs, in binding order ({@code GetBoundOutputNames}). */
    public List<String> getOutputNames() {
        turns.lock();
        try (LeaseGroup held = new LeaseGroup(); Arena arena = Arena.ofConfined()) {
            MemorySegment b = useWithSession(held);
            MemorySegment bufOut = arena.allocate(ADDRESS);
            MemorySegment lensOut = arena.allocate(ADDRESS);
            MemorySegment countOut = arena.allocate(JAVA_LONG);
            Api.checkStatus(OrtApi.GetBoundOutputNames.invoke(Api.IoBinding.GetBoundOutputNames, b, Memory.DEFAULT_ALLOCATOR,
                    bufOut, lensOut, countOut), "GetBoundOutputNames");
            long n = countOut.get(JAVA_LONG, 0);
            List<String> names = new ArrayList<>();
            if (n == 0) {
                return names;
            }
            MemorySegment buf = bufOut.get(ADDRESS, 0);
            MemorySegment lens = lensOut.get(ADDRESS, 0).reinterpret(n * JAVA_LONG.byteSize());
            try {
                long total = 0;
                for (long i = 0; i < n; i++) {
                    total += lens.getAtIndex(JAVA_LONG, i);
                }
                MemorySegment chars = buf.reinterpret(total);
                long off = 0;
                for (long i = 0; i < n; i++) {
                    long len = lens.getAtIndex(JAVA_LONG, i);
                    names.add(new String(chars.asSlice(off, len).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE),
                            java.nio.charset.StandardCharsets.UTF_8));
                    off += len;
                }
            } finally {
                Memory.freeDefault(buf);
                Memory.freeDefault(lens);
            }
            return names;
        } finally {
            turns.unlock();
        }
    }

    /**
     * The bound outputs of the last run as new tensors the caller owns ({@code GetBoundOutputValues}),
     * named as {@link #getOutputNames()} says. Outputs on a device are {@link DeviceTensor}s (copy them to
     * the host with {@code CudaCopy.toHost}).
     */
    public Result getOutputs() {
        turns.lock(); // the names and the values of one run (reentrant: getOutputNames takes it too)
        try (LeaseGroup held = new LeaseGroup(); Arena arena = Arena.ofConfined()) {
            List<String> names = getOutputNames();
            MemorySegment b = useWithSession(held);
            MemorySegment valuesOut = arena.allocate(ADDRESS);
            MemorySegment countOut = arena.allocate(JAVA_LONG);
            Api.checkStatus(OrtApi.GetBoundOutputValues.invoke(Api.IoBinding.GetBoundOutputValues, b, Memory.DEFAULT_ALLOCATOR,
                    valuesOut, countOut), "GetBoundOutputValues");
            int n = (int) countOut.get(JAVA_LONG, 0);
            long[] raw = new long[n];
            if (n > 0) {
                MemorySegment array = valuesOut.get(ADDRESS, 0).reinterpret(n * ADDRESS.byteSize());
                for (int i = 0; i < n; i++) {
                    raw[i] = array.getAtIndex(JAVA_LONG, i);
                }
                Memory.freeDefault(array);
            }
            if (names.size() != n) {
                for (long r : raw) {
                    Api.Direct.releaseValue(r);
                }
                throw new OrtException(OrtErrorCode.ORT_FAIL, "ORT returned " + n + " bound output values for "
                        + names.size() + " names " + names);
            }
            RunScratch s = RunScratch.take(0);
            try {
                return new Result(names, raw, s); // releases the values if it fails
            } finally {
                s.give();
            }
        } finally {
            turns.unlock();
        }
    }

    /** The tensors currently bound as inputs (a snapshot; the binding does not own them). */
    public Map<String, OnnxTensorLike> getBoundInputs() {
        synchronized (lock) {
            Map<String, OnnxTensorLike> out = new LinkedHashMap<>();
            inputs.forEach((name, t) -> out.put(name, t.tensor()));
            return Collections.unmodifiableMap(out);
        }
    }

    /** What is bound, for the JFR Run event: counts, and bytes of the tensors (outputs ORT allocates have none yet). */
    record Sizes(int inputs, long inputBytes, int outputs, long outputBytes) {}

    Sizes sizes() {
        long in = 0;
        long out = 0;
        int nIn;
        int nOut;
        synchronized (lock) {
            nIn = inputs.size();
            for (BoundTensor t : inputs.values()) {
                in += t.tensor().byteSize();
            }
            nOut = outputs.size() + deviceOutputs.size();
            for (BoundTensor t : outputs.values()) {
                out += t.tensor().byteSize();
            }
        }
        return new Sizes(nIn, in, nOut, out);
    }

    @Override
    protected void releaseNative(MemorySegment handle) {
        OrtApi.ReleaseIoBinding.invoke(Api.IoBinding.ReleaseIoBinding, handle);
    }

    /**
     * Drops every output from the maps: the tensors bound to outputs go into {@code unbound} (for
     * {@link #endHold}), the device descriptions it held are returned for the caller to close. Under the lock.
     */
    private List<OrtMemoryInfo> forgetOutputs(List<BoundTensor> unbound) {
        unbound.addAll(unbindAll(outputs));
        List<OrtMemoryInfo> infos = new ArrayList<>(deviceOutputs.values());
        deviceOutputs.clear();
        snapshot();
        return infos;
    }

    /** After {@code ReleaseIoBinding}: ORT holds none of the bound values any more. */
    @Override
    protected void afterClose() {
        List<BoundTensor> unbound;
        List<OrtMemoryInfo> infos;
        synchronized (lock) {
            unbound = unbindAll(inputs);
            infos = forgetOutputs(unbound);
        }
        unbound.forEach(OrtIoBinding::endHold);
        infos.forEach(OrtMemoryInfo::close);
    }
}
