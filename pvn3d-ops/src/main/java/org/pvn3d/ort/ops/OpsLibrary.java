package org.pvn3d.ort.ops;

import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_built_with_cuda;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_last_error;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_status_name;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_version;

import java.lang.foreign.SymbolLookup;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.OrtRuntime;
import org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi;
import org.pvn3d.ort.internal.NativeFiles;

/**
 * libpvn3d_ops (cuda-ops/include/pvn3d_ops.h), loaded on first use: where it comes from, and the
 * turning of its status codes into exceptions. Its functions are called through the jextract output
 * {@link Pvn3dOpsCApi} (ffm-bindings, package {@code org.pvn3d.ort.ffm.ops}), which finds them in
 * the libraries this class loader has loaded: {@link #load()} {@code System.load}s the library and
 * checks that it exports every function the bindings declare, so that a call after a successful
 * {@code load()} always links.
 *
 * <p>Where the library comes from: the system property {@value #PATH_PROPERTY} or the environment
 * variable {@value #PATH_ENV} (the file itself, or a folder holding {@code libpvn3d_ops.so}), else
 * the copy inside this artifact's jar, extracted once to {@code <cache>/pvn3d-ops-<version>-<crc>/}.
 * A library that cannot be found or loaded fails {@link #load()} with an {@link OrtException} that
 * says what was looked for and where, on every call until one loads (never a class-initialisation
 * error): every entry point that reaches a native function calls it first (a bindings call before
 * that would fail with an {@link UnsatisfiedLinkError}).
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

    private static volatile Path loaded;

    private OpsLibrary() {}

    /** Loads the library (once); returns where it was loaded from. Throws an {@link OrtException} while it cannot. */
    public static Path load() {
        Path l = loaded;
        if (l == null) {
            synchronized (OpsLibrary.class) {
                l = loaded;
                if (l == null) {
                    l = locate();
                    open(l);
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
            load();
            message = pvn3d_last_error().getString(0);
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
            load();
            return pvn3d_status_name(status).getString(0);
        } catch (Throwable t) {
            return "status " + status;
        }
    }

    /** The library's version ("MAJOR.MINOR.PATCH"); loads it first. */
    public static String version() {
        load();
        return pvn3d_version().getString(0);
    }

    /** Whether the library was built with its CUDA kernels; loads it first. */
    public static boolean builtWithCuda() {
        load();
        return pvn3d_built_with_cuda() != 0;
    }

    private static Path locate() {
        NativeFiles.Setting setting = NativeFiles.setting(PATH_PROPERTY, PATH_ENV);
        if (setting.isSet()) {
            String configured = setting.value();
            String source = setting.source();
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

    private static void open(Path path) {
        NativeFiles.checkElfArchitecture(path);
        // The bindings look their functions up in the libraries of their own class loader
        // (SymbolLookup.loaderLookup()); System.load registers the library with this class's loader.
        if (Pvn3dOpsCApi.class.getClassLoader() != OpsLibrary.class.getClassLoader()) {
            throw new OrtException(OrtErrorCode.ORT_FAIL, "the libpvn3d_ops bindings (" + Pvn3dOpsCApi.class.getName()
                    + ", ffm-bindings) and " + OpsLibrary.class.getName() + " (pvn3d-ops) are in different class "
                    + "loaders, so the bindings cannot see the library this class loads: put both jars in one");
        }
        try {
            try {
                System.load(path.toAbsolutePath().toString());
            } catch (UnsatisfiedLinkError e) {
                if (!String.valueOf(e.getMessage()).contains("already loaded in another classloader")) {
                    throw e;
                }
                loadOwnCopy(path); // a second class loader (a web application, a redeploy, a plugin)
            }
        } catch (UnsatisfiedLinkError | IllegalArgumentException e) {
            throw new OrtException(OrtErrorCode.ORT_FAIL, "cannot load " + path + ": " + e.getMessage()
                    + " (a CUDA build needs the CUDA runtime libraries on the library path)", e);
        }
        SymbolLookup lookup = SymbolLookup.loaderLookup();
        List<String> missing = new ArrayList<>();
        for (String symbol : boundFunctions()) {
            if (lookup.find(symbol).isEmpty()) {
                missing.add(symbol);
            }
        }
        if (!missing.isEmpty()) {
            throw new OrtException(OrtErrorCode.ORT_FAIL, path + " does not export " + String.join(", ", missing)
                    + ": it is not a matching build of libpvn3d_ops");
        }
    }

    /**
     * Loads a copy of the library for this class loader. The JDK lets one class loader load a given file, and
     * the bindings find their functions through their own loader's libraries, so a second loader gets a file of
     * its own: a copy beside the original (its $ORIGIN, for the libraries it needs beside it), deleted once
     * loaded (the mapping stays). Each loader's copy keeps its own state (threads, timings), as its classes do.
     */
    private static void loadOwnCopy(Path path) {
        Path copy = null;
        try {
            copy = Files.createTempFile(path.toAbsolutePath().getParent(), "libpvn3d_ops-loader-", ".so");
            Files.copy(path, copy, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            System.load(copy.toString());
        } catch (java.io.IOException e) {
            throw new OrtException(OrtErrorCode.ORT_FAIL, "cannot load " + path + " in a second class loader: its copy"
                    + " beside it cannot be written (" + e.getMessage() + "); give each loader its own " + PATH_PROPERTY, e);
        } finally {
            if (copy != null) {
                try {
                    Files.deleteIfExists(copy);
                } catch (java.io.IOException e) {
                    // left in the cache folder; harmless
                }
            }
        }
    }

    /**
     * The C functions the bindings declare: jextract gives each one a public static {@code <name>$address()}
     * (listing the methods neither initialises the class nor looks anything up).
     */
    static List<String> boundFunctions() {
        List<String> names = new ArrayList<>();
        for (Method m : Pvn3dOpsCApi.class.getMethods()) {
            String n = m.getName();
            if (Modifier.isStatic(m.getModifiers()) && m.getParameterCount() == 0 && n.endsWith("$address")) {
                names.add(n.substring(0, n.length() - "$address".length()));
            }
        }
        names.sort(null);
        return names;
    }
}
