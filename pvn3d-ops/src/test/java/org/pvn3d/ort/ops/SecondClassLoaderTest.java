package org.pvn3d.ort.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.pvn3d.ort.OrtRuntime;
import org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi;

/**
 * The operators from a second class loader (an application server's second web application, a redeploy, a
 * plugin host): the JDK lets one loader load a native library file, so the second gets a copy of its own, with
 * its own state, and leaves no file behind.
 */
class SecondClassLoaderTest {
    private static URL codeSource(Class<?> c) throws Exception {
        return c.getProtectionDomain().getCodeSource().getLocation();
    }

    @Test
    void aSecondClassLoaderLoadsTheOperatorsToo() throws Exception {
        String version = Pvn3dOps.nativeVersion(); // loaded here, in the application class loader
        int threads = Pvn3dOps.cpuThreads();
        Path library = Pvn3dOps.nativeLibrary();
        long filesBefore;
        try (Stream<Path> files = Files.list(library.getParent())) {
            filesBefore = files.count();
        }
        java.util.List<URL> urls = new java.util.ArrayList<>(
                java.util.List.of(codeSource(Pvn3dOps.class), codeSource(OrtRuntime.class), codeSource(Pvn3dOpsCApi.class)));
        URL ort = ClassLoader.getSystemResource("ai/onnxruntime/native/linux-x64/libonnxruntime.so");
        if (ort != null && ort.getProtocol().equals("jar")) { // else -Dpvn3d.ort.path names ORT (the GPU machine)
            String s = ort.toString();
            urls.add(java.net.URI.create(s.substring("jar:".length(), s.indexOf("!/"))).toURL());
        }
        try (URLClassLoader isolated = new URLClassLoader("isolated", urls.toArray(URL[]::new), ClassLoader.getPlatformClassLoader())) {
            Class<?> ops = isolated.loadClass(Pvn3dOps.class.getName());
            Method nativeVersion = ops.getMethod("nativeVersion");
            try {
                assertEquals(version, nativeVersion.invoke(null));
            } catch (InvocationTargetException e) {
                throw new AssertionError("the second class loader cannot load libpvn3d_ops: " + e.getCause(), e.getCause());
            }
            // its own copy: a setting there is not this loader's
            ops.getMethod("setCpuThreads", int.class).invoke(null, threads == 1 ? 2 : 1);
            assertEquals(threads, Pvn3dOps.cpuThreads());
            assertTrue((int) ops.getMethod("cpuThreads").invoke(null) != threads);
        }
        try (Stream<Path> files = Files.list(library.getParent())) {
            assertEquals(filesBefore, files.count(), "the copy is deleted once loaded");
        }
    }
}
