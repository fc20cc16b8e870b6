package org.pvn3d.ort.cli;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.pvn3d.ort.pipeline.FolderEvaluation;
import org.pvn3d.ort.pipeline.Pvn3dPipeline;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code eval DIR}: every sample of a folder through the pipeline, then a table of ADD, ADD-S and accuracy. */
@Command(name = "eval", mixinStandardHelpOptions = true, abbreviateSynopsis = true, sortOptions = false, usageHelpAutoWidth = true,
        header = "Evaluates a folder of samples: a table of ADD, ADD-S and the accuracy.",
        description = {
            "Runs every *.bin (PVT1) file in DIR through the pipeline, then prints a table of ADD, ADD-S and the "
                    + "10%%-of-diameter accuracy of the final pose (refined with --refine icp, the default), and a line with "
                    + "the same for the voting pose before refinement. Progress goes to stderr: a bar on a terminal, otherwise "
                    + "a line for each tenth of the samples. A sample that fails becomes a row with its error, and the exit "
                    + "code is 1.",
            ""})
final class EvalCommand implements Callable<Integer>, Profiled {
    private final Io io;

    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "DIR", description = "The folder of samples.")
    Path folder;

    @Mixin
    CommonOptions common;

    @Mixin
    PipelineOptions pipeline;

    @Option(names = "--model", paramLabel = "FILE.onnx", description = "Another PVN3D model (default: the tiny shipped one).")
    Path model;

    @Option(names = "--json", paramLabel = "FILE|-", description = "Also write the accuracy report as JSON (samples, the "
            + "refinement, accuracies, mean ADD / ADD-S in mm, the same before refinement and by occlusion level; '-': "
            + "standard output, the table then on standard error).")
    Path json;

    @Mixin
    ProfilingOptions profiling;

    @Mixin
    GlobalOptions global;

    EvalCommand(Io io) {
        this.io = io;
    }

    @Override
    public ProfilingOptions profiling() {
        return profiling;
    }

    @Override
    public Io profilingIo(Io io) {
        return Io.isStandardOutput(json) ? io.resultsOnErr() : io;
    }

    @Override
    public void checkOptions() {
        common.check(spec);
        pipeline.check(spec);
        CommonOptions.existing(spec, "model file", model);
        if (!Files.isDirectory(folder)) {
            throw CommonOptions.usage(spec, Files.exists(folder) ? folder + " is a file, not a folder of samples" : "no folder " + folder);
        }
    }

    @Override
    public Integer call() {
        List<Path> files = FolderEvaluation.samples(folder);
        if (files.isEmpty()) {
            io.err().println("pvn3d-ort: no *.bin samples in " + folder);
            return Main.FAILED;
        }
        common.requireCuda();
        PrintStream out = profilingIo(io).out(); // with --json -, the table goes to standard error
        out.printf(Locale.ROOT, "pvn3d-ort eval: %d sample(s) in %s, %s, %s provider%n", files.size(), folder,
                model == null ? "PVN3D tiny (class path)" : model, common.cuda() ? "CUDA" : "CPU");
        FolderEvaluation.Summary summary;
        Path profileFile;
        try (Pvn3dPipeline p = pipeline.open(common, model, 1, profiling.profile)) {
            summary = FolderEvaluation.evaluate(p, files,
                    io.terminal() ? FolderEvaluation.Progress.bar(io.err()) : FolderEvaluation.Progress.lines(io.err()));
            profileFile = p.endProfiling();
        }
        out.print(summary.table());
        String byOcclusion = summary.occlusionTable();
        if (!byOcclusion.isEmpty()) {
            out.print("by occlusion (the fraction of the object hidden):\n" + byOcclusion);
        }
        out.printf(Locale.ROOT, "summary: %d samples, ADD-S < 10%% of the diameter on %.1f%%, ADD on %.1f%% "
                + "(mean ADD-S %.2f mm, ADD %.2f mm)%s%n", summary.evaluated(), 100 * summary.addsAccuracy(),
                100 * summary.addAccuracy(), 1000 * summary.meanAdds(), 1000 * summary.meanAdd(),
                summary.failures() > 0 ? ", " + summary.failures() + " failed" : "");
        out.print(summary.refinementLine());
        if (profileFile != null) {
            ProfilingOptions.report(profileFile, out);
        }
        if (json != null) {
            try {
                io.writeJson(json, summary.toJson(common.cuda() ? "cuda" : "cpu",
                        model == null ? Pvn3dPipeline.MODEL_RESOURCE : model.getFileName().toString(), folder.toString()), out, "report");
            } catch (java.io.IOException e) {
                throw new org.pvn3d.ort.OrtException(org.pvn3d.ort.OrtErrorCode.ORT_NO_SUCHFILE, "cannot write " + json + ": "
                        + Errors.describe(e), e);
            }
        }
        return summary.failures() == 0 ? Main.OK : Main.FAILED;
    }
}
