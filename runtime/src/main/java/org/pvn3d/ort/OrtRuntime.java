package org.pvn3d.ort;

import static java.lang.foreign.ValueLayout.ADDRESS;

import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import java.util.stream.Stream;
import org.pvn3d.ort.ffm.OrtApi;
import org.pvn3d.ort.ffm.OrtApiBase;
import org.pvn3d.ort.internal.NativeFiles;

/**
 * The ONNX Runtime library this process uses, loaded once.
 *
 * <p>By default that is the build shipped inside this library's jar (taken from
 * {@code com.microsoft.onnxruntime:onnxruntime_gpu}, see {@link #defaultArtifact()}), extracted once
 * into a per-version cache folder ({@code ~/.cache/pvn3d-ort}, or {@value NativeFiles#CACHE_PROPERTY}).
 * The system property {@value #PATH_PROPERTY} or the environment variable {@value #PATH_ENV} points
 * at another build instead: a folder holding {@code libonnxruntime.so*} and its provider libraries
 * (for example an ORT built for CUDA 13), or the library file itself.
 *
 * <p>Any runtime from 1.16 on works: the bindings ask for API version 16, which every later runtime
 * serves. An older runtime, a missing file or a library for another architecture is refused with a
 * message that says what was looked for and where.
 */
public final class OrtRuntime {
    /** System property naming another ORT build (a folder or the library file). */
    public static final String PATH_PROPERTY = "pvn3d.ort.path";
    /** Environment variable naming another ORT build (a folder or the library file). */
    public static final String PATH_ENV = "PVN3D_ORT_PATH";
    /** The C API version the bindings were generated from. */
    public static final int API_VERSION = 16;

    private static final System.Logger LOG = System.getLogger(OrtRuntime.class.getName());
    private static final String RESOURCE_DIR = "org/pvn3d/ort/native/" + NativeFiles.platform() + "/ort/";
    private static final List<String> BUNDLED_FILES =
            List.of("libonnxruntime.so", "libonnxruntime_providers_shared.so");
    private static final String BUNDLED_CUDA = "libonnxruntime_providers_cuda.so";

    private static volatile OrtRuntime instance;

    private final String version;
    private final Path library;
    private final boolean bundled;
    private final MemorySegment api;

    private OrtRuntime(String version, Path library, boolean bundled, MemorySegment api) {
        this.version = version;
        this.library = library;
        this.bundled = bundled;
        this.api = api;
    }

    /** The runtime of this process, loading it on first use. */
    public static OrtRuntime get() {
        OrtRuntime r = instance;
        if (r == null) {
            synchronized (OrtRuntime.class) {
                r = instance;
                if (r == null) {
                    r = load();
                    instance = r;
                }
            }
        }
        return r;
    }

    /** The version string the loaded library reports ({@code GetVersionString}), e.g. "1.16.3". */
    public String version() {
        return version;
    }

    /** The path of the loaded {@code libonnxruntime.so}. */
    public Path library() {
        return library;
    }

    /** The folder the provider libraries are loaded from (ORT looks beside its own library). */
    public Path directory() {
        return library.getParent();
    }

    /** True when the loaded runtime's version is {@code version} or later (e.g. "1.18"). */
    public boolean isAtLeast(String version) {
        return compareVersions(this.version, version) >= 0;
    }

    /** True when this is the build shipped in the jar rather than one the user pointed at. */
    public boolean isBundled() {
        return bundled;
    }

    /** The Maven coordinates of the bundled default runtime. */
    public static String defaultArtifact() {
        return buildProperties().getProperty("ort.artifact", "com.microsoft.onnxruntime:onnxruntime_gpu");
    }

    /** The version of this library (pvn3d-ort). */
    public static String libraryVersion() {
        return buildProperties().getProperty("pvn3d.version", "unknown");
    }

    /** The {@code OrtApi*} for API version 16 (internal use). */
    public MemorySegment api() {
        return api;
    }

    /**
     * Makes sure the CUDA provider library sits beside the loaded runtime: for the bundled runtime
     * it is extracted on first use (it is large); for a user's build it must already be there.
     */
    public void ensureCudaProvider() {
        Path cuda = directory().resolve(BUNDLED_CUDA);
        if (bundled) {
            NativeFiles.extract(RESOURCE_DIR + BUNDLED_CUDA, directory(), BUNDLED_CUDA);
        } else if (!Files.exists(cuda)) {
            throw new OrtException(OrtErrorCode.ORT_NO_SUCHFILE, "the CUDA execution provider needs "
                    + BUNDLED_CUDA + " beside " + library + ", and there is none in " + directory());
        }
    }

    @Override
    public String toString() {
        return "ONNX Runtime " + version + " (" + library + (bundled ? ", bundled" : "") + ")";
    }

    private static OrtRuntime load() {
        String configured = System.getProperty(PATH_PROPERTY);
        String source = "system property " + PATH_PROPERTY;
        if (configured == null || configured.isBlank()) {
            configured = System.getenv(PATH_ENV);
            source = "environment variable " + PATH_ENV;
        }
        Path library;
        boolean bundled;
        if (configured != null && !configured.isBlank()) {
            library = findLibrary(Path.of(configured), source);
            bundled = false;
        } else {
            library = extractBundled();
            bundled = true;
        }
        NativeFiles.checkElfArchitecture(library);
        Arena arena = Arena.global();
        SymbolLookup lookup;
        try {
            // System.load as well, so the generated bindings' loader lookup sees the same library.
            System.load(library.toAbsolutePath().toString());
            lookup = SymbolLookup.libraryLookup(library, arena);
        } catch (UnsatisfiedLinkError | IllegalArgumentException e) {
            throw new OrtException(OrtErrorCode.ORT_FAIL, "cannot load ONNX Runtime from " + library + ": "
                    + e.getMessage(), e);
        }
        MemorySegment getApiBase = lookup.find("OrtGetApiBase").orElseThrow(() -> new OrtException(
                OrtErrorCode.ORT_FAIL, library + " does not export OrtGetApiBase: it is not an ONNX Runtime library"));
        MethodHandle getApiBaseHandle = Linker.nativeLinker().downcallHandle(getApiBase, FunctionDescriptor.of(ADDRESS));
        MemorySegment base;
        try {
            base = ((MemorySegment) getApiBaseHandle.invokeExact()).reinterpret(OrtApiBase.layout().byteSize());
        } catch (Throwable t) {
            throw new OrtException(OrtErrorCode.ORT_FAIL, "OrtGetApiBase failed in " + library + ": " + t, t);
        }
        String version = OrtApiBase.GetVersionString.invoke(OrtApiBase.GetVersionString(base))
                .reinterpret(256).getString(0);
        if (compareVersions(version, "1.16.0") < 0) {
            throw new OrtException(OrtErrorCode.ORT_FAIL, "ONNX Runtime " + version + " at " + library
                    + " is too old: this library needs 1.16 or later (C API version " + API_VERSION + ")");
        }
        MemorySegment api = OrtApiBase.GetApi.invoke(OrtApiBase.GetApi(base), API_VERSION);
        if (api.address() == 0) {
            throw new OrtException(OrtErrorCode.ORT_FAIL, "ONNX Runtime " + version + " at " + library
                    + " does not serve C API version " + API_VERSION);
        }
        api = api.reinterpret(OrtApi.layout().byteSize());
        OrtRuntime runtime = new OrtRuntime(version, library, bundled, api);
        LOG.log(System.Logger.Level.DEBUG, "loaded {0}", runtime);
        return runtime;
    }

    static Path findLibrary(Path configured, String source) {
        if (Files.isRegularFile(configured)) {
            return configured;
        }
        if (!Files.isDirectory(configured)) {
            throw new OrtException(OrtErrorCode.ORT_NO_SUCHFILE, source + " points at " + configured
                    + ", which does not exist (expected a folder holding libonnxruntime.so* or the library itself)");
        }
        try (Stream<Path> files = Files.list(configured)) {
            return files.filter(p -> p.getFileName().toString().matches("libonnxruntime\\.so(\\.[0-9]+)*"))
                    .min((a, b) -> Integer.compare(a.getFileName().toString().length(),
                            b.getFileName().toString().length()))
                    .orElseThrow(() -> new OrtException(OrtErrorCode.ORT_NO_SUCHFILE, source + " points at "
                            + configured + ", which holds no libonnxruntime.so*"));
        } catch (IOException e) {
            throw new OrtException(OrtErrorCode.ORT_NO_SUCHFILE, "cannot list " + configured + ": " + e, e);
        }
    }

    private static Path extractBundled() {
        if (!NativeFiles.hasResource(RESOURCE_DIR + BUNDLED_FILES.getFirst())) {
            throw new OrtException(OrtErrorCode.ORT_NO_SUCHFILE, "no ONNX Runtime for " + NativeFiles.platform()
                    + " on the class path (looked for " + RESOURCE_DIR + BUNDLED_FILES.getFirst() + "); set "
                    + PATH_PROPERTY + " or " + PATH_ENV + " to a folder holding libonnxruntime.so");
        }
        Path dir = NativeFiles.cacheRoot().resolve("ort-" + buildProperties().getProperty("ort.version", "unknown")
                + "-" + NativeFiles.platform());
        Path library = null;
        for (String name : BUNDLED_FILES) {
            Path p = NativeFiles.extract(RESOURCE_DIR + name, dir, name);
            if (library == null) {
                library = p;
            }
        }
        return library;
    }

    private static Properties buildProperties() {
        Properties p = new Properties();
        try (InputStream in = OrtRuntime.class.getResourceAsStream("build.properties")) {
            if (in != null) {
                p.load(in);
            }
        } catch (IOException e) {
            // only descriptive values come from here; fall back to the defaults
        }
        return p;
    }

    /** Compares dotted version strings numerically ("1.9" < "1.16"); non-numeric parts count as 0. */
    static int compareVersions(String a, String b) {
        String[] x = a.split("[.-]");
        String[] y = b.split("[.-]");
        for (int i = 0; i < Math.max(x.length, y.length); i++) {
            int c = Integer.compare(part(x, i), part(y, i));
            if (c != 0) {
                return c;
            }
        }
        return 0;
    }

    private static int part(String[] parts, int i) {
        if (i >= parts.length) {
            return 0;
        }
        try {
            return Integer.parseInt(parts[i]);
        } catch (NumberFormatException e) {
            return 0;
        }
    }
}
