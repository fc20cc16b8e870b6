package org.pvn3d.ort;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
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
import org.pvn3d.ort.internal.Memory;
import org.pvn3d.ort.internal.Probes;
import org.pvn3d.ort.internal.RunScratch;
import org.pvn3d.ort.internal.ShutdownGuard;
import org.pvn3d.ort.internal.CString;
import org.pvn3d.ort.internal.ComputeStatuses;

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
    /** The model's input and output names, in its order, and the same as C strings (addresses in {@link #names}). */
    private final String[] inputNameList;
    private final String[] outputNameList;
    private final long[] inputNameAddresses;
    private final long[] outputNameAddresses;
    private final OnnxTensorType[] outputTypes; // by output index; null where the output is not a tensor
    // the identity of this session's custom kernels: after a run only they report deferred errors
    private final Object kernelScope;
    private final OrtCustomOpDomain[] domainArray;
    /** Up to this many model inputs (outputs), a run looks them up in the caller's map instead of iterating it. */
    private static final int LOOKUP_LIMIT = 64;
    /** For profiling (JFR events): this session's id in the process, its model, its preferred provider. */
    private final long id = IDS.incrementAndGet();
    private final String model;
    private final String provider;
    private final boolean capturesGraphs;

    private OrtSession(OrtEnvironment environment, Lease environmentHold, MemorySegment handle,
            List<OrtCustomOpDomain> domains, List<AutoCloseable> domainHolds, String model, String provider,
            boolean capturesGraphs, Object kernelScope) {
        super("OrtSession", handle);
        this.kernelScope = kernelScope;
        this.model = model;
        this.provider = provider;
        this.capturesGraphs = capturesGraphs;
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
        inputNameList = inputs.keySet().toArray(String[]::new);
        outputNameList = outputs.keySet().toArray(String[]::new);
        inputNameAddresses = cNames(inputNameList, inputIndex);
        outputNameAddresses = cNames(outputNameList, outputIndex);
        outputTypes = outputs.values().stream().map(n -> n.isTensor() ? n.tensorInfo().getType() : null)
                .toArray(OnnxTensorType[]::new);
        domainArray = domains.toArray(OrtCustomOpDomain[]::new);
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
        Object kernelScope = new Object(); // this session's custom kernels (SessionScope)
        List<OrtCustomOpDomain> domains;
        List<AutoCloseable> domainHolds = new ArrayList<>();
        MemorySegment handle;
        try (Lease opts = Handles.acquire(options)) {
            domains = options.customOpDomains();
            for (OrtCustomOpDomain d : domains) {
                domainHolds.add(d.holdForSession());
            }
            org.pvn3d.ort.internal.SessionScope.enter(kernelScope);
            try {
                handle = load(env.handle(), modelPath, modelBytes, opts.handle());
            } finally {
                org.pvn3d.ort.internal.SessionScope.exit();
            }
        } catch (RuntimeException e) {
            closeAll(domainHolds);
            env.close();
            throw e;
        }
        List<String> providers = providerNames(options);
        // releases them all if it fails
        return new OrtSession(environment, env, handle, domains, domainHolds, modelName(modelPath, modelBytes), providers.get(0),
                options.capturesGraphs(), kernelScope);
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
        // an exit must not run ORT's static destructors while this thread is loading (ShutdownGuard)
        ShutdownGuard.enter(modelPath != null ? "cannot load model " + modelPath : "cannot load a model from memory");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            if (modelPath != null) {
                if (!Files.isRegularFile(modelPath)) {
                    throw new OrtException(OrtErrorCode.ORT_NO_SUCHFILE, "model file " + modelPath + " does not exist");
                }
                Api.checkStatus(OrtApi.CreateSession.invoke(Api.Session.CreateSession, env,
                        CString.of(arena, modelPath.toString()), options, out), "cannot load model " + modelPath);
            } else {
                MemorySegment bytes = arena.allocate(Math.max(1, modelBytes.length));
                MemorySegment.copy(MemorySegment.ofArray(modelBytes), 0, bytes, 0, modelBytes.length);
                Api.checkStatus(OrtApi.CreateSessionFromArray.invoke(Api.Session.CreateSessionFromArray, env, bytes,
                        modelBytes.length, options, out), "cannot load model from " + modelBytes.length + " bytes");
            }
            return out.get(ADDRESS, 0);
        } finally {
            ShutdownGuard.leave();
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
        try (Lease use = Handles.acquire(this); Arena arena = Arena.ofConfined()) {
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

    private long[] cNames(String[] keys, Map<String, Integer> index) {
        long[] out = new long[keys.length];
        for (int i = 0; i < keys.length; i++) {
            index.put(keys[i], i);
            out[i] = CString.of(names, keys[i]).address();
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
    //
    // The run paths allocate nothing on the Java heap beyond what they return: the arrays ORT takes are
    // the thread's RunScratch (native), the model's names are C strings made once per session, the
    // uses of the session and tensors are begun and ended without lease objects, the feeds are looked
    // up by the model's names (no iterator), and Run is one call through Api.Direct.

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
        Object probe = Probes.runBegin();
        if (probe == null) {
            return runNative(inputs, requestedOutputs, options);
        }
        Result result = null;
        String error = null;
        try {
            result = runNative(inputs, requestedOutputs, options);
            return result;
        } catch (RuntimeException | Error e) {
            error = String.valueOf(e.getMessage());
            throw e;
        } finally {
            Probes.runStop(probe);
            if (Probes.recording(probe)) {
                long outBytes = 0;
                if (result != null) {
                    for (Map.Entry<String, OnnxValue> e : result) {
                        outBytes += e.getValue() instanceof OnnxTensorLike t ? t.byteSize() : 0;
                    }
                }
                Probes.runEnd(probe, id, model, provider, options == null ? "" : options.getRunTag(), false, inputs.size(),
                        bytes(inputs.values()), requestedOutputs.size(), outBytes, error);
            }
        }
    }

    private Result runNative(Map<String, ? extends OnnxTensorLike> inputs, Set<String> requestedOutputs, RunOptions options) {
        int nIn = inputs.size();
        int nOut = requestedOutputs.size();
        if (nOut == 0) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "no outputs requested");
        }
        String[] names = new String[nOut];
        RunScratch s = RunScratch.take(2 * (nIn + nOut));
        try {
            long runOptions = beginRun(s, options);
            putInputs(s, inputs, nIn);
            int o = 0;
            for (String name : requestedOutputs) {
                Integer idx = outputIndex.get(name);
                if (idx == null) {
                    throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "unknown output '" + name
                            + "'; the model's outputs are " + outputs.keySet());
                }
                names[o] = name;
                s.set(2 * nIn + o, outputNameAddresses[idx]);
                s.set(2 * nIn + nOut + o, 0);
                o++;
            }
            callRun(s, runOptions, nIn, nOut);
            long[] raw = new long[nOut];
            for (o = 0; o < nOut; o++) {
                raw[o] = s.get(2 * nIn + nOut + o);
            }
            try {
                afterRun();
            } catch (RuntimeException | Error e) { // an Error from a kernel's deferred check too: the outputs go
                for (long r : raw) {
                    if (r != 0) {
                        Api.Direct.releaseValue(r);
                    }
                }
                throw e;
            }
            return new Result(Arrays.asList(names), raw, s); // releases the values if it fails
        } finally {
            s.give();
        }
    }

    /**
     * Runs the model writing into outputs the caller preallocated (shape and type must match what
     * the model produces). Nothing is returned: the tensors hold the results. With tensors made once,
     * a run allocates nothing on the Java heap.
     */
    public void run(Map<String, ? extends OnnxTensorLike> inputs, Map<String, ? extends OnnxTensorLike> preallocatedOutputs,
            RunOptions options) {
        Object probe = Probes.runBegin();
        if (probe == null) {
            runNative(inputs, preallocatedOutputs, options);
            return;
        }
        String error = null;
        try {
            runNative(inputs, preallocatedOutputs, options);
        } catch (RuntimeException | Error e) {
            error = String.valueOf(e.getMessage());
            throw e;
        } finally {
            Probes.runStop(probe);
            if (Probes.recording(probe)) {
                Probes.runEnd(probe, id, model, provider, options == null ? "" : options.getRunTag(), false, inputs.size(),
                        bytes(inputs.values()), preallocatedOutputs.size(), bytes(preallocatedOutputs.values()), error);
            }
        }
    }

    private void runNative(Map<String, ? extends OnnxTensorLike> inputs, Map<String, ? extends OnnxTensorLike> preallocatedOutputs,
            RunOptions options) {
        int nIn = inputs.size();
        int nOut = preallocatedOutputs.size();
        if (nOut == 0) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "no outputs requested");
        }
        RunScratch s = RunScratch.take(2 * (nIn + nOut));
        try {
            long runOptions = beginRun(s, options);
            putInputs(s, inputs, nIn);
            putPreallocated(s, preallocatedOutputs, 2 * nIn, nOut);
            callRun(s, runOptions, nIn, nOut);
            afterRun();
        } finally {
            s.give();
        }
    }

    private static long bytes(Iterable<? extends OnnxTensorLike> tensors) {
        long sum = 0;
        for (OnnxTensorLike t : tensors) {
            sum += t == null ? 0 : t.byteSize();
        }
        return sum;
    }

    /** Begins the uses of this session and the run options (0 when null); returns the options' address. */
    private long beginRun(RunScratch s, RunOptions options) {
        s.beginUse(this);
        if (options == null) {
            return 0;
        }
        s.beginUse(options);
        return Handles.address(options);
    }

    private void callRun(RunScratch s, long runOptions, int nIn, int nOut) {
        long status = Api.Direct.run(Handles.address(this), runOptions, s.address(0), s.address(nIn), nIn,
                s.address(2 * nIn), nOut, s.address(2 * nIn + nOut));
        if (status != 0) {
            ComputeStatuses.afterFailedRun(); // a failing custom kernel's status, on the ORT versions that keep it
            throw Api.toException(MemorySegment.ofAddress(status), null);
        }
    }

    /**
     * Puts the {@code n} feeds into the scratch's words [0, n) (names) and [n, 2n) (values), each
     * tensor's use begun. Looks the model's inputs up in the map, so that no iterator is made; a map
     * with a name the model lacks, or a null tensor, is diagnosed afterwards.
     */
    private void putInputs(RunScratch s, Map<String, ? extends OnnxTensorLike> feeds, int n) {
        int i = 0;
        if (inputNameList.length <= LOOKUP_LIMIT) {
            for (int k = 0; k < inputNameList.length && i < n; k++) {
                OnnxTensorLike t = feeds.get(inputNameList[k]);
                if (t != null) {
                    s.set(n + i, t.beginRunUse(s, "input", inputNameList[k]));
                    s.set(i++, inputNameAddresses[k]);
                }
            }
            if (i != n) {
                throw badNames(feeds, inputIndex, inputs.keySet(), "input");
            }
            return;
        }
        for (Map.Entry<String, ? extends OnnxTensorLike> e : feeds.entrySet()) {
            Integer idx = inputIndex.get(e.getKey());
            if (idx == null || e.getValue() == null) {
                throw badNames(feeds, inputIndex, inputs.keySet(), "input");
            }
            s.set(n + i, e.getValue().beginRunUse(s, "input", e.getKey()));
            s.set(i++, inputNameAddresses[idx]);
        }
    }

    /** Like {@link #putInputs} for preallocated outputs, at words [at, at + n) and [at + n, at + 2n). */
    private void putPreallocated(RunScratch s, Map<String, ? extends OnnxTensorLike> given, int at, int n) {
        int o = 0;
        if (outputNameList.length <= LOOKUP_LIMIT) {
            for (int k = 0; k < outputNameList.length && o < n; k++) {
                OnnxTensorLike t = given.get(outputNameList[k]);
                if (t != null) {
                    t.checkCanReceive(outputNameList[k], outputTypes[k]);
                    s.set(at + n + o, t.beginRunUse(s, "output", outputNameList[k]));
                    s.set(at + o++, outputNameAddresses[k]);
                }
            }
            if (o != n) {
                throw badNames(given, outputIndex, outputs.keySet(), "preallocated output");
            }
            return;
        }
        for (Map.Entry<String, ? extends OnnxTensorLike> e : given.entrySet()) {
            Integer idx = outputIndex.get(e.getKey());
            if (idx == null || e.getValue() == null) {
                throw badNames(given, outputIndex, outputs.keySet(), "preallocated output");
            }
            e.getValue().checkCanReceive(e.getKey(), outputTypes[idx]);
            s.set(at + n + o, e.getValue().beginRunUse(s, "output", e.getKey()));
            s.set(at + o++, outputNameAddresses[idx]);
        }
    }

    /** What is wrong with a map of tensors: a name the model lacks, or a null tensor. */
    private static OrtException badNames(Map<String, ? extends OnnxTensorLike> m, Map<String, Integer> index,
            Set<String> modelNames, String what) {
        for (Map.Entry<String, ? extends OnnxTensorLike> e : m.entrySet()) {
            if (!index.containsKey(e.getKey())) {
                String kind = what.endsWith("input") ? "input" : "output";
                return new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "unknown " + kind + " '" + e.getKey()
                        + "'; the model's " + kind + "s are " + modelNames);
            }
            if (e.getValue() == null) {
                return new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, what + " '" + e.getKey() + "' is null");
            }
        }
        return new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "the " + what + "s changed during the run");
    }

    /** Lets the custom-op domains fail a run that succeeded (their kernels' deferred device errors). */
    private void afterRun() {
        for (OrtCustomOpDomain d : domainArray) {
            d.afterRun(kernelScope);
        }
    }

    /**
     * Whether this session captures its runs as graphs and replays them (a provider with
     * {@link ExecutionProvider#capturesGraphs()}, e.g. the CUDA provider with {@code enable_cuda_graph}):
     * then each IO binding must keep its tensors at the addresses of its first run (see
     * {@link OrtIoBinding}).
     */
    public boolean capturesGraphs() {
        return capturesGraphs;
    }

    /** A new IO binding for this session ({@code CreateIoBinding}); the caller closes it. */
    public OrtIoBinding createIoBinding() {
        try (Lease session = Handles.acquire(this); Arena arena = Arena.ofConfined()) {
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
            return;
        }
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
        binding.lockForRun(); // one run of a binding at a time (OrtIoBinding: Threads)
        try {
            RunScratch s = RunScratch.take(0);
            try {
                long runOptions = beginRun(s, options);
                String graph = capturesGraphs ? RunOptions.graphId(options) : null; // null: no graph to keep addresses for
                long b = binding.beginRun(s, graph);
                long status = Api.Direct.runWithBinding(Handles.address(this), runOptions, b);
                if (status != 0) {
                    ComputeStatuses.afterFailedRun();
                    throw Api.toException(MemorySegment.ofAddress(status), "run with IO binding");
                }
                binding.afterRun(graph);
                afterRun();
            } finally {
                s.give();
            }
        } finally {
            binding.unlockAfterRun();
        }
    }

    /**
     * The allocator this session uses for memory described by {@code info} ({@code CreateAllocator}),
     * e.g. {@code OrtMemoryInfo.cuda(0)} for the CUDA provider's device memory. The caller closes it;
     * it stays usable after the session closes (see {@link OrtAllocator}).
     */
    public OrtAllocator getAllocator(OrtMemoryInfo info) {
        try (Lease session = Handles.acquire(this); Lease i = Handles.acquire(info); Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            Api.checkStatus(OrtApi.CreateAllocator.invoke(Api.Allocator.CreateAllocator, session.handle(), i.handle(), out),
                    "no allocator for " + info + " in this session");
            return new OrtAllocator(out.get(ADDRESS, 0));
        }
    }

    /** Ends ORT profiling (enabled in the options) and returns the profile file's name. */
    public String endProfiling() {
        try (Lease session = Handles.acquire(this); Arena arena = Arena.ofConfined()) {
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
            throw new OrtException(OrtErrorCode.ORT_NO_SUCHFILE, "cannot read the model " + path + ": " + e, e);
        }
    }
}
