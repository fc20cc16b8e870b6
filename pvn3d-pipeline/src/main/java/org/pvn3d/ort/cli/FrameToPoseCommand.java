package org.pvn3d.ort.cli;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.OrtRuntime;
import org.pvn3d.ort.OrtSession;
import org.pvn3d.ort.pipeline.FolderEvaluation;
import org.pvn3d.ort.pipeline.FrameToPose;
import org.pvn3d.ort.pipeline.FrameToPose.Precision;
import org.pvn3d.ort.pipeline.IcpRefinement;
import org.pvn3d.ort.pipeline.IcpRefiner;
import org.pvn3d.ort.pipeline.Json;
import org.pvn3d.ort.pipeline.MeanShift;
import org.pvn3d.ort.pipeline.PoseMetrics;
import org.pvn3d.ort.pipeline.Pvn3dPipeline;
import org.pvn3d.ort.pipeline.Pvn3dSample;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code pvn3d-ort frame-to-pose}: the one-graph path ({@link FrameToPose}) measured and evaluated. For
 * every combination of precision, batch size, CUDA graph on or off and frames in flight it warms up, then
 * times {@code --frames} frames from the upload of the inputs to the pose on the host (p50, p99 per call,
 * frames/s); with {@code --eval DIR} it also scores each precision on a folder of samples (ADD, ADD-S of
 * the voting pose and, with {@code --refine icp}, of the refined one).
 */
@Command(name = "frame-to-pose", mixinStandardHelpOptions = true, sortOptions = false, usageHelpAutoWidth = true,
        header = "Frame to pose in one graph (network + pose head): latency, frames/s and accuracy per precision.",
        description = {
            "Appends the pose stage (votes, mask, mean shift, Kabsch) to the network as graph nodes, binds fixed device "
                    + "buffers (CUDA) and times whole frames: the copy of the inputs up, the graph, the copy of the pose back. "
                    + "One line per combination of --precision, --batch, --cuda-graph and --inflight; --json writes them as a list "
                    + "of {mode, batch, cuda_graph, inflight, p50_ms, p99_ms, frames_per_s, ...}. The pose here is the voting pose "
                    + "(no refinement in the timed path); --eval DIR scores every precision on a folder of samples, with the "
                    + "refinement of --refine.",
            ""})
final class FrameToPoseCommand implements Callable<Integer>, Profiled {
    private final Io io;

    @Spec
    CommandSpec spec;

    @Mixin
    CommonOptions common;

    @Option(names = "--precision", split = "\\s*,\\s*", splitSynopsisLabel = ",", paramLabel = "strict|tf32|fp16",
            description = "The network's precision, one measurement each (default: strict). fp16 needs --fp16-model.")
    String[] precisions = {"strict"};

    @Option(names = "--model", paramLabel = "FILE.onnx", description = "A PVN3D network without pose head (default: the shipped tiny "
            + "model; another needs --sample).")
    Path model;

    @Option(names = "--fp16-model", paramLabel = "FILE.onnx", description = "The fp16 conversion of the model "
            + "(exporter/convert_fp16.py), for --precision fp16.")
    Path fp16Model;

    @Option(names = "--sample", paramLabel = "FILE.bin|DIR", description = "The frames: a PVT1 sample or a folder of them, cycled "
            + "through (default: the shipped sample).")
    Path sample;

    @Option(names = "--batch", split = "\\s*,\\s*", splitSynopsisLabel = ",", paramLabel = "N", description = "Frames per run "
            + "(default: 1).")
    int[] batches = {1};

    @Option(names = "--cuda-graph", paramLabel = "off|on|both", description = "ORT's CUDA graph capture (default: off).")
    String cudaGraph = "off";

    @Option(names = "--branches", paramLabel = "off|on|both", description = "Run the network's two branches side by side: "
            + "PointNet++ in a session of its own, on its own thread and stream, beside the CNN, then the fusion, heads and pose "
            + "(default: off, one graph).")
    String branches = "off";

    @Option(names = "--inflight", split = "\\s*,\\s*", splitSynopsisLabel = ",", paramLabel = "N", description = "Runs in flight: "
            + "one session and one thread each, on their own streams (default: 1).")
    int[] inflights = {1};

    @Option(names = "--frames", paramLabel = "N", description = "Timed frames per measurement, at least (default: 500).")
    int frames = 500;

    @Option(names = "--warmup", paramLabel = "N", description = "Untimed runs first, per session (default: 20; ORT captures the "
            + "CUDA graph during them).")
    int warmup = 20;

    @Option(names = "--eval", paramLabel = "DIR", description = "Also score every precision on this folder of samples (batch 1).")
    Path eval;

    @Option(names = "--refine", paramLabel = "icp|none", description = "With --eval: refine the voting pose with ICP (default) or not.")
    String refine = "icp";

    @Option(names = "--max-iter", paramLabel = "N", description = "Mean-shift iterations at most (default: 300, PVN3D's); 0 "
            + "leaves the modes where they start (the pose head's cost without the mean shift, for a breakdown).")
    int maxIter = 300;

    @Option(names = "--cuda-option", paramLabel = "KEY=VALUE", description = "A further option for ORT's CUDA provider, e.g. "
            + "prefer_nhwc=1 (repeatable; recorded in every measurement).")
    Map<String, String> cudaOptions = new LinkedHashMap<>();

    @Option(names = "--json", paramLabel = "FILE|-", description = "The measurements as a JSON list ('-': standard output, "
            + "the table then on standard error).")
    Path json;

    @Option(names = "--eval-json", paramLabel = "FILE|-", description = "With --eval: the per-precision accuracy as JSON "
            + "('-': standard output).")
    Path evalJson;

    @Mixin
    ProfilingOptions profiling;

    @Mixin
    GlobalOptions global;

    FrameToPoseCommand(Io io) {
        this.io = io;
    }

    @Override
    public ProfilingOptions profiling() {
        return profiling;
    }

    /**
     * --jfr and --nvtx, not --profile nor --device-timing: ORT's profiler would time every node of the timed
     * frames, and the device timing's events would go into the captured CUDA graphs.
     */
    @Override
    public void checkProfiling(CommandSpec spec) {
        if (profiling.profile != null || profiling.deviceTiming) {
            throw CommonOptions.usage(spec, "frame-to-pose takes --jfr and --nvtx, not " + (profiling.profile != null ? "--profile"
                    : "--device-timing") + " (it would be timed with the frames, and go into CUDA graphs): profile the "
                    + "main job, eval or pool-bench instead");
        }
        profiling.check(spec);
    }

    /** One measurement. */
    record Measurement(String mode, int batch, boolean cudaGraph, int inflight, int calls, int frames, double wallS, double p50,
            double p99, double framesPerS, double loadMs, int maxIter, Map<String, String> cudaOptions, boolean branches) {
        Map<String, Object> json() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("mode", mode);
            m.put("batch", batch);
            m.put("cuda_graph", cudaGraph);
            m.put("inflight", inflight);
            m.put("branches", branches);
            m.put("p50_ms", p50);
            m.put("p99_ms", p99);
            m.put("frames_per_s", framesPerS);
            m.put("calls", calls);
            m.put("frames", frames);
            m.put("wall_s", wallS);
            m.put("session_load_ms", loadMs);
            m.put("max_iter", maxIter);
            m.put("cuda_options", cudaOptions);
            return m;
        }
    }

    private List<Precision> precisions() {
        return CommonOptions.precisions(spec, precisions);
    }

    private List<Boolean> graphs() {
        return offOnBoth("--cuda-graph", cudaGraph);
    }

    private List<Boolean> branchModes() {
        return offOnBoth("--branches", branches);
    }

    /** off, on or both of a switch measured either way. */
    private List<Boolean> offOnBoth(String option, String value) {
        return switch (value.toLowerCase(Locale.ROOT)) {
            case "off" -> List.of(false);
            case "on" -> List.of(true);
            case "both" -> List.of(false, true);
            default -> throw CommonOptions.usage(spec, option + " takes off, on or both, not " + value);
        };
    }

    private void check() {
        branchModes();
        common.check(spec);
        List<Precision> ps = precisions();
        List<Boolean> gs = graphs();
        CommonOptions.checkPrecisions(spec, common.cuda(), ps, gs.contains(true), fp16Model);
        if (!common.cuda() && !cudaOptions.isEmpty()) {
            throw CommonOptions.usage(spec, "--cuda-option needs --ep cuda");
        }
        try {
            FrameToPose.Config.cuda(0).withCudaOptions(cudaOptions);
        } catch (IllegalArgumentException e) {
            throw CommonOptions.usage(spec, e.getMessage().replace("CUDA option ", "--cuda-option "));
        }
        for (int b : batches) {
            CommonOptions.within(spec, "--batch", b, 1, CommonOptions.MAX_BATCH);
        }
        for (int f : inflights) {
            CommonOptions.within(spec, "--inflight", f, 1, CommonOptions.MAX_INFLIGHT);
            CommonOptions.threadBudget(spec, "--inflight", f, common.threads);
        }
        CommonOptions.within(spec, "--frames", frames, 1, CommonOptions.MAX_RUNS);
        CommonOptions.within(spec, "--warmup", warmup, 0, CommonOptions.MAX_RUNS);
        CommonOptions.atLeast(spec, "--max-iter", maxIter, 0);
        if (Io.isStandardOutput(json) && Io.isStandardOutput(evalJson)) {
            throw CommonOptions.usage(spec, "--json - and --eval-json -: only one of them can have standard output");
        }
        if (model != null && sample == null) {
            throw CommonOptions.usage(spec, "--model needs --sample (the shipped sample belongs to the tiny model)");
        }
        CommonOptions.existing(spec, "model", model);
        if (sample != null && !Files.exists(sample)) {
            throw CommonOptions.usage(spec, "no sample file or folder " + sample);
        }
        if (eval != null && !Files.isDirectory(eval)) {
            throw CommonOptions.usage(spec, "--eval takes a folder of samples, not " + eval);
        }
        if (eval == null && (evalJson != null || spec.commandLine().getParseResult().hasMatchedOption("--refine"))) {
            throw CommonOptions.usage(spec, (evalJson != null ? "--eval-json" : "--refine") + " goes with --eval");
        }
        if (!refine.equals("icp") && !refine.equals("none")) {
            throw CommonOptions.usage(spec, "--refine takes icp or none, not " + refine);
        }
    }

    @Override
    public void checkOptions() {
        check();
        common.requireCuda();
    }

    @Override
    public Integer call() throws IOException {
        PrintStream out = profilingIo(io).out(); // with a JSON to standard output, the table goes to standard error
        List<Pvn3dSample> samples = samples();
        byte[] fp32 = model == null ? Pvn3dPipeline.tinyModelBytes() : OrtSession.readModel(model);
        byte[] fp16 = fp16Model == null ? null : OrtSession.readModel(fp16Model);
        out.printf(Locale.ROOT, "pvn3d-ort frame-to-pose: %s, %d frame(s) from %s, %s, ONNX Runtime %s; pose head in the graph, "
                + "voting pose (no refinement) in the timed path%s%n", model == null ? "PVN3D tiny (class path)" : model, samples.size(),
                sample == null ? "class path " + Pvn3dSample.RESOURCE : sample, common.cuda() ? "CUDA device " + common.device : "CPU",
                OrtRuntime.get().version(), cudaOptions.isEmpty() ? "" : "; CUDA provider options " + cudaOptions);
        out.printf(Locale.ROOT, "%-7s %5s %6s %8s %8s %7s %9s %9s %10s%n", "mode", "batch", "graph", "branches", "inflight", "frames",
                "p50 ms", "p99 ms", "frames/s");
        List<Measurement> all = new ArrayList<>();
        for (Precision p : precisions()) {
            byte[] bytes = p == Precision.FP16 ? fp16 : fp32;
            for (boolean g : graphs()) {
                for (boolean br : branchModes()) {
                    for (int b : batches) {
                        for (int f : inflights) {
                            Measurement m = measure(bytes, samples, config(p, g, b).withConcurrentBranches(br), f);
                            all.add(m);
                            out.printf(Locale.ROOT, "%-7s %5d %6s %8s %8d %7d %9.2f %9.2f %10.1f%n", m.mode(), m.batch(), g ? "on" : "off",
                                    br ? "on" : "off", m.inflight(), m.frames(), m.p50(), m.p99(), m.framesPerS());
                            out.flush();
                        }
                    }
                }
            }
        }
        if (json != null) {
            io.writeJson(json, Json.write(all.stream().map(Measurement::json).toList()), out, "json");
        }
        if (eval != null && !evaluate(fp32, fp16, out)) {
            return Main.FAILED; // as eval: a sample that failed is a row with its error, and the exit code 1
        }
        return Main.OK;
    }

    @Override
    public Io profilingIo(Io io) {
        return Io.isStandardOutput(json) || Io.isStandardOutput(evalJson) ? io.resultsOnErr() : io;
    }

    private FrameToPose.Config config(Precision p, boolean graph, int batch) {
        FrameToPose.Config c = common.cuda() ? FrameToPose.Config.cuda(common.device) : FrameToPose.Config.cpu();
        MeanShift m = MeanShift.PVN3D;
        return c.withPrecision(p).withCudaGraph(graph).withBatch(batch).withThreads(common.threads)
                .withMeanShift(new MeanShift(m.bandwidth(), maxIter, m.centerFilter())).withCudaOptions(cudaOptions);
    }

    private List<Pvn3dSample> samples() {
        if (sample == null) {
            return List.of(Pvn3dSample.resource(Pvn3dSample.RESOURCE));
        }
        if (Files.isDirectory(sample)) {
            List<Pvn3dSample> s = FolderEvaluation.samples(sample).stream().map(Pvn3dSample::read).toList();
            if (s.isEmpty()) {
                throw new OrtException("no *.bin samples in " + sample);
            }
            return s;
        }
        return List.of(Pvn3dSample.read(sample));
    }

    /** {@code inflight} sessions on as many threads, each running batches until {@code frames} frames are done together. */
    private Measurement measure(byte[] bytes, List<Pvn3dSample> samples, FrameToPose.Config config, int inflight) {
        int b = config.batch();
        int callsPerThread = callsPerSession(frames, b, inflight);
        List<FrameToPose> runners = new ArrayList<>();
        try {
            long l0 = System.nanoTime();
            for (int i = 0; i < inflight; i++) {
                runners.add(new FrameToPose(bytes, config, samples.get(0)));
            }
            double loadMs = (System.nanoTime() - l0) / 1e6 / inflight;
            double[][] ms = new double[inflight][callsPerThread];
            RuntimeException[] failure = new RuntimeException[1];
            Thread[] threads = new Thread[inflight];
            java.util.concurrent.CyclicBarrier start = new java.util.concurrent.CyclicBarrier(inflight + 1);
            for (int i = 0; i < inflight; i++) {
                int id = i;
                threads[i] = new Thread(() -> {
                    try {
                        FrameToPose r = runners.get(id);
                        List<List<Pvn3dSample>> batches = batches(samples, b);
                        for (int w = 0; w < warmup; w++) {
                            r.run(batches.get(w % batches.size()));
                        }
                        start.await();
                        for (int c = 0; c < callsPerThread; c++) {
                            List<Pvn3dSample> batch = batches.get((c + id) % batches.size());
                            long t0 = System.nanoTime();
                            List<FrameToPose.FramePose> poses = r.run(batch);
                            ms[id][c] = (System.nanoTime() - t0) / 1e6;
                            if (poses.size() != b) {
                                throw new IllegalStateException("a run gave " + poses.size() + " poses for " + b + " frames");
                            }
                        }
                    } catch (RuntimeException e) {
                        synchronized (failure) {
                            failure[0] = failure[0] == null ? e : failure[0];
                        }
                        start.reset();
                    } catch (Exception e) {
                        synchronized (failure) {
                            failure[0] = failure[0] == null ? new IllegalStateException(e) : failure[0];
                        }
                    }
                }, "frame-to-pose-" + i);
                threads[i].start();
            }
            long t0;
            try {
                start.await();
                t0 = System.nanoTime();
                for (Thread t : threads) {
                    t.join();
                }
            } catch (InterruptedException | java.util.concurrent.BrokenBarrierException e) {
                for (Thread t : threads) {
                    try {
                        t.join();
                    } catch (InterruptedException ie) {
                        Thread.currentThread().interrupt();
                    }
                }
                if (failure[0] != null) {
                    throw failure[0];
                }
                throw new OrtException("frame-to-pose: interrupted");
            }
            double wall = (System.nanoTime() - t0) / 1e9;
            if (failure[0] != null) {
                throw failure[0];
            }
            double[] sorted = Arrays.stream(ms).flatMapToDouble(Arrays::stream).sorted().toArray();
            int done = sorted.length * b; // at most frames + b x inflight: within int by the bounds of check()
            return new Measurement(config.precision().label(), b, config.cudaGraph(), inflight, sorted.length, done, wall,
                    PoolBenchCommand.percentile(sorted, 0.5), PoolBenchCommand.percentile(sorted, 0.99), done / wall, loadMs,
                    config.meanShift().maxIter(), config.cudaOptions(), config.concurrentBranches());
        } finally {
            runners.forEach(FrameToPose::close);
        }
    }

    /** Calls on each of {@code inflight} sessions for {@code frames} frames at least, in batches of {@code b}; in long, no overflow. */
    static int callsPerSession(int frames, int b, int inflight) {
        long perRound = (long) b * inflight;
        return (int) Math.max(1, (frames + perRound - 1) / perRound);
    }

    /** The samples grouped into batches of {@code b} (cycling when there are fewer). */
    static List<List<Pvn3dSample>> batches(List<Pvn3dSample> samples, int b) {
        int count = Math.max(1, samples.size() / b);
        List<List<Pvn3dSample>> out = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            List<Pvn3dSample> batch = new ArrayList<>(b);
            for (int j = 0; j < b; j++) {
                batch.add(samples.get((i * b + j) % samples.size()));
            }
            out.add(batch);
        }
        return out;
    }

    /**
     * Every precision on the --eval folder, batch 1, the voting pose and (with --refine icp) the refined one;
     * false when a sample failed in some precision.
     */
    private boolean evaluate(byte[] fp32, byte[] fp16, PrintStream out) throws IOException {
        boolean allRan = true;
        List<Path> files = FolderEvaluation.samples(eval);
        if (files.isEmpty()) {
            throw new OrtException("no *.bin samples in " + eval);
        }
        Pvn3dSample first = Pvn3dSample.read(files.get(0));
        IcpRefiner icp = refine.equals("icp") ? new IcpRefiner(IcpRefinement.DEFAULT) : null;
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("dataset", eval.toString());
        doc.put("refinement", icp == null ? "none" : IcpRefinement.DEFAULT.describe());
        Map<String, Object> modes = new LinkedHashMap<>();
        for (Precision p : precisions()) {
            FolderEvaluation.Summary summary;
            try (FrameToPose runner = new FrameToPose(p == Precision.FP16 ? fp16 : fp32, config(p, false, 1).withMask(true), first)) {
                List<FolderEvaluation.Row> rows = new ArrayList<>();
                for (Path f : files) {
                    rows.add(row(runner, f, icp));
                }
                summary = new FolderEvaluation.Summary(rows, icp == null ? "none" : IcpRefinement.DEFAULT.describe());
            }
            out.printf(Locale.ROOT, "%n== %s (%s), %d samples of %s%n", p.label(), p.description(), files.size(), eval);
            out.print(summary.table());
            allRan &= summary.failures() == 0;
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("description", p.description());
            m.put("samples", files.size());
            m.put("evaluated", summary.evaluated());
            m.put("failures", summary.failures());
            m.put("add_accuracy", summary.addAccuracy());
            m.put("add_s_accuracy", summary.addsAccuracy());
            m.put("mean_add_mm", 1000 * summary.meanAdd());
            m.put("mean_add_s_mm", 1000 * summary.meanAdds());
            m.put("voting_add_accuracy", summary.votingAddAccuracy());
            m.put("voting_add_s_accuracy", summary.votingAddsAccuracy());
            m.put("voting_mean_add_mm", 1000 * summary.votingMeanAdd());
            m.put("voting_mean_add_s_mm", 1000 * summary.votingMeanAdds());
            m.put("refined", summary.refinedCount());
            modes.put(p.label(), m);
        }
        doc.put("modes", modes);
        if (evalJson != null) {
            io.writeJson(evalJson, Json.write(doc), out, "eval json");
        }
        return allRan;
    }

    private static FolderEvaluation.Row row(FrameToPose runner, Path file, IcpRefiner icp) {
        String name = file.getFileName().toString();
        long t0 = System.nanoTime();
        try {
            Pvn3dSample s = Pvn3dSample.read(file);
            FrameToPose.FramePose fp = runner.run(s);
            int masked = 0;
            for (boolean m : fp.mask()) {
                masked += m ? 1 : 0;
            }
            IcpRefiner.Result refined = icp == null ? IcpRefiner.Result.notRun(fp.pose(), IcpRefiner.Status.DISABLED)
                    : icp.refine(fp.pose(), s, fp.mask());
            double ms = (System.nanoTime() - t0) / 1e6;
            if (!s.hasGroundTruth()) {
                return new FolderEvaluation.Row(name, s.points(), masked, fp.inliers(), Double.NaN, Double.NaN, Double.NaN, ms, null,
                        s.occlusion());
            }
            PoseMetrics.Result v = PoseMetrics.evaluate(fp.pose(), s.groundTruth(), s.modelPoints(), s.diameter());
            PoseMetrics.Result m = refined.refined() ? PoseMetrics.evaluate(refined.pose(), s.groundTruth(), s.modelPoints(), s.diameter()) : v;
            return new FolderEvaluation.Row(name, s.points(), masked, fp.inliers(), m.add(), m.adds(), m.diameter(), ms, null,
                    s.occlusion(), v.add(), v.adds(), refined.status());
        } catch (RuntimeException e) {
            return new FolderEvaluation.Row(name, 0, 0, 0, Double.NaN, Double.NaN, Double.NaN, (System.nanoTime() - t0) / 1e6,
                    FolderEvaluation.message(e), Double.NaN);
        }
    }
}
