package org.pvn3d.ort.cli;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.jfr.OrtEvents;
import org.pvn3d.ort.ops.Pvn3dOps;
import org.pvn3d.ort.pipeline.ProfileChart;
import org.pvn3d.ort.profile.Nvtx;
import org.pvn3d.ort.profile.ProfileSummary;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;

/**
 * What every command takes for profiling: a JFR recording ({@code --jfr}), ORT's profiler with a
 * summary ({@code --profile}), NVTX ranges ({@code --nvtx}) and CUDA-event timing of the custom
 * operators' launches ({@code --device-timing}). {@link Main} starts and ends the recording, NVTX and the
 * timing around the command; the command turns ORT's profiler on for its session and calls
 * {@link #report} afterwards.
 */
final class ProfilingOptions {
    /** How many of the heaviest nodes the summary table lists. */
    static final int TOP_NODES = 10;

    @Option(names = "--jfr", paramLabel = "FILE.jfr", description = "Record a JDK Flight Recorder file: the JDK's default events "
            + "plus this project's (sessions, runs, custom-operator calls, copies, allocator calls, pipeline stages). Open it in "
            + "JDK Mission Control, or: jfr print --events 'org.pvn3d.ort.*' FILE.")
    Path jfr;

    @Option(names = "--profile", paramLabel = "DIR", description = "ONNX Runtime's profiler: its JSON trace into DIR (made if missing), "
            + "then a summary (time per operator type and node, per provider, custom operators apart) printed and written next "
            + "to it as .summary.json and .summary.png.")
    Path profile;

    @Option(names = "--nvtx", description = "NVTX ranges (domain pvn3d) around runs and pipeline stages for Nsight Systems / Nsight "
            + "Compute; a no-op where no NVTX library is found. (libpvn3d_ops's ranges around each CUDA launch are always there.)")
    boolean nvtx;

    @Option(names = "--device-timing", description = "With --ep cuda: CUDA events around each launch of the custom operators on "
            + "ORT's stream, read after each run; their device time per operator is printed (and joins the --profile summary).")
    boolean deviceTiming;

    /** Checks the values picocli cannot. */
    void check(CommandSpec spec) {
        if (jfr != null) {
            if (Files.isDirectory(jfr)) {
                throw CommonOptions.usage(spec, "--jfr takes a file name; " + jfr + " is a folder");
            }
            if (!OrtEvents.isAvailable()) {
                throw CommonOptions.usage(spec, "--jfr needs the jdk.jfr module, which this Java runtime does not have");
            }
        }
        if (profile != null && Files.exists(profile) && !Files.isDirectory(profile)) {
            throw CommonOptions.usage(spec, "--profile takes a folder; " + profile + " is a file");
        }
    }

    /** Starts what lasts for the whole command: the JFR recording, NVTX, the device timing. */
    AutoCloseable start(Io io) {
        if (nvtx && !Nvtx.enable()) {
            io.err().println("pvn3d-ort: --nvtx: no NVTX library, the ranges are off (" + Nvtx.unavailableReason() + ")");
        }
        if (deviceTiming) {
            Pvn3dOps.setDeviceTiming(true);
        }
        AutoCloseable recording = jfr == null ? null : JfrRecorder.start(jfr);
        return () -> {
            if (recording != null) {
                recording.close();
                io.out().println("jfr: " + jfr + " (JDK Mission Control opens it; or jfr print --events 'org.pvn3d.ort.*' " + jfr
                        + ", jfr summary " + jfr + ")");
            }
            if (deviceTiming) {
                io.out().print(Pvn3dOps.deviceTimingTable());
            }
        };
    }

    /**
     * Summarises an ORT profile: the table on {@code out}, the JSON and the bar chart beside the profile
     * ({@code <profile>.summary.json}, {@code .summary.png}). Returns the summary.
     */
    static ProfileSummary report(Path profileFile, PrintStream out) {
        ProfileSummary summary = ProfileSummary.read(profileFile).withDeviceTimes(Pvn3dOps.deviceTimes());
        out.print(summary.table(TOP_NODES));
        String base = profileFile.getFileName().toString().replaceFirst("\\.json$", "");
        Path json = profileFile.resolveSibling(base + ".summary.json");
        Path png = profileFile.resolveSibling(base + ".summary.png");
        try {
            Io.writeAtomically(json, summary.toJson());
            Io.writeAtomically(png, ProfileChart.render(summary));
        } catch (IOException e) {
            throw new OrtException(OrtErrorCode.ORT_NO_SUCHFILE, "cannot write the profile summary next to " + profileFile + ": "
                    + Errors.describe(e), e);
        }
        out.printf(Locale.ROOT, "profile: %s; summary %s, chart %s%n", profileFile, json, png);
        return summary;
    }
}
