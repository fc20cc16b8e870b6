package org.pvn3d.ort.ops;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.OrtRuntime;
import org.pvn3d.ort.internal.NativeFiles;

/**
 * libpvn3d_ops (cuda-ops/include/pvn3d_ops.h), loaded on first use: where it comes from, {@link #bind}
 * for typed downcall handles to its functions, and the turning of its status codes into exceptions.
 *
 * <p>Where the library comes from: the system property {@value #PATH_PROPERTY} or the environment
 * variable {@value #PATH_ENV} (the file itself, or a folder holding {@code libpvn3d_ops.so}), else
 * the copy inside this artifact's jar, extracted once to {@code <cache>/pvn3d-ops-<version>-<crc>/}.
 * A library that cannot be found or loaded fails {@link #load()} with an {@link OrtException} that
 * says what was looked for and where, on every call until one loads (never a class-initialisation
 * error): every entry point of this package calls it before touching a native function.
 *
 * <p>{@link #check} turns a non-OK {@code pvn3d_status} into an {@link OrtException} carrying the
 * calling thread's {@code pvn3d_last_error()} message: it must run on the thread that made the
 * failing call, right after it (the message is thread-local).
 */
public final class OpsLibrary {
    public static final String PATH_PROPERTY = "pvn3d.ops.path";
    public static final String PATH_ENV = "PVN3D_OPS_PATH";
    public static final String LIBRARY = "libpvn3d_ops.so";
    /** Where the jar keeps the library, below the platform folder. */
    static final String RESOURCE_DIR = "org/pvn3d/ort/ops/native/";

    public static final int OK = 0;
    public static final int ERR_INVALID_ARGUMENT = 1;
    public static final int ERR_INDEX_OUT_OF_RANGE = 2;
    public static final int ERR_CUDA = 3;
    public static final int ERR_NO_CUDA = 4;
    public static final int ERR_OUT_OF_MEMORY = 5;

    private static final Linker LINKER = Linker.nativeLinker();
    private static volatile Loaded loaded;

    private record Loaded(Path path, SymbolLookup lookup) {}

    /** The library's own information functions, bound once it is loaded. */
    private static final class Info {
        static final MethodHandle LAST_ERROR = bind("pvn3d_last_error", FunctionDescriptor.of(ADDRESS));
        static final MethodHandle STATUS_NAME = bind("pvn3d_status_name", FunctionDescriptor.of(ADDRESS, JAVA_INT));
        static final MethodHandle VERSION = bind("pvn3d_version", FunctionDescriptor.of(ADDRESS));
        static final MethodHandle BUILT_WITH_CUDA = bind("pvn3d_built_with_cuda", FunctionDescriptor.of(JAVA_INT));
    }

    private OpsLibrary() {}

    /** Loads the library (once); returns where it was loaded from. Throws an {@link OrtException} while it cannot. */
    public static Path load() {
        return loaded().path();
    }

    private static Loaded loaded() {
        Loaded l = loaded;
        if (l == null) {
            synchronized (OpsLibrary.class) {
                l = loaded;
                if (l == null) {
                    Path path = locate();
                    l = new Loaded(path, open(path));
                    loaded = l;
                }
            }
        }
        return l;
    }

    /** Throws an {@link OrtException} with the library's message when {@code status} is not OK. */
    public static void check(int status) {
        if (status != OK) {
            throw failure(status);
        }
    }

    public static OrtException failure(int status) {
        String message;
        try {
            message = ((MemorySegment) Info.LAST_ERROR.invokeExact()).reinterpret(Integer.MAX_VALUE).getString(0);
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

    public static String statusName(int status) {
        try {
            return ((MemorySegment) Info.STATUS_NAME.invokeExact(status)).reinterpret(256).getString(0);
        } catch (Throwable t) {
            return "status " + status;
        }
    }

    public static String version() {
        try {
            return ((MemorySegment) Info.VERSION.invokeExact()).reinterpret(256).getString(0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static boolean builtWithCuda() {
        try {
            return (int) Info.BUILT_WITH_CUDA.invokeExact() != 0;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** Wraps what a downcall handle threw (only linkage problems: native code throws nothing). */
    public static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            return r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new OrtException(OrtErrorCode.ORT_FAIL, "call into " + LIBRARY + " failed: " + t, t);
    }

    /** A downcall handle to one of the library's functions; fails clearly if it is missing. */
    public static MethodHandle bind(String symbol, FunctionDescriptor descriptor) {
        Loaded l = loaded();
        MemorySegment address = l.lookup().find(symbol).orElseThrow(() -> new OrtException(OrtErrorCode.ORT_FAIL,
                l.path() + " does not export " + symbol + ": it is not a matching build of libpvn3d_ops"));
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
        ClassLoader loader = OpsLibrary.class.getClassLoader();
        String resource = RESOURCE_DIR + NativeFiles.platform() + "/" + LIBRARY;
        URL url = loader.getResource(resource);
        if (url == null) {
            throw new OrtException(OrtErrorCode.ORT_NO_SUCHFILE, "no " + LIBRARY + " for " + NativeFiles.platform()
                    + " on the class path (looked for " + resource + " beside " + OpsLibrary.class.getName()
                    + "); set " + PATH_PROPERTY + " or " + PATH_ENV + " to the library or its folder");
        }
        String folder = "pvn3d-ops-" + OrtRuntime.libraryVersion() + "-" + NativeFiles.platform() + "-" + NativeFiles.crc(url);
        return NativeFiles.extract(loader, resource, NativeFiles.cacheRoot().resolve(folder), LIBRARY);
    }

    private static SymbolLookup open(Path path) {
        NativeFiles.checkElfArchitecture(path);
        try {
            // System.load as well, so that generated bindings' loader lookup sees the same library.
            System.load(path.toAbsolutePath().toString());
            return SymbolLookup.libraryLookup(path, Arena.global());
        } catch (UnsatisfiedLinkError | IllegalArgumentException e) {
            throw new OrtException(OrtErrorCode.ORT_FAIL, "cannot load " + path + ": " + e.getMessage()
                    + " (a CUDA build needs the CUDA runtime libraries on the library path)", e);
        }
    }
}
