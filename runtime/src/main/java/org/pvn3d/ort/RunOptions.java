package org.pvn3d.ort;

import static java.lang.foreign.ValueLayout.ADDRESS;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.pvn3d.ort.ffm.OrtApi;
import org.pvn3d.ort.internal.Api;
import org.pvn3d.ort.internal.NativeObject;

/** Per-run options ({@code OrtRunOptions}): a tag for the log, a log level, and termination. */
public final class RunOptions extends NativeObject {
    public RunOptions() {
        super("OrtRunOptions", createRunOptions());
    }

    private static MemorySegment createRunOptions() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            Api.checkStatus(OrtApi.CreateRunOptions.invoke(Api.RunOptions.CreateRunOptions, out));
            return out.get(ADDRESS, 0);
        }
    }

    public RunOptions setRunTag(String tag) {
        try (Arena arena = Arena.ofConfined()) {
            Api.checkStatus(OrtApi.RunOptionsSetRunTag.invoke(Api.RunOptions.RunOptionsSetRunTag, handle(), arena.allocateFrom(tag)));
        }
        return this;
    }

    public RunOptions setLogLevel(OrtLoggingLevel level) {
        Api.checkStatus(OrtApi.RunOptionsSetRunLogSeverityLevel.invoke(Api.RunOptions.RunOptionsSetRunLogSeverityLevel, handle(), level.value()));
        return this;
    }

    public RunOptions setLogVerbosityLevel(int level) {
        Api.checkStatus(OrtApi.RunOptionsSetRunLogVerbosityLevel.invoke(Api.RunOptions.RunOptionsSetRunLogVerbosityLevel, handle(), level));
        return this;
    }

    /** Asks runs using these options to stop as soon as they can (they fail with an error). */
    public RunOptions setTerminate() {
        Api.checkStatus(OrtApi.RunOptionsSetTerminate.invoke(Api.RunOptions.RunOptionsSetTerminate, handle()));
        return this;
    }

    public RunOptions unsetTerminate() {
        Api.checkStatus(OrtApi.RunOptionsUnsetTerminate.invoke(Api.RunOptions.RunOptionsUnsetTerminate, handle()));
        return this;
    }

    /** A run configuration entry (see ORT's onnxruntime_run_options_config_keys.h). */
    public RunOptions addRunConfigEntry(String key, String value) {
        try (Arena arena = Arena.ofConfined()) {
            Api.checkStatus(OrtApi.AddRunConfigEntry.invoke(Api.RunOptions.AddRunConfigEntry, handle(), arena.allocateFrom(key),
                    arena.allocateFrom(value)), "run config entry " + key);
        }
        return this;
    }

    @Override
    protected void releaseNative(MemorySegment handle) {
        OrtApi.ReleaseRunOptions.invoke(Api.RunOptions.ReleaseRunOptions, handle);
    }
}
