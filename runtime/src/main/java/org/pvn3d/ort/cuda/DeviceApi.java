package org.pvn3d.ort.cuda;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.internal.NativeFiles;

/**
 * The CUDA runtime library ({@code libcudart}) as this package uses it: the handful of functions behind
 * device memory, copies, streams and events, bound once on first use. Every function returns a
 * {@code cudaError_t}; {@link #check} turns a failure into an {@link OrtException} with CUDA's name and
 * description of the error.
 *
 * <p>Which libcudart: the system property {@value #PATH_PROPERTY} or the environment variable
 * {@value #PATH_ENV} (the file, or a folder holding {@code libcudart.so*}); else the one already loaded
 * in the process (ORT's CUDA provider loads its own, and sharing it keeps one CUDA runtime); else the
 * dynamic linker's search ({@code libcudart.so.13}, {@code .12}, {@code .11.0}); else the CUDA
 * toolkit's usual folders. Device pointers, streams and events are the driver's objects, so they mix
 * freely with those of ORT's provider and of other libraries in the process, whichever copy of the
 * runtime made them. When no libcudart can be loaded, {@link #functions()} throws an
 * {@link OrtException} naming what was tried, on every call (nothing is cached until a load succeeds).
 */
final class DeviceApi {
    static final String PATH_PROPERTY = "pvn3d.cudart.path";
    static final String PATH_ENV = "PVN3D_CUDART_PATH";

    private static final List<String> SONAMES = List.of("libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0", "libcudart.so");
    private static final List<Path> TOOLKIT_DIRS = List.of(Path.of("/usr/local/cuda/lib64"),
            Path.of("/usr/local/cuda/targets/x86_64-linux/lib"), Path.of("/usr/lib/x86_64-linux-gnu"));

    // cudaMemcpyKind and flags of the runtime API (stable since CUDA 4).
    private static final int H2D = 1;
    private static final int D2H = 2;
    private static final int D2D = 3;
    private static final int STREAM_NON_BLOCKING = 0x01;
    private static final int HOST_ALLOC_MAPPED = 0x02;
    /** cudaEventDisableTiming: an event for ordering only, cheaper to record and wait on. */
    private static final int EVENT_DISABLE_TIMING = 0x02;
    // cudaDeviceAttr values.
    static final int ATTR_MULTIPROCESSOR_COUNT = 16;
    static final int ATTR_COMPUTE_CAPABILITY_MAJOR = 75;
    static final int ATTR_COMPUTE_CAPABILITY_MINOR = 76;
    /** cudaDeviceProp starts with {@code char name[256]}, then uuid (16), luid (8), luidDeviceNodeMask (4), then totalGlobalMem (size_t). */
    static final long PROP_TOTAL_GLOBAL_MEM_OFFSET = 288;
    /** Larger than cudaDeviceProp of any CUDA release so far (about 1 KB). */
    static final long PROP_BYTES = 8192;

    private static volatile Functions functions;

    /** The bound functions; each returns a cudaError_t (0 = success). Argument order as in the runtime API. */
    static final class Functions {
        final Path library;
        final MethodHandle DEVICE_COUNT; // (int*)
        final MethodHandle DEVICE_PROPERTIES; // (cudaDeviceProp*, int device)
        final MethodHandle DEVICE_ATTRIBUTE; // (int* value, int attr, int device)
        final MethodHandle SET_DEVICE; // (int)
        final MethodHandle GET_DEVICE; // (int*)
        final MethodHandle MEM_GET_INFO; // (size_t* free, size_t* total)
        final MethodHandle DEVICE_SYNCHRONIZE; // ()
        final MethodHandle MALLOC; // (void**, size_t)
        final MethodHandle FREE; // (void*)
        final MethodHandle MALLOC_HOST; // (void**, size_t, int mapped)
        final MethodHandle FREE_HOST; // (void*)
        final MethodHandle HOST_DEVICE_POINTER; // (void** device, void* host)
        final MethodHandle MEMSET_ASYNC; // (void*, int value, size_t, stream)
        final MethodHandle H2D_ASYNC; // (void* dst, void* src, size_t, stream)
        final MethodHandle D2H_ASYNC;
        final MethodHandle D2D_ASYNC;
        final MethodHandle STREAM_CREATE; // (cudaStream_t*) non-blocking
        final MethodHandle STREAM_DESTROY; // (stream)
        final MethodHandle STREAM_SYNCHRONIZE; // (stream)
        final MethodHandle STREAM_WAIT_EVENT; // (stream, event): flags 0
        final MethodHandle EVENT_CREATE; // (cudaEvent_t*)
        final MethodHandle EVENT_CREATE_UNTIMED; // (cudaEvent_t*): cudaEventDisableTiming
        final MethodHandle EVENT_DESTROY;
        final MethodHandle EVENT_RECORD; // (event, stream)
        final MethodHandle EVENT_SYNCHRONIZE;
        final MethodHandle EVENT_ELAPSED; // (float* ms, start, end)
        private final MethodHandle errorName; // (int) -> const char*
        private final MethodHandle errorString;

        private Functions(Path library, SymbolLookup lookup) {
            this.library = library;
            Binder b = new Binder(library, lookup);
            DEVICE_COUNT = b.status("cudaGetDeviceCount", ADDRESS);
            DEVICE_PROPERTIES = b.first(List.of("cudaGetDeviceProperties_v2", "cudaGetDeviceProperties"), ADDRESS, JAVA_INT);
            DEVICE_ATTRIBUTE = b.status("cudaDeviceGetAttribute", ADDRESS, JAVA_INT, JAVA_INT);
            SET_DEVICE = b.status("cudaSetDevice", JAVA_INT);
            GET_DEVICE = b.status("cudaGetDevice", ADDRESS);
            MEM_GET_INFO = b.status("cudaMemGetInfo", ADDRESS, ADDRESS);
            DEVICE_SYNCHRONIZE = b.status("cudaDeviceSynchronize");
            MALLOC = b.status("cudaMalloc", ADDRESS, JAVA_LONG);
            FREE = b.status("cudaFree", ADDRESS);
            // cudaHostAlloc(void**, size_t, unsigned flags): a boolean "mapped" becomes the flag.
            MethodHandle hostAlloc = b.status("cudaHostAlloc", ADDRESS, JAVA_LONG, JAVA_INT);
            MALLOC_HOST = MethodHandles.filterArguments(hostAlloc, 2, MAPPED_FLAG);
            FREE_HOST = b.status("cudaFreeHost", ADDRESS);
            HOST_DEVICE_POINTER = MethodHandles.insertArguments(
                    b.status("cudaHostGetDevicePointer", ADDRESS, ADDRESS, JAVA_INT), 2, 0);
            MEMSET_ASYNC = b.status("cudaMemsetAsync", ADDRESS, JAVA_INT, JAVA_LONG, ADDRESS);
            MethodHandle copy = b.status("cudaMemcpyAsync", ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT, ADDRESS);
            H2D_ASYNC = MethodHandles.insertArguments(copy, 3, H2D);
            D2H_ASYNC = MethodHandles.insertArguments(copy, 3, D2H);
            D2D_ASYNC = MethodHandles.insertArguments(copy, 3, D2D);
            STREAM_CREATE = MethodHandles.insertArguments(
                    b.status("cudaStreamCreateWithFlags", ADDRESS, JAVA_INT), 1, STREAM_NON_BLOCKING);
            STREAM_DESTROY = b.status("cudaStreamDestroy", ADDRESS);
            STREAM_SYNCHRONIZE = b.status("cudaStreamSynchronize", ADDRESS);
            STREAM_WAIT_EVENT = MethodHandles.insertArguments(
                    b.status("cudaStreamWaitEvent", ADDRESS, ADDRESS, JAVA_INT), 2, 0);
            EVENT_CREATE = b.status("cudaEventCreate", ADDRESS);
            EVENT_CREATE_UNTIMED = MethodHandles.insertArguments(
                    b.status("cudaEventCreateWithFlags", ADDRESS, JAVA_INT), 1, EVENT_DISABLE_TIMING);
            EVENT_DESTROY = b.status("cudaEventDestroy", ADDRESS);
            EVENT_RECORD = b.status("cudaEventRecord", ADDRESS, ADDRESS);
            EVENT_SYNCHRONIZE = b.status("cudaEventSynchronize", ADDRESS);
            EVENT_ELAPSED = b.status("cudaEventElapsedTime", ADDRESS, ADDRESS, ADDRESS);
            errorName = b.bind("cudaGetErrorName", FunctionDescriptor.of(ADDRESS, JAVA_INT));
            errorString = b.bind("cudaGetErrorString", FunctionDescriptor.of(ADDRESS, JAVA_INT));
        }

        String describe(int error) {
            try {
                String name = ((MemorySegment) errorName.invokeExact(error)).reinterpret(256).getString(0);
                String text = ((MemorySegment) errorString.invokeExact(error)).reinterpret(1024).getString(0);
                return name + ": " + text;
            } catch (Throwable t) {
                return "cudaError " + error;
            }
        }
    }

    private static final MethodHandle MAPPED_FLAG;

    static {
        try {
            MAPPED_FLAG = MethodHandles.lookup().findStatic(DeviceApi.class, "mappedFlag",
                    java.lang.invoke.MethodType.methodType(int.class, int.class));
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }

    private static int mappedFlag(int mapped) {
        return mapped != 0 ? HOST_ALLOC_MAPPED : 0;
    }

    private DeviceApi() {}

    /** The bound functions, loading libcudart on first use; an {@link OrtException} while none can be loaded. */
    static Functions functions() {
        Functions f = functions;
        if (f == null) {
            synchronized (DeviceApi.class) {
                f = functions;
                if (f == null) {
                    f = load();
                    functions = f;
                }
            }
        }
        return f;
    }

    /** Whether a CUDA runtime library can be loaded (it may still see no device). */
    static boolean available() {
        try {
            functions();
            return true;
        } catch (OrtException e) {
            return false;
        }
    }

    static void check(int error) {
        if (error != 0) {
            throw new OrtException(OrtErrorCode.ORT_EP_FAIL, functions().describe(error));
        }
    }

    /** {@link #check} with the name of the failing call in the message. */
    static void check(int error, String call) {
        if (error != 0) {
            throw new OrtException(OrtErrorCode.ORT_EP_FAIL, call + " failed: " + functions().describe(error));
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
        return new OrtException(OrtErrorCode.ORT_FAIL, "call into the CUDA runtime failed: " + t, t);
    }

    private static Functions load() {
        List<String> tried = new ArrayList<>();
        NativeFiles.Setting setting = NativeFiles.setting(PATH_PROPERTY, PATH_ENV);
        if (setting.isSet()) {
            String configured = setting.value();
            String source = setting.source();
            Path p = Path.of(configured);
            Optional<Path> file = Files.isDirectory(p) ? newestIn(p) : Optional.of(p);
            if (file.isEmpty() || !Files.isRegularFile(file.get())) {
                throw new OrtException(OrtErrorCode.ORT_NO_SUCHFILE, source + " points at " + configured
                        + ", which is not libcudart.so* nor a folder holding one");
            }
            Optional<Functions> f = open(file.get(), file.get().toString(), tried);
            if (f.isEmpty()) {
                throw new OrtException(OrtErrorCode.ORT_FAIL, "cannot load the CUDA runtime from " + configured
                        + " (" + source + "): " + tried);
            }
            return f.get();
        }
        List<Path> candidates = new ArrayList<>();
        loadedInProcess().ifPresent(candidates::add);
        for (Path c : candidates) {
            Optional<Functions> f = open(c, c.toString(), tried);
            if (f.isPresent()) {
                return f.get();
            }
        }
        for (String soname : SONAMES) {
            Optional<Functions> f = open(null, soname, tried);
            if (f.isPresent()) {
                return f.get();
            }
        }
        for (Path dir : TOOLKIT_DIRS) {
            Optional<Path> file = newestIn(dir);
            if (file.isPresent()) {
                Optional<Functions> f = open(file.get(), file.get().toString(), tried);
                if (f.isPresent()) {
                    return f.get();
                }
            }
        }
        throw new OrtException(OrtErrorCode.ORT_NOT_IMPLEMENTED, "no CUDA runtime library (libcudart) could be loaded: tried "
                + String.join(", ", tried) + "; install the CUDA runtime, or set " + PATH_PROPERTY + " / " + PATH_ENV);
    }

    private static Optional<Functions> open(Path file, String name, List<String> tried) {
        try {
            SymbolLookup lookup = file != null ? SymbolLookup.libraryLookup(file, Arena.global())
                    : SymbolLookup.libraryLookup(name, Arena.global());
            return Optional.of(new Functions(file != null ? file : Path.of(name), lookup));
        } catch (IllegalArgumentException | OrtException e) {
            tried.add(name + " (" + e.getMessage() + ")");
            return Optional.empty();
        }
    }

    /** The libcudart another library of this process (ORT's CUDA provider) has already loaded, if any. */
    private static Optional<Path> loadedInProcess() {
        try (Stream<String> lines = Files.lines(Path.of("/proc/self/maps"))) {
            return lines.map(l -> l.substring(l.lastIndexOf(' ') + 1))
                    .filter(p -> p.startsWith("/") && p.substring(p.lastIndexOf('/') + 1).startsWith("libcudart.so"))
                    .map(Path::of).findFirst();
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    private static Optional<Path> newestIn(Path dir) {
        if (!Files.isDirectory(dir)) {
            return Optional.empty();
        }
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.getFileName().toString().matches("libcudart\\.so(\\.[0-9]+)*"))
                    .max((a, b) -> a.getFileName().toString().compareTo(b.getFileName().toString()));
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    private record Binder(Path library, SymbolLookup lookup) {
        MethodHandle status(String symbol, MemoryLayout... args) {
            return bind(symbol, FunctionDescriptor.of(JAVA_INT, args));
        }

        MethodHandle first(List<String> symbols, MemoryLayout... args) {
            for (String s : symbols) {
                if (lookup.find(s).isPresent()) {
                    return status(s, args);
                }
            }
            throw new OrtException(OrtErrorCode.ORT_FAIL, library + " exports none of " + symbols);
        }

        MethodHandle bind(String symbol, FunctionDescriptor descriptor) {
            MemorySegment address = lookup.find(symbol).orElseThrow(() -> new OrtException(OrtErrorCode.ORT_FAIL,
                    library + " does not export " + symbol + ": not a CUDA runtime library"));
            return Linker.nativeLinker().downcallHandle(address, descriptor);
        }
    }

}
