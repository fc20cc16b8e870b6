package org.pvn3d.ort;

import static java.lang.foreign.ValueLayout.ADDRESS;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.pvn3d.ort.ffm.OrtApi;
import org.pvn3d.ort.internal.Api;
import org.pvn3d.ort.internal.Handles;
import org.pvn3d.ort.internal.CString;

/** Per-run options ({@code OrtRunOptions}): a tag for the log, a log level, and termination. */
public final class RunOptions extends NativeObject {
    private volatile String runTag = "";
    private volatile String graphId = DEFAULT_GRAPH;

    public RunOptions() {
        super("OrtRunOptions", createRunOptions());
    }

    private static MemorySegment createRunOptions() {
        org.pvn3d.ort.internal.OrtLibrary.require();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            Api.checkStatus(OrtApi.CreateRunOptions.invoke(Api.RunOptions.CreateRunOptions, out));
            return out.get(ADDRESS, 0);
        }
    }

    public RunOptions setRunTag(String tag) {
        Handles.call(this, null, (o, a) ->
                OrtApi.RunOptionsSetRunTag.invoke(Api.RunOptions.RunOptionsSetRunTag, o, CString.of(a, tag)));
        runTag = tag;
        return this;
    }

    /** The tag set with {@link #setRunTag}, or "" (ORT's log and the JFR Run event show it). */
    public String getRunTag() {
        return runTag;
    }

    public RunOptions setLogLevel(OrtLoggingLevel level) {
        return Handles.call(this, null, (o, a) -> OrtApi.RunOptionsSetRunLogSeverityLevel.invoke(
                Api.RunOptions.RunOptionsSetRunLogSeverityLevel, o, level.value()));
    }

    public RunOptions setLogVerbosityLevel(int level) {
        return Handles.call(this, null, (o, a) -> OrtApi.RunOptionsSetRunLogVerbosityLevel.invoke(
                Api.RunOptions.RunOptionsSetRunLogVerbosityLevel, o, level));
    }

    /** Asks runs using these options to stop as soon as they can (they fail with an error). */
    public RunOptions setTerminate() {
        return Handles.call(this, null, (o, a) ->
                OrtApi.RunOptionsSetTerminate.invoke(Api.RunOptions.RunOptionsSetTerminate, o));
    }

    public RunOptions unsetTerminate() {
        return Handles.call(this, null, (o, a) ->
                OrtApi.RunOptionsUnsetTerminate.invoke(Api.RunOptions.RunOptionsUnsetTerminate, o));
    }

    /**
     * A run configuration entry (see ORT's onnxruntime_run_options_config_keys.h). {@value #GPU_GRAPH_ID}
     * picks which of a session's captured graphs a run uses ("-1": none); an {@link OrtIoBinding} keeps the
     * addresses of each graph's first run apart.
     */
    public RunOptions addRunConfigEntry(String key, String value) {
        Handles.call(this, "run config entry " + key, (o, a) -> OrtApi.AddRunConfigEntry.invoke(
                Api.RunOptions.AddRunConfigEntry, o, CString.of(a, key), CString.of(a, value)));
        if (GPU_GRAPH_ID.equals(key)) {
            graphId = value;
        }
        return this;
    }

    /** ORT's run configuration key of the graph a run captures or replays. */
    public static final String GPU_GRAPH_ID = "gpu_graph_id";
    static final String DEFAULT_GRAPH = "0";
    private static final String NO_GRAPH = "-1";

    /**
     * The graph id a run with {@code options} (may be null) uses in a graph-capturing session (ORT's default
     * is 0), or null when it runs without a graph ("-1").
     */
    static String graphId(RunOptions options) {
        String id = options == null ? DEFAULT_GRAPH : options.graphId;
        return NO_GRAPH.equals(id) ? null : id;
    }

    @Override
    protected void releaseNative(MemorySegment handle) {
        OrtApi.ReleaseRunOptions.invoke(Api.RunOptions.ReleaseRunOptions, handle);
    }
}
