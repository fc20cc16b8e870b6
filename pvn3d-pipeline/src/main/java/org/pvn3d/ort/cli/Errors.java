package org.pvn3d.ort.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.NoSuchFileException;
import org.pvn3d.ort.OrtException;

/** Error messages for people: no exception class names or ORT code prefixes where a sentence says it. */
final class Errors {
    private Errors() {}

    /** What went wrong, in one message. */
    static String describe(Throwable t) {
        if (t instanceof OrtException e) {
            String m = strip(e);
            String cuda = CudaCheck.explain(m);
            return cuda != null ? cuda : m;
        }
        if (t instanceof UncheckedIOException e) {
            // the context the code gave ("cannot write the JFR recording ..."), unless it is the cause's own text
            String own = e.getMessage();
            return own == null || own.equals(String.valueOf(e.getCause())) ? describe(e.getCause()) : own + ": " + describe(e.getCause());
        }
        if (t instanceof ExceptionInInitializerError e && e.getCause() != null) {
            return describe(e.getCause());
        }
        if (t instanceof NoSuchFileException e) {
            return "no such file or folder: " + e.getFile();
        }
        if (t instanceof AccessDeniedException e) {
            return "permission denied: " + e.getFile();
        }
        if (t instanceof java.nio.file.FileAlreadyExistsException e) {
            return "a file is in the way: " + e.getFile(); // e.g. a folder asked for where a file is
        }
        if (t instanceof java.nio.file.FileSystemException e && e.getReason() != null) {
            return e.getFile() + ": " + e.getReason();
        }
        if (t instanceof IOException e && e.getMessage() != null) {
            return e.getMessage();
        }
        if (t instanceof OutOfMemoryError) {
            if (String.valueOf(t.getMessage()).contains("array size exceeds VM limit")) {
                // a count sized an array past 2^31 elements: no heap holds it, and -Xmx advice would send people astray
                return "out of memory: an array longer than Java allows was asked for (" + t.getMessage() + "); lower the count "
                        + "that sizes it (frames, runs, batch)";
            }
            long max = Runtime.getRuntime().maxMemory();
            return "out of memory (" + t.getMessage() + "); give the JVM more than its " + (max == Long.MAX_VALUE ? "current heap"
                    : (max >> 20) + " MB of heap") + ", e.g. JAVA_OPTS=" + moreHeap(max);
        }
        return t.toString();
    }

    /** An -Xmx of twice {@code maxHeap} (bytes) rounded up to whole GB, at least 2 GB; no overflow, whatever the heap. */
    static String moreHeap(long maxHeap) {
        return "-Xmx" + Math.max(2, Math.ceilDiv(maxHeap, 1L << 29)) + "g"; // 2 x bytes / 2^30 = bytes / 2^29
    }

    /** Whether {@link #describe} is all a user needs: failures this tool expects, not bugs. */
    static boolean expected(Throwable t) {
        if (t instanceof UncheckedIOException || t instanceof ExceptionInInitializerError) {
            return t.getCause() == null || expected(t.getCause());
        }
        return t instanceof OrtException || t instanceof IOException || t instanceof OutOfMemoryError;
    }

    /** An OrtException's message without its "[ORT_...] " code prefix (and without a trailing newline). */
    static String strip(OrtException e) {
        String m = String.valueOf(e.getMessage());
        String prefix = "[" + e.getCode() + "] ";
        return (m.startsWith(prefix) ? m.substring(prefix.length()) : m).strip();
    }
}
