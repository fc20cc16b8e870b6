package org.pvn3d.ort.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The launcher script ({@code pvn3d-ort} at the top of the project) becomes Java ({@code exec}) in every branch,
 * the first run after a build too (no start-up cache yet): a supervisor's SIGTERM to the launcher then reaches the
 * JVM, Ctrl-C is Java's, the exit status is Java's. The script runs here as it is, in a copy of the project's layout
 * whose build is up to date and whose {@code JAVA_HOME} is a stand-in for java (a few lines of shell): what
 * is tested is the script, in well under a second per run.
 */
class LauncherTest {
    /** Answers {@code -version} as Java 25, records the cache for {@code -XX:AOTCacheOutput=FILE}, else runs "the CLI". */
    private static final String FAKE_JAVA = """
            #!/usr/bin/env bash
            for a in "$@"; do
              case "$a" in
                -version) echo 'openjdk version "25.0.1" 2025-10-21 LTS' >&2; exit 0 ;;
                -XX:AOTCacheOutput=*) printf aot > "${a#*=}"; echo record >> "$FAKE_JAVA_LOG"; exit 0 ;;
              esac
            done
            echo "run $$ $*" >> "$FAKE_JAVA_LOG"
            case "${!#}" in
              sleep) exec sleep 60 ;;
              fail) exit 7 ;;
            esac
            """;

    private record Layout(Path top, Path jdk, Path log, Path cache) {}

    private static Layout layout(Path dir) throws IOException {
        Path top = Files.createDirectory(dir.resolve("top"));
        Path launcher = top.resolve("pvn3d-ort");
        Files.copy(Path.of("..", "pvn3d-ort"), launcher);
        Files.setPosixFilePermissions(launcher, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path pom = Files.writeString(top.resolve("pom.xml"), "<project>\n  <version>0-test</version>\n</project>\n");
        Path target = Files.createDirectories(top.resolve("pvn3d-pipeline/target"));
        Path classpath = Files.writeString(target.resolve("launcher.classpath"), "/picocli.jar:/onnxruntime.jar");
        // the build is newer than every source (no rebuild) and older than the cache recorded next
        Files.setLastModifiedTime(pom, FileTime.from(Instant.now().minusSeconds(7200)));
        Files.setLastModifiedTime(classpath, FileTime.from(Instant.now().minusSeconds(3600)));
        Path java = Files.createDirectories(dir.resolve("jdk/bin")).resolve("java");
        Files.writeString(java, FAKE_JAVA);
        Files.setPosixFilePermissions(java, PosixFilePermissions.fromString("rwxr-xr-x"));
        return new Layout(top, dir.resolve("jdk"), dir.resolve("java.log"), target.resolve("pvn3d-ort.aot"));
    }

    private static Process start(Layout l, String... args) throws IOException {
        List<String> command = new java.util.ArrayList<>(List.of("bash", l.top().resolve("pvn3d-ort").toString()));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(l.top().getParent().resolve("launcher.out").toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        Map<String, String> env = pb.environment();
        env.remove("JAVA_OPTS");
        env.remove("PVN3D_AOT");
        env.put("JAVA_HOME", l.jdk().toString());
        env.put("FAKE_JAVA_LOG", l.log().toString());
        return pb.start();
    }

    /** The log's "run PID ARGS" lines. */
    private static List<String> runs(Layout l) throws IOException {
        return Files.exists(l.log()) ? Files.readAllLines(l.log()).stream().filter(s -> s.startsWith("run ")).toList() : List.of();
    }

    private static void await(String what, java.util.function.BooleanSupplier done) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!done.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, what);
            Thread.sleep(20);
        }
    }

    @Test
    void withoutACacheTheLauncherBecomesJavaAndRecordsTheCacheAfterwards(@TempDir Path dir) throws Exception {
        Layout l = layout(dir);
        Process launcher = start(l, "sleep");
        List<Long> orphans = new java.util.ArrayList<>();
        try {
            await("the run starts", () -> {
                try {
                    return !runs(l).isEmpty();
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            long java = Long.parseLong(runs(l).get(0).split(" ")[1]);
            orphans.add(java);
            assertEquals(launcher.pid(), java, "the launcher's process is Java's (exec), not its parent");
            assertTrue(!Files.exists(l.cache()), "no cache while the run goes on");
            launcher.destroy(); // SIGTERM, as a supervisor or timeout sends it
            assertTrue(launcher.waitFor(10, TimeUnit.SECONDS), "SIGTERM ends the run");
            assertEquals(143, launcher.exitValue(), "killed by SIGTERM (128 + 15)");
            Optional<ProcessHandle> left = ProcessHandle.of(java);
            assertTrue(left.isEmpty() || !left.get().isAlive(), "no Java left behind");
            // then, in the background, once that process is gone: the cache, its stamp, the lock removed
            Path stamp = Path.of(l.cache() + ".stamp");
            Path lock = Path.of(l.cache() + ".lock");
            await("the cache is recorded after the run", () -> Files.exists(stamp) && !Files.exists(lock));
            assertEquals("aot", Files.readString(l.cache()));
            assertTrue(Files.readString(stamp).startsWith("openjdk version \"25.0.1\""), Files.readString(stamp));

            // the next run maps the cache, and its exit status is Java's
            Process second = start(l, "fail");
            assertTrue(second.waitFor(10, TimeUnit.SECONDS));
            assertEquals(7, second.exitValue());
            String run = runs(l).get(1);
            assertEquals(second.pid(), Long.parseLong(run.split(" ")[1]), run);
            assertTrue(run.contains("-XX:AOTCache=" + l.cache()), run);
        } finally {
            launcher.destroyForcibly();
            for (long pid : orphans) { // only with the old launcher: the Java it left running
                ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
            }
        }
    }

    @Test
    void withoutACacheTheExitStatusIsJavasAndPvn3dAot0RecordsNothing(@TempDir Path dir) throws Exception {
        Layout l = layout(dir);
        ProcessBuilder off = new ProcessBuilder("bash", l.top().resolve("pvn3d-ort").toString(), "fail").redirectErrorStream(true)
                .redirectOutput(dir.resolve("off.out").toFile());
        off.environment().put("JAVA_HOME", l.jdk().toString());
        off.environment().put("FAKE_JAVA_LOG", l.log().toString());
        off.environment().put("PVN3D_AOT", "0");
        Process p = off.start();
        assertTrue(p.waitFor(10, TimeUnit.SECONDS));
        assertEquals(7, p.exitValue());
        Thread.sleep(1500); // longer than the recorder's poll: it would have started by now
        assertTrue(!Files.exists(l.cache()) && !Files.readString(l.log()).contains("record"), Files.readString(l.log()));

        Process first = start(l, "fail");
        assertTrue(first.waitFor(10, TimeUnit.SECONDS));
        assertEquals(7, first.exitValue(), "the first run's own status");
        assertEquals(first.pid(), Long.parseLong(runs(l).get(1).split(" ")[1]), "exec");
        await("the cache is recorded after the run", () -> Files.exists(Path.of(l.cache() + ".stamp"))
                && !Files.exists(Path.of(l.cache() + ".lock")));
    }
}
