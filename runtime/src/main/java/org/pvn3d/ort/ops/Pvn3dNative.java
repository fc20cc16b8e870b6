package org.pvn3d.ort.ops;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.OrtRuntime;
import org.pvn3d.ort.internal.NativeFiles;

/**
 * libpvn3d_ops (cuda-ops/include/pvn3d_ops.h), loaded once and bound into typed downcall handles.
 *
 * <p>Where the library comes from: the system property {@value #PATH_PROPERTY} or the environment
 * variable {@value #PATH_ENV} (the file itself, or a folder holding {@code libpvn3d_ops.so}), else
 * the copy inside this library's jar, extracted once to {@code <cache>/ops-<version>/}.
 *
 * <p>{@link #check} turns a non-OK {@code pvn3d_status} into an {@link OrtException} carrying the
 * calling thread's {@code pvn3d_last_error()} message: it must run on the thread that made the
 * failing call, right after it (the message is thread-local), which is the case in kernel compute.
 */
final class Pvn3dNative {
    static final String PATH_PROPERTY = "pvn3d.ops.path";
    static final String PATH_ENV = "PVN3D_OPS_PATH";
    static final String LIBRARY = "libpvn3d_ops.so";

    static final int OK = 0;
    static final int ERR_INVALID_ARGUMENT = 1;
    static final int ERR_INDEX_OUT_OF_RANGE = 2;
    static final int ERR_CUDA = 3;
    static final int ERR_NO_CUDA = 4;
    static final int ERR_OUT_OF_MEMORY = 5;

    static final Path PATH = locate();
    private static final SymbolLookup LOOKUP = load(PATH);
    private static final Linker LINKER = Linker.nativeLinker();

    private static final FunctionDescriptor STATUS_PTR = FunctionDescriptor.of(JAVA_INT, ADDRESS);

    // library information and errors
    static final MethodHandle LAST_ERROR = bind("pvn3d_last_error", FunctionDescriptor.of(ADDRESS));
    static final MethodHandle CLEAR_ERROR = bind("pvn3d_clear_error", FunctionDescriptor.ofVoid());
    static final MethodHandle STATUS_NAME = bind("pvn3d_status_name", FunctionDescriptor.of(ADDRESS, JAVA_INT));
    static final MethodHandle VERSION = bind("pvn3d_version", FunctionDescriptor.of(ADDRESS));
    static final MethodHandle BUILT_WITH_CUDA = bind("pvn3d_built_with_cuda", FunctionDescriptor.of(JAVA_INT));
    static final MethodHandle INDEX_ERROR_DESCRIBE = bind("pvn3d_index_error_describe",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG, JAVA_LONG, JAVA_LONG));

    // operators: (B, N, npoint, xyz, idx)
    static final MethodHandle FPS_CPU = bind("pvn3d_furthest_point_sample_cpu",
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS, ADDRESS));
    static final MethodHandle FPS_CUDA_WORKSPACE = bind("pvn3d_furthest_point_sample_cuda_workspace_bytes",
            FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG));
    static final MethodHandle FPS_CUDA = bind("pvn3d_furthest_point_sample_cuda",
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS));
    // (B, C, N, M, features, idx, out[, index_error, stream])
    static final MethodHandle GATHER_CPU = bind("pvn3d_gather_points_cpu",
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS, ADDRESS, ADDRESS));
    static final MethodHandle GATHER_CUDA = bind("pvn3d_gather_points_cuda",
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS, ADDRESS, ADDRESS, ADDRESS, ADDRESS));
    // (B, N, M, radius, nsample, xyz, new_xyz, idx[, stream])
    static final MethodHandle BALL_QUERY_CPU = bind("pvn3d_ball_query_cpu",
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_FLOAT, JAVA_LONG, ADDRESS, ADDRESS, ADDRESS));
    static final MethodHandle BALL_QUERY_CUDA = bind("pvn3d_ball_query_cuda",
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_FLOAT, JAVA_LONG, ADDRESS, ADDRESS, ADDRESS, ADDRESS));
    // (B, C, N, M, S, features, idx, out[, index_error, stream])
    static final MethodHandle GROUP_CPU = bind("pvn3d_group_points_cpu",
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS, ADDRESS, ADDRESS));
    static final MethodHandle GROUP_CUDA = bind("pvn3d_group_points_cuda",
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS, ADDRESS, ADDRESS, ADDRESS, ADDRESS));
    // (B, n, m, unknown, known, dist2, idx[, stream])
    static final MethodHandle THREE_NN_CPU = bind("pvn3d_three_nn_cpu",
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS, ADDRESS, ADDRESS, ADDRESS));
    static final MethodHandle THREE_NN_CUDA = bind("pvn3d_three_nn_cuda",
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS, ADDRESS, ADDRESS, ADDRESS, ADDRESS));
    // (B, C, m, n, features, idx, weight, out[, index_error, stream])
    static final MethodHandle THREE_INTERPOLATE_CPU = bind("pvn3d_three_interpolate_cpu",
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS, ADDRESS, ADDRESS, ADDRESS));
    static final MethodHandle THREE_INTERPOLATE_CUDA = bind("pvn3d_three_interpolate_cuda",
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS, ADDRESS, ADDRESS, ADDRESS, ADDRESS, ADDRESS));

    // device helpers
    static final MethodHandle CUDA_DEVICE_COUNT = bind("pvn3d_cuda_device_count", STATUS_PTR);
    static final MethodHandle CUDA_MALLOC_HOST = bind("pvn3d_cuda_malloc_host",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT));
    static final MethodHandle CUDA_FREE_HOST = bind("pvn3d_cuda_free_host", STATUS_PTR);
    static final MethodHandle CUDA_HOST_DEVICE_POINTER = bind("pvn3d_cuda_host_device_pointer",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    static final MethodHandle CUDA_STREAM_SYNCHRONIZE = bind("pvn3d_cuda_stream_synchronize", STATUS_PTR);
    static final MethodHandle CUDA_STREAM_CREATE = bind("pvn3d_cuda_stream_create", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
    static final MethodHandle CUDA_STREAM_DESTROY = bind("pvn3d_cuda_stream_destroy", STATUS_PTR);

    private Pvn3dNative() {}

    /** Throws an {@link OrtException} with the library's message when {@code status} is not OK. */
    static void check(int status) {
        if (status != OK) {
            throw failure(status);
        }
    }

    static OrtException failure(int status) {
        String message;
        try {
            message = ((MemorySegment) LAST_ERROR.invokeExact()).reinterpret(Integer.MAX_VALUE).getString(0);
        } catch (Throwable t) {
            message = "";
        }
        if (message.isEmpty()) {
            message = "libpvn3d_ops returned " + statusName(status);
        }
        OrtErrorCode code = switch (status) {
            case ERR_INVALID_ARGUMENT, ERR_INDEX_OUT_OF_RANGE -> OrtErrorCode.ORT_INVALID_ARGUMENT;
            case ERR_CUDA -> OrtErrorCode.ORT_EP_FAIL;
            case ERR_NO_CUDA -> OrtErrorCode.ORT_NOT_IMPLEMENTED;
            default -> OrtErrorCode.ORT_FAIL;
        };
        return new OrtException(code, message);
    }

    static String statusName(int status) {
        try {
            return ((MemorySegment) STATUS_NAME.invokeExact(status)).reinterpret(256).getString(0);
        } catch (Throwable t) {
            return "status " + status;
        }
    }

    static String version() {
        try {
            return ((MemorySegment) VERSION.invokeExact()).reinterpret(256).getString(0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static boolean builtWithCuda() {
        try {
            return (int) BUILT_WITH_CUDA.invokeExact() != 0;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** Wraps what a downcall handle threw (only linkage problems: native code throws nothing). */
    static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            return r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new OrtException(OrtErrorCode.ORT_FAIL, "call into " + LIBRARY + " failed: " + t, t);
    }

    private static MethodHandle bind(String symbol, FunctionDescriptor descriptor) {
        MemorySegment address = LOOKUP.find(symbol).orElseThrow(() -> new OrtException(OrtErrorCode.ORT_FAIL,
                PATH + " does not export " + symbol + ": it is not a matching build of libpvn3d_ops"));
        return LINKER.downcallHandle(address, descriptor);
    }

    private static Path locate() {
        String configured = System.getProperty(PATH_PROPERTY);
        String source = "system property " + PATH_PROPERTY;
        if (configured == null || configured.isBlank()) {
            configured = System.getenv(PATH_ENV);
            source = "environment variable " + PATH_ENV;
        }
        if (configured != null && !configured.isBlank()) {
            Path p = Path.of(configured);
            if (Files.isDirectory(p)) {
                p = p.resolve(LIBRARY);
            }
            if (!Files.isRegularFile(p)) {
                throw new OrtException(OrtErrorCode.ORT_NO_SUCHFILE, source + " points at " + configured
                        + ", but there is no " + LIBRARY + " there");
            }
            return p;
        }
        String resource = "org/pvn3d/ort/native/" + NativeFiles.platform() + "/" + LIBRARY;
        if (!NativeFiles.hasResource(resource)) {
            throw new OrtException(OrtErrorCode.ORT_NO_SUCHFILE, "no " + LIBRARY + " for " + NativeFiles.platform()
                    + " on the class path (looked for " + resource + "); set " + PATH_PROPERTY + " or " + PATH_ENV);
        }
        return NativeFiles.extract(resource, NativeFiles.cacheRoot().resolve("ops-" + OrtRuntime.libraryVersion()), LIBRARY);
    }

    private static SymbolLookup load(Path path) {
        NativeFiles.checkElfArchitecture(path);
        try {
            return SymbolLookup.libraryLookup(path, Arena.global());
        } catch (IllegalArgumentException e) {
            throw new OrtException(OrtErrorCode.ORT_FAIL, "cannot load " + path + ": " + e.getMessage()
                    + " (a CUDA build needs the CUDA runtime libraries on the library path)", e);
        }
    }
}
