package org.pvn3d.ort;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.System.Logger.Level;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.pvn3d.ort.ffm.OrtApi;
import org.pvn3d.ort.ffm.OrtLoggingFunction;
import org.pvn3d.ort.internal.Api;
import org.pvn3d.ort.internal.Handles;
import org.pvn3d.ort.internal.Lease;
import org.pvn3d.ort.internal.CString;

/**
 * The ORT environment ({@code OrtEnv}): one per process, as in ORT's own Java API. ORT's log goes to
 * the {@link System.Logger} named {@value #ORT_LOGGER}, at the level {@link OrtLoggingLevel#javaLevel()}
 * says.
 *
 * <p>Sessions keep their environment alive: {@link #close()} releases the native environment only once
 * the last session created from it has been closed too. After that, {@link #getEnvironment()} creates
 * a new one.
 */
public final class OrtEnvironment implements AutoCloseable {
    /** The name of the Java logger ORT's own messages go to. */
    public static final String ORT_LOGGER = "onnxruntime";
    public static final String DEFAULT_LOG_ID = "pvn3d-ort";
    /** The session configuration key by which a session takes its allocators from the environment. */
    public static final String USE_ENV_ALLOCATORS = "session.use_env_allocators";

    private static final System.Logger ORT_LOG = System.getLogger(ORT_LOGGER);
    private static final MemorySegment LOG_CALLBACK =
            OrtLoggingFunction.allocate(OrtEnvironment::log, Arena.global());

    private static OrtEnvironment instance;

    private final EnvHandle env;
    private final OrtLoggingLevel level;
    private final String logId;
    private final List<JavaAllocator> javaAllocators = new CopyOnWriteArrayList<>();

    private OrtEnvironment(EnvHandle env, OrtLoggingLevel level, String logId) {
        this.env = env;
        this.level = level;
        this.logId = logId;
    }

    /** The process's environment, created at {@code WARNING} level on first use. */
    public static OrtEnvironment getEnvironment() {
        return getEnvironment(OrtLoggingLevel.ORT_LOGGING_LEVEL_WARNING, DEFAULT_LOG_ID);
    }

    /**
     * The process's environment, created with this logging level and id if there is none yet (an
     * existing one is returned as it is, like ORT's Java API does).
     */
    public static synchronized OrtEnvironment getEnvironment(OrtLoggingLevel level, String logId) {
        if (instance == null || instance.isClosed()) {
            org.pvn3d.ort.internal.OrtLibrary.require();
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment out = arena.allocate(ADDRESS);
                Api.checkStatus(OrtApi.CreateEnvWithCustomLogger.invoke(Api.Env.CreateEnvWithCustomLogger, LOG_CALLBACK,
                        MemorySegment.NULL, level.value(), CString.of(arena, logId), out), "CreateEnv");
                instance = new OrtEnvironment(new EnvHandle(out.get(ADDRESS, 0)), level, logId);
            }
        }
        return instance;
    }

    public OrtLoggingLevel getLoggingLevel() {
        return level;
    }

    public String getLogId() {
        return logId;
    }

    /** The runtime this environment runs on (version, path). */
    public OrtRuntime getRuntime() {
        return OrtRuntime.get();
    }

    /** The execution providers the loaded runtime was built with, e.g. CUDAExecutionProvider. */
    public List<String> getAvailableProviders() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment arrayOut = arena.allocate(ADDRESS);
            MemorySegment countOut = arena.allocate(JAVA_INT);
            Api.checkStatus(OrtApi.GetAvailableProviders.invoke(Api.Env.GetAvailableProviders, arrayOut, countOut));
            int n = countOut.get(JAVA_INT, 0);
            MemorySegment array = arrayOut.get(ADDRESS, 0).reinterpret(ADDRESS.byteSize() * n);
            List<String> out = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                out.add(array.getAtIndex(ADDRESS, i).reinterpret(Long.MAX_VALUE).getString(0));
            }
            Api.checkStatus(OrtApi.ReleaseAvailableProviders.invoke(Api.Env.ReleaseAvailableProviders, array, n));
            return out;
        }
    }

    /** Creates a session from a model file. */
    public OrtSession createSession(Path model, SessionOptions options) {
        java.util.Objects.requireNonNull(model, "model path is null");
        java.util.Objects.requireNonNull(options, "session options are null");
        return OrtSession.create(this, model, null, options);
    }

    public OrtSession createSession(String model, SessionOptions options) {
        return createSession(Path.of(model), options);
    }

    public OrtSession createSession(Path model) {
        try (SessionOptions options = new SessionOptions()) {
            return createSession(model, options);
        }
    }

    public OrtSession createSession(String model) {
        return createSession(Path.of(model));
    }

    /** Creates a session from a model held in memory. */
    public OrtSession createSession(byte[] model, SessionOptions options) {
        java.util.Objects.requireNonNull(model, "model bytes are null");
        java.util.Objects.requireNonNull(options, "session options are null");
        return OrtSession.create(this, null, model, options);
    }

    public OrtSession createSession(byte[] model) {
        try (SessionOptions options = new SessionOptions()) {
            return createSession(model, options);
        }
    }

    /** A hold on the native environment for a session, which keeps it alive until the session closes. */
    Lease retain() {
        return Handles.retain(env);
    }

    public boolean isClosed() {
        return env.isClosed();
    }

    /** Closes this environment; the native one goes once its sessions are closed too. Idempotent. */
    @Override
    public void close() {
        env.close();
    }

    /**
     * Creates an allocator for {@code info} (CPU memory: ORT 1.16 accepts only CPU here) with the
     * arena settings of {@code arena} (null: ORT's defaults) and registers it for sharing
     * ({@code CreateAndRegisterAllocator}). Sessions created with {@link #USE_ENV_ALLOCATORS} = "1" use
     * it instead of their own arena. It lives as long as the native environment or until
     * {@link #unregisterAllocator(OrtMemoryInfo)} (sessions that took it keep it). {@code info} may be
     * closed afterwards.
     */
    public void createAndRegisterAllocator(OrtMemoryInfo info, OrtArenaConfig arena) {
        try (Lease e = Handles.acquire(env); Lease i = Handles.acquire(info); Arena a = Arena.ofConfined()) {
            MemorySegment cfg = arena == null ? MemorySegment.NULL : arena.toNative(a);
            try {
                Api.checkStatus(OrtApi.CreateAndRegisterAllocator.invoke(Api.Env.CreateAndRegisterAllocator,
                        e.handle(), i.handle(), cfg), "CreateAndRegisterAllocator(" + info + ", " + arena + ")");
            } finally {
                OrtArenaConfig.release(cfg);
            }
        }
    }

    /**
     * Like {@link #createAndRegisterAllocator(OrtMemoryInfo, OrtArenaConfig)} for a provider's memory
     * ({@code CreateAndRegisterAllocatorV2}), e.g. provider "CUDA" with {@code OrtMemoryInfo.cuda(0)} and
     * CUDA provider options such as {@code device_id}.
     */
    public void createAndRegisterAllocator(String providerType, OrtMemoryInfo info, OrtArenaConfig arena,
            Map<String, String> providerOptions) {
        try (Lease e = Handles.acquire(env); Lease i = Handles.acquire(info); Arena a = Arena.ofConfined()) {
            int n = providerOptions.size();
            MemorySegment keys = a.allocate(ADDRESS, Math.max(1, n));
            MemorySegment values = a.allocate(ADDRESS, Math.max(1, n));
            int k = 0;
            for (Map.Entry<String, String> o : providerOptions.entrySet()) {
                keys.setAtIndex(ADDRESS, k, CString.of(a, o.getKey()));
                values.setAtIndex(ADDRESS, k, CString.of(a, o.getValue()));
                k++;
            }
            MemorySegment cfg = arena == null ? MemorySegment.NULL : arena.toNative(a);
            try {
                Api.checkStatus(OrtApi.CreateAndRegisterAllocatorV2.invoke(Api.Env.CreateAndRegisterAllocatorV2,
                        e.handle(), CString.of(a, providerType), i.handle(), cfg, keys, values, n),
                        "CreateAndRegisterAllocatorV2(" + providerType + ", " + info + ", " + arena + ")");
            } finally {
                OrtArenaConfig.release(cfg);
            }
        }
    }

    /**
     * Registers an allocator implemented in Java ({@code RegisterAllocator}) for sessions created with
     * {@link #USE_ENV_ALLOCATORS} = "1". The environment keeps it referenced while registered; its
     * native parts are kept for the life of the process from now on (see {@link JavaAllocator}).
     */
    public void registerAllocator(JavaAllocator allocator) {
        try (Lease e = Handles.acquire(env)) {
            Api.checkStatus(OrtApi.RegisterAllocator.invoke(Api.Env.RegisterAllocator, e.handle(), allocator.struct()),
                    "RegisterAllocator(" + allocator.getMemoryInfo() + ")");
            allocator.markRegistered();
            javaAllocators.add(allocator);
        }
    }

    /**
     * Unregisters the shared allocator for {@code info} ({@code UnregisterAllocator}; the description
     * must equal the registered one). Sessions created before keep using it; new ones no longer get it.
     */
    public void unregisterAllocator(OrtMemoryInfo info) {
        try (Lease e = Handles.acquire(env); Lease i = Handles.acquire(info)) {
            Api.checkStatus(OrtApi.UnregisterAllocator.invoke(Api.Env.UnregisterAllocator, e.handle(), i.handle()),
                    "UnregisterAllocator(" + info + ")");
        }
    }

    /** Unregisters a Java allocator registered with {@link #registerAllocator(JavaAllocator)}. */
    public void unregisterAllocator(JavaAllocator allocator) {
        if (!javaAllocators.contains(allocator)) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, allocator + " is not registered with this environment");
        }
        unregisterAllocator(allocator.getMemoryInfo());
        javaAllocators.remove(allocator);
    }

    private static void log(MemorySegment param, int severity, MemorySegment category, MemorySegment logId,
            MemorySegment codeLocation, MemorySegment message) {
        // An upcall must never throw: an exception here would end the JVM.
        try {
            OrtLoggingLevel level = OrtLoggingLevel.of(severity);
            Level javaLevel = level.javaLevel();
            if (ORT_LOG.isLoggable(javaLevel)) {
                ORT_LOG.log(javaLevel, "[{0}] {1} {2}", cString(logId), cString(codeLocation), cString(message));
            }
        } catch (Throwable t) {
            // nothing sensible to do: dropping one log line is better than crashing
        }
    }

    private static String cString(MemorySegment s) {
        return s.address() == 0 ? "" : s.reinterpret(Long.MAX_VALUE).getString(0);
    }

    @Override
    public String toString() {
        return "OrtEnvironment(" + logId + ", " + level + ", " + OrtRuntime.get() + ")";
    }

    private static final class EnvHandle extends NativeObject {
        EnvHandle(MemorySegment handle) {
            super("OrtEnv", handle);
        }

        @Override
        protected OrtException closedException() {
            return new OrtException("OrtEnvironment is closed");
        }

        @Override
        protected void releaseNative(MemorySegment handle) {
            OrtApi.ReleaseEnv.invoke(Api.Env.ReleaseEnv, handle);
        }
    }
}
