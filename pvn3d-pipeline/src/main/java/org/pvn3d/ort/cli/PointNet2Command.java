package org.pvn3d.ort.cli;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import org.pvn3d.ort.OnnxTensor;
import org.pvn3d.ort.OnnxValue;
import org.pvn3d.ort.OrtEnvironment;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.OrtRuntime;
import org.pvn3d.ort.OrtSession;
import org.pvn3d.ort.SessionOptions;
import org.pvn3d.ort.io.PvtFile;
import org.pvn3d.ort.ops.Pvn3dOps;
import org.pvn3d.ort.pipeline.Pvn3dPipeline;
import org.pvn3d.ort.providers.OrtCUDAProviderOptions;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code pointnet2}: the embedded PointNet++ model (or another one) run repeatedly: per-run latency, output checksums. */
@Command(name = "pointnet2", mixinStandardHelpOptions = true, abbreviateSynopsis = true, sortOptions = false,
        usageHelpAutoWidth = true,
        header = "Runs the embedded PointNet++ model: latency and output checksums.",
        description = {
            "Runs the embedded PointNet++ model on a Stanford-bunny sample (or --model on --input) several times: the "
                    + "latency of each run, their median, and a checksum of every output.",
            ""})
final class PointNet2Command implements Callable<Integer>, Profiled {
    static final String MODEL_RESOURCE = "/models/pointnet2_default.onnx";
    static final String INPUT_RESOURCE = "/models/bunny_sample.bin";

    private final Io io;

    @Spec
    CommandSpec spec;

    @Mixin
    CommonOptions common;

    @Option(names = "--warmup", paramLabel = "N", description = "Untimed runs first (default: 2).")
    int warmup = 2;

    @Option(names = "--runs", paramLabel = "N", description = "Timed runs (default: 10).")
    int runs = 10;

    @Option(names = "--model", paramLabel = "FILE.onnx", description = "Another model (with --input).")
    Path model;

    @Option(names = "--input", paramLabel = "FILE.bin", description = "A PVT1 file holding the model's inputs by name (with --model).")
    Path input;

    @Mixin
    ProfilingOptions profiling;

    @Mixin
    GlobalOptions global;

    PointNet2Command(Io io) {
        this.io = io;
    }

    @Override
    public ProfilingOptions profiling() {
        return profiling;
    }

    @Override
    public void checkOptions() {
        common.check(spec);
        CommonOptions.within(spec, "--warmup", warmup, 0, CommonOptions.MAX_RUNS);
        CommonOptions.within(spec, "--runs", runs, 1, CommonOptions.MAX_RUNS);
        if ((model == null) != (input == null)) {
            throw CommonOptions.usage(spec, "--model and --input go together");
        }
        CommonOptions.existing(spec, "model file", model);
        CommonOptions.existing(spec, "input file", input);
        common.requireCuda();
    }

    @Override
    public Integer call() {
        PrintStream out = io.out();
        byte[] bytes = model == null ? Pvn3dPipeline.resourceBytes(MODEL_RESOURCE) : OrtSession.readModel(model);
        Map<String, PvtFile.Entry> inputs = input == null ? readPvt(Pvn3dPipeline.resourceBytes(INPUT_RESOURCE), INPUT_RESOURCE)
                : PvtFile.read(input);
        out.printf("model: %s (%d bytes)%n", model == null ? "embedded PointNet++ (" + MODEL_RESOURCE + ")" : model, bytes.length);
        OrtEnvironment env = OrtEnvironment.getEnvironment();
        try (var options = new SessionOptions()) {
            if (common.threads > 0) {
                options.setIntraOpNumThreads(common.threads);
            }
            if (profiling.profile != null) {
                options.enableProfiling(profiling.profile, "pointnet2");
            }
            Pvn3dOps.register(options).close(); // the options and the session keep the domain alive
            if (common.cuda()) {
                options.addExecutionProvider(new OrtCUDAProviderOptions(common.device));
            } else {
                Pvn3dOps.letIntraOpThreadsSleep(options); // as the pipelines' CPU sessions (Pvn3dOps says why)
            }
            long t0 = System.nanoTime();
            try (OrtSession session = env.createSession(bytes, options)) {
                out.printf(Locale.ROOT, "session: %s provider, created in %.1f ms; ONNX Runtime %s%n", common.cuda() ? "CUDA" : "CPU",
                        (System.nanoTime() - t0) / 1e6, OrtRuntime.get().version());
                List<OnnxTensor> tensors = new ArrayList<>();
                try {
                    Map<String, OnnxTensor> feeds = new LinkedHashMap<>();
                    for (String name : session.getInputNames()) {
                        PvtFile.Entry e = inputs.get(name);
                        if (e == null) {
                            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "the input file has no tensor '" + name
                                    + "' (it has " + inputs.keySet() + ")");
                        }
                        OnnxTensor t = e.toTensor();
                        tensors.add(t);
                        feeds.put(name, t);
                        out.printf("input: %s %s %s%n", name, e.type(), Arrays.toString(e.shape()));
                    }
                    runAndReport(session, feeds, out);
                } finally {
                    tensors.forEach(OnnxTensor::close);
                }
                if (profiling.profile != null) {
                    ProfilingOptions.report(Path.of(session.endProfiling()), out);
                }
            }
        }
        return Main.OK;
    }

    private void runAndReport(OrtSession session, Map<String, OnnxTensor> feeds, PrintStream out) {
        double[] ms = new double[runs];
        String checksum = null;
        for (int i = -warmup; i < runs; i++) {
            long start = System.nanoTime();
            try (var r = session.run(feeds)) {
                double elapsed = (System.nanoTime() - start) / 1e6;
                if (i >= 0) {
                    ms[i] = elapsed;
                    out.printf(Locale.ROOT, "run %d: %.3f ms%n", i + 1, elapsed);
                }
                if (checksum == null) {
                    checksum = checksums(r);
                }
            }
        }
        double[] sorted = ms.clone();
        Arrays.sort(sorted);
        out.printf(Locale.ROOT, "latency over %d runs (after %d warm-up): median %.3f ms, min %.3f ms, max %.3f ms%n",
                runs, warmup, median(sorted), sorted[0], sorted[sorted.length - 1]);
        out.print(checksum);
    }

    /** One line per tensor output: type, shape, the sum and the sum of magnitudes of its values. */
    private static String checksums(Iterable<Map.Entry<String, OnnxValue>> outputs) {
        StringBuilder sb = new StringBuilder();
        for (var e : outputs) {
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

    private static Map<String, PvtFile.Entry> readPvt(byte[] bytes, String source) {
        try {
            return PvtFile.read(new ByteArrayInputStream(bytes), source);
        } catch (IOException e) {
            throw new OrtException(OrtErrorCode.ORT_NO_SUCHFILE, "cannot read " + source + ": " + e.getMessage(), e);
        }
    }
}
