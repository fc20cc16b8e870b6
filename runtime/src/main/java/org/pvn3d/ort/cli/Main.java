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
import org.pvn3d.ort.io.PvtFile;
import org.pvn3d.ort.ops.Pvn3dOps;

/**
 * The command line. Its main job runs a model that uses the PVN3D operators (by default the
 * embedded PointNet++ on a Stanford-bunny sample) and prints per-run latency and an output checksum.
 */
public final class Main {
    private static final String DEFAULT_MODEL = "/models/pointnet2_default.onnx";
    private static final String DEFAULT_INPUT = "/models/bunny_sample.bin";

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
            } else if (o.version) {
                printVersion(out);
            } else {
                runModel(o, out);
            }
            return 0;
        } catch (OrtException e) {
            err.println("pvn3d-ort: " + e.getMessage());
            return 1;
        }
    }

    static void printVersion(PrintStream out) {
        OrtRuntime runtime = OrtRuntime.get();
        out.println("pvn3d-ort " + OrtRuntime.libraryVersion());
        out.println("ONNX Runtime " + runtime.version() + " at " + runtime.library()
                + (runtime.isBundled() ? " (bundled " + OrtRuntime.defaultArtifact() + ")" : " (from " + OrtRuntime.PATH_PROPERTY + "/" + OrtRuntime.PATH_ENV + ")"));
        out.println("execution providers: " + OrtEnvironment.getEnvironment().getAvailableProviders());
        out.println("libpvn3d_ops " + Pvn3dOps.nativeVersion() + " at " + Pvn3dOps.nativeLibrary() + " (CUDA kernels: "
                + (Pvn3dOps.nativeBuiltWithCuda() ? "yes, " + Pvn3dOps.cudaDeviceCount() + " device(s)" : "no") + ")");
        out.println("Java " + System.getProperty("java.version") + " (" + System.getProperty("java.vm.name") + ")");
    }

    static void runModel(Options o, PrintStream out) {
        OrtEnvironment env = OrtEnvironment.getEnvironment();
        byte[] model = o.model == null ? resource(DEFAULT_MODEL) : OrtSession.readModel(o.model);
        Map<String, PvtFile.Entry> inputs = o.input == null ? readPvt(resource(DEFAULT_INPUT), DEFAULT_INPUT)
                : PvtFile.read(o.input);
        out.printf("model: %s (%d bytes)%n", o.model == null ? "embedded PointNet++ (" + DEFAULT_MODEL + ")" : o.model, model.length);
        try (OrtSession.SessionOptions options = new OrtSession.SessionOptions()) {
            if (o.threads > 0) {
                options.setIntraOpNumThreads(o.threads);
            }
            if (o.profile != null) {
                options.enableProfiling(o.profile);
            }
            Pvn3dOps.register(options).close(); // the options and the session keep the domain alive
            if (o.cuda) {
                options.addCUDA(o.device);
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
            try (OrtSession.Result r = session.run(feeds)) {
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

    private static String checksums(OrtSession.Result r) {
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
        static final String USAGE = """
                usage: pvn3d-ort [--ep cpu|cuda] [--device N] [--runs N] [--warmup N] [--threads N]
                                 [--model FILE.onnx --input FILE.bin] [--profile PREFIX]
                       pvn3d-ort --version | --help

                Runs a model that uses the PVN3D custom operators (default: the embedded PointNet++ on a
                Stanford-bunny sample) and prints per-run latency and each output's checksum.
                  --ep cpu|cuda   execution provider (default cpu; cuda needs a GPU and an ORT build for it)
                  --device N      CUDA device id (default 0)
                  --runs N        timed runs (default 10); --warmup N untimed runs first (default 2)
                  --threads N     ORT intra-op threads (default: ORT's choice)
                  --model/--input another model and a PVT1 file holding its inputs by name
                  --profile P     write ORT's profile (JSON) to files starting with P
                  --version       the loaded ONNX Runtime and operator library, their paths
                The ORT build is chosen with -Dpvn3d.ort.path or PVN3D_ORT_PATH (default: the bundled 1.16.3).""";

        boolean help;
        boolean version;
        boolean cuda;
        int device;
        int runs = 10;
        int warmup = 2;
        int threads;
        Path model;
        Path input;
        String profile;

        static Options parse(String[] args) {
            Options o = new Options();
            for (int i = 0; i < args.length; i++) {
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
                    case "--runs" -> o.runs = positive(value(args, ++i, a), a, false);
                    case "--warmup" -> o.warmup = positive(value(args, ++i, a), a, true);
                    case "--threads" -> o.threads = positive(value(args, ++i, a), a, true);
                    case "--model" -> o.model = Path.of(value(args, ++i, a));
                    case "--input" -> o.input = Path.of(value(args, ++i, a));
                    case "--profile" -> o.profile = value(args, ++i, a);
                    default -> throw new IllegalArgumentException("unknown argument " + a);
                }
            }
            if ((o.model == null) != (o.input == null)) {
                throw new IllegalArgumentException("--model and --input go together");
            }
            if (o.model != null && !Files.isRegularFile(o.model)) {
                throw new IllegalArgumentException("no model file " + o.model);
            }
            return o;
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
