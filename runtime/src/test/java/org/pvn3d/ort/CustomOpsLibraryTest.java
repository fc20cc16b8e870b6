package org.pvn3d.ort;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Native custom-op libraries ({@code RegisterCustomOpsLibrary_V2}, {@code RegisterCustomOpsUsingFunction})
 * with Microsoft's onnxruntime-extensions from Maven Central: its linux-x64 library, extracted from the
 * jar on the test class path, runs two of its string operators (domain {@code ai.onnx.contrib}) from
 * {@code contrib_strings.onnx}.
 */
class CustomOpsLibraryTest {
    static final String EXTENSIONS = "ai/onnxruntime/extensions/native/linux-x64/libonnxruntime_extensions4j_jni.so";
    static final String[] TEXT = {"Hello", "ONNX runtime", "", "mixed Case 42"};

    @TempDir
    static Path dir;
    static Path extensions;

    @BeforeAll
    static void extractTheLibrary() throws IOException {
        Assumptions.assumeTrue(System.getProperty("os.name").startsWith("Linux")
                && System.getProperty("os.arch").matches("amd64|x86_64"), "the extensions jar's linux-x64 library");
        try (InputStream in = CustomOpsLibraryTest.class.getClassLoader().getResourceAsStream(EXTENSIONS)) {
            assertTrue(in != null, EXTENSIONS + " on the test class path (com.microsoft.onnxruntime:onnxruntime-extensions)");
            extensions = dir.resolve("libonnxruntime_extensions.so");
            Files.copy(in, extensions);
        }
    }

    static void runStrings(OrtSession session) {
        try (OnnxTensor text = OnnxTensor.createStringTensor(TEXT, TEXT.length);
                Result r = session.run(Map.of("text", text))) {
            assertArrayEquals(new String[] {"HELLO", "ONNX RUNTIME", "", "MIXED CASE 42"}, r.tensor("upper").getStringArray());
            assertArrayEquals(new long[] {5, 12, 0, 13}, r.tensor("length").getLongArray());
        }
    }

    @Test
    void theLibrarysOperatorsRunAndItStaysLoadedWhileASessionUsesIt() {
        OrtSession session;
        try (SessionOptions options = new SessionOptions().registerCustomOpsLibrary(extensions)) {
            session = OrtEnvironment.getEnvironment().createSession(TestModels.model("contrib_strings.onnx"), options);
        }
        // ORT owns the library: the options are released, the session still holds it
        try (session) {
            runStrings(session);
            runStrings(session);
        }
    }

    @Test
    void withoutTheLibraryTheModelDoesNotLoad() {
        OrtException e = assertThrows(OrtException.class,
                () -> OrtEnvironment.getEnvironment().createSession(TestModels.model("contrib_strings.onnx")).close());
        assertTrue(e.getMessage().contains("StringUpper") || e.getMessage().contains("ai.onnx.contrib"), e.getMessage());
    }

    @Test
    void aLibraryThatDoesNotExistIsNamed() {
        Path missing = dir.resolve("no-such-library.so");
        try (SessionOptions options = new SessionOptions()) {
            OrtException e = assertThrows(OrtException.class, () -> options.registerCustomOpsLibrary(missing));
            assertEquals(OrtErrorCode.ORT_NO_SUCHFILE, e.getCode());
            assertTrue(e.getMessage().contains(missing.toString()), e.getMessage());
        }
    }

    @Test
    void aLibraryWithoutRegisterCustomOpsIsNamed() throws IOException {
        Path libc = loadedLibrary("libc.so.6");
        try (SessionOptions options = new SessionOptions()) {
            OrtException e = assertThrows(OrtException.class, () -> options.registerCustomOpsLibrary(libc));
            System.out.println("registering libc: " + e.getMessage());
            assertTrue(e.getMessage().contains(libc.toString()), e.getMessage());
            assertTrue(e.getMessage().contains("RegisterCustomOps"), e.getMessage());
        }
    }

    @Test
    void aFunctionAlreadyInTheProcessRegistersItsOperators() throws Throwable {
        // RegisterCustomOpsUsingFunction looks in the process's global symbols: load the library there
        MethodHandle dlopen = Linker.nativeLinker().downcallHandle(
                Linker.nativeLinker().defaultLookup().find("dlopen").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.JAVA_INT));
        int rtldNowGlobal = 0x2 | 0x100;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment handle = (MemorySegment) dlopen.invokeExact(arena.allocateFrom(extensions.toString()), rtldNowGlobal);
            assertTrue(handle.address() != 0, "dlopen " + extensions);
        }
        try (SessionOptions options = new SessionOptions().registerCustomOpsUsingFunction("RegisterCustomOps");
                OrtSession session = OrtEnvironment.getEnvironment().createSession(TestModels.model("contrib_strings.onnx"),
                        options)) {
            runStrings(session);
        }
        try (SessionOptions options = new SessionOptions()) {
            OrtException e = assertThrows(OrtException.class, () -> options.registerCustomOpsUsingFunction("NoSuchRegisterFunction"));
            assertTrue(e.getMessage().contains("NoSuchRegisterFunction"), e.getMessage());
        }
    }

    /** The path of a library this process has loaded, from /proc/self/maps. */
    static Path loadedLibrary(String fileName) throws IOException {
        try (Stream<String> lines = Files.lines(Path.of("/proc/self/maps"))) {
            return lines.map(l -> l.substring(l.lastIndexOf(' ') + 1))
                    .filter(p -> p.endsWith("/" + fileName)).map(Path::of).findFirst()
                    .orElseThrow(() -> new AssertionError(fileName + " is not loaded"));
        }
    }
}
