package org.pvn3d.ort.cli;

import java.io.Console;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
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
        return new Io(new StandardOutput(new FileOutputStream(FileDescriptor.out)), System.err,
                console != null && console.isTerminal());
    }

    /** The same with results on {@code err} too: for a command whose standard output is data (JSON to '-'). */
    Io resultsOnErr() {
        return new Io(err, err, terminal);
    }

    /** Whether a --json style option names standard output ({@code -}). */
    static boolean isStandardOutput(Path file) {
        return file != null && file.toString().equals("-");
    }

    /**
     * A command's JSON result: alone on standard output for {@code -} (the command then writes its human lines to
     * standard error, see {@link Profiled#profilingIo}), else into {@code file} whole ({@link #writeAtomically}), with
     * a {@code LABEL: FILE} line on {@code human}.
     */
    void writeJson(Path file, String text, PrintStream human, String label) throws IOException {
        if (isStandardOutput(file)) {
            out.print(text);
            out.flush();
        } else {
            writeAtomically(file, text);
            human.println(label + ": " + file);
        }
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
     * exception) the temporary file is deleted, and a file that was there before stays as it was. A replaced file keeps
     * its permissions (a private 0600 report stays private). A link is followed, dangling or not (the file it names is
     * written, the link stays); what is not a regular file (/dev/stdout, a pipe) is written in place: there is nothing
     * to replace, and its folder is not the user's. So is a file whose folder takes no new file (a writable file in a
     * read-only folder), as before. Another hard link to a replaced file keeps the old contents.
     */
    static void writeAtomically(Path file, Content content) throws IOException {
        Path target = resolveLinks(file);
        if (Files.exists(target) && !Files.isRegularFile(target)) {
            content.write(target);
            return;
        }
        boolean exists = Files.exists(target);
        if (exists && !Files.isWritable(target)) {
            throw new AccessDeniedException(file.toString()); // a file made read-only stays refused, as in place
        }
        Path temporary;
        try {
            temporary = temporaryBeside(target, file);
        } catch (AccessDeniedException e) {
            if (!exists) {
                throw e;
            }
            content.write(target); // the folder takes no new file but the file may be written: in place, as before
            return;
        }
        boolean moved = false;
        try {
            if (exists) {
                keepPermissions(target, temporary);
            }
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

    /** The file a path names after following its links (at most 40, as the kernel does), existing or not. */
    private static Path resolveLinks(Path file) throws IOException {
        Path p = file.toAbsolutePath();
        for (int i = 0; i < 40 && Files.isSymbolicLink(p); i++) {
            p = p.resolveSibling(Files.readSymbolicLink(p)).normalize();
        }
        return p;
    }

    /** The replaced file's POSIX permissions on its replacement (where the file system has them). */
    private static void keepPermissions(Path from, Path to) throws IOException {
        try {
            Files.setPosixFilePermissions(to, Files.getPosixFilePermissions(from));
        } catch (UnsupportedOperationException e) {
            // not a POSIX file system: its defaults
        }
    }

    /**
     * A new empty file {@code .pvn3d-ort.RANDOM.tmp} in {@code target}'s folder (a name of its own length, so that
     * the longest legal file name can still be written), with the permissions a new file gets there; a failure
     * names the file asked for, not the temporary one.
     */
    private static Path temporaryBeside(Path target, Path asked) throws IOException {
        while (true) {
            Path temporary = target.resolveSibling(".pvn3d-ort." + Long.toUnsignedString(ThreadLocalRandom.current().nextLong(), 36)
                    + ".tmp");
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
