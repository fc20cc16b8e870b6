package org.pvn3d.ort.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import org.pvn3d.ort.pipeline.FrameToPose;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/** What the PVN3D commands share: the execution provider, the CUDA device, ORT's threads; and the argument checks. */
final class CommonOptions {
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
        atLeast(spec, "--threads", threads, 0);
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
