package org.pvn3d.ort;

import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.Properties;
import org.pvn3d.ort.internal.NativeFiles;
import org.pvn3d.ort.internal.OrtLibrary;

/**
 * The ONNX Runtime library this process uses, loaded once.
 *
 * <p>This library carries no ONNX Runtime of its own: it takes {@code libonnxruntime.so} from the ORT
 * artifact the application put on the class path ({@code com.microsoft.onnxruntime:onnxruntime} for
 * the CPU, {@code onnxruntime_gpu} for CUDA 11.8; their JNI library is never used), extracted once into
 * a cache folder ({@code ~/.cache/pvn3d-ort}, or {@value NativeFiles#CACHE_PROPERTY}) named after the
 * jar. The system property {@value #PATH_PROPERTY} or the environment variable {@value #PATH_ENV}
 * points at another build instead: a folder holding {@code libonnxruntime.so*} and its provider
 * libraries (for example an ORT built for CUDA 12 or 13), or the library file itself.
 *
 * <p>Any runtime from 1.16 on works: the bindings ask for API version 16, which every later runtime
 * serves. An older runtime, a missing file or a library for another architecture is refused with an
 * {@link OrtException} that says what was looked for and where, on every call until one loads.
 */
public final class OrtRuntime {
    /** System property naming another ORT build (a folder or the library file). */
    public static final String PATH_PROPERTY = OrtLibrary.PATH_PROPERTY;
    /** Environment variable naming another ORT build (a folder or the library file). */
    public static final String PATH_ENV = OrtLibrary.PATH_ENV;
    /** The C API version the bindings were generated from. */
    public static final int API_VERSION = OrtLibrary.API_VERSION;

    private static volatile OrtRuntime instance;

    private final OrtLibrary library;

    private OrtRuntime(OrtLibrary library) {
        this.library = library;
    }

    /** The runtime of this process, loading it on first use. */
    public static OrtRuntime get() {
        OrtRuntime r = instance;
        if (r == null) {
            r = new OrtRuntime(OrtLibrary.get()); // loads once; a race only makes a second view of it
            instance = r;
        }
        return r;
    }

    /** The version string the loaded library reports ({@code GetVersionString}), e.g. "1.16.3". */
    public String version() {
        return library.version();
    }

    /** The path of the loaded {@code libonnxruntime.so}. */
    public Path library() {
        return library.library();
    }

    /** The folder the provider libraries are loaded from (ORT looks beside its own library). */
    public Path directory() {
        return library.directory();
    }

    /** True when the loaded runtime's version is {@code version} or later (e.g. "1.18"). */
    public boolean isAtLeast(String version) {
        return library.isAtLeast(version);
    }

    /** True when the runtime came from an ORT jar on the class path rather than a folder the user named. */
    public boolean isFromClassPath() {
        return library.isFromClassPath();
    }

    /** Where the runtime came from: the ORT jar on the class path, or the property / variable and its value. */
    public String source() {
        return library.source();
    }

    /** Whether the CUDA execution provider's library is there to load (extracting nothing). */
    public boolean hasCudaProvider() {
        return library.hasCudaProvider();
    }

    /**
     * Makes sure the CUDA provider library sits beside the loaded runtime: from an ORT jar it is
     * extracted on first use (it is large); a folder the user named must already hold it.
     */
    public void ensureCudaProvider() {
        library.ensureCudaProvider();
    }

    /** The version of this library (pvn3d-ort). */
    public static String libraryVersion() {
        Properties p = new Properties();
        try (InputStream in = OrtRuntime.class.getResourceAsStream("build.properties")) {
            if (in != null) {
                p.load(in);
            }
        } catch (IOException e) {
            // a descriptive value only
        }
        return p.getProperty("pvn3d.version", "unknown");
    }

    /** The {@code OrtApi*} of the loaded runtime (for this package's tests; the runtime reads it through its API table). */
    MemorySegment api() {
        return library.api();
    }

    static Path findLibrary(Path configured, String source) {
        return OrtLibrary.findLibrary(configured, source);
    }

    static int compareVersions(String a, String b) {
        return OrtLibrary.compareVersions(a, b);
    }

    @Override
    public String toString() {
        return library.toString();
    }
}
