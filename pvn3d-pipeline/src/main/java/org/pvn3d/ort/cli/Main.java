package org.pvn3d.ort.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.pvn3d.ort.OnnxTensor;
import org.pvn3d.ort.OrtEnvironment;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.OrtRuntime;
import org.pvn3d.ort.OrtSession;
import org.pvn3d.ort.Result;
import org.pvn3d.ort.SessionOptions;
import org.pvn3d.ort.io.PvtFile;
import org.pvn3d.ort.ops.Pvn3dOps;
import org.pvn3d.ort.pipeline.CudaPoseSolver;
import org.pvn3d.ort.pipeline.FolderEvaluation;
import org.pvn3d.ort.pipeline.JavaPoseSolver;
import org.pvn3d.ort.pipeline.NativePoseSolver;
import org.pvn3d.ort.pipeline.ParityReport;
import org.pvn3d.ort.pipeline.PoseOverlay;
import org.pvn3d.ort.pipeline.Pvn3dPipeline;
import org.pvn3d.ort.pipeline.Pvn3dSample;
import org.pvn3d.ort.providers.OrtCUDAProviderOptions;

/**
 * The command line. Its main job runs the tiny PVN3D model on its shipped sample end to end (network
 * on ORT, votes, mean shift, Kabsch, ADD / ADD-S), prints each stage's time and the parity against
 * PyTorch, writes the JSON report and a PNG of the pose. {@code eval DIR} evaluates a folder of samples;
 * {@code pointnet2} runs the embedded PointNet++ model (per-run latency and output checksums).
 */
public final class Main {
    private static final String DEFAULT_MODEL = "/models/pointnet2_default.onnx";
    private static final String DEFAULT_INPUT = "/models/bunny_sample.bin";

    /** Exit code when the run worked but the parity report misses its targets. */
    static final int PARITY_FAILED = 3;

    private Main() {}

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /** Runs the command line; returns the process exit code. */
    static int run(String[] args, PrintStream out, PrintStream err) {
        Options o;
        try {
            o = Options.parse(args);
        } catch (IllegalArgumentException e) {
            err.println("pvn3d-ort: " + e.getMessage());
            err.println(Options.USAGE);
            return 2;
        }
        try {
            if (o.help) {
                out.println(Options.USAGE);
                return 0;
            } else if (o.version) {
                printVersion(out);
                return 0;
            }
            return switch (o.command) {
                case POSE -> runPose(o, out, err);
                case EVAL -> runEval(o, out, err);
                case POINTNET2 -> {
                    runPointNet2(o, out);
                    yield 0;
                }
            };
        } catch (OrtException e) {
            err.println("pvn3d-ort: " + e.getMessage());
            return 1;
        }
    }

    static void printVersion(PrintStream out) {
        OrtRuntime runtime = OrtRuntime.get();
        out.println("pvn3d-ort " + OrtRuntime.libraryVersion());
        out.println("ONNX Runtime " + runtime.version() + " at " + runtime.library() + " (from " + runtime.source() + ")");
        out.println("execution providers: " + OrtEnvironment.getEnvironment().getAvailableProviders());
        out.println("libpvn3d_ops " + Pvn3dOps.nativeVersion() + " at " + Pvn3dOps.nativeLibrary() + " (CUDA kernels: "
                + (Pvn3dOps.nativeBuiltWithCuda() ? "yes, " + Pvn3dOps.cudaDeviceCount() + " device(s)" : "no") + ")");
        out.println("Java " + System.getProperty("java.version") + " (" + System.getProperty("java.vm.name") + ")");
    }

    private static Pvn3dPipeline.Config config(Options o) {
        return Pvn3dPipeline.Config.cpu().withProvider(o.cuda ? Pvn3dPipeline.Provider.CUDA : Pvn3dPipeline.Provider.CPU, o.device)
                .withThreads(o.threads).withWarmup(o.warmup).withRepeat(o.command == Options.Command.POSE ? o.runs : 1)
                .withIoBinding(!o.noIoBinding)
                .withPoseSolver(switch (o.poseSolver()) {
                    case "java" -> new JavaPoseSolver();
                    case "cuda" -> new CudaPoseSolver(o.device);
                    default -> new NativePoseSolver();
                });
    }

    private static Pvn3dPipeline pipeline(Options o) {
        Pvn3dPipeline.Config c = config(o);
        return o.model == null ? Pvn3dPipeline.tiny(c) : new Pvn3dPipeline(OrtSession.readModel(o.model), c);
    }

    /** The main job: one sample end to end, parity, report, picture. */
    static int runPose(Options o, PrintStream out, PrintStream err) {
        Pvn3dSample sample = o.sample == null ? Pvn3dSample.resource(Pvn3dSample.RESOURCE) : Pvn3dSample.read(o.sample);
        Map<String, PvtFile.Entry> expected = o.expected != null ? PvtFile.read(o.expected)
                : o.sample == null && o.model == null ? Pvn3dPipeline.tinyExpected() : null;
        String modelName = o.model == null ? "PVN3D tiny (class path " + Pvn3dPipeline.MODEL_RESOURCE + ", seeded random weights)" : o.model.toString();
        String provider = o.cuda ? "cuda" : "cpu";
        out.printf(Locale.ROOT, "pvn3d-ort: %s%n  sample %s, %s provider (device %d), ONNX Runtime %s, libpvn3d_ops %s%n", modelName,
                o.sample == null ? "class path " + Pvn3dSample.RESOURCE : o.sample, provider.toUpperCase(Locale.ROOT), o.device,
                OrtRuntime.get().version(), Pvn3dOps.nativeVersion());
        Pvn3dPipeline.Result r;
        String poseSolver;
        try (Pvn3dPipeline p = pipeline(o)) {
            poseSolver = p.config().poseSolver().name();
            r = p.run(sample);
        }
        Pvn3dPipeline.Timings t = r.timings();
        int masked = r.votes().maskedCount();
        out.println("stages:");
        out.printf(Locale.ROOT, "  %-10s %9.1f ms  session: model, PVN3D custom ops (CPU+CUDA kernels), %s provider%n", "load", t.load(),
                provider.toUpperCase(Locale.ROOT));
        boolean onDevice = o.cuda && !o.noIoBinding;
        if (onDevice) {
            out.printf(Locale.ROOT, "  %-10s %9.1f ms  the inputs into their bound GPU buffers (median per run)%n", "upload", t.upload());
        }
        Pvn3dPipeline.Latency l = t.latency();
        out.printf(Locale.ROOT, "  %-10s %9.1f ms  %s -> %s (%s; %s, after %d untimed warm-up run(s))%n", "inference", t.inference(),
                shapes(sample), String.join(", ", r.outputs().keySet()),
                onDevice ? "device-resident: inputs and outputs in GPU memory" : o.cuda ? "host tensors, plain run: ORT copies in and out" : "host tensors",
                l.runs() == 1 ? "one timed run" : String.format(Locale.ROOT, "median of %d runs, min %.2f, p90 %.2f, max %.2f ms", l.runs(), l.min(), l.p90(), l.max()),
                o.warmup);
        if (onDevice) {
            out.printf(Locale.ROOT, "  %-10s %9.1f ms  the outputs back to the host for the pose stage (median per run)%n", "download", t.download());
        }
        out.printf(Locale.ROOT, "  %-10s %9.1f ms  %d x %d votes (point - offset), %d of %d points masked (argmax == class 1)%n", "voting",
                t.voting(), r.votes().k(), r.votes().n(), masked, r.votes().n());
        out.printf(Locale.ROOT, "  %-10s %9.1f ms  %s: %d inliers after the centre filter%n", "clustering", t.clustering(), poseSolver,
                r.pose().inliers());
        out.printf(Locale.ROOT, "  %-10s %9.1f ms  Kabsch on %d keypoints: t = (%.4f, %.4f, %.4f) m, det R = %+.6f%n", "fit", t.fit(),
                r.votes().k(), r.pose().pose().t(0), r.pose().pose().t(1), r.pose().pose().t(2), r.pose().pose().determinant());
        if (r.metrics() != null) {
            var m = r.metrics();
            out.printf(Locale.ROOT, "  %-10s %9.1f ms  vs ground truth: ADD %.4f m, ADD-S %.4f m, 10%% of diameter %.4f m: %s%s%n", "metrics",
                    t.metrics(), m.add(), m.adds(), m.threshold(), m.addCorrect() ? "correct" : "not correct",
                    o.model == null ? " (random weights: only parity is meaningful)" : "");
        } else {
            out.printf(Locale.ROOT, "  %-10s %9.1f ms  (no ground truth in the sample)%n", "metrics", t.metrics());
        }
        int code = 0;
        ParityReport report = null;
        if (expected != null) {
            report = ParityReport.compare(r, expected, sample, provider, modelName);
            report.extra().put("inference_path", onDevice ? "cuda, device-resident (IO binding)" : provider + ", host tensors (plain run)");
            out.printf(Locale.ROOT, "parity vs PyTorch (%s target: floats within %.0e max abs, indices identical):%n",
                    provider.toUpperCase(Locale.ROOT), report.floatTolerance());
            out.print(report.summary());
            if (!report.passes()) {
                code = PARITY_FAILED;
            }
        } else {
            out.println("parity: no PyTorch reference (--expected FILE.bin) for this sample");
        }
        if (o.report != null) {
            String json = report != null ? report.toJson() : ParityReport.compare(r, Map.of(), sample, provider, modelName).toJson();
            try {
                Files.writeString(o.report, json);
                out.println("report: " + o.report);
            } catch (IOException e) {
                err.println("pvn3d-ort: cannot write the report " + o.report + ": " + e.getMessage());
                return 1;
            }
        }
        if (o.png != null) {
            writePng(o, sample, r, out, err);
        }
        return code;
    }

    private static void writePng(Options o, Pvn3dSample sample, Pvn3dPipeline.Result r, PrintStream out, PrintStream err) {
        if (!sample.hasImage()) {
            out.println("image: skipped (the sample has no 'image' and 'cam_K')");
            return;
        }
        try {
            PoseOverlay.write(o.png, sample, r.pose().kps(), r.pose().pose(), o.scale);
            long[] s = sample.entry("image").shape();
            out.printf(Locale.ROOT, "image: %s (%dx%d, the sample image x%d; discs = predicted keypoints, squares = ground truth, "
                    + "thick axes = predicted pose, thin = ground truth)%n", o.png, s[1] * o.scale, s[0] * o.scale, o.scale);
        } catch (IOException | RuntimeException | LinkageError e) {
            // the picture is a by-product: never fail the run for it
            err.println("pvn3d-ort: image not written (" + e + ")");
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

    /** The second form: a folder of samples, progress bar on stderr, summary table. */
    static int runEval(Options o, PrintStream out, PrintStream err) {
        List<Path> files = FolderEvaluation.samples(o.folder);
        if (files.isEmpty()) {
            err.println("pvn3d-ort: no *.bin samples in " + o.folder);
            return 1;
        }
        out.printf(Locale.ROOT, "pvn3d-ort eval: %d sample(s) in %s, %s, %s provider%n", files.size(), o.folder,
                o.model == null ? "PVN3D tiny (class path)" : o.model, o.cuda ? "CUDA" : "CPU");
        FolderEvaluation.Summary summary;
        try (Pvn3dPipeline p = pipeline(o)) {
            summary = FolderEvaluation.evaluate(p, files, err);
        }
        out.print(summary.table());
        return summary.failures() == 0 ? 0 : 1;
    }

    static void runPointNet2(Options o, PrintStream out) {
        OrtEnvironment env = OrtEnvironment.getEnvironment();
        byte[] model = o.model == null ? resource(DEFAULT_MODEL) : OrtSession.readModel(o.model);
        Map<String, PvtFile.Entry> inputs = o.sample == null ? readPvt(resource(DEFAULT_INPUT), DEFAULT_INPUT)
                : PvtFile.read(o.sample);
        out.printf("model: %s (%d bytes)%n", o.model == null ? "embedded PointNet++ (" + DEFAULT_MODEL + ")" : o.model, model.length);
        try (SessionOptions options = new SessionOptions()) {
            if (o.threads > 0) {
                options.setIntraOpNumThreads(o.threads);
            }
            if (o.profile != null) {
                options.enableProfiling(o.profile);
            }
            Pvn3dOps.register(options).close(); // the options and the session keep the domain alive
            if (o.cuda) {
                options.addExecutionProvider(new OrtCUDAProviderOptions(o.device));
            }
            long t0 = System.nanoTime();
            try (OrtSession session = env.createSession(model, options)) {
                out.printf("session: %s provider, created in %.1f ms; ONNX Runtime %s%n", o.cuda ? "CUDA" : "CPU",
                        (System.nanoTime() - t0) / 1e6, OrtRuntime.get().version());
                List<OnnxTensor> tensors = new ArrayList<>();
                try {
                    java.util.LinkedHashMap<String, OnnxTensor> feeds = new java.util.LinkedHashMap<>();
                    for (String name : session.getInputNames()) {
                        PvtFile.Entry e = inputs.get(name);
                        if (e == null) {
                            throw new OrtException("the input file has no tensor '" + name + "' (it has " + inputs.keySet() + ")");
                        }
                        OnnxTensor t = e.toTensor();
                        tensors.add(t);
                        feeds.put(name, t);
                        out.printf("input: %s %s %s%n", name, e.type(), Arrays.toString(e.shape()));
                    }
                    runAndReport(session, feeds, o, out);
                } finally {
                    tensors.forEach(OnnxTensor::close);
                }
                if (o.profile != null) {
                    out.println("profile: " + session.endProfiling());
                }
            }
        }
    }

    private static void runAndReport(OrtSession session, Map<String, OnnxTensor> feeds, Options o, PrintStream out) {
        double[] ms = new double[o.runs];
        String checksum = null;
        for (int i = -o.warmup; i < o.runs; i++) {
            long start = System.nanoTime();
            try (Result r = session.run(feeds)) {
                double elapsed = (System.nanoTime() - start) / 1e6;
                if (i >= 0) {
                    ms[i] = elapsed;
                    out.printf("run %d: %.3f ms%n", i + 1, elapsed);
                }
                if (checksum == null) {
                    checksum = checksums(r);
                }
            }
        }
        double[] sorted = ms.clone();
        Arrays.sort(sorted);
        out.printf(Locale.ROOT, "latency over %d runs (after %d warm-up): median %.3f ms, min %.3f ms, max %.3f ms%n",
                o.runs, o.warmup, median(sorted), sorted[0], sorted[sorted.length - 1]);
        out.print(checksum);
    }

    private static String checksums(Result r) {
        StringBuilder sb = new StringBuilder();
        for (var e : r) {
            if (e.getValue() instanceof OnnxTensor t) {
                double sum = 0;
                double abs = 0;
                switch (t.getType()) {
                    case FLOAT -> {
                        for (float v : t.getFloatArray()) {
                            sum += v;
                            abs += Math.abs(v);
                        }
                    }
                    case INT64 -> {
                        for (long v : t.getLongArray()) {
                            sum += v;
                            abs += Math.abs(v);
                        }
                    }
                    default -> { }
                }
                sb.append(String.format(Locale.ROOT, "output: %s %s %s checksum sum=%.6f sum|x|=%.6f%n", e.getKey(),
                        t.getType(), Arrays.toString(t.getShape()), sum, abs));
            }
        }
        return sb.toString();
    }

    private static double median(double[] sorted) {
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    private static byte[] resource(String name) {
        try (InputStream in = Main.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new OrtException("missing class-path resource " + name);
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new OrtException("cannot read " + name + ": " + e);
        }
    }

    private static Map<String, PvtFile.Entry> readPvt(byte[] bytes, String source) {
        try {
            return PvtFile.read(new java.io.ByteArrayInputStream(bytes), source);
        } catch (IOException e) {
            throw new OrtException("cannot read " + source + ": " + e);
        }
    }

    /** Parsed command-line options. */
    static final class Options {
        enum Command { POSE, EVAL, POINTNET2 }

        static final String USAGE = """
                usage: pvn3d-ort [--ep cpu|cuda] [--device N] [--threads N] [--warmup N] [--runs N] [--no-io-binding]
                                 [--model FILE.onnx] [--sample FILE.bin] [--expected FILE.bin]
                                 [--report FILE.json | --no-report] [--png FILE.png | --no-png] [--scale N]
                                 [--pose native|cuda|java]
                       pvn3d-ort eval DIR [--ep cpu|cuda] [--device N] [--threads N] [--model FILE.onnx]
                       pvn3d-ort pointnet2 [--ep cpu|cuda] [--device N] [--runs N] [--warmup N] [--threads N]
                                 [--model FILE.onnx --input FILE.bin] [--profile PREFIX]
                       pvn3d-ort --version | --help

                With no command: runs PVN3D end to end (default: the tiny model on its shipped sample):
                the network on ORT, votes (point - offset), mean-shift clustering, the Kabsch keypoint fit,
                ADD / ADD-S against the ground truth; prints each stage's time and the parity against the
                PyTorch outputs, writes the JSON report and a PNG of the sample with the pose drawn on it.
                Exit code 3 when the parity misses its target (CPU 1e-4, CUDA 1e-3, indices identical).
                  --ep cpu|cuda   execution provider (default cpu; cuda needs a GPU and an ORT build for it)
                  --device N      CUDA device id (default 0)
                  --threads N     ORT intra-op threads (default: ORT's choice)
                  --warmup N      untimed inference runs before the timed ones (default 1)
                  --runs N        timed inference runs; the stage shows their median (default 1)
                  --no-io-binding on CUDA, host tensors through a plain run (ORT copies in and out each
                                  run) instead of device-resident inputs and outputs with IO binding
                  --model/--sample another PVN3D model / PVT1 sample (entry names as the shipped one)
                  --expected F    PyTorch outputs (and pose_R/pose_t) for the parity report
                  --report F      the JSON report (default pvn3d-report.json); --png F the picture
                                  (default pvn3d-pose.png), --scale N its upscaling (default 4)
                  --pose native|cuda|java  the pose stage: libpvn3d_ops's fused mean shift + Kabsch
                                  kernel on the CPU's cores (native; the default with --ep cpu), the
                                  same on the GPU (cuda; the default with --ep cuda), or the Java
                                  reference implementation (slow on large clouds)
                eval DIR: every *.bin sample in DIR, a progress bar on stderr, a table of ADD, ADD-S and
                  the 10%-of-diameter accuracy.
                pointnet2: the embedded PointNet++ on a Stanford-bunny sample, per-run latency and output
                  checksums (--runs N timed runs, default 10; --warmup default 2; --model/--input another
                  model and a PVT1 file holding its inputs by name; --profile P writes ORT's profile).
                  --version       the loaded ONNX Runtime and operator library, their paths
                The ORT build is chosen with -Dpvn3d.ort.path or PVN3D_ORT_PATH (default: the bundled 1.16.3).""";

        Command command = Command.POSE;
        boolean help;
        boolean version;
        boolean cuda;
        int device;
        int runs = -1;
        boolean noIoBinding;
        int warmup = -1;
        int threads;
        int scale = 4;
        String pose; // null: cuda with --ep cuda, else native

        /** The pose stage: as asked, else the fused kernel on the provider's side (GPU with --ep cuda, CPU otherwise). */
        String poseSolver() {
            return pose != null ? pose : cuda ? "cuda" : "native";
        }
        Path model;
        Path sample;
        Path expected;
        Path folder;
        Path report = Path.of("pvn3d-report.json");
        Path png = Path.of("pvn3d-pose.png");
        String profile;

        static Options parse(String[] args) {
            Options o = new Options();
            int i = 0;
            if (args.length > 0 && !args[0].startsWith("-")) {
                switch (args[0]) {
                    case "eval" -> {
                        o.command = Command.EVAL;
                        if (args.length < 2 || args[1].startsWith("-")) {
                            throw new IllegalArgumentException("eval needs a folder of samples");
                        }
                        o.folder = Path.of(args[1]);
                        i = 2;
                    }
                    case "pointnet2" -> {
                        o.command = Command.POINTNET2;
                        i = 1;
                    }
                    case "pose" -> i = 1;
                    default -> throw new IllegalArgumentException("unknown command " + args[0]);
                }
            }
            for (; i < args.length; i++) {
                String a = args[i];
                switch (a) {
                    case "-h", "--help" -> o.help = true;
                    case "--version" -> o.version = true;
                    case "--ep" -> {
                        String ep = value(args, ++i, a).toLowerCase(Locale.ROOT);
                        if (!ep.equals("cpu") && !ep.equals("cuda")) {
                            throw new IllegalArgumentException("--ep takes cpu or cuda, not " + ep);
                        }
                        o.cuda = ep.equals("cuda");
                    }
                    case "--device" -> o.device = positive(value(args, ++i, a), a, true);
                    case "--runs" -> {
                        if (o.command == Command.EVAL) {
                            throw new IllegalArgumentException("--runs is for the main job and pointnet2, not eval");
                        }
                        o.runs = positive(value(args, ++i, a), a, false);
                    }
                    case "--no-io-binding" -> o.noIoBinding = true;
                    case "--warmup" -> o.warmup = positive(value(args, ++i, a), a, true);
                    case "--threads" -> o.threads = positive(value(args, ++i, a), a, true);
                    case "--model" -> o.model = Path.of(value(args, ++i, a));
                    case "--input" -> o.sample = only(o, Command.POINTNET2, a, Path.of(value(args, ++i, a)));
                    case "--sample" -> o.sample = only(o, Command.POSE, a, Path.of(value(args, ++i, a)));
                    case "--expected" -> o.expected = only(o, Command.POSE, a, Path.of(value(args, ++i, a)));
                    case "--report" -> o.report = only(o, Command.POSE, a, Path.of(value(args, ++i, a)));
                    case "--no-report" -> o.report = only(o, Command.POSE, a, null);
                    case "--png" -> o.png = only(o, Command.POSE, a, Path.of(value(args, ++i, a)));
                    case "--no-png" -> o.png = only(o, Command.POSE, a, null);
                    case "--pose" -> {
                        String solver = value(args, ++i, a);
                        if (!solver.equals("native") && !solver.equals("java") && !solver.equals("cuda")) {
                            throw new IllegalArgumentException("--pose takes native, cuda or java, not " + solver);
                        }
                        o.pose = solver;
                    }
                    case "--scale" -> o.scale = only(o, Command.POSE, a, positive(value(args, ++i, a), a, false));
                    case "--profile" -> o.profile = only(o, Command.POINTNET2, a, value(args, ++i, a));
                    default -> throw new IllegalArgumentException("unknown argument " + a);
                }
            }
            if (o.warmup < 0) {
                o.warmup = o.command == Command.POINTNET2 ? 2 : 1;
            }
            if (o.runs < 0) {
                o.runs = o.command == Command.POINTNET2 ? 10 : 1;
            }
            if (o.command == Command.POINTNET2 && (o.model == null) != (o.sample == null)) {
                throw new IllegalArgumentException("--model and --input go together");
            }
            if (o.model != null && !Files.isRegularFile(o.model)) {
                throw new IllegalArgumentException("no model file " + o.model);
            }
            if (o.command == Command.POSE && o.sample != null && !Files.isRegularFile(o.sample)) {
                throw new IllegalArgumentException("no sample file " + o.sample);
            }
            if (o.command == Command.POSE && o.model != null && o.sample == null) {
                throw new IllegalArgumentException("--model needs --sample (the shipped sample belongs to the tiny model)");
            }
            if (o.scale > 32) {
                throw new IllegalArgumentException("--scale takes at most 32");
            }
            return o;
        }

        private static <T> T only(Options o, Command command, String flag, T value) {
            if (o.command != command) {
                throw new IllegalArgumentException(flag + " belongs to the " + command.name().toLowerCase(Locale.ROOT)
                        + " form, not to " + o.command.name().toLowerCase(Locale.ROOT));
            }
            return value;
        }

        private static String value(String[] args, int i, String flag) {
            if (i >= args.length) {
                throw new IllegalArgumentException(flag + " needs a value");
            }
            return args[i];
        }

        private static int positive(String s, String flag, boolean zeroAllowed) {
            try {
                int v = Integer.parseInt(s);
                if (v < 0 || (v == 0 && !zeroAllowed)) {
                    throw new NumberFormatException();
                }
                return v;
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(flag + " takes a " + (zeroAllowed ? "non-negative" : "positive")
                        + " integer, not " + s);
            }
        }
    }
}
