package org.pvn3d.ort;

import static java.lang.foreign.ValueLayout.ADDRESS;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.pvn3d.ort.ffm.OrtApi;
import org.pvn3d.ort.internal.Api;
import org.pvn3d.ort.internal.Handles;
import org.pvn3d.ort.internal.Lease;
import org.pvn3d.ort.internal.CString;

/**
 * Options for creating a session ({@code OrtSessionOptions}): settings, execution providers and
 * custom operators. Setters return {@code this}. A session takes what it needs from the options when it
 * is created (the custom-op domains included); they may be closed (or reused) after.
 */
public final class SessionOptions extends NativeObject {
    /** Graph optimisation levels ({@code GraphOptimizationLevel}). */
    public enum OptLevel {
        NO_OPT(0), BASIC_OPT(1), EXTENDED_OPT(2), ALL_OPT(99);

        private final int value;

        OptLevel(int value) {
            this.value = value;
        }

        public int value() {
            return value;
        }
    }

    /** {@code ExecutionMode}: operators one after another, or independent branches in parallel. */
    public enum ExecutionMode {
        SEQUENTIAL(0), PARALLEL(1);

        private final int value;

        ExecutionMode(int value) {
            this.value = value;
        }

        public int value() {
            return value;
        }
    }

    private final List<AddedDomain> domains = new ArrayList<>();
    private final List<String> providers = new ArrayList<>();
    private final Map<String, String> configEntries = new LinkedHashMap<>();
    private volatile boolean capturesGraphs;
    private volatile boolean profiling;

    public SessionOptions() {
        super("OrtSessionOptions", createOptions());
    }

    private static MemorySegment createOptions() {
        org.pvn3d.ort.internal.OrtLibrary.require();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            Api.checkStatus(OrtApi.CreateSessionOptions.invoke(Api.Options.CreateSessionOptions, out));
            return out.get(ADDRESS, 0);
        }
    }

    public SessionOptions setOptimizationLevel(OptLevel level) {
        return Handles.call(this, null, (o, a) -> OrtApi.SetSessionGraphOptimizationLevel.invoke(
                Api.Options.SetSessionGraphOptimizationLevel, o, level.value()));
    }

    /** Threads for parallelism inside an operator; 0 lets ORT choose. A negative count is refused. */
    public SessionOptions setIntraOpNumThreads(int threads) {
        checkThreads("intra-op", threads);
        return Handles.call(this, null, (o, a) ->
                OrtApi.SetIntraOpNumThreads.invoke(Api.Options.SetIntraOpNumThreads, o, threads));
    }

    /**
     * Threads for running independent operators at once (with {@link ExecutionMode#PARALLEL}); 0 lets ORT
     * choose. A negative count is refused.
     */
    public SessionOptions setInterOpNumThreads(int threads) {
        checkThreads("inter-op", threads);
        return Handles.call(this, null, (o, a) ->
                OrtApi.SetInterOpNumThreads.invoke(Api.Options.SetInterOpNumThreads, o, threads));
    }

    /** ORT takes a negative count without a word; refuse it here, where the mistake is made. */
    private static void checkThreads(String which, int threads) {
        if (threads < 0) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "the " + which + " thread count must be 0 (ORT "
                    + "chooses) or more, not " + threads);
        }
    }

    public SessionOptions setExecutionMode(ExecutionMode mode) {
        return Handles.call(this, null, (o, a) ->
                OrtApi.SetSessionExecutionMode.invoke(Api.Options.SetSessionExecutionMode, o, mode.value()));
    }

    /** ORT's memory pattern optimisation (pre-planned buffers for repeated shapes). */
    public SessionOptions setMemoryPatternOptimization(boolean enable) {
        return Handles.call(this, null, (o, a) -> enable ? OrtApi.EnableMemPattern.invoke(Api.Options.EnableMemPattern, o)
                : OrtApi.DisableMemPattern.invoke(Api.Options.DisableMemPattern, o));
    }

    /** ORT's CPU arena allocator. */
    public SessionOptions setCPUArenaAllocator(boolean enable) {
        return Handles.call(this, null, (o, a) -> enable ? OrtApi.EnableCpuMemArena.invoke(Api.Options.EnableCpuMemArena, o)
                : OrtApi.DisableCpuMemArena.invoke(Api.Options.DisableCpuMemArena, o));
    }

    /** Writes an ORT profile (JSON, chrome://tracing format) to files starting with {@code prefix}. */
    public SessionOptions enableProfiling(String prefix) {
        Handles.call(this, null, (o, a) ->
                OrtApi.EnableProfiling.invoke(Api.Options.EnableProfiling, o, CString.of(a, prefix)));
        profiling = true;
        return this;
    }

    /**
     * Writes an ORT profile into {@code folder} (made if missing): ORT names the file
     * {@code <name>_<date and time>.json}; {@link OrtSession#endProfiling()} returns its path.
     */
    public SessionOptions enableProfiling(Path folder, String name) {
        try {
            Files.createDirectories(folder);
        } catch (java.io.IOException e) {
            throw new OrtException(OrtErrorCode.ORT_NO_SUCHFILE, "cannot make the profile folder " + folder + ": "
                    + (e instanceof java.nio.file.FileSystemException f && f.getReason() != null ? f.getReason()
                            : e instanceof java.nio.file.FileAlreadyExistsException ? "a file is in the way" : String.valueOf(e.getMessage())), e);
        }
        return enableProfiling(folder.resolve(name).toString());
    }

    public SessionOptions disableProfiling() {
        Handles.call(this, null, (o, a) -> OrtApi.DisableProfiling.invoke(Api.Options.DisableProfiling, o));
        profiling = false;
        return this;
    }

    /** Whether ORT's profiler is on for sessions created from these options. */
    public boolean isProfiling() {
        return profiling;
    }

    /** Fixes a symbolic dimension by its name (e.g. "batch" = 1), letting ORT plan for it. */
    public SessionOptions addFreeDimensionOverrideByName(String dimensionName, long value) {
        return Handles.call(this, null, (o, a) -> OrtApi.AddFreeDimensionOverrideByName.invoke(
                Api.Options.AddFreeDimensionOverrideByName, o, CString.of(a, dimensionName), value));
    }

    /** Fixes a dimension by its denotation (e.g. "DATA_BATCH"). */
    public SessionOptions addFreeDimensionOverride(String denotation, long value) {
        return Handles.call(this, null, (o, a) ->
                OrtApi.AddFreeDimensionOverride.invoke(Api.Options.AddFreeDimensionOverride, o, CString.of(a, denotation),
                        value));
    }

    /**
     * A session configuration entry (see ORT's onnxruntime_session_options_config_keys.h); a key added again
     * takes the new value.
     */
    public SessionOptions addConfigEntry(String key, String value) {
        Handles.call(this, "config entry " + key, (o, a) -> OrtApi.AddSessionConfigEntry.invoke(
                Api.Options.AddSessionConfigEntry, o, CString.of(a, key), CString.of(a, value)));
        synchronized (configEntries) {
            configEntries.put(key, value);
        }
        return this;
    }

    /** The configuration entries added so far, in the order they were first added (as ORT's Java API has it). */
    public Map<String, String> getConfigEntries() {
        synchronized (configEntries) {
            return Collections.unmodifiableMap(new LinkedHashMap<>(configEntries));
        }
    }

    public SessionOptions setSessionLogLevel(OrtLoggingLevel level) {
        return Handles.call(this, null, (o, a) ->
                OrtApi.SetSessionLogSeverityLevel.invoke(Api.Options.SetSessionLogSeverityLevel, o, level.value()));
    }

    public SessionOptions setSessionLogVerbosityLevel(int level) {
        return Handles.call(this, null, (o, a) ->
                OrtApi.SetSessionLogVerbosityLevel.invoke(Api.Options.SetSessionLogVerbosityLevel, o, level));
    }

    public SessionOptions setLogId(String id) {
        return Handles.call(this, null, (o, a) ->
                OrtApi.SetSessionLogId.invoke(Api.Options.SetSessionLogId, o, CString.of(a, id)));
    }

    /** Saves the optimised graph to {@code path} when a session is created. */
    public SessionOptions setOptimizedModelFilePath(String path) {
        return Handles.call(this, null, (o, a) ->
                OrtApi.SetOptimizedModelFilePath.invoke(Api.Options.SetOptimizedModelFilePath, o, CString.of(a, path)));
    }

    /**
     * Adds an execution provider with its settings ahead of ORT's CPU provider, for example
     * {@code new OrtCUDAProviderOptions(0)}; providers added earlier are preferred.
     */
    public SessionOptions addExecutionProvider(ExecutionProvider provider) {
        try (Lease use = Handles.acquire(this)) {
            provider.appendTo(use.handle());
        }
        synchronized (providers) {
            providers.add(provider.getName());
        }
        if (provider.capturesGraphs()) { // as it is now: the provider was appended with these settings
            capturesGraphs = true;
        }
        return this;
    }

    /** Whether a provider added so far captures and replays graphs ({@link ExecutionProvider#capturesGraphs()}). */
    public boolean capturesGraphs() {
        return capturesGraphs;
    }

    /** The execution providers added so far, preferred first (ORT's CPU provider, always last, is not listed). */
    public List<String> getExecutionProviders() {
        synchronized (providers) {
            return List.copyOf(providers);
        }
    }

    /**
     * Adds a custom-operator domain ({@code AddCustomOpDomain}); these options and every session
     * created from them keep its native structures alive, so the domain may be closed at any time.
     */
    public SessionOptions registerCustomOps(OrtCustomOpDomain domain) {
        try (Lease use = Handles.acquire(this)) { // a close waits, and then finds the domain in the list
            AutoCloseable hold = domain.addTo(use.handle());
            synchronized (domains) {
                domains.add(new AddedDomain(domain, hold));
            }
        }
        return this;
    }

    /**
     * Registers the custom operators of a native library ({@code RegisterCustomOpsLibrary_V2}): ORT loads
     * {@code library} and calls its {@code RegisterCustomOps(OrtSessionOptions*, const OrtApiBase*)} entry
     * point with these options (onnxruntime-extensions is such a library). ORT owns the loaded library:
     * these options and every session created from them share its handle, and ORT unloads it once the
     * last of them is released, so nothing here needs keeping or closing. A missing file, or a library
     * that cannot be loaded or has no such entry point, is an {@link OrtException} naming the path.
     */
    public SessionOptions registerCustomOpsLibrary(Path library) {
        if (!Files.isRegularFile(library)) {
            throw new OrtException(OrtErrorCode.ORT_NO_SUCHFILE, "custom-op library " + library + " does not exist");
        }
        String path = library.toAbsolutePath().toString();
        return Handles.call(this, "cannot register the custom operators of " + library, (o, a) ->
                OrtApi.RegisterCustomOpsLibrary_V2.invoke(Api.Options.RegisterCustomOpsLibrary_V2, o, CString.of(a, path)));
    }

    /**
     * Registers custom operators by calling {@code functionName}, a function with the signature of
     * {@code RegisterCustomOps} ({@code RegisterCustomOpsUsingFunction}) that ORT looks up among the
     * symbols the process already has: the program's and those of libraries loaded with
     * {@code RTLD_GLOBAL} (the JVM's {@code System.load} does not put a library there). The library stays
     * the loader's to keep loaded. An unknown function is an {@link OrtException} naming it.
     */
    public SessionOptions registerCustomOpsUsingFunction(String functionName) {
        return Handles.call(this, "cannot register custom operators with the function " + functionName, (o, a) ->
                OrtApi.RegisterCustomOpsUsingFunction.invoke(Api.Options.RegisterCustomOpsUsingFunction, o,
                        CString.of(a, functionName)));
    }

    /** The custom-operator domains added so far, which each session created from these options holds. */
    List<OrtCustomOpDomain> customOpDomains() {
        synchronized (domains) {
            return domains.stream().map(AddedDomain::domain).toList();
        }
    }

    @Override
    protected void releaseNative(MemorySegment handle) {
        OrtApi.ReleaseSessionOptions.invoke(Api.Options.ReleaseSessionOptions, handle);
    }

    /** Drops the options' holds on their custom-op domains (each session holds its own). */
    @Override
    protected void afterClose() {
        List<AddedDomain> added;
        synchronized (domains) {
            added = new ArrayList<>(domains);
            domains.clear();
        }
        for (AddedDomain d : added) {
            try {
                d.hold().close();
            } catch (Exception e) {
                throw new OrtException(OrtErrorCode.ORT_JAVA_UNKNOWN, "releasing " + d.hold() + ": " + e, e);
            }
        }
    }

    /** A domain these options added, and the hold by which they keep it alive. */
    private record AddedDomain(OrtCustomOpDomain domain, AutoCloseable hold) {}
}
