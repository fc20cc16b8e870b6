package org.pvn3d.ort.cli;

import picocli.CommandLine.Model.CommandSpec;

/** A command that takes the {@link ProfilingOptions}: {@link Main} starts and ends them around its call. */
interface Profiled {
    ProfilingOptions profiling();

    /** Checks the options before anything starts (a usage error, exit code 2); a command may refuse some. */
    default void checkProfiling(CommandSpec spec) {
        profiling().check(spec);
    }

    /**
     * The command's own checks (usage errors, a CUDA device that is needed). {@link Main} runs them once, before
     * profiling starts and before {@code call()}, so that a refused command writes no recording and prints no
     * profiling line.
     */
    default void checkOptions() {}

    /** Where the profiling lines go (the "jfr:" line, the device-timing table): {@code io}, unless the command says. */
    default Io profilingIo(Io io) {
        return io;
    }
}
