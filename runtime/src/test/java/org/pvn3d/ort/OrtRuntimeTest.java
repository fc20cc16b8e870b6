package org.pvn3d.ort;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pvn3d.ort.internal.NativeFiles;

class OrtRuntimeTest {
    @Test
    void loadsTheDefaultRuntimeAndServesApi16() {
        OrtRuntime runtime = OrtRuntime.get();
        assertTrue(OrtRuntime.compareVersions(runtime.version(), "1.16.0") >= 0, runtime.version());
        assertTrue(Files.isRegularFile(runtime.library()), runtime.library().toString());
        assertEquals(runtime.library().getParent(), runtime.directory());
        assertTrue(runtime.api().byteSize() > 0);
        if (System.getProperty(OrtRuntime.PATH_PROPERTY) == null && System.getenv(OrtRuntime.PATH_ENV) == null) {
            // the tests' class path carries com.microsoft.onnxruntime:onnxruntime (CPU only), 1.16.3 unless -Dort.version
            String expected = System.getProperty("pvn3d.test.ortVersion", "1.16.3");
            assertTrue(runtime.isFromClassPath());
            assertEquals(expected, runtime.version());
            assertTrue(runtime.source().startsWith("onnxruntime-" + expected + ".jar"), runtime.source());
            assertTrue(runtime.library().getParent().getFileName().toString().startsWith("onnxruntime-" + expected + "-"),
                    runtime.library().toString());
            assertTrue(!runtime.hasCudaProvider());
            OrtException noCuda = assertThrows(OrtException.class, runtime::ensureCudaProvider);
            assertEquals(OrtErrorCode.ORT_NOT_IMPLEMENTED, noCuda.getCode());
            assertTrue(noCuda.getMessage().contains("onnxruntime_gpu"), noCuda.getMessage());
        }
        assertTrue(OrtEnvironment.getEnvironment().getAvailableProviders().contains("CPUExecutionProvider"));
    }

    @Test
    void versionsCompareNumerically() {
        assertTrue(OrtRuntime.compareVersions("1.9.0", "1.16.0") < 0);
        assertTrue(OrtRuntime.compareVersions("1.16.3", "1.16.0") > 0);
        assertTrue(OrtRuntime.compareVersions("1.24.1", "1.16") > 0);
        assertEquals(0, OrtRuntime.compareVersions("1.16", "1.16.0"));
        assertTrue(OrtRuntime.compareVersions("1.15.1-rc1", "1.16.0") < 0);
    }

    @Test
    void aMissingFolderIsReportedWithWhatWasLookedFor(@TempDir Path dir) {
        Path missing = dir.resolve("no-such-ort");
        OrtException e = assertThrows(OrtException.class, () -> OrtRuntime.findLibrary(missing, "system property x"));
        assertEquals(OrtErrorCode.ORT_NO_SUCHFILE, e.getCode());
        assertTrue(e.getMessage().contains(missing.toString()) && e.getMessage().contains("does not exist"), e.getMessage());
        OrtException empty = assertThrows(OrtException.class, () -> OrtRuntime.findLibrary(dir, "system property x"));
        assertTrue(empty.getMessage().contains("holds no libonnxruntime.so"), empty.getMessage());
    }

    @Test
    void findsTheLibraryInAFolder(@TempDir Path dir) throws IOException {
        Files.writeString(dir.resolve("libonnxruntime.so.1.16.3"), "x");
        Files.writeString(dir.resolve("libonnxruntime.so"), "x");
        assertEquals(dir.resolve("libonnxruntime.so"), OrtRuntime.findLibrary(dir, "test"));
    }

    @Test
    void aLibraryForAnotherArchitectureIsRefusedClearly(@TempDir Path dir) throws IOException {
        byte[] elf = new byte[64];
        elf[0] = 0x7f;
        elf[1] = 'E';
        elf[2] = 'L';
        elf[3] = 'F';
        elf[4] = 2; // 64-bit
        elf[5] = 1; // little endian
        boolean x64 = System.getProperty("os.arch").matches("amd64|x86_64");
        int other = x64 ? 183 : 62; // aarch64 on x86-64 hosts, x86-64 elsewhere
        elf[18] = (byte) other;
        Path lib = dir.resolve("libonnxruntime.so");
        Files.write(lib, elf);
        OrtException e = assertThrows(OrtException.class, () -> NativeFiles.checkElfArchitecture(lib));
        assertTrue(e.getMessage().contains(x64 ? "aarch64" : "x86-64") && e.getMessage().contains(lib.toString()),
                e.getMessage());
        Files.writeString(lib, "not an elf file at all, just text");
        OrtException notElf = assertThrows(OrtException.class, () -> NativeFiles.checkElfArchitecture(lib));
        assertTrue(notElf.getMessage().contains("not an ELF"), notElf.getMessage());
    }

    @Test
    void aTruncatedLibraryIsRefusedBeforeTheLoaderMapsIt(@TempDir Path dir) throws IOException {
        // the dynamic loader maps a truncated ELF file and dies with SIGBUS on the missing pages (the JVM with it)
        byte[] whole = Files.readAllBytes(OrtRuntime.get().library());
        Path copy = dir.resolve("libonnxruntime.so");
        Files.write(copy, whole);
        NativeFiles.checkElfArchitecture(copy); // the real library: whole
        for (int keep : new int[] {64 * 1024, whole.length / 2, whole.length - 1}) {
            Files.write(copy, java.util.Arrays.copyOf(whole, keep));
            OrtException e = assertThrows(OrtException.class, () -> NativeFiles.checkElfArchitecture(copy), "kept " + keep);
            assertTrue(e.getMessage().contains("is cut short (" + keep + " bytes") && e.getMessage().contains("incomplete copy"),
                    e.getMessage());
        }
    }

    /**
     * In a JVM of its own (a process loads one runtime): a runtime that cannot load (a text file, a truncated
     * copy) is the same OrtException at every entry point, every time (it was an ExceptionInInitializerError,
     * then NoClassDefFoundError; the truncated copy crashed the JVM in the dynamic loader).
     */
    @Test
    void aRuntimeThatCannotLoadIsAnOrtExceptionEverywhere(@TempDir Path dir) throws Exception {
        Path text = Files.createDirectories(dir.resolve("text"));
        Files.writeString(text.resolve("libonnxruntime.so"), "not a library");
        Path cut = Files.createDirectories(dir.resolve("cut"));
        byte[] whole = Files.readAllBytes(OrtRuntime.get().library());
        Files.write(cut.resolve("libonnxruntime.so"), java.util.Arrays.copyOf(whole, 64 * 1024));
        for (Path folder : new Path[] {text, cut}) {
            Path javaBin = Path.of(System.getProperty("java.home"), "bin", "java");
            String classPath = java.util.stream.Stream.of(UnloadableRuntime.class, OrtException.class, org.pvn3d.ort.ffm.OrtApi.class)
                    .map(c -> {
                        try {
                            return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
                        } catch (java.net.URISyntaxException e) {
                            throw new IllegalStateException(e);
                        }
                    }).distinct().collect(java.util.stream.Collectors.joining(java.io.File.pathSeparator));
            Process p = new ProcessBuilder(javaBin.toString(), "--enable-native-access=ALL-UNNAMED", "-cp", classPath,
                    "-Dpvn3d.ort.path=" + folder, UnloadableRuntime.class.getName()).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            assertTrue(p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS), out);
            assertEquals(0, p.exitValue(), "the child ran to its end: " + out);
            for (String entry : UnloadableRuntime.ENTRIES) {
                assertTrue(out.contains(entry + ": org.pvn3d.ort.OrtException: "), entry + " in\n" + out);
            }
            assertTrue(out.contains(folder == text ? "not an ELF shared library" : "is cut short"), out);
        }
    }

    /** The child JVM of {@link #aRuntimeThatCannotLoadIsAnOrtExceptionEverywhere}. */
    public static final class UnloadableRuntime {
        static final java.util.List<String> ENTRIES = java.util.List.of("environment", "environment again", "session options",
                "run options", "tensor", "string tensor", "allocated tensor", "memory info", "cuda memory info", "runtime");

        public static void main(String[] args) {
            java.util.List<java.util.concurrent.Callable<?>> calls = java.util.List.of(OrtEnvironment::getEnvironment,
                    OrtEnvironment::getEnvironment, SessionOptions::new, RunOptions::new,
                    () -> OnnxTensor.createTensor(new float[] {1}, 1), () -> OnnxTensor.createStringTensor(new String[] {"a"}, 1),
                    () -> OnnxTensor.allocate(OnnxTensorType.FLOAT, 4), OrtMemoryInfo::cpu, () -> OrtMemoryInfo.cuda(0),
                    OrtRuntime::get);
            for (int i = 0; i < calls.size(); i++) {
                try {
                    System.out.println(ENTRIES.get(i) + ": returned " + calls.get(i).call());
                } catch (Throwable t) {
                    System.out.println(ENTRIES.get(i) + ": " + t);
                }
            }
        }
    }

    @Test
    void extractionFromAJarIsAtomicAndIdempotent(@TempDir Path dir) throws IOException {
        String resource = "org/junit/jupiter/api/Test.class"; // inside JUnit's jar
        ClassLoader loader = OrtRuntimeTest.class.getClassLoader();
        assertTrue(loader.getResource(resource).toString().startsWith("jar:"));
        Path first = NativeFiles.extract(loader, resource, dir, "Test.class");
        assertEquals(dir.resolve("Test.class"), first);
        long modified = Files.getLastModifiedTime(first).toMillis();
        Path second = NativeFiles.extract(loader, resource, dir, "Test.class");
        assertEquals(first, second);
        assertEquals(modified, Files.getLastModifiedTime(second).toMillis());
        try (var files = Files.list(dir)) {
            assertEquals(1, files.count(), "no temporary files left behind");
        }
    }

    @Test
    void aResourceInAClassPathFolderIsUsedInPlace(@TempDir Path dir) throws IOException {
        ClassLoader loader = OrtRuntimeTest.class.getClassLoader();
        Path inPlace = NativeFiles.extract(loader, "models/add16.onnx", dir, "add16.onnx");
        assertTrue(inPlace.endsWith(Path.of("models", "add16.onnx")) && Files.isRegularFile(inPlace), inPlace.toString());
        try (var files = Files.list(dir)) {
            assertEquals(0, files.count(), "nothing copied");
        }
    }
}
