package org.pvn3d.ort.cli;

import java.io.PrintStream;
import java.io.PrintWriter;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;
import org.pvn3d.ort.OrtEnvironment;
import org.pvn3d.ort.OrtLoggingLevel;
import picocli.CommandLine;
import picocli.CommandLine.Help;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.UnmatchedArgumentException;

/**
 * The {@code pvn3d-ort} command line: the main job ({@link PoseCommand}, no command word), {@code eval DIR}
 * ({@link EvalCommand}), {@code pointnet2} ({@link PointNet2Command}), {@code pool-bench}
 * ({@link PoolBenchCommand}) and {@code version} / {@code -V} ({@link VersionCommand}); picocli parses and
 * prints the help. Every failure ends here as one message on stderr and an exit code: {@value #FAILED} when
 * the work failed, {@value #USAGE} for a command line that is wrong (with the command's usage line),
 * {@value #PARITY_FAILED} when the run worked but missed its parity target; {@value #READER_GONE}, quietly, when
 * standard output is a pipe whose reader left early ({@code | head}): the command ends at its next write there, as
 * a Unix tool that SIGPIPE ended (a failure before that keeps its own code).
 * Java stack traces only with {@code --debug}.
 */
public final class Main {
    static final int OK = 0;
    /** The work failed: a file, the runtime, the GPU. */
    static final int FAILED = 1;
    /** The command line is wrong: an unknown option or command, a bad value, a missing file. */
    static final int USAGE = 2;
    /** The run worked but the parity report misses its targets. */
    static final int PARITY_FAILED = 3;
    /** Standard output's reader left early (a closed pipe): 128 + SIGPIPE, what a shell reports for such a tool. */
    static final int READER_GONE = 141;

    private Main() {}

    public static void main(String[] args) {
        System.exit(run(args, Io.system()));
    }

    /** Runs the command line with these streams (not a terminal); returns the exit code. */
    static int run(String[] args, PrintStream out, PrintStream err) {
        return run(args, new Io(out, err, false));
    }

    static int run(String[] args, Io io) {
        int code = runCommand(args, io);
        // PrintStream keeps an IOException to itself (a full disk, a closed pipe): without this a table, or the
        // JSON of --json -, could be lost with exit code 0. A usage error stays one (its message is on stderr).
        if (readerGone(io)) {
            // the reader took what it wanted: nothing to report, as `yes | head`; a failure before it stays one
            return code == OK || code == READER_GONE ? READER_GONE : code;
        }
        if (io.out().checkError() && code != USAGE) {
            io.err().println("pvn3d-ort: cannot write to standard output (a full disk?): what it holds is incomplete");
            return FAILED;
        }
        return code;
    }

    private static int runCommand(String[] args, Io io) {
        boolean debug = Arrays.asList(args).contains(GlobalOptions.DEBUG);
        try {
            CommandLine cl = commandLine(io);
            ParseResult parsed = cl.parseArgs(args);
            List<CommandLine> chain = parsed.asCommandLineList();
            checkNoMainJobOptionBeforeACommand(parsed);
            if (chain.stream().anyMatch(CommandLine::isVersionHelpRequested)) {
                return new VersionCommand(io).call();
            }
            if (CommandLine.printHelpIfRequested(parsed)) {
                return OK;
            }
            @SuppressWarnings("unchecked")
            CommandLine leaf = chain.get(chain.size() - 1);
            Callable<Integer> command = (Callable<Integer>) leaf.getCommand();
            if (command instanceof Profiled p) {
                // checked before anything starts (a usage error, exit code 2)
                p.checkProfiling(leaf.getCommandSpec());
                p.checkOptions(); // a refused command must not start (and write) a recording
                quietOrtLog(debug);
                // the JFR recording, NVTX and the device timing last as long as the command
                try (AutoCloseable profiling = p.profiling().start(p.profilingIo(io))) {
                    return command.call();
                }
            }
            return command.call();
        } catch (ParameterException e) {
            return usageError(e, io.err(), debug);
        } catch (Throwable t) {
            if (readerGone(io)) {
                return READER_GONE; // StandardOutput.ReaderGone, or what it became on its way up: the run ends here
            }
            io.out().flush();
            io.err().println("pvn3d-ort: " + Errors.describe(t));
            if (debug) {
                t.printStackTrace(io.err());
            } else if (!Errors.expected(t)) {
                io.err().println("pvn3d-ort: this looks like a bug; " + GlobalOptions.DEBUG + " prints the Java stack trace");
            }
            return FAILED;
        }
    }

    /**
     * ORT's own log at FATAL unless --debug (then WARNING): a failed node is logged by ORT as an error (a
     * timestamp line and a SEVERE line) and then comes back as the run's status, which the command line prints
     * as its one line. The first environment of the process keeps its level, so this runs before any command
     * makes one; a runtime that does not load is left to the command to report.
     */
    private static void quietOrtLog(boolean debug) {
        try {
            OrtEnvironment.getEnvironment(debug ? OrtLoggingLevel.ORT_LOGGING_LEVEL_WARNING : OrtLoggingLevel.ORT_LOGGING_LEVEL_FATAL,
                    OrtEnvironment.DEFAULT_LOG_ID);
        } catch (RuntimeException e) {
            // the command meets the same failure where it can say more
        }
    }

    private static boolean readerGone(Io io) {
        return io.out() instanceof StandardOutput stdout && stdout.readerGone();
    }

    /** The commands, writing to {@code io}. */
    static CommandLine commandLine(Io io) {
        CommandLine cl = new CommandLine(new PoseCommand(io))
                .addSubcommand(new EvalCommand(io))
                .addSubcommand(new PointNet2Command(io))
                .addSubcommand(new PoolBenchCommand(io))
                .addSubcommand(new FrameToPoseCommand(io))
                .addSubcommand(new VersionCommand(io));
        cl.setOut(new PrintWriter(io.out(), true));
        cl.setErr(new PrintWriter(io.err(), true));
        return cl;
    }

    /** The main job's options belong to it alone: {@code pvn3d-ort --runs 3 eval DIR} would ignore them silently. */
    private static void checkNoMainJobOptionBeforeACommand(ParseResult parsed) {
        if (!parsed.hasSubcommand()) {
            return;
        }
        CommandLine sub = parsed.subcommand().commandSpec().commandLine();
        String name = sub.getCommandName();
        for (OptionSpec o : parsed.matchedOptions()) {
            if (!o.usageHelp() && !o.versionHelp() && !o.longestName().equals(GlobalOptions.DEBUG)) {
                String option = o.longestName();
                throw new ParameterException(sub, sub.getCommandSpec().findOption(option) != null
                        ? option + " comes before '" + name + "': options go after the command (pvn3d-ort " + name + " ... " + option + ")"
                        : option + " belongs to the main job (pvn3d-ort with no command), not to '" + name + "'");
            }
        }
    }

    /** The message, the command's one-line usage and where the help is; exit code {@value #USAGE}. */
    private static int usageError(ParameterException e, PrintStream err, boolean debug) {
        CommandLine where = e.getCommandLine();
        String name = where.getCommandSpec().qualifiedName();
        String message = e.getMessage();
        if (e instanceof UnmatchedArgumentException u && where.getParent() == null && !u.getUnmatched().isEmpty()
                && !u.getUnmatched().get(0).startsWith("-")) {
            message = "unknown command '" + u.getUnmatched().get(0) + "' (the commands: "
                    + String.join(", ", where.getSubcommands().keySet()) + "; none for the main job)";
        }
        err.println("pvn3d-ort: " + message);
        if (e instanceof UnmatchedArgumentException u) {
            UnmatchedArgumentException.printSuggestions(u, err);
        }
        Help help = where.getHelp();
        err.print(help.synopsisHeading() + help.synopsis(help.synopsisHeadingLength()));
        err.println("'" + name + " --help' says more.");
        if (debug) {
            e.printStackTrace(err);
        }
        return USAGE;
    }
}
