package org.pvn3d.ort.cli;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.Supplier;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.OrtRuntime;
import org.pvn3d.ort.io.PvtFile;
import org.pvn3d.ort.ops.Pvn3dOps;
import org.pvn3d.ort.pipeline.IcpRefinement;
import org.pvn3d.ort.pipeline.IcpRefiner;
import org.pvn3d.ort.pipeline.ParityReport;
import org.pvn3d.ort.pipeline.Pose;
import org.pvn3d.ort.pipeline.PoseOverlay;
import org.pvn3d.ort.pipeline.Pvn3dPipeline;
import org.pvn3d.ort.pipeline.Pvn3dSample;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The main job, {@code pvn3d-ort} with no command: one sample through PVN3D end to end (the network on
 * ORT, votes, mean shift, Kabsch, ADD / ADD-S), each stage's time, the parity against PyTorch; the JSON
 * report and the pose picture only when asked for.
 */
@Command(name = "pvn3d-ort", mixinStandardHelpOptions = true, abbreviateSynopsis = true, sortOptions = false,
        usageHelpAutoWidth = true,
        description = {
            "Runs PVN3D end to end, by default the tiny shipped model on its shipped sample: the network on ONNX Runtime, "
                    + "votes (point - offset), mean-shift clustering, the Kabsch keypoint fit, ADD / ADD-S against the ground "
                    + "truth. Prints each stage's time and the parity against the PyTorch outputs.",
            "Writes no file unless asked: --out DIR writes DIR/" + PoseCommand.REPORT_FILE + " (the parity report) and DIR/"
                    + PoseCommand.PNG_FILE + " (the sample image with the predicted keypoints and pose axes); --report and "
                    + "--png name either file alone.",
            ""},
        commandListHeading = "%nCommands:%n",
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:done",
            "1:failed: the message says why (--debug adds the Java stack trace)",
            "2:usage error: an unknown option or command, a bad value, a missing file",
            "3:the run worked but missed its parity target against PyTorch (CPU 1e-4, CUDA 1e-3, sampled indices identical)"},
        footerHeading = "%nEnvironment:%n",
        footer = {
            "  PVN3D_ORT_PATH     a folder holding another ONNX Runtime build, e.g. one for",
            "                     CUDA 12/13 (default: the ORT jar on the class path, 1.16.3",
            "                     for CUDA 11.8); or -Dpvn3d.ort.path in JAVA_OPTS",
            "  PVN3D_OPS_PATH     another libpvn3d_ops.so (-Dpvn3d.ops.path)",
            "  PVN3D_CUDART_PATH  the libcudart to load (-Dpvn3d.cudart.path)",
            "  PVN3D_CACHE_DIR    where native libraries are extracted (-Dpvn3d.cache.dir);",
            "                     default ~/.cache/pvn3d-ort",
            "  JAVA_OPTS          more JVM options for ./pvn3d-ort"})
final class PoseCommand implements Callable<Integer>, Profiled {
    static final String REPORT_FILE = "report.json";
    static final String PNG_FILE = "pose.png";

    private final Io io;

    @Spec
    CommandSpec spec;

    @Mixin
    CommonOptions common;

    @Mixin
    PipelineOptions pipeline;

    @Option(names = "--runs", paramLabel = "N", description = "Timed runs of the network and of each stage after it; the stages show "
            + "their medians (default: 1).")
    int runs = 1;

    @Option(names = "--model", paramLabel = "FILE.onnx", description = "Another PVN3D model (needs --sample).")
    Path model;

    @Option(names = "--sample", paramLabel = "FILE.bin", description = "Another PVT1 sample (entry names as the shipped one).")
    Path sample;

    @Option(names = "--expected", paramLabel = "FILE.bin", description = "PyTorch's outputs (and pose_R, pose_t) for the "
            + "parity report; the shipped sample has its own.")
    Path expected;

    @Option(names = "--out", paramLabel = "DIR", description = "Write " + REPORT_FILE + " and " + PNG_FILE + " into DIR "
            + "(made if missing).")
    Path out;

    @Option(names = "--report", paramLabel = "FILE.json", description = "Write the JSON parity report to FILE.")
    Path report;

    @Option(names = "--png", paramLabel = "FILE.png", description = "Write the pose picture to FILE.")
    Path png;

    @Option(names = "--scale", paramLabel = "N", description = "The picture's upscaling, 1 to 32 (default: 4).")
    int scale = 4;

    @Mixin
    ProfilingOptions profiling;

    @Mixin
    GlobalOptions global;

    PoseCommand(Io io) {
        this.io = io;
    }

    @Override
    public ProfilingOptions profiling() {
        return profiling;
    }

    private void check() {
        common.check(spec);
        pipeline.check(spec);
        CommonOptions.within(spec, "--runs", runs, 1, CommonOptions.MAX_RUNS);
        CommonOptions.within(spec, "--scale", scale, 1, 32);
        CommonOptions.existing(spec, "model file", model);
        CommonOptions.existing(spec, "sample file", sample);
        CommonOptions.existing(spec, "expected-outputs file", expected);
        if (model != null && sample == null) {
            throw CommonOptions.usage(spec, "--model needs --sample (the shipped sample belongs to the tiny model)");
        }
        if (out != null && Files.exists(out) && !Files.isDirectory(out)) {
            throw CommonOptions.usage(spec, "--out takes a folder; " + out + " is a file");
        }
    }

    /** Where the report goes: --report, else DIR/report.json with --out, else nowhere. */
    Path reportFile() {
        return report != null ? report : out != null ? out.resolve(REPORT_FILE) : null;
    }

    Path pngFile() {
        return png != null ? png : out != null ? out.resolve(PNG_FILE) : null;
    }

    @Override
    public void checkOptions() {
        check();
        common.requireCuda();
    }

    @Override
    public Integer call() {
        PrintStream o = io.out();
        Pvn3dSample s = sample == null ? Pvn3dSample.resource(Pvn3dSample.RESOURCE) : Pvn3dSample.read(sample);
        Map<String, PvtFile.Entry> reference = expected != null ? PvtFile.read(expected)
                : sample == null && model == null ? Pvn3dPipeline.tinyExpected() : null;
        String modelName = model == null ? "PVN3D tiny trained on synthetic bunny scenes (class path " + Pvn3dPipeline.MODEL_RESOURCE
                + "; MODEL.md)" : model.toString();
        String provider = common.cuda() ? "cuda" : "cpu";
        String providerLabel = provider.toUpperCase(Locale.ROOT);
        o.printf(Locale.ROOT, "pvn3d-ort: %s%n  sample %s, %s provider (device %d), ONNX Runtime %s, libpvn3d_ops %s%n", modelName,
                sample == null ? "class path " + Pvn3dSample.RESOURCE : sample, providerLabel, common.device,
                OrtRuntime.get().version(), Pvn3dOps.nativeVersion());
        Pvn3dPipeline.Result r;
        String poseSolver;
        Path profileFile;
        IcpRefinement refinement;
        try (Pvn3dPipeline p = pipeline.open(common, model, runs, profiling.profile)) {
            poseSolver = p.config().poseSolver().name();
            refinement = p.config().refinement();
            r = p.measure(s);
            profileFile = p.endProfiling();
        }
        Pvn3dPipeline.Timings t = r.timings();
        int masked = r.votes().maskedCount();
        o.println(t.latency().runs() == 1 ? "stages:"
                : String.format(Locale.ROOT, "stages (each a median of %d timed runs after %d warm-up run(s); load once):",
                        t.latency().runs(), pipeline.warmup));
        o.printf(Locale.ROOT, "  %-10s %9.1f ms  session: model, PVN3D custom ops (CPU+CUDA kernels), %s provider%n", "load", t.load(),
                providerLabel);
        boolean onDevice = pipeline.deviceResident(common);
        if (onDevice) {
            o.printf(Locale.ROOT, "  %-10s %9.1f ms  the inputs into their bound GPU buffers (median per run)%n", "upload", t.upload());
        }
        Pvn3dPipeline.Latency l = t.latency();
        o.printf(Locale.ROOT, "  %-10s %9.1f ms  %s -> %s (%s; %s, after %d untimed warm-up run(s))%n", "inference", t.inference(),
                shapes(s), String.join(", ", r.outputs().keySet()),
                onDevice ? "device-resident: inputs and outputs in GPU memory"
                        : common.cuda() ? "host tensors, plain run: ORT copies in and out" : "host tensors",
                l.runs() == 1 ? "one timed run"
                        : String.format(Locale.ROOT, "median of %d runs, min %.2f, p90 %.2f, max %.2f ms", l.runs(), l.min(), l.p90(), l.max()),
                pipeline.warmup);
        if (onDevice) {
            o.printf(Locale.ROOT, "  %-10s %9.1f ms  the outputs back to the host for the pose stage (median per run)%n", "download",
                    t.download());
        }
        o.printf(Locale.ROOT, "  %-10s %9.1f ms  %d x %d votes (point - offset), %d of %d points masked (argmax == class 1)%n", "voting",
                t.voting(), r.votes().k(), r.votes().n(), masked, r.votes().n());
        o.printf(Locale.ROOT, "  %-10s %9.1f ms  %s: %d inliers after the centre filter%n", "clustering", t.clustering(), poseSolver,
                r.pose().inliers());
        Pose voting = r.voting().pose();
        o.printf(Locale.ROOT, "  %-10s %9.1f ms  Kabsch on %d keypoints: t = (%.4f, %.4f, %.4f) m, det R = %+.6f%n", "fit", t.fit(),
                r.votes().k(), voting.t(0), voting.t(1), voting.t(2), voting.determinant());
        o.printf(Locale.ROOT, "  %-10s %9.1f ms  %s%n", "refinement", t.refinement(), refinementLine(r, refinement));
        if (r.metrics() != null) {
            var m = r.metrics();
            var v = r.votingMetrics();
            o.printf(Locale.ROOT, "  %-10s %9.1f ms  vs ground truth: ADD %.4f m, ADD-S %.4f m, 10%% of diameter %.4f m: ADD %s, ADD-S %s%s%n",
                    "metrics", t.metrics(), m.add(), m.adds(), m.threshold(), m.addCorrect() ? "correct" : "not correct",
                    m.addsCorrect() ? "correct" : "not correct", r.refinement().refined()
                            ? String.format(Locale.ROOT, " (voting pose before refinement: ADD %.4f m, ADD-S %.4f m)", v.add(), v.adds())
                            : "");
        } else {
            o.printf(Locale.ROOT, "  %-10s %9.1f ms  (no ground truth in the sample)%n", "metrics", t.metrics());
        }
        int code = Main.OK;
        ParityReport parity = null;
        if (reference != null) {
            parity = ParityReport.compare(r, reference, s, provider, modelName);
            parity.extra().put("inference_path", onDevice ? "cuda, device-resident (IO binding)" : provider + ", host tensors (plain run)");
            parity.extra().put("refinement", refinement == null ? "none" : refinement.describe());
            o.printf(Locale.ROOT, "parity vs PyTorch (%s target: floats within %.0e max abs, indices identical):%n", providerLabel,
                    parity.floatTolerance());
            o.print(parity.summary());
            if (!parity.passes()) {
                code = Main.PARITY_FAILED;
            }
        } else {
            o.println("parity: no PyTorch reference (--expected FILE.bin) for this sample");
        }
        if (profileFile != null) {
            ProfilingOptions.report(profileFile, o);
        }
        ParityReport parityOrNone = parity;
        writeFiles(s, r, () -> {
            if (parityOrNone != null) {
                return parityOrNone;
            }
            ParityReport none = ParityReport.compare(r, Map.of(), s, provider, modelName);
            none.extra().put("refinement", refinement == null ? "none" : refinement.describe());
            return none;
        });
        return code;
    }

    /**
     * What the refinement stage did: {@code none: the final pose is the voting pose}, or
     * {@code icp (trim ...): converged after 6 iterations, ...; moved 1.20 deg, 4.1 mm from the voting pose}.
     */
    static String refinementLine(Pvn3dPipeline.Result r, IcpRefinement settings) {
        if (settings == null) {
            return "none: the final pose is the voting pose (--refine icp to refine it)";
        }
        IcpRefiner.Result icp = r.refinement();
        String line = settings.describe() + ": " + icp.describe(settings);
        if (icp.refined()) {
            Pose voting = r.voting().pose();
            Pose fin = r.pose().pose();
            line += String.format(Locale.ROOT, "; moved %.2f deg, %.1f mm from the voting pose", voting.rotationErrorDegrees(fin),
                    1e3 * voting.translationError(fin));
        }
        return line;
    }

    /** The report and the picture, where asked; a line saying so when nothing was asked. */
    private void writeFiles(Pvn3dSample s, Pvn3dPipeline.Result r, Supplier<ParityReport> parity) {
        Path reportFile = reportFile();
        Path pngFile = pngFile();
        if (reportFile == null && pngFile == null) {
            io.out().println("files: none written (--out DIR writes the JSON report and the pose picture there)");
            return;
        }
        try {
            if (out != null) {
                Files.createDirectories(out);
            }
            if (reportFile != null) {
                Io.writeAtomically(reportFile, parity.get().toJson());
                io.out().println("report: " + reportFile);
            }
        } catch (IOException e) {
            throw new OrtException(OrtErrorCode.ORT_NO_SUCHFILE, "cannot write the report " + reportFile + ": " + Errors.describe(e), e);
        }
        if (pngFile != null) {
            writePng(pngFile, s, r);
        }
    }

    private void writePng(Path file, Pvn3dSample s, Pvn3dPipeline.Result r) {
        if (!s.hasImage()) {
            io.out().println("image: skipped (the sample has no 'image' and 'cam_K')");
            return;
        }
        try {
            // the discs are the model's keypoints under the final pose, the squares the same keypoints under the
            // true one: where they coincide the pose is right (the voted keypoints, before the fit and the
            // refinement, scatter a few centimetres around them; the report has them)
            Io.writeAtomically(file, PoseOverlay.render(s, keypointsUnder(r.pose().pose(), s.modelKps()), r.pose().pose(), scale));
            long[] size = s.entry("image").shape();
            io.out().printf(Locale.ROOT, "image: %s (%dx%d, the sample image x%d; discs = keypoints under the predicted pose, squares = "
                    + "under the ground truth, thick axes = predicted pose, thin = ground truth)%n", file, size[1] * scale, size[0] * scale,
                    scale);
        } catch (IOException | RuntimeException | LinkageError e) {
            // asked for and not written: the run failed at what it was asked (exit code 1, as for the report)
            throw new OrtException(OrtErrorCode.ORT_NO_SUCHFILE, "cannot write the image " + file + ": " + Errors.describe(e), e);
        }
    }

    private static String shapes(Pvn3dSample sample) {
        List<String> parts = new ArrayList<>();
        for (String n : List.of("rgb", "cld_rgb_nrm", "choose")) {
            if (sample.has(n)) {
                parts.add(n + " " + Arrays.toString(sample.entry(n).shape()));
            }
        }
        return String.join(", ", parts);
    }

    /** {@code R m + t} for each row of {@code model} [K,3]. */
    static float[] keypointsUnder(Pose pose, float[] model) {
        double[] r = pose.r();
        double[] t = pose.t();
        float[] out = new float[model.length];
        for (int i = 0; i + 2 < model.length; i += 3) {
            for (int k = 0; k < 3; k++) {
                out[i + k] = (float) (r[3 * k] * model[i] + r[3 * k + 1] * model[i + 1] + r[3 * k + 2] * model[i + 2] + t[k]);
            }
        }
        return out;
    }
}
