package org.pvn3d.ort.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A standard output that cannot be written (a full disk, {@code > /dev/full}) fails the run: PrintStream swallows
 * the IOException, so {@code pool-bench --json -} once exited 0 with its JSON lost. A pipe whose reader left early
 * ({@code | head}) is not an error to report: exit 141, as a Unix tool that SIGPIPE ended, and nothing on stderr.
 */
class StandardOutputErrorTest {
    /** Refuses every byte, as a full disk does. */
    private static final class FullDisk extends OutputStream {
        @Override
        public void write(int b) throws IOException {
            throw new IOException("No space left on device");
        }
    }

    /** A pipe whose reader has exited: Linux's EPIPE, as FileOutputStream reports it. */
    private static final class ClosedPipe extends OutputStream {
        @Override
        public void write(int b) throws IOException {
            throw new IOException("Broken pipe");
        }
    }

    private static MainTest.Output runToFullOutput(String... args) {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Main.run(args, new Io(new PrintStream(new FullDisk(), true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), false));
        return new MainTest.Output(code, "", err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void jsonToAFullStandardOutputFailsTheRun() {
        MainTest.Output o = runToFullOutput("pool-bench", "--frames", "1", "--sessions", "1", "--warmup", "0", "--threads", "1",
                "--json", "-");
        assertEquals(1, o.code(), o.err());
        assertTrue(o.err().contains("frames/s"), "the table went to stderr: " + o.err());
        assertTrue(o.err().strip().endsWith("pvn3d-ort: cannot write to standard output (a full disk?): "
                + "what it holds is incomplete"), o.err());
    }

    @Test
    void everyCommandChecksItsStandardOutput() {
        MainTest.Output help = runToFullOutput("--help");
        assertEquals(1, help.code(), help.err());
        assertTrue(help.err().contains("cannot write to standard output"), help.err());
        // a usage error stays one: its message is on stderr, standard output holds nothing
        assertEquals(2, runToFullOutput("--runs", "0").code());
    }

    @Test
    void theRealProcessExitsWith1OnDevFull(@TempDir Path dir) throws Exception {
        Path err = dir.resolve("err");
        Process p = new ProcessBuilder(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "-Xmx256m", "-cp", MainTest.classPath(), Main.class.getName(), "--help"))
                .directory(dir.toFile()).redirectOutput(new File("/dev/full")).redirectError(err.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the command line finishes");
        String e = Files.readString(err);
        assertEquals(1, p.exitValue(), e);
        assertTrue(e.contains("pvn3d-ort: cannot write to standard output"), e);
    }

    @Test
    void aClosedPipeEndsTheRunQuietlyWith141() {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Main.run(new String[] {"--help"}, new Io(new StandardOutput(new ClosedPipe()),
                new PrintStream(err, true, StandardCharsets.UTF_8), false));
        assertEquals(Main.READER_GONE, code);
        assertEquals("", err.toString(StandardCharsets.UTF_8));
        // the same stream over a full disk is still an error
        err.reset();
        code = Main.run(new String[] {"--help"}, new Io(new StandardOutput(new FullDisk()),
                new PrintStream(err, true, StandardCharsets.UTF_8), false));
        assertEquals(Main.FAILED, code);
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("cannot write to standard output"), err.toString());
    }

    /**
     * The command ends at its first write to a pipe whose reader has gone, as a tool that SIGPIPE ends: the main
     * job's report, written after its table, is not written (the exit status says the run did not finish), and
     * what failed before that write keeps its own exit code.
     */
    @Test
    void theRunEndsAtItsFirstWriteToTheDeadPipe(@TempDir Path dir) {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        Path report = dir.resolve("r.json");
        int code = Main.run(new String[] {"--runs", "1", "--warmup", "0", "--report", report.toString()},
                new Io(new StandardOutput(new ClosedPipe()), new PrintStream(err, true, StandardCharsets.UTF_8), false));
        assertEquals(Main.READER_GONE, code, err.toString(StandardCharsets.UTF_8));
        assertTrue(Files.notExists(report), "the run ended before its report");
        err.reset();
        code = Main.run(new String[] {"--runs", "0"},
                new Io(new StandardOutput(new ClosedPipe()), new PrintStream(err, true, StandardCharsets.UTF_8), false));
        assertEquals(Main.USAGE, code);
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("--runs takes a positive integer"), err.toString());
    }

    @Test
    void theRealProcessExitsQuietlyWhenItsPipesReaderHasGone(@TempDir Path dir) throws Exception {
        Path err = dir.resolve("err");
        Process p = new ProcessBuilder(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "-Xmx256m", "-cp", MainTest.classPath(), Main.class.getName(), "--help"))
                .directory(dir.toFile()).redirectError(err.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
        // the reader leaves long before the JVM has started and printed the help
        p.getInputStream().close();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the command line finishes");
        String e = Files.readString(err);
        assertEquals(Main.READER_GONE, p.exitValue(), e);
        assertEquals("", e);
    }
}
