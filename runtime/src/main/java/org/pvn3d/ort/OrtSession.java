package org.pvn3d.ort;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.pvn3d.ort.ffm.OrtApi;
import org.pvn3d.ort.internal.Api;
import org.pvn3d.ort.internal.Handles;
import org.pvn3d.ort.internal.Lease;
import org.pvn3d.ort.internal.LeaseGroup;
import org.pvn3d.ort.internal.Memory;
import org.pvn3d.ort.internal.NativeObject;
import org.pvn3d.ort.internal.Probes;

/**
 * A loaded model ({@code OrtSession}). Thread-safe: several threads may {@code run} at once, as in
 * ORT. Closing waits for runs in progress; a run after close fails with an {@link OrtException}.
 *
 * <p>The session keeps alive what it depends on: its environment and the custom-operator domains
 * registered on the options it was created with. The options themselves may be closed right after.
 */
public final class OrtSession extends NativeObject {
    private static final AtomicLong IDS = new AtomicLong();

    private final OrtEnvironment environment;
    private final Lease environmentHold;
    private final List<OrtCustomOpDomain> domains;
    private final List<AutoCloseable> domainHolds;
    private final Arena names = Arena.ofShared();
    private final Map<String, NodeInfo> inputs;
    private final Map<String, NodeInfo> outputs;
    private final Map<String, Integer> inputIndex = new LinkedHashMap<>();
    private final Map<String, Integer> outputIndex = new LinkedHashMap<>();
    private final MemorySegment[] inputNames;
    private final MemorySegment[] outputNames;
    /** For profiling (JFR events): this session's id in the process, its model, its preferred provider. */
    private final long id = IDS.incrementAndGet();
    private final String model;
    private final String provider;

    private OrtSession(OrtEnvironment environment, Lease environmentHold, MemorySegment handle,
            List<OrtCustomOpDomain> domains, List<AutoCloseable> domainHolds, String model, String provider) {
        super("OrtSession", handle);
        this.model = model;
        this.provider = provider;
        this.environment = environment;
        this.environmentHold = environmentHold;
        this.domains = domains;
        this.domainHolds = domainHolds;
        try {
            this.inputs = readNodes(true);
            this.outputs = readNodes(false);
        } catch (RuntimeException e) {
            close();
            throw e;
        }
        inputNames = cNames(inputs.keySet(), inputIndex);
        outputNames = cNames(outputs.keySet(), outputIndex);
    }

    /**
     * Loads a model from a file or from memory. The session holds its environment and the options'
     * custom-op domains until it is closed; the holds are taken, with the options held open, before ORT
     * creates the domains' kernels.
     */
    static OrtSession create(OrtEnvironment environment, Path modelPath, byte[] modelBytes, SessionOptions options) {
        Object probe = Probes.sessionBegin();
        if (probe == null) {
            return createUnprobed(environment, modelPath, modelBytes, options);
        }
        String model = modelName(modelPath, modelBytes);
        long size = modelBytes != null ? modelBytes.length : fileSize(modelPath);
        String providers = String.join(", ", providerNames(options));
        String domains = String.join(", ", options.customOpDomains().stream().map(OrtCustomOpDomain::name).toList());
        try {
            OrtSession s = createUnprobed(environment, modelPath, modelBytes, options);
            Probes.sessionEnd(probe, s.id, model, size, providers, domains, s.inputs.size(), s.outputs.size(),
                    options.isProfiling(), null);
            return s;
        } catch (RuntimeException | Error e) {
            Probes.sessionEnd(probe, -1, model, size, providers, domains, 0, 0, options.isProfiling(), String.valueOf(e.getMessage()));
            throw e;
        }
    }

    private static OrtSession createUnprobed(OrtEnvironment environment, Path modelPath, byte[] modelBytes, SessionOptions options) {
        Lease env = environment.retain();
        List<OrtCustomOpDomain> domains;
        List<AutoCloseable> domainHolds = new ArrayList<>();
        MemorySegment handle;
        try (Lease opts = Handles.acquire(options)) {
            domains = options.customOpDomains();
            for (OrtCustomOpDomain d : domains) {
                domainHolds.add(d.holdForSession());
            }
            handle = load(env.handle(), modelPath, modelBytes, opts.handle());
        } catch (RuntimeException e) {
            closeAll(domainHolds);
            env.close();
            throw e;
        }
        List<String> providers = providerNames(options);
        // releases them all if it fails
        return new OrtSession(environment, env, handle, domains, domainHolds, modelName(modelPath, modelBytes), providers.get(0));
    }

    private static String modelName(Path modelPath, byte[] modelBytes) {
        return modelPath != null ? modelPath.toString() : modelBytes.length + " bytes in memory";
    }

    private static long fileSize(Path path) {
        try {
            return Files.size(path);
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /** The options' execution providers, preferred first, then ORT's CPU provider. */
    private static List<String> providerNames(SessionOptions options) {
        List<String> names = new ArrayList<>(options.getExecutionProviders());
        if (!names.contains("CPUExecutionProvider")) {
            names.add("CPUExecutionProvider");
        }
        return names;
    }

    private static MemorySegment load(MemorySegment env, Path modelPath, byte[] modelBytes, MemorySegment options) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            if (modelPath != null) {
                if (!Files.isRegularFile(modelPath)) {
                    throw new OrtException(OrtErrorCode.ORT_NO_SUCHFILE, "model file " + modelPath + " does not exist");
                }
                Api.checkStatus(OrtApi.CreateSession.invoke(Api.Session.CreateSession, env,
                        arena.allocateFrom(modelPath.toString()), options, out), "cannot load model " + modelPath);
            } else {
                MemorySegment bytes = arena.allocate(Math.max(1, modelBytes.length));
                MemorySegment.copy(MemorySegment.ofArray(modelBytes), 0, bytes, 0, modelBytes.length);
                Api.checkStatus(OrtApi.CreateSessionFromArray.invoke(Api.Session.CreateSessionFromArray, env, bytes,
                        modelBytes.length, options, out), "cannot load model from " + modelBytes.length + " bytes");
            }
            return out.get(ADDRESS, 0);
        }
    }

    /** Ends the holds on custom-op domains. */
    private static void closeAll(List<AutoCloseable> holds) {
        for (AutoCloseable hold : holds) {
            try {
                hold.close();
            } catch (Exception e) {
                throw new OrtException(OrtErrorCode.ORT_JAVA_UNKNOWN, "releasing " + hold + ": " + e, e);
            }
        }
    }

    private Map<String, NodeInfo> readNodes(boolean input) {
        try (Lease use = acquire(); Arena arena = Arena.ofConfined()) {
            MemorySegment session = use.handle();
            MemorySegment countOut = arena.allocate(JAVA_LONG);
            Api.checkStatus(input
                    ? OrtApi.SessionGetInputCount.invoke(Api.Session.SessionGetInputCount, session, countOut)
                    : OrtApi.SessionGetOutputCount.invoke(Api.Session.SessionGetOutputCount, session, countOut));
            long n = countOut.get(JAVA_LONG, 0);
            Map<String, NodeInfo> nodes = new LinkedHashMap<>();
            MemorySegment ptrOut = arena.allocate(ADDRESS);
            for (long i = 0; i < n; i++) {
                Api.checkStatus(input
                        ? OrtApi.SessionGetInputName.invoke(Api.Session.SessionGetInputName, session, i, Memory.DEFAULT_ALLOCATOR, ptrOut)
                        : OrtApi.SessionGetOutputName.invoke(Api.Session.SessionGetOutputName, session, i, Memory.DEFAULT_ALLOCATOR, ptrOut));
                String name = Memory.takeString(ptrOut.get(ADDRESS, 0));
                Api.checkStatus(input
                        ? OrtApi.SessionGetInputTypeInfo.invoke(Api.Session.SessionGetInputTypeInfo, session, i, ptrOut)
                        : OrtApi.SessionGetOutputTypeInfo.invoke(Api.Session.SessionGetOutputTypeInfo, session, i, ptrOut));
                nodes.put(name, Shapes.nodeInfo(name, ptrOut.get(ADDRESS, 0)));
            }
            return Collections.unmodifiableMap(nodes);
        }
    }

    private MemorySegment[] cNames(Set<String> keys, Map<String, Integer> index) {
        MemorySegment[] out = new MemorySegment[keys.size()];
        int i = 0;
        for (String name : keys) {
            index.put(name, i);
            out[i++] = names.allocateFrom(name);
        }
        return out;
    }

    // ---- metadata ----

    public OrtEnvironment getEnvironment() {
        return environment;
    }

    public int getNumInputs() {
        return inputs.size();
    }

    public int getNumOutputs() {
        return outputs.size();
    }

    /** Input names in the model's order. */
    public List<String> getInputNames() {
        return List.copyOf(inputs.keySet());
    }

    /** Output names in the model's order. */
    public List<String> getOutputNames() {
        return List.copyOf(outputs.keySet());
    }

    /** Inputs by name, in the model's order. */
    public Map<String, NodeInfo> getInputInfo() {
        return inputs;
    }

    /** Outputs by name, in the model's order. */
    public Map<String, NodeInfo> getOutputInfo() {
        return outputs;
    }

    // ---- running ----

    /** Runs the model and returns every output. */
    public Result run(Map<String, ? extends OnnxTensorLike> inputs) {
        return run(inputs, outputs.keySet(), null);
    }

    /** Runs the model and returns the named outputs, in the order given. */
    public Result run(Map<String, ? extends OnnxTensorLike> inputs, Set<String> requestedOutputs) {
        return run(inputs, requestedOutputs, null);
    }

    /** Runs the model with run options (may be null) and returns the named outputs. */
    public Result run(Map<String, ? extends OnnxTensorLike> inputs, Set<String> requestedOutputs, RunOptions options) {
        List<String> outNames = new ArrayList<>(requestedOutputs);
        OnnxTensorLike[] none = new OnnxTensorLike[outNames.size()];
        MemorySegment[] values = invoke(inputs, outNames, none, options);
        return new Result(outNames, values);
    }

    /**
     * Runs the model writing into outputs the caller preallocated (shape and type must match what
     * the model produces). Nothing is returned: the tensors hold the results.
     */
    public void run(Map<String, ? extends OnnxTensorLike> inputs, Map<String, ? extends OnnxTensorLike> preallocatedOutputs,
            RunOptions options) {
        List<String> outNames = new ArrayList<>(preallocatedOutputs.keySet());
        OnnxTensorLike[] given = new OnnxTensorLike[outNames.size()];
        for (int i = 0; i < given.length; i++) {
            given[i] = preallocatedOutputs.get(outNames.get(i));
            if (given[i] == null) {
                throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "preallocated output '" + outNames.get(i) + "' is null");
            }
        }
        invoke(inputs, outNames, given, options);
    }

    private MemorySegment[] invoke(Map<String, ? extends OnnxTensorLike> feeds, List<String> outNames,
            OnnxTensorLike[] preallocated, RunOptions options) {
        Object probe = Probes.runBegin();
        return probe == null ? invokeNative(feeds, outNames, preallocated, options)
                : invokeProbed(probe, feeds, outNames, preallocated, options);
    }

    /** {@link #invokeNative} with the JFR Run event and the NVTX range of {@link Probes}. */
    private MemorySegment[] invokeProbed(Object probe, Map<String, ? extends OnnxTensorLike> feeds, List<String> outNames,
            OnnxTensorLike[] preallocated, RunOptions options) {
        MemorySegment[] result = null;
        String error = null;
        try {
            result = invokeNative(feeds, outNames, preallocated, options);
            return result;
        } catch (RuntimeException | Error e) {
            error = String.valueOf(e.getMessage());
            throw e;
        } finally {
            Probes.runStop(probe);
            if (Probes.recording(probe)) {
                long outBytes = 0;
                for (int o = 0; o < outNames.size(); o++) {
                    outBytes += preallocated[o] != null ? preallocated[o].byteSize()
                            : result != null ? valueBytes(result[o]) : 0;
                }
                Probes.runEnd(probe, id, model, provider, options == null ? "" : options.getRunTag(), false, feeds.size(),
                        bytes(feeds.values()), outNames.size(), outBytes, error);
            }
        }
    }

    private static long bytes(Iterable<? extends OnnxTensorLike> tensors) {
        long sum = 0;
        for (OnnxTensorLike t : tensors) {
            sum += t == null ? 0 : t.byteSize();
        }
        return sum;
    }

    /** The bytes of a tensor value ORT returned (0 for other kinds of value, or when ORT cannot say). */
    private static long valueBytes(MemorySegment value) {
        try {
            if (value.address() == 0 || Shapes.valueType(value) != OnnxValueType.TENSOR) {
                return 0;
            }
            TensorInfo info = Shapes.tensorInfoOfValue(value);
            return info.getType() == OnnxTensorType.STRING ? 0 : info.getElementCount() * info.getType().byteSize();
        } catch (RuntimeException e) {
            return 0;
        }
    }

    private MemorySegment[] invokeNative(Map<String, ? extends OnnxTensorLike> feeds, List<String> outNames,
            OnnxTensorLike[] preallocated, RunOptions options) {
        int nIn = feeds.size();
        int nOut = outNames.size();
        if (nOut == 0) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "no outputs requested");
        }
        try (LeaseGroup held = new LeaseGroup(); Arena arena = Arena.ofConfined()) {
            MemorySegment session = held.add(acquire());
            MemorySegment inNames = arena.allocate(ADDRESS, Math.max(1, nIn));
            MemorySegment inValues = arena.allocate(ADDRESS, Math.max(1, nIn));
            int i = 0;
            for (Map.Entry<String, ? extends OnnxTensorLike> e : feeds.entrySet()) {
                Integer idx = inputIndex.get(e.getKey());
                if (idx == null) {
                    throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "unknown input '" + e.getKey()
                            + "'; the model's inputs are " + inputs.keySet());
                }
                OnnxTensorLike t = e.getValue();
                if (t == null) {
                    throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "input '" + e.getKey() + "' is null");
                }
                inValues.setAtIndex(ADDRESS, i, held.add(t.acquireFor("input '" + e.getKey() + "'")));
                inNames.setAtIndex(ADDRESS, i, inputNames[idx]);
                i++;
            }
            MemorySegment outNamesC = arena.allocate(ADDRESS, nOut);
            MemorySegment outValues = arena.allocate(ADDRESS, nOut);
            for (int o = 0; o < nOut; o++) {
                Integer idx = outputIndex.get(outNames.get(o));
                if (idx == null) {
                    throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "unknown output '" + outNames.get(o)
                            + "'; the model's outputs are " + outputs.keySet());
                }
                outNamesC.setAtIndex(ADDRESS, o, outputNames[idx]);
                outValues.setAtIndex(ADDRESS, o, preallocated[o] == null ? MemorySegment.NULL
                        : held.add(preallocated[o].acquireFor("output '" + outNames.get(o) + "'")));
            }
            MemorySegment runOptions = options == null ? MemorySegment.NULL : held.add(Handles.acquire(options));
            Api.checkStatus(OrtApi.Run.invoke(Api.Session.Run, session, runOptions, inNames, inValues, nIn, outNamesC, nOut, outValues));
            MemorySegment[] result = new MemorySegment[nOut];
            for (int o = 0; o < nOut; o++) {
                result[o] = outValues.getAtIndex(ADDRESS, o);
            }
            try {
                afterRun();
            } catch (RuntimeException e) {
                for (int o = 0; o < nOut; o++) {
                    if (preallocated[o] == null && result[o].address() != 0) {
                        OrtApi.ReleaseValue.invoke(Api.Value.ReleaseValue, result[o]);
                    }
                }
                throw e;
            }
            return result;
        }
    }

    /** Lets the custom-op domains fail a run that succeeded (their kernels' deferred device errors). */
    private void afterRun() {
        for (OrtCustomOpDomain d : domains) {
            d.afterRun();
        }
    }

    /** A new IO binding for this session ({@code CreateIoBinding}); the caller closes it. */
    public OrtIoBinding createIoBinding() {
        try (Lease session = acquire(); Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            Api.checkStatus(OrtApi.CreateIoBinding.invoke(Api.IoBinding.CreateIoBinding, session.handle(), out),
                    "CreateIoBinding");
            return new OrtIoBinding(this, out.get(ADDRESS, 0));
        }
    }

    /** Runs with what {@code binding} binds ({@code RunWithBinding}); read outputs from the binding. */
    public void run(OrtIoBinding binding) {
        run(binding, null);
    }

    /**
     * Runs with what {@code binding} binds, with run options (may be null). Every bound tensor is held
     * open for the run; a bound tensor closed since binding makes the run fail before it starts.
     */
    public void run(OrtIoBinding binding, RunOptions options) {
        if (binding.getSession() != this) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "the IO binding belongs to another session");
        }
        Object probe = Probes.runBegin();
        if (probe == null) {
            runNative(binding, options);
        } else {
            runProbed(probe, binding, options);
        }
    }

    /** {@link #runNative} with the JFR Run event and the NVTX range of {@link Probes}. */
    private void runProbed(Object probe, OrtIoBinding binding, RunOptions options) {
        String error = null;
        try {
            runNative(binding, options);
        } catch (RuntimeException | Error e) {
            error = String.valueOf(e.getMessage());
            throw e;
        } finally {
            Probes.runStop(probe);
            if (Probes.recording(probe)) {
                OrtIoBinding.Sizes sizes = binding.sizes();
                Probes.runEnd(probe, id, model, provider, options == null ? "" : options.getRunTag(), true, sizes.inputs(),
                        sizes.inputBytes(), sizes.outputs(), sizes.outputBytes(), error);
            }
        }
    }

    private void runNative(OrtIoBinding binding, RunOptions options) {
        try (LeaseGroup held = new LeaseGroup()) {
            MemorySegment session = held.add(acquire());
            MemorySegment b = held.add(Handles.acquire(binding));
            binding.acquireBound(held);
            binding.rebindDeviceOutputs(b);
            MemorySegment runOptions = options == null ? MemorySegment.NULL : held.add(Handles.acquire(options));
            Api.checkStatus(OrtApi.RunWithBinding.invoke(Api.IoBinding.RunWithBinding, session, runOptions, b),
                    "run with IO binding");
            afterRun();
        }
    }

    /**
     * The allocator this session uses for memory described by {@code info} ({@code CreateAllocator}),
     * e.g. {@code OrtMemoryInfo.cuda(0)} for the CUDA provider's device memory. The caller closes it;
     * it stays usable after the session closes (see {@link OrtAllocator}).
     */
    public OrtAllocator getAllocator(OrtMemoryInfo info) {
        try (Lease session = acquire(); Lease i = Handles.acquire(info); Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            Api.checkStatus(OrtApi.CreateAllocator.invoke(Api.Allocator.CreateAllocator, session.handle(), i.handle(), out),
                    "no allocator for " + info + " in this session");
            return new OrtAllocator(out.get(ADDRESS, 0));
        }
    }

    /** Ends ORT profiling (enabled in the options) and returns the profile file's name. */
    public String endProfiling() {
        try (Lease session = acquire(); Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            Api.checkStatus(OrtApi.SessionEndProfiling.invoke(Api.Session.SessionEndProfiling, session.handle(),
                    Memory.DEFAULT_ALLOCATOR, out));
            return Memory.takeString(out.get(ADDRESS, 0));
        }
    }

    @Override
    protected void releaseNative(MemorySegment handle) {
        OrtApi.ReleaseSession.invoke(Api.Session.ReleaseSession, handle);
    }

    @Override
    protected void afterClose() {
        names.close();
        try {
            closeAll(domainHolds);
        } finally {
            environmentHold.close();
        }
    }

    /** Reads a model file's bytes (a convenience for {@link OrtEnvironment#createSession(byte[])}). */
    public static byte[] readModel(Path path) {
        try {
            return Files.readAllBytes(path);
        } catch (IOException e) {
            throw new OrtException(OrtErrorCode.ORT_NO_SUCHFILE, "cannot read model " + path + ": " + e, e);
        }
    }
}
