package com.example.consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The library's jars on the module path, a user's program on the class path: {@link ModulePathProbe},
 * compiled here on the class path, runs in a JVM of its own with runtime, ffm-bindings, pvn3d-ops,
 * pvn3d-pipeline, picocli and ORT's jar as modules.
 */
class ModulePathTest {
    /** The jars of this test's class path that go on the module path. */
    static final String MODULE_JARS = "(ffm-bindings|runtime|pvn3d-ops|pvn3d-pipeline|picocli|onnxruntime)-[0-9].*\\.jar";

    @Test
    void aProgramCompiledOnTheClassPathRunsWithTheJarsOnTheModulePath() throws Exception {
        List<String> modules = new ArrayList<>();
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            if (Path.of(entry).getFileName().toString().matches(MODULE_JARS)) {
                modules.add(entry);
            }
        }
        assertEquals(6, modules.size(), "the six jars in " + System.getProperty("java.class.path"));
        Path probe = Path.of(ModulePathProbe.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        List<String> command = List.of(java.toString(), "--module-path", String.join(File.pathSeparator, modules),
                "--add-modules", "ALL-MODULE-PATH",
                "--enable-native-access=ALL-UNNAMED,org.pvn3d.ort.ffm,org.pvn3d.ort,org.pvn3d.ort.ops,org.pvn3d.ort.pipeline",
                "-Dpvn3d.cache.dir=" + System.getProperty("pvn3d.cache.dir"), "-cp", probe.toString(), ModulePathProbe.class.getName());
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), out);
        assertEquals(0, p.exitValue(), String.join(" ", command) + "\n" + out);
        assertTrue(out.contains("module org.pvn3d.ort\nok"), out);
        assertTrue(!out.contains("IllegalAccessError") && !out.contains("restricted method"), out);
    }
}
