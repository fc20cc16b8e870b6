package org.pvn3d.ort;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.reflect.InvocationTargetException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** ORT loaded from a second class loader, and a Java allocator whose blocks are not aligned. */
class LoaderAndAllocatorMisuseTest {

    private static Path codeSource(Class<?> c) throws Exception {
        return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI());
    }

    /**
     * A second class loader holding this library (an app server's second web app, a plugin host, a test
     * framework's isolated loader) loads ONNX Runtime too (OrtLibrary System.load()ed it in every loader, and
     * the JDK allows that in one class loader only).
     */
    @Test
    void aSecondClassLoaderCanLoadTheRuntime() throws Exception {
        OrtRuntime first = OrtRuntime.get(); // loaded in this (the application) class loader
        java.util.List<URL> urls = new java.util.ArrayList<>(java.util.List.of(codeSource(OrtRuntime.class).toUri().toURL(),
                codeSource(org.pvn3d.ort.ffm.OrtApi.class).toUri().toURL()));
        URL ortJar = ClassLoader.getSystemResource("ai/onnxruntime/native/linux-x64/libonnxruntime.so");
        if (ortJar != null && ortJar.getProtocol().equals("jar")) { // else -Dpvn3d.ort.path names ORT (the GPU machine)
            String s = ortJar.toString();
            urls.add(java.net.URI.create(s.substring("jar:".length(), s.indexOf("!/"))).toURL());
        }
        ClassLoader saved = Thread.currentThread().getContextClassLoader();
        try (URLClassLoader isolated = new URLClassLoader("isolated", urls.toArray(URL[]::new), ClassLoader.getPlatformClassLoader())) {
            Thread.currentThread().setContextClassLoader(isolated);
            Object second;
            try {
                second = isolated.loadClass(OrtRuntime.class.getName()).getMethod("get").invoke(null);
            } catch (InvocationTargetException e) {
                throw new AssertionError("the second class loader cannot load ONNX Runtime (" + first + "): " + e.getCause(), e.getCause());
            }
            assertTrue(second.toString().contains(first.version()), second.toString());
        } finally {
            Thread.currentThread().setContextClassLoader(saved);
        }
    }

    /**
     * A JavaAllocator whose Backing hands out blocks that are not 64-byte aligned (here 16-byte aligned, what
     * many allocators give): the blocks are given back and host memory serves instead (ORT's CPU kernels
     * faulted on them with movaps / vmovaps, ending the JVM). In a child JVM, so that a regression cannot end
     * this one.
     */
    @Test
    void aMisalignedJavaAllocatorBlockIsNotACrash() throws Exception {
        Path javaBin = Path.of(System.getProperty("java.home"), "bin", "java");
        String classPath = Stream.of(MisalignedChild.class, OrtException.class, org.pvn3d.ort.ffm.OrtApi.class)
                .map(c -> {
                    try {
                        return codeSource(c).toString();
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }).distinct().collect(Collectors.joining(java.io.File.pathSeparator));
        Path model = Path.of(LoaderAndAllocatorMisuseTest.class.getResource("/models/matmul_chain.onnx").toURI());
        Process p = new ProcessBuilder(javaBin.toString(), "--enable-native-access=ALL-UNNAMED", "-XX:-CreateCoredumpOnCrash",
                "-XX:ErrorFile=" + System.getProperty("java.io.tmpdir") + "/pvn3d_alloc_hs_err_%p.log", "-cp", classPath,
                "-Dpvn3d.ort.path=" + OrtRuntime.get().library(), MisalignedChild.class.getName(), model.toString())
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), out);
        assertEquals(0, p.exitValue(), "the child JVM ran to its end (no SIGSEGV): " + out);
        assertTrue(out.contains("runs done"), out);
    }

    /** The child JVM of {@link #aMisalignedJavaAllocatorBlockIsNotACrash}. */
    public static final class MisalignedChild {
        public static void main(String[] args) throws Exception {
            OrtEnvironment env = OrtEnvironment.getEnvironment();
            JavaAllocator ja = JavaAllocator.create("16-byte aligned", OrtMemoryInfo.cpu(OrtMemoryInfo.AllocatorType.DEVICE),
                    new JavaAllocator.Backing() {
                        @Override
                        public long allocate(long bytes) {
                            return Arena.global().allocate(bytes + 64, 64).address() + 16; // 16-byte aligned only
                        }

                        @Override
                        public void free(long address) {}
                    });
            env.registerAllocator(ja);
            float[] x = new float[16 * 64];
            for (int i = 0; i < x.length; i++) {
                x[i] = i * 0.001f;
            }
            try (SessionOptions o = new SessionOptions().addConfigEntry(OrtEnvironment.USE_ENV_ALLOCATORS, "1");
                    OrtSession s = env.createSession(Path.of(args[0]), o);
                    OnnxTensor tx = OnnxTensor.createTensor(x, 16, 64)) {
                for (int i = 0; i < 3; i++) {
                    try (Result r = s.run(Map.of("x", tx))) {
                        r.tensor("y").getFloatArray();
                    }
                }
            } catch (OrtException e) {
                System.out.println("refused: " + e); // a clear refusal is fine too
            }
            System.out.println("runs done " + ja.counters());
            if (ja.counters().failedAllocations() == 0) {
                throw new IllegalStateException("the misaligned blocks were taken: " + ja.counters());
            }
        }
    }
}
