package org.pvn3d.ort.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import org.pvn3d.ort.ops.Pvn3dOps;
import org.pvn3d.ort.pipeline.FrameToPose;
import org.pvn3d.ort.pipeline.pool.Pvn3dPool;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/** What the PVN3D commands share: the execution provider, the CUDA device, ORT's threads; and the argument checks. */
final class CommonOptions {
    // Upper bounds of the counts, as usage errors: far above any real use, low enough that a mistyped or hostile value
    // fails at once instead of making sessions, threads or arrays until the machine runs out.
    /** ORT's intra-op threads per session: the operator library's own bound on its threads (5000 got the JVM killed). */
    static final int MAX_THREADS = Pvn3dOps.MAX_CPU_THREADS;
    /** Timed runs, warm-up runs or frames of one measurement: the timed ones keep a double or two each (2^24: 128 MB). */
    static final int MAX_RUNS = 1 << 24;
    /** Frames in one batch (the tiny model's inputs alone take 48 KB a frame: 3 GB at 2^16). */
    static final int MAX_BATCH = 1 << 16;
    /** frame-to-pose's runs in flight: a session and a thread each, as many sessions as a pool takes. */
    static final int MAX_INFLIGHT = Pvn3dPool.MAX_SESSIONS;
    /** pool-bench's frames in flight: the most sessions and the largest queue hold no more. */
    static final int MAX_POOL_INFLIGHT = Pvn3dPool.MAX_SESSIONS + Pvn3dPool.MAX_QUEUE;

    @Option(names = "--ep", paramLabel = "cpu|cuda", description = "Execution provider (default: cpu). cuda needs an NVIDIA "
            + "GPU and an ONNX Runtime whose CUDA provider loads: --version tells.")
    String ep = "cpu";

    @Option(names = "--device", paramLabel = "N", description = "CUDA device id (default: 0).")
    int device;

    @Option(names = "--threads", paramLabel = "N", description = "ONNX Runtime's intra-op threads (default: ORT's choice).")
    int threads;

    boolean cuda() {
        return ep.equals("cuda");
    }

    /** Checks the values picocli cannot (the set of providers, the signs). */
    void check(CommandSpec spec) {
        ep = ep.toLowerCase(Locale.ROOT);
        if (!ep.equals("cpu") && !ep.equals("cuda")) {
            throw usage(spec, "--ep takes cpu or cuda, not " + ep);
        }
        atLeast(spec, "--device", device, 0);
        within(spec, "--threads", threads, 0, MAX_THREADS);
    }

    /** With --ep cuda: fails now, with what to do, when no CUDA device or no CUDA provider can be used. */
    void requireCuda() {
        if (cuda()) {
            CudaCheck.require(device);
        }
    }

    /** A usage error (exit code 2, the command's usage line). */
    static ParameterException usage(CommandSpec spec, String message) {
        return new ParameterException(spec.commandLine(), message);
    }

    static void atLeast(CommandSpec spec, String option, int value, int min) {
        if (value < min) {
            throw usage(spec, option + " takes " + (min == 0 ? "a non-negative" : "a positive") + " integer, not " + value);
        }
    }

    /**
     * ORT intra-op threads the sessions of one measurement may start together: each session has a pool of its own
     * (--threads, or ORT's default of a thread a core), so bounding the session count and the thread count apart
     * still let 4096 sessions x 1024 threads through (a hostile review).
     */
    static final int MAX_TOTAL_THREADS = 1 << 14;

    /** {@code sessions} sessions of {@code threads} intra-op threads each (0: ORT's default) within {@link #MAX_TOTAL_THREADS}. */
    static void threadBudget(CommandSpec spec, String option, long sessions, int threads) {
        long each = threads > 0 ? threads : Runtime.getRuntime().availableProcessors();
        if (sessions * each > MAX_TOTAL_THREADS) {
            throw usage(spec, option + " " + sessions + " with " + (threads > 0 ? "--threads " + threads : "ORT's default of "
                    + each + " threads a session (one a core)") + " would start " + sessions * each + " ORT threads; at most "
                    + MAX_TOTAL_THREADS + " together (lower either)");
        }
    }

    static void atMost(CommandSpec spec, String option, int value, int max) {
        if (value > max) {
            throw usage(spec, option + " takes at most " + max + ", not " + value);
        }
    }

    /** {@code min <= value <= max}, with the message of {@link #atLeast} or {@link #atMost}. */
    static void within(CommandSpec spec, String option, int value, int min, int max) {
        atLeast(spec, option, value, min);
        atMost(spec, option, value, max);
    }

    /** A file named on the command line must exist (a usage error otherwise). */
    static void existing(CommandSpec spec, String what, Path file) {
        if (file != null && !Files.isRegularFile(file)) {
            throw usage(spec, Files.isDirectory(file) ? what + " " + file + " is a folder, not a file" : "no " + what + " " + file);
        }
    }

    /** The precisions of a --precision list (strict, tf32, fp16; a usage error otherwise). */
    static java.util.List<FrameToPose.Precision> precisions(CommandSpec spec, String[] values) {
        java.util.List<FrameToPose.Precision> out = new java.util.ArrayList<>();
        for (String p : values) {
            try {
                out.add(FrameToPose.Precision.parse(p));
            } catch (IllegalArgumentException e) {
                throw usage(spec, "--precision: " + e.getMessage());
            }
        }
        return out;
    }

    /**
     * What the one-graph path needs of the other options: tf32, fp16 and CUDA graphs only on the CUDA provider,
     * fp16 only with the fp16 conversion of the model (an existing file).
     */
    static void checkPrecisions(CommandSpec spec, boolean cuda, java.util.List<FrameToPose.Precision> precisions, boolean cudaGraph,
            Path fp16Model) {
        if (!cuda && (cudaGraph || precisions.stream().anyMatch(p -> p != FrameToPose.Precision.STRICT))) {
            throw usage(spec, "--precision tf32/fp16 and --cuda-graph need --ep cuda");
        }
        if (precisions.contains(FrameToPose.Precision.FP16) && fp16Model == null) {
            throw usage(spec, "--precision fp16 needs --fp16-model (exporter/convert_fp16.py makes it from --model)");
        }
        existing(spec, "fp16 model", fp16Model);
    }
}
