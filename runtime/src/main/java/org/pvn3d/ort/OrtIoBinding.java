package org.pvn3d.ort;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.pvn3d.ort.ffm.OrtApi;
import org.pvn3d.ort.internal.Api;
import org.pvn3d.ort.internal.Memory;
import org.pvn3d.ort.internal.NativeObject;

/**
 * An IO binding ({@code OrtIoBinding}) of one session: inputs and outputs bound by name to tensors
 * (host or device), or outputs bound to a device where ORT allocates them, then
 * {@link OrtSession#run(OrtIoBinding)}. Bindings stay until cleared or rebound, so a loop can rebind
 * only what changes. Create one with {@link OrtSession#createIoBinding()}.
 *
 * <p><b>Ownership.</b> The binding keeps the Java tensors bound to it referenced, but does not own
 * them: the caller closes them. ORT's binding holds its own reference to each bound value, yet the
 * memory behind a tensor that Java owns goes when the tensor is closed; so a run refuses (with an
 * {@link OrtException} naming it) a binding whose bound tensor was closed, instead of letting ORT read
 * freed memory. Each run holds every bound tensor open until it returns. Outputs ORT allocated are
 * read with {@link #getOutputs()}: each call returns new tensors that the caller owns, independent of
 * the binding and the session. ORT by itself would write the next run into the same memory (it keeps
 * a run's outputs bound and reuses them, and refuses a run whose output shape changed); this binding
 * instead rebinds every output bound to a device before each run, so every run gets fresh outputs
 * and earlier results stay as they were. For a steady state without allocations, bind outputs to
 * preallocated tensors ({@link #bindOutput(String, OnnxTensor)}), which every run overwrites. Closing the session first makes every later use of the
 * binding fail clearly; closing the binding releases ORT's references. Closing twice is a no-op.
 */
public final class OrtIoBinding extends NativeObject {
    private final OrtSession session;
    private final Map<String, OnnxTensor> inputs = new LinkedHashMap<>();
    private final Map<String, OnnxTensor> outputs = new LinkedHashMap<>();
    private final Map<String, OrtMemoryInfo> deviceOutputs = new LinkedHashMap<>(); // copies this binding owns

    OrtIoBinding(OrtSession session, MemorySegment handle) {
        super("OrtIoBinding", handle);
        this.session = session;
    }

    public OrtSession getSession() {
        return session;
    }

    /** Binds input {@code name} to {@code tensor} (host or device); replaces an earlier binding of it. */
    public OrtIoBinding bindInput(String name, OnnxTensor tensor) {
        if (!session.getInputInfo().containsKey(name)) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "cannot bind unknown input '" + name
                    + "'; the model's inputs are " + session.getInputNames());
        }
        bindValue(name, tensor, true);
        return this;
    }

    /** Binds output {@code name} to a preallocated tensor that ORT writes into (shape and type must match). */
    public OrtIoBinding bindOutput(String name, OnnxTensor tensor) {
        checkOutput(name);
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
        session.acquire(); // first: a closed session must not leave this binding acquired
        MemorySegment b;
        try {
            b = acquire();
        } catch (RuntimeException e) {
            session.release();
            throw e;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment info = device.acquire();
            try {
                Api.checkStatus(OrtApi.BindOutputToDevice.invoke(Api.IoBinding.BindOutputToDevice, b, arena.allocateFrom(name), info),
                        "bind output '" + name + "' to " + device);
            } finally {
                device.release();
            }
            OrtMemoryInfo copy = OrtMemoryInfo.copyOf(info(device));
            OrtMemoryInfo old;
            synchronized (outputs) {
                outputs.remove(name);
                old = deviceOutputs.put(name, copy);
            }
            if (old != null) {
                old.close();
            }
        } finally {
            session.release();
            release();
        }
        return this;
    }

    private static MemorySegment info(OrtMemoryInfo i) {
        return i.handle();
    }

    /** Rebinds the outputs bound to a device so that the coming run allocates fresh ones (see the class comment). */
    void rebindDeviceOutputs(MemorySegment b) {
        List<Map.Entry<String, OrtMemoryInfo>> entries;
        synchronized (outputs) {
            if (deviceOutputs.isEmpty()) {
                return;
            }
            entries = new ArrayList<>(deviceOutputs.entrySet());
        }
        try (Arena arena = Arena.ofConfined()) {
            for (Map.Entry<String, OrtMemoryInfo> e : entries) {
                Api.checkStatus(OrtApi.BindOutputToDevice.invoke(Api.IoBinding.BindOutputToDevice, b, arena.allocateFrom(e.getKey()),
                        e.getValue().handle()), "rebind output '" + e.getKey() + "'");
            }
        }
    }

    private void checkOutput(String name) {
        if (!session.getOutputInfo().containsKey(name)) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "cannot bind unknown output '" + name
                    + "'; the model's outputs are " + session.getOutputNames());
        }
    }

    private void bindValue(String name, OnnxTensor tensor, boolean input) {
        if (tensor == null) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, (input ? "input '" : "output '") + name + "': tensor is null");
        }
        session.acquire(); // first: a closed session must not leave this binding acquired
        MemorySegment b;
        try {
            b = acquire();
        } catch (RuntimeException e) {
            session.release();
            throw e;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment v;
            try {
                v = tensor.acquire();
            } catch (OrtException e) {
                throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, (input ? "input '" : "output '") + name + "': tensor is closed");
            }
            try {
                tensor.checkUserData();
                MemorySegment cName = arena.allocateFrom(name);
                Api.checkStatus(input ? OrtApi.BindInput.invoke(Api.IoBinding.BindInput, b, cName, v)
                        : OrtApi.BindOutput.invoke(Api.IoBinding.BindOutput, b, cName, v),
                        (input ? "bind input '" : "bind output '") + name + "'");
            } finally {
                tensor.release();
            }
            Map<String, OnnxTensor> m = input ? inputs : outputs;
            OrtMemoryInfo old = null;
            synchronized (outputs) {
                if (!input) {
                    old = deviceOutputs.remove(name);
                }
            }
            synchronized (m) {
                m.put(name, tensor);
            }
            if (old != null) {
                old.close();
            }
        } finally {
            session.release();
            release();
        }
    }

    /** Unbinds every input ({@code ClearBoundInputs}). */
    public void clearBoundInputs() {
        MemorySegment b = acquire();
        try {
            OrtApi.ClearBoundInputs.invoke(Api.IoBinding.ClearBoundInputs, b);
            synchronized (inputs) {
                inputs.clear();
            }
        } finally {
            release();
        }
    }

    /** Unbinds every output ({@code ClearBoundOutputs}), including the values of earlier runs. */
    public void clearBoundOutputs() {
        MemorySegment b = acquire();
        try {
            OrtApi.ClearBoundOutputs.invoke(Api.IoBinding.ClearBoundOutputs, b);
            closeDeviceOutputs();
        } finally {
            release();
        }
    }

    /** Waits until bound inputs are ready on their devices ({@code SynchronizeBoundInputs}). */
    public void synchronizeBoundInputs() {
        MemorySegment b = acquire();
        try {
            Api.checkStatus(OrtApi.SynchronizeBoundInputs.invoke(Api.IoBinding.SynchronizeBoundInputs, b), "SynchronizeBoundInputs");
        } finally {
            release();
        }
    }

    /** Waits until the outputs of the last run are complete ({@code SynchronizeBoundOutputs}). */
    public void synchronizeBoundOutputs() {
        MemorySegment b = acquire();
        try {
            Api.checkStatus(OrtApi.SynchronizeBoundOutputs.invoke(Api.IoBinding.SynchronizeBoundOutputs, b), "SynchronizeBoundOutputs");
        } finally {
            release();
        }
    }

    /** Names of the bound outputs, in binding order ({@code GetBoundOutputNames}). */
    public List<String> getOutputNames() {
        MemorySegment b = acquire();
        try (Arena arena = Arena.ofConfined()) {
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
            release();
        }
    }

    /**
     * The bound outputs of the last run as new tensors the caller owns ({@code GetBoundOutputValues}),
     * named as {@link #getOutputNames()} says. Device outputs are device tensors (read them with
     * {@link OnnxTensor#toHost()}).
     */
    public Result getOutputs() {
        List<String> names = getOutputNames();
        MemorySegment b = acquire();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment valuesOut = arena.allocate(ADDRESS);
            MemorySegment countOut = arena.allocate(JAVA_LONG);
            Api.checkStatus(OrtApi.GetBoundOutputValues.invoke(Api.IoBinding.GetBoundOutputValues, b, Memory.DEFAULT_ALLOCATOR,
                    valuesOut, countOut), "GetBoundOutputValues");
            int n = (int) countOut.get(JAVA_LONG, 0);
            MemorySegment[] raw = new MemorySegment[n];
            if (n > 0) {
                MemorySegment array = valuesOut.get(ADDRESS, 0).reinterpret(n * ADDRESS.byteSize());
                for (int i = 0; i < n; i++) {
                    raw[i] = array.getAtIndex(ADDRESS, i);
                }
                Memory.freeDefault(array);
            }
            if (names.size() != n) {
                for (MemorySegment r : raw) {
                    OrtApi.ReleaseValue.invoke(Api.Value.ReleaseValue, r);
                }
                throw new OrtException(OrtErrorCode.ORT_FAIL, "ORT returned " + n + " bound output values for "
                        + names.size() + " names " + names);
            }
            return new Result(names, raw);
        } finally {
            release();
        }
    }

    /** The tensors currently bound as inputs (a snapshot; the binding does not own them). */
    public Map<String, OnnxTensor> getBoundInputs() {
        synchronized (inputs) {
            return Map.copyOf(inputs);
        }
    }

    /** Acquires every bound Java tensor for a run; refuses a closed one. Returns what to release. */
    List<NativeObject> acquireBound() {
        List<NativeObject> held = new ArrayList<>();
        try {
            acquireAll(inputs, "input", held);
            acquireAll(outputs, "output", held);
        } catch (RuntimeException e) {
            for (NativeObject o : held) {
                o.release();
            }
            throw e;
        }
        return held;
    }

    private static void acquireAll(Map<String, OnnxTensor> m, String what, List<NativeObject> held) {
        List<Map.Entry<String, OnnxTensor>> entries;
        synchronized (m) {
            entries = new ArrayList<>(m.entrySet());
        }
        for (Map.Entry<String, OnnxTensor> e : entries) {
            try {
                e.getValue().acquire();
            } catch (OrtException x) {
                throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "bound " + what + " '" + e.getKey()
                        + "' was closed; rebind it before running");
            }
            held.add(e.getValue());
            e.getValue().checkUserData();
        }
    }

    @Override
    protected void releaseNative(MemorySegment handle) {
        OrtApi.ReleaseIoBinding.invoke(Api.IoBinding.ReleaseIoBinding, handle);
    }

    private void closeDeviceOutputs() {
        List<OrtMemoryInfo> infos;
        synchronized (outputs) {
            outputs.clear();
            infos = new ArrayList<>(deviceOutputs.values());
            deviceOutputs.clear();
        }
        infos.forEach(OrtMemoryInfo::close);
    }

    @Override
    protected void afterClose() {
        synchronized (inputs) {
            inputs.clear();
        }
        closeDeviceOutputs();
    }
}
