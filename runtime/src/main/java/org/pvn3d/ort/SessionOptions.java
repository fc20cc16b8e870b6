package org.pvn3d.ort;

import static java.lang.foreign.ValueLayout.ADDRESS;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import org.pvn3d.ort.ffm.OrtApi;
import org.pvn3d.ort.internal.Api;
import org.pvn3d.ort.internal.NativeObject;

/**
 * Options for creating a session ({@code OrtSessionOptions}). Setters return {@code this}. A session
 * takes what it needs from the options when it is created; they may be closed (or reused) after.
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

    private final List<Object> dependencies = new ArrayList<>();

    public SessionOptions() {
        super("OrtSessionOptions", createOptions());
    }

    private static MemorySegment createOptions() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            Api.checkStatus(OrtApi.CreateSessionOptions.invoke(Api.Options.CreateSessionOptions, out));
            return out.get(ADDRESS, 0);
        }
    }

    public SessionOptions setOptimizationLevel(OptLevel level) {
        Api.checkStatus(OrtApi.SetSessionGraphOptimizationLevel.invoke(Api.Options.SetSessionGraphOptimizationLevel, handle(), level.value()));
        return this;
    }

    /** Threads for parallelism inside an operator; 0 lets ORT choose. */
    public SessionOptions setIntraOpNumThreads(int threads) {
        Api.checkStatus(OrtApi.SetIntraOpNumThreads.invoke(Api.Options.SetIntraOpNumThreads, handle(), threads));
        return this;
    }

    /** Threads for running independent operators at once (with {@link ExecutionMode#PARALLEL}). */
    public SessionOptions setInterOpNumThreads(int threads) {
        Api.checkStatus(OrtApi.SetInterOpNumThreads.invoke(Api.Options.SetInterOpNumThreads, handle(), threads));
        return this;
    }

    public SessionOptions setExecutionMode(ExecutionMode mode) {
        Api.checkStatus(OrtApi.SetSessionExecutionMode.invoke(Api.Options.SetSessionExecutionMode, handle(), mode.value()));
        return this;
    }

    /** ORT's memory pattern optimisation (pre-planned buffers for repeated shapes). */
    public SessionOptions setMemoryPatternOptimization(boolean enable) {
        Api.checkStatus(enable ? OrtApi.EnableMemPattern.invoke(Api.Options.EnableMemPattern, handle())
                : OrtApi.DisableMemPattern.invoke(Api.Options.DisableMemPattern, handle()));
        return this;
    }

    /** ORT's CPU arena allocator. */
    public SessionOptions setCPUArenaAllocator(boolean enable) {
        Api.checkStatus(enable ? OrtApi.EnableCpuMemArena.invoke(Api.Options.EnableCpuMemArena, handle())
                : OrtApi.DisableCpuMemArena.invoke(Api.Options.DisableCpuMemArena, handle()));
        return this;
    }

    /** Writes an ORT profile (JSON, chrome://tracing format) to files starting with {@code prefix}. */
    public SessionOptions enableProfiling(String prefix) {
        try (Arena arena = Arena.ofConfined()) {
            Api.checkStatus(OrtApi.EnableProfiling.invoke(Api.Options.EnableProfiling, handle(), arena.allocateFrom(prefix)));
        }
        return this;
    }

    public SessionOptions disableProfiling() {
        Api.checkStatus(OrtApi.DisableProfiling.invoke(Api.Options.DisableProfiling, handle()));
        return this;
    }

    /** Fixes a symbolic dimension by its name (e.g. "batch" = 1), letting ORT plan for it. */
    public SessionOptions addFreeDimensionOverrideByName(String dimensionName, long value) {
        try (Arena arena = Arena.ofConfined()) {
            Api.checkStatus(OrtApi.AddFreeDimensionOverrideByName.invoke(Api.Options.AddFreeDimensionOverrideByName, handle(),
                    arena.allocateFrom(dimensionName), value));
        }
        return this;
    }

    /** Fixes a dimension by its denotation (e.g. "DATA_BATCH"). */
    public SessionOptions addFreeDimensionOverride(String denotation, long value) {
        try (Arena arena = Arena.ofConfined()) {
            Api.checkStatus(OrtApi.AddFreeDimensionOverride.invoke(Api.Options.AddFreeDimensionOverride, handle(),
                    arena.allocateFrom(denotation), value));
        }
        return this;
    }

    /** A session configuration entry (see ORT's onnxruntime_session_options_config_keys.h). */
    public SessionOptions addConfigEntry(String key, String value) {
        try (Arena arena = Arena.ofConfined()) {
            Api.checkStatus(OrtApi.AddSessionConfigEntry.invoke(Api.Options.AddSessionConfigEntry, handle(),
                    arena.allocateFrom(key), arena.allocateFrom(value)), "config entry " + key);
        }
        return this;
    }

    public SessionOptions setSessionLogLevel(OrtLoggingLevel level) {
        Api.checkStatus(OrtApi.SetSessionLogSeverityLevel.invoke(Api.Options.SetSessionLogSeverityLevel, handle(), level.value()));
        return this;
    }

    public SessionOptions setSessionLogVerbosityLevel(int level) {
        Api.checkStatus(OrtApi.SetSessionLogVerbosityLevel.invoke(Api.Options.SetSessionLogVerbosityLevel, handle(), level));
        return this;
    }

    public SessionOptions setLogId(String id) {
        try (Arena arena = Arena.ofConfined()) {
            Api.checkStatus(OrtApi.SetSessionLogId.invoke(Api.Options.SetSessionLogId, handle(), arena.allocateFrom(id)));
        }
        return this;
    }

    /** Saves the optimised graph to {@code path} when a session is created. */
    public SessionOptions setOptimizedModelFilePath(String path) {
        try (Arena arena = Arena.ofConfined()) {
            Api.checkStatus(OrtApi.SetOptimizedModelFilePath.invoke(Api.Options.SetOptimizedModelFilePath, handle(),
                    arena.allocateFrom(path)));
        }
        return this;
    }

    /**
     * Keeps {@code dependency} (e.g. a custom-operator domain and its upcall stubs) alive for as
     * long as these options or any session created from them exist.
     */
    public void keepAlive(Object dependency) {
        handle();
        synchronized (dependencies) {
            dependencies.add(dependency);
        }
    }

    List<Object> dependencies() {
        synchronized (dependencies) {
            return new ArrayList<>(dependencies);
        }
    }

    // ---- custom operators and the CUDA provider (issue 4, the custom-operator bridge) ----

    /**
     * Adds a custom-operator domain ({@code AddCustomOpDomain}); these options and every session
     * created from them keep its native structures alive.
     */
    public SessionOptions registerCustomOps(org.pvn3d.ort.customop.CustomOpDomain domain) {
        domain.registerOn(this);
        return this;
    }

    /** Adds ORT's CUDA execution provider with {@code cudaOptions} (ahead of the CPU provider). */
    public SessionOptions addCUDA(org.pvn3d.ort.providers.OrtCUDAProviderOptions cudaOptions) {
        cudaOptions.appendTo(this);
        return this;
    }

    /** Adds ORT's CUDA execution provider on {@code deviceId} with default settings. */
    public SessionOptions addCUDA(int deviceId) {
        return addCUDA(new org.pvn3d.ort.providers.OrtCUDAProviderOptions(deviceId));
    }

    // ---- end of the custom-operator bridge block ----

    @Override
    protected void releaseNative(MemorySegment handle) {
        OrtApi.ReleaseSessionOptions.invoke(Api.Options.ReleaseSessionOptions, handle);
    }

    /** Drops what the options held for their sessions (each session holds its own claim). */
    @Override
    protected void afterClose() {
        List<Object> held;
        synchronized (dependencies) {
            held = new ArrayList<>(dependencies);
            dependencies.clear();
        }
        for (Object d : held) {
            if (d instanceof AutoCloseable c) {
                try {
                    c.close();
                } catch (Exception e) {
                    throw new OrtException(OrtErrorCode.ORT_JAVA_UNKNOWN, "closing " + d + ": " + e, e);
                }
            }
        }
    }
}
