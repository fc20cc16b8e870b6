package org.pvn3d.ort.cli;

import java.io.Console;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Where a command writes: results on {@code out}, progress and errors on {@code err}; {@code terminal}
 * says whether a person watches (a progress bar redrawn in place) or a log or pipe reads (plain lines). Files are
 * written with {@link #writeAtomically}.
 */
record Io(PrintStream out, PrintStream err, boolean terminal) {
    /** The process's own streams; a terminal when the JVM has an interactive console. */
    static Io system() {
        Console console = System.console();
        return new Io(System.out, System.err, console != null && console.isTerminal());
    }

    /** The same with results on {@code err} too: for a command whose standard output is data (JSON to '-'). */
    Io resultsOnErr() {
        return new Io(err, err, terminal);
    }

    /** What writes a file's contents into {@code temporary}, a new empty file beside the one it is to replace. */
    @FunctionalInterface
    interface Content {
        void write(Path temporary) throws IOException;
    }

    /** {@link #writeAtomically(Path, Content)} of this text, in UTF-8. */
    static void writeAtomically(Path file, String text) throws IOException {
        writeAtomically(file, text.getBytes(StandardCharsets.UTF_8));
    }

    /** {@link #writeAtomically(Path, Content)} of these bytes. */
    static void writeAtomically(Path file, byte[] bytes) throws IOException {
        writeAtomically(file, temporary -> Files.write(temporary, bytes));
    }

    /**
     * Writes a file the command line was asked for (a report, a picture, a recording) so that it appears whole or not
     * at all: {@code content} fills a temporary file in the same folder, which then takes the file's name in one rename
     * (a plain replacing move where the file system refuses an atomic one). When the writing fails (a full disk, an
     * exception) the temporary file is deleted, and a file that was there before stays as it was. A link is followed
     * (the file it names is replaced, the link stays); what is not a regular file (/dev/stdout, a pipe) is written in
     * place: there is nothing to replace, and its folder is not the user's.
     */
    static void writeAtomically(Path file, Content content) throws IOException {
        if (Files.exists(file) && !Files.isRegularFile(file)) {
            content.write(file);
            return;
        }
        Path target = Files.exists(file) ? file.toRealPath() : file.toAbsolutePath();
        if (Files.exists(target) && !Files.isWritable(target)) {
            throw new AccessDeniedException(file.toString()); // a file made read-only stays refused, as in place
        }
        Path temporary = temporaryBeside(target, file);
        boolean moved = false;
        try {
            content.write(temporary);
            try {
                Files.move(temporary, target, StandardCopyOption.ATOMIC_MOVE);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(temporary, target, StandardCopyOption.REPLACE_EXISTING);
            }
            moved = true;
        } finally {
            if (!moved) {
                try {
                    Files.deleteIfExists(temporary);
                } catch (IOException e) {
                    // the failure that got here is the one to report
                }
            }
        }
    }

    /**
     * A new empty file {@code .NAME.RANDOM.tmp} in {@code target}'s folder, with the permissions a new file gets there;
     * a failure names the file asked for, not the temporary one.
     */
    private static Path temporaryBeside(Path target, Path asked) throws IOException {
        while (true) {
            Path temporary = target.resolveSibling("." + target.getFileName() + "."
                    + Long.toUnsignedString(ThreadLocalRandom.current().nextLong(), 36) + ".tmp");
            try {
                return Files.createFile(temporary);
            } catch (FileAlreadyExistsException e) {
                // another writer's name: draw again
            } catch (NoSuchFileException e) {
                throw new NoSuchFileException(asked.toString());
            } catch (AccessDeniedException e) {
                throw new AccessDeniedException(asked.toString());
            } catch (FileSystemException e) {
                throw new FileSystemException(asked.toString(), null, e.getReason());
            }
        }
    }
}
