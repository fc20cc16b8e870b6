package org.pvn3d.ort.internal;

import static java.lang.foreign.ValueLayout.ADDRESS;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.stream.Stream;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.ffm.OrtApi;
import org.pvn3d.ort.ffm.OrtApiBase;

/**
 * The ONNX Runtime library this process uses, found and loaded once, and its API-16 function table:
 * what {@code org.pvn3d.ort.OrtRuntime} describes to users and {@link Api} reads its functions from.
 *
 * <p>Where it comes from: the system property {@value #PATH_PROPERTY} or the environment variable
 * {@value #PATH_ENV} (a folder holding {@code libonnxruntime.so*} and its provider libraries, or the
 * library file itself); else {@code libonnxruntime.so} from the ORT artifact on the class path, extracted
 * once into a cache folder named after the jar (see {@link NativeFiles}). A runtime older than 1.16, a
 * missing file or a library for another architecture is refused with an {@link OrtException} that says
 * what was looked for and where, on every call until one loads.
 */
public final class OrtLibrary {
    /** System property naming another ORT build (a folder or the library file). */
    public static final String PATH_PROPERTY = "pvn3d.ort.path";
    /** Environment variable naming another ORT build (a folder or the library file). */
    public static final String PATH_ENV = "PVN3D_ORT_PATH";
    /** The C API version the bindings were generated from. */
    public static final int API_VERSION = 16;
    /**
     * System property: "false" keeps reading tensor shapes with API 16's five calls on a runtime that
     * has {@code GetTensorElementTypeAndShapeDataReference} (for comparisons, or a runtime that misbehaves).
     */
    public static final String SHAPE_REFERENCE_PROPERTY = "pvn3d.ort.shapeReference";
    /**
     * {@code GetTensorElementTypeAndShapeDataReference} came with C API version 24 (ORT 1.24), as that
     * version's last entry: the 415th function pointer of {@code OrtApi}, at byte offset 414 * 8. ORT only
     * appends to the table, so the offset holds in every later runtime. The bindings (API 16) do not
     * have it, so it is read from the table by offset.
     */
    static final int SHAPE_REFERENCE_API = 24;
    static final long SHAPE_REFERENCE_OFFSET = 414L * 8;

    private static final System.Logger LOG = System.getLogger("org.pvn3d.ort.OrtRuntime");
    /** Where ORT's own Java artifacts keep their native files. */
    private static final String JAR_DIR = "ai/onnxruntime/native/" + NativeFiles.platform() + "/";
    private static final String LIBRARY = "libonnxruntime.so";
    private static final String PROVIDERS_SHARED = "libonnxruntime_providers_shared.so";
    private static final String PROVIDERS_CUDA = "libonnxruntime_providers_cuda.so";

    private static volatile OrtLibrary instance;

    private final String version;
    private final Path library;
    private final String source;
    private final ClassPathOrt jar;
    private final MemorySegment api;
    private final MemorySegment shapeReference;

    private OrtLibrary(String version, Path library, String source, ClassPathOrt jar, MemorySegment api,
            MemorySegment shapeReference) {
        this.version = version;
        this.library = library;
        this.source = source;
        this.jar = jar;
        this.api = api;
        this.shapeReference = shapeReference;
    }

    /** The runtime of this process, loading it on first use. */
    /**
     * Loads the runtime unless it is loaded, or throws why it cannot (an {@link OrtException}, at every call).
     * The public entry points call it before anything touches {@link Api}: a runtime that fails to load
     * inside Api's class initialisation would make every later call a {@code NoClassDefFoundError}.
     */
    public static void require() {
        get();
    }

    public static OrtLibrary get() {
        OrtLibrary r = instance;
        if (r == null) {
            synchronized (OrtLibrary.class) {
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

    /** True when the runtime came from an ORT jar on the class path rather than a folder the user named. */
    public boolean isFromClassPath() {
        return jar != null;
    }

    /** Where the runtime came from: the ORT jar on the class path, or the property / variable and its value. */
    public String source() {
        return source;
    }

    /** The {@code OrtApi*} for API version 16. */
    public MemorySegment api() {
        return api;
    }

    /**
     * {@code GetTensorElementTypeAndShapeDataReference} (C API 24, ORT 1.24 on): a tensor's element type
     * and a pointer to its own dimensions in one call, without the {@code OrtTensorTypeAndShapeInfo} that
     * API 16 allocates and frees for every read; the NULL segment on an older runtime or when {@value
     * #SHAPE_REFERENCE_PROPERTY} is "false".
     */
    public MemorySegment tensorShapeReference() {
        return shapeReference;
    }

    /** Whether the CUDA execution provider's library is there to load (extracting nothing). */
    public boolean hasCudaProvider() {
        return jar != null ? jar.has(PROVIDERS_CUDA) : Files.exists(directory().resolve(PROVIDERS_CUDA));
    }

    /**
     * Makes sure the CUDA provider library sits beside the loaded runtime: from an ORT jar it is
     * extracted on first use (it is large); a folder the user named must already hold it.
     */
    public void ensureCudaProvider() {
        if (jar != null) {
            if (!jar.has(PROVIDERS_CUDA)) {
                throw new OrtException(OrtErrorCode.ORT_NOT_IMPLEMENTED, "the ONNX Runtime on the class path ("
                        + jar.description() + ") has no CUDA execution provider (" + JAR_DIR + PROVIDERS_CUDA
                        + "): depend on com.microsoft.onnxruntime:onnxruntime_gpu (CUDA 11.8) instead, or set "
                        + PATH_PROPERTY + " / " + PATH_ENV + " to a folder holding an ORT build for your CUDA");
            }
            jar.extract(PROVIDERS_CUDA, directory());
        } else if (!Files.exists(directory().resolve(PROVIDERS_CUDA))) {
            throw new OrtException(OrtErrorCode.ORT_NO_SUCHFILE, "the CUDA execution provider needs "
                    + PROVIDERS_CUDA + " beside " + library + ", and there is none in " + directory());
        }
    }

    @Override
    public String toString() {
        return "ONNX Runtime " + version + " (" + library + ", from " + source + ")";
    }

    private static OrtLibrary load() {
        NativeFiles.Setting configured = NativeFiles.setting(PATH_PROPERTY, PATH_ENV);
        Path library;
        ClassPathOrt jar = null;
        String source;
        if (configured.isSet()) {
            library = findLibrary(Path.of(configured.value()), configured.source());
            source = configured.source() + " = " + configured.value();
        } else {
            jar = ClassPathOrt.find();
            library = jar.extractRuntime();
            source = jar.description();
        }
        NativeFiles.checkElfArchitecture(library);
        Arena arena = Arena.global();
        SymbolLookup lookup;
        try {
            loadForGeneratedBindings(library);
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
        if (base.address() == 0 || OrtApiBase.GetVersionString(base).address() == 0 || OrtApiBase.GetApi(base).address() == 0) {
            throw new OrtException(OrtErrorCode.ORT_FAIL, library + ": OrtGetApiBase gave no API base: not an ONNX Runtime library");
        }
        MemorySegment versionString = OrtApiBase.GetVersionString.invoke(OrtApiBase.GetVersionString(base));
        if (versionString.address() == 0) {
            throw new OrtException(OrtErrorCode.ORT_FAIL, library + ": GetVersionString gave no version: not an ONNX Runtime library");
        }
        String version = versionString.reinterpret(256).getString(0);
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
        MemorySegment shapeReference = MemorySegment.NULL;
        // Asked only of a runtime that has it: GetApi of a version a runtime lacks prints to stderr.
        if (compareVersions(version, "1.24.0") >= 0
                && !"false".equalsIgnoreCase(System.getProperty(SHAPE_REFERENCE_PROPERTY))) {
            MemorySegment api24 = OrtApiBase.GetApi.invoke(OrtApiBase.GetApi(base), SHAPE_REFERENCE_API);
            if (api24.address() != 0) {
                shapeReference = api24.reinterpret(SHAPE_REFERENCE_OFFSET + 8).get(ADDRESS, SHAPE_REFERENCE_OFFSET);
            }
        }
        OrtLibrary runtime = new OrtLibrary(version, library, source, jar, api, shapeReference);
        LOG.log(System.Logger.Level.DEBUG, "loaded {0}", runtime);
        return runtime;
    }

    /** The library in {@code configured} (a folder or the file itself), which {@code source} named. */
    public static Path findLibrary(Path configured, String source) {
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

    /** Compares dotted version strings numerically ("1.9" < "1.16"); non-numeric parts count as 0. */
    public static int compareVersions(String a, String b) {
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

    /**
     * An ORT artifact's jar on the class path: where its native files are, and their extraction into
     * a cache folder named after the jar and the library's CRC (two ORT versions never share one).
     */
    private record ClassPathOrt(ClassLoader loader, URL library, String description, Path cacheDir) {
        static ClassPathOrt find() {
            List<URL> found = new ArrayList<>();
            for (ClassLoader loader : loaders()) {
                try {
                    for (URL url : Collections.list(loader.getResources(JAR_DIR + LIBRARY))) {
                        if (!found.contains(url)) {
                            found.add(url);
                        }
                    }
                } catch (IOException e) {
                    // an unreadable class-path entry: keep looking in the others
                }
                if (!found.isEmpty()) {
                    ClassLoader chosen = loader;
                    URL url = found.getFirst();
                    if (found.size() > 1) {
                        LOG.log(System.Logger.Level.WARNING, "several ONNX Runtime jars on the class path, using {0}: {1}",
                                url, found);
                    }
                    String jarName = jarName(url);
                    Path dir = NativeFiles.cacheRoot().resolve(jarName + "-" + NativeFiles.platform() + "-" + NativeFiles.crc(url));
                    return new ClassPathOrt(chosen, url, jarName + ".jar (" + url + ")", dir);
                }
            }
            throw new OrtException(OrtErrorCode.ORT_NO_SUCHFILE, "no ONNX Runtime found: looked for " + JAR_DIR + LIBRARY
                    + " on the class path (an ORT artifact's jar: com.microsoft.onnxruntime:onnxruntime for the CPU, "
                    + "onnxruntime_gpu for CUDA 11.8) and found none, and neither " + PATH_PROPERTY + " nor " + PATH_ENV
                    + " names a folder holding libonnxruntime.so");
        }

        private static List<ClassLoader> loaders() {
            List<ClassLoader> loaders = new ArrayList<>();
            ClassLoader context = Thread.currentThread().getContextClassLoader();
            if (context != null) {
                loaders.add(context);
            }
            ClassLoader own = OrtLibrary.class.getClassLoader();
            if (own != null && own != context) {
                loaders.add(own);
            }
            return loaders;
        }

        boolean has(String name) {
            return loader.getResource(JAR_DIR + name) != null;
        }

        /** Extracts the runtime and, where the jar has it, the shared provider library; returns the runtime. */
        Path extractRuntime() {
            Path runtime = extract(LIBRARY, cacheDir);
            if (has(PROVIDERS_SHARED)) {
                extract(PROVIDERS_SHARED, cacheDir);
            }
            return runtime;
        }

        Path extract(String name, Path dir) {
            return NativeFiles.extract(loader, JAR_DIR + name, dir, name);
        }

        /** "onnxruntime_gpu-1.16.3" for a jar named so; "onnxruntime" where the URL names no jar. */
        private static String jarName(URL url) {
            String s = url.toString();
            int bang = s.indexOf("!/");
            if (!s.startsWith("jar:") || bang < 0) {
                return "onnxruntime";
            }
            String file = s.substring(0, bang);
            file = file.substring(file.lastIndexOf('/') + 1);
            return file.endsWith(".jar") ? file.substring(0, file.length() - 4) : file;
        }
    }

    /**
     * System.load as well, so that the generated bindings' loader lookup (OrtCApi's free functions) sees the
     * same library. The JDK lets one class loader of a process do that per library; the runtime itself reads
     * ORT through the lookup above alone, so in a second class loader (two web applications, a redeploy, a
     * plugin host) the library is not loaded again that way, instead of refusing ORT there.
     */
    private static void loadForGeneratedBindings(Path library) {
        try {
            System.load(library.toAbsolutePath().toString());
        } catch (UnsatisfiedLinkError e) {
            if (!String.valueOf(e.getMessage()).contains("already loaded in another classloader")) {
                throw e;
            }
        }
    }
}
