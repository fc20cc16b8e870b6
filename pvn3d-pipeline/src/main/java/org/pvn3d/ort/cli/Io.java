package org.pvn3d.ort.cli;

import java.io.Console;
import java.io.PrintStream;

/**
 * Where a command writes: results on {@code out}, progress and errors on {@code err}; {@code terminal}
 * says whether a person watches (a progress bar redrawn in place) or a log or pipe reads (plain lines).
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
}
