package org.pvn3d.ort.cli;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.List;
import java.util.Set;

/**
 * Standard output that notices when nobody reads it any more: the reader of a pipe has exited
 * ({@code pvn3d-ort ... | head -1}), which Linux reports as EPIPE. The first such write throws {@link ReaderGone}
 * (unchecked, so it gets past PrintStream, which keeps every IOException to itself) to end the command there rather
 * than run it to the end into a dead pipe; {@link Main} turns it into exit status 141, quietly, as for a Unix tool
 * that SIGPIPE ended. Any other write error (a full disk) stays an IOException that PrintStream notes for
 * {@code checkError}. Flushed at every line, as {@code System.out}.
 */
final class StandardOutput extends PrintStream {
    /** Thrown by the first write that finds the pipe's reader gone. */
    static final class ReaderGone extends RuntimeException {
        ReaderGone(IOException cause) {
            super("standard output's reader has gone", cause, false, false);
        }
    }

    private final Sink sink;

    StandardOutput(OutputStream fd) {
        this(new Sink(fd));
    }

    private StandardOutput(Sink sink) {
        super(new BufferedOutputStream(sink, 8192), true, System.out.charset());
        this.sink = sink;
    }

    /** Whether a write failed with EPIPE (the pipe's reader is gone). */
    boolean readerGone() {
        return sink.readerGone;
    }

    private static final class Sink extends OutputStream {
        private final OutputStream fd;
        private volatile boolean readerGone;

        Sink(OutputStream fd) {
            this.fd = fd;
        }

        @Override
        public void write(int b) throws IOException {
            try {
                fd.write(b);
            } catch (IOException e) {
                throw failed(e);
            }
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            try {
                fd.write(b, off, len);
            } catch (IOException e) {
                throw failed(e);
            }
        }

        @Override
        public void flush() throws IOException {
            try {
                fd.flush();
            } catch (IOException e) {
                throw failed(e);
            }
        }

        /** The IOException to throw, or ReaderGone the first time the reader is found gone. */
        private IOException failed(IOException e) {
            if (!readerGone && BrokenPipe.is(e)) {
                readerGone = true;
                throw new ReaderGone(e);
            }
            return e; // later writes (a flush at exit) fail quietly: PrintStream notes them
        }
    }

    /**
     * EPIPE as the JDK words it. It reports a failed write with strerror's text only, in the process's locale
     * ("Broken pipe" in C and English ones, translated in others), so the text is asked of the same C library. The JVM ignores SIGPIPE, which is why the write fails instead of ending the process.
     */
    private static final class BrokenPipe {
        private static final int EPIPE = 32; // Linux, every architecture
        private static final Set<String> TEXTS = texts();

        static boolean is(IOException e) {
            return e.getMessage() != null && TEXTS.contains(e.getMessage());
        }

        private static Set<String> texts() {
            try {
                Linker linker = Linker.nativeLinker();
                MethodHandle strerror = linker.downcallHandle(linker.defaultLookup().find("strerror").orElseThrow(),
                        FunctionDescriptor.of(ADDRESS, JAVA_INT));
                MemorySegment text = (MemorySegment) strerror.invokeExact(EPIPE);
                return Set.copyOf(List.of("Broken pipe", text.reinterpret(1024).getString(0)));
            } catch (Throwable t) { // no native access granted: the C locale's text still works
                return Set.of("Broken pipe");
            }
        }
    }
}
