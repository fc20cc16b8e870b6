package org.pvn3d.ort.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.SymbolLookup;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi;

/**
 * The loader in front of the generated libpvn3d_ops bindings: the status codes it translates are the
 * header's, every function the bindings declare is exported by the loaded library, and a library that
 * is missing fails with an OrtException on every entry point, never with a class-initialisation error,
 * and leaves the bindings usable once a library is found.
 */
class OpsLibraryTest {
    @Test
    void statusCodesAreTheHeaders() {
        assertEquals(Pvn3dOpsCApi.PVN3D_OK(), OpsLibrary.OK);
        assertEquals(Pvn3dOpsCApi.PVN3D_ERR_INVALID_ARGUMENT(), OpsLibrary.ERR_INVALID_ARGUMENT);
        assertEquals(Pvn3dOpsCApi.PVN3D_ERR_INDEX_OUT_OF_RANGE(), OpsLibrary.ERR_INDEX_OUT_OF_RANGE);
        assertEquals(Pvn3dOpsCApi.PVN3D_ERR_CUDA(), OpsLibrary.ERR_CUDA);
        assertEquals(Pvn3dOpsCApi.PVN3D_ERR_NO_CUDA(), OpsLibrary.ERR_NO_CUDA);
        assertEquals(Pvn3dOpsCApi.PVN3D_ERR_OUT_OF_MEMORY(), OpsLibrary.ERR_OUT_OF_MEMORY);
    }

    @Test
    void everyBoundFunctionIsExported() {
        List<String> functions = OpsLibrary.boundFunctions();
        assertTrue(functions.containsAll(List.of("pvn3d_last_error", "pvn3d_version", "pvn3d_furthest_point_sample_cpu",
                "pvn3d_pose_solve_cuda", "pvn3d_cuda_event_elapsed_ms")), functions.toString());
        assertTrue(functions.stream().allMatch(f -> f.startsWith("pvn3d_")), functions.toString());
        try (Arena arena = Arena.ofConfined()) {
            SymbolLookup library = SymbolLookup.libraryLookup(OpsLibrary.load(), arena);
            for (String f : functions) {
                assertTrue(library.find(f).isPresent(), f + " is not exported by " + OpsLibrary.load());
            }
        }
        assertEquals(OpsLibrary.version(), Pvn3dOps.nativeVersion());
    }

    /** In a JVM of its own: the library is loaded once per process. */
    @Test
    void missingLibraryIsAnOrtExceptionEverywhere(@TempDir Path empty) throws IOException, InterruptedException {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        // where these classes came from (not java.class.path: a test launcher may use a loader of its own)
        String classPath = Stream.of(MissingLibrary.class, OpsLibrary.class, Pvn3dOpsCApi.class, OrtException.class)
                .map(OpsLibraryTest::origin).distinct().collect(Collectors.joining(File.pathSeparator));
        Process p = new ProcessBuilder(java.toString(), "--enable-native-access=ALL-UNNAMED",
                "-cp", classPath, MissingLibrary.class.getName(),
                empty.toString(), OpsLibrary.load().toString())
                .redirectErrorStream(true)
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), out);
        assertEquals(0, p.exitValue(), out);
        for (String entry : List.of("load", "load again", "nativeVersion", "builtWithCuda", "cudaDeviceCount",
                "createDomain", "operators")) {
            assertTrue(out.contains(entry + ": org.pvn3d.ort.OrtException: [ORT_NO_SUCHFILE] system property "
                    + OpsLibrary.PATH_PROPERTY + " points at " + empty), out);
        }
        assertTrue(out.contains("failure: libpvn3d_ops returned status 1"), out);
        assertTrue(out.contains("version once found: " + OpsLibrary.version()), out);
    }

    private static String origin(Class<?> c) {
        try {
            return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The child JVM of {@link #missingLibraryIsAnOrtExceptionEverywhere}: args = a folder without the library, the library. */
    public static final class MissingLibrary {
        public static void main(String[] args) {
            System.setProperty(OpsLibrary.PATH_PROPERTY, args[0]);
            report("load", OpsLibrary::load);
            report("load again", OpsLibrary::load);
            report("nativeVersion", Pvn3dOps::nativeVersion);
            report("builtWithCuda", OpsLibrary::builtWithCuda);
            report("cudaDeviceCount", Pvn3dOps::cudaDeviceCount);
            report("createDomain", Pvn3dOps::createDomain);
            report("operators", () -> Pvn3dOps.operators(CudaIndexCheck.DEFERRED));
            System.out.println("failure: " + Pvn3dOps.rawMessage(OpsLibrary.failure(OpsLibrary.ERR_INVALID_ARGUMENT)));
            // the failed attempts left nothing behind: the bindings work once the library is there
            System.setProperty(OpsLibrary.PATH_PROPERTY, args[1]);
            System.out.println("version once found: " + OpsLibrary.version());
        }

        private static void report(String entry, Callable<?> call) {
            try {
                System.out.println(entry + ": returned " + call.call());
            } catch (Throwable t) {
                System.out.println(entry + ": " + t);
            }
        }
    }
}
