package org.pvn3d.ort.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every file the command line writes appears whole or not at all: written beside its place, then moved over it. A
 * write that fails halfway (a full disk, an exception) once left a truncated report or picture where a good one was.
 */
class AtomicWriteTest {
    private static List<String> names(Path dir) throws IOException {
        try (var files = Files.list(dir)) {
            return files.map(f -> f.getFileName().toString()).sorted().toList();
        }
    }

    @Test
    void aWriteThatFailsHalfwayLeavesTheOldFileAndNoTemporaryOne(@TempDir Path dir) throws Exception {
        Path report = Files.writeString(dir.resolve("report.json"), "{\"good\": true}");
        IOException thrown = assertThrows(IOException.class, () -> Io.writeAtomically(report, temporary -> {
            Files.writeString(temporary, "{\"tru");
            throw new IOException("No space left on device");
        }));
        assertEquals("No space left on device", thrown.getMessage());
        assertEquals("{\"good\": true}", Files.readString(report));
        assertEquals(List.of("report.json"), names(dir));

        assertThrows(IllegalStateException.class, () -> Io.writeAtomically(report, temporary -> {
            Files.writeString(temporary, "{\"tru");
            throw new IllegalStateException("a bug halfway");
        }));
        assertEquals("{\"good\": true}", Files.readString(report));
        assertEquals(List.of("report.json"), names(dir));
    }

    @Test
    void aWriteThatWorksReplacesTheFile(@TempDir Path dir) throws Exception {
        Path report = Files.writeString(dir.resolve("report.json"), "{\"old\": true, \"padding\": \"longer than the new one\"}");
        Io.writeAtomically(report, "{\"new\": true}");
        assertEquals("{\"new\": true}", Files.readString(report));
        Path png = dir.resolve("pose.png");
        Io.writeAtomically(png, new byte[] {1, 2, 3});
        assertEquals(3, Files.size(png));
        assertEquals(List.of("pose.png", "report.json"), names(dir));
        // no folder to write into: the error of the file's own folder, nothing made
        assertThrows(java.nio.file.NoSuchFileException.class, () -> Io.writeAtomically(dir.resolve("no/such/folder/x.json"), "x"));
    }

    @Test
    void theCommandsReplaceTheirFilesWhole(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("report.json"), "old report");
        Files.writeString(dir.resolve("pose.png"), "old picture");
        MainTest.Output o = MainTest.run("--warmup", "0", "--refine", "none", "--out", dir.toString());
        assertEquals(0, o.code(), o.out() + o.err());
        assertTrue(Files.readString(dir.resolve("report.json")).contains("max_abs_diff"));
        MainTest.assertPng(Files.readAllBytes(dir.resolve("pose.png")), 256, 256);
        assertEquals(List.of("pose.png", "report.json"), names(dir));

        Path bench = Files.createDirectory(dir.resolve("bench"));
        Files.writeString(bench.resolve("pool.json"), "old figures");
        MainTest.Output b = MainTest.run("pool-bench", "--frames", "1", "--sessions", "1", "--warmup", "0", "--threads", "1", "--json",
                bench.resolve("pool.json").toString(), "--jfr", bench.resolve("pool.jfr").toString());
        assertEquals(0, b.code(), b.out() + b.err());
        assertTrue(Files.readString(bench.resolve("pool.json")).contains("\"frames_per_s\""));
        assertTrue(!jdk.jfr.consumer.RecordingFile.readAllEvents(bench.resolve("pool.jfr")).isEmpty(), "the recording is whole");
        assertEquals(List.of("pool.jfr", "pool.json"), names(bench));
    }

    @Test
    void aLinkStaysALinkToTheReplacedFile(@TempDir Path dir) throws Exception {
        Path real = Files.writeString(Files.createDirectory(dir.resolve("results")).resolve("report.json"), "old");
        Path link = Files.createSymbolicLink(dir.resolve("latest.json"), real);
        Io.writeAtomically(link, "new");
        assertTrue(Files.isSymbolicLink(link), "still a link");
        assertEquals("new", Files.readString(real));
        assertEquals(List.of("report.json"), names(real.getParent()));
    }

    /** What the in-place write kept and a rename alone would not (a hostile review): permissions, long names, dangling links. */
    @Test
    void aReplacedFileKeepsItsPermissionsAndAnyLegalNameWorks(@TempDir Path dir) throws Exception {
        Path secret = Files.writeString(dir.resolve("private.json"), "old");
        Files.setPosixFilePermissions(secret, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        Io.writeAtomically(secret, "new");
        assertEquals("new", Files.readString(secret));
        assertEquals("rw-------", java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(secret)));

        Path longest = dir.resolve("r".repeat(250) + ".json"); // 255 bytes, the most a name may have here
        Io.writeAtomically(longest, "long");
        assertEquals("long", Files.readString(longest));
    }

    @Test
    void aDanglingLinkGetsItsFileCreated(@TempDir Path dir) throws Exception {
        Path results = Files.createDirectory(dir.resolve("results"));
        Path absolute = Files.createSymbolicLink(dir.resolve("latest.json"), results.resolve("run1.json"));
        Io.writeAtomically(absolute, "first");
        assertTrue(Files.isSymbolicLink(absolute), "still a link");
        assertEquals("first", Files.readString(results.resolve("run1.json")));
        Path relative = Files.createSymbolicLink(results.resolve("next.json"), Path.of("run2.json"));
        Io.writeAtomically(relative, "second");
        assertTrue(Files.isSymbolicLink(relative));
        assertEquals("second", Files.readString(results.resolve("run2.json")));
        assertEquals(List.of("next.json", "run1.json", "run2.json"), names(results));
    }

    @Test
    void aPipeIsWrittenInPlace(@TempDir Path dir) throws Exception {
        // not a regular file (a FIFO here; /dev/stdout, a terminal): nothing to replace, and its folder is not ours
        Path fifo = dir.resolve("fifo");
        Process mkfifo = new ProcessBuilder("mkfifo", fifo.toString()).start();
        assertTrue(mkfifo.waitFor(10, TimeUnit.SECONDS) && mkfifo.exitValue() == 0, "mkfifo");
        CompletableFuture<String> read = CompletableFuture.supplyAsync(() -> {
            try {
                return Files.readString(fifo);
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        Io.writeAtomically(fifo, "through the pipe");
        assertEquals("through the pipe", read.get(10, TimeUnit.SECONDS));
        assertEquals(List.of("fifo"), names(dir));
        assertTrue(Files.exists(fifo) && !Files.isRegularFile(fifo), "still a pipe");
    }
}
