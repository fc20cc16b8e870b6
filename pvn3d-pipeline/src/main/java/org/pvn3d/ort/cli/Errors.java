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
            return describe(e.getCause());
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
        if (t instanceof IOException e && e.getMessage() != null) {
            return e.getMessage();
        }
        if (t instanceof OutOfMemoryError) {
            return "out of memory (" + t.getMessage() + "); give the JVM more, e.g. JAVA_OPTS=-Xmx8g";
        }
        return t.toString();
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
