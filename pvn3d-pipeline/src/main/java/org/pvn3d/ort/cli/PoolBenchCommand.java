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
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.OrtRuntime;
import org.pvn3d.ort.OrtSession;
import org.pvn3d.ort.pipeline.FolderEvaluation;
import org.pvn3d.ort.pipeline.FrameToPose;
import org.pvn3d.ort.pipeline.FrameToPose.Precision;
import org.pvn3d.ort.pipeline.Json;
import org.pvn3d.ort.pipeline.PoseSolver;
import org.pvn3d.ort.pipeline.Pvn3dPipeline;
import org.pvn3d.ort.pipeline.Pvn3dSample;
import org.pvn3d.ort.pipeline.pool.FrameToPoseSession;
import org.pvn3d.ort.pipeline.pool.Pvn3dPool;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code pvn3d-ort pool-bench}: throughput and latency of a {@link Pvn3dPool} for one or more session
 * counts (e.g. 1 and 2 sessions on one GPU: does a second frame in flight help?). For each count it
 * builds the pool (every session warmed up on the first sample), then keeps {@code --inflight} frames
 * submitted at all times until {@code --frames} are done, and reports frames/s over the wall time,
 * the per-frame latency from submit to result (p50, p99) and the sessions' own time per frame.
 */
@Command(name = "pool-bench", mixinStandardHelpOptions = true, sortOptions = false, usageHelpAutoWidth = true,
        header = "Measures a pool of sessions: frames/s and latency for each session count.",
        description = {
            "For each --sessions count, builds a pool of that many sessions per device (each warmed up on the first "
                    + "sample), keeps --inflight frames submitted until --frames are done, then prints frames/s over the wall "
                    + "time, the latency from submit to result (p50, p99) and the sessions' own time per frame (service). "
                    + "--threads is per session; by default the cores are shared out among the sessions. With --precision the "
                    + "sessions run the one-graph path (the pose head inside the ORT graph, as frame-to-pose does; ICP still on "
                    + "the host unless --refine none), one series per precision. The exit code is 1 when a frame failed.",
            ""})
final class PoolBenchCommand implements Callable<Integer>, Profiled {
    private final Io io;

    @Spec
    CommandSpec spec;

    @Mixin
    CommonOptions common;

    @Option(names = "--devices", split = "\\s*,\\s*", splitSynopsisLabel = ",", paramLabel = "N", description = "CUDA devices the pool spreads over (default: 0; "
            + "--device N is --devices N).")
    int[] devices;

    @Option(names = "--sessions", split = "\\s*,\\s*", splitSynopsisLabel = ",", paramLabel = "N", description = "Sessions per device, one measurement per value "
            + "(default: 1,2).")
    int[] sessions = {1, 2};

    @Option(names = "--frames", paramLabel = "N", description = "Timed frames per measurement (default: 100).")
    int frames = 100;

    /** The shared pipeline options; the warm-up runs are the first sample's on each session as it opens. */
    @Mixin
    PipelineOptions pipeline = new PipelineOptions(2);

    @Option(names = "--inflight", paramLabel = "N", description = "Frames submitted and not yet done at any time (default: "
            + "2 x the sessions).")
    Integer inflight;

    @Option(names = "--queue", paramLabel = "N", description = "The pool's queue capacity (default: 2 x the sessions).")
    Integer queue;

    @Option(names = "--model", paramLabel = "FILE.onnx", description = "Another PVN3D model (needs --sample).")
    Path model;

    @Option(names = "--sample", paramLabel = "FILE.bin|DIR", description = "Another PVT1 sample, or a folder of them that the "
            + "frames cycle through (default: the tiny model's shipped sample).")
    Path sample;

    @Option(names = "--precision", split = "\\s*,\\s*", splitSynopsisLabel = ",", paramLabel = "strict|tf32|fp16",
            description = "Sessions of the one-graph path (the pose head inside the ORT graph, as frame-to-pose runs it) in "
                    + "these precisions, one series each; without it the sessions are the staged pipeline (network, then "
                    + "the pose stage). fp16 needs --fp16-model.")
    String[] precisions;

    @Option(names = "--fp16-model", paramLabel = "FILE.onnx", description = "The fp16 conversion of the model "
            + "(exporter/convert_fp16.py), for --precision fp16.")
    Path fp16Model;

    @Option(names = "--cuda-graph", description = "With --precision on CUDA: ORT's CUDA graphs (captured as each session opens).")
    boolean cudaGraph;

    @Option(names = "--branches", description = "With --precision: each session runs PVN3D's two branches side by side "
            + "(PointNet++ on its own thread and stream beside the CNN; frame-to-pose --branches).")
    boolean branches;

    @Option(names = "--json", paramLabel = "FILE|-", description = "The figures as JSON to FILE ('-': standard output, "
            + "which then holds the JSON alone: the table goes to standard error).")
    String json;

    @Mixin
    ProfilingOptions profiling;

    @Mixin
    GlobalOptions global;

    PoolBenchCommand(Io io) {
        this.io = io;
    }

    @Override
    public ProfilingOptions profiling() {
        return profiling;
    }

    /** One measurement: a pool of {@code sessions} per device, {@code frames} frames. */
    record Run(String mode, boolean cudaGraph, boolean branches, int sessionsPerDevice, int sessions, int threads, int inflight, int frames, int failed,
            double wallS, double framesPerS, double p50, double p99, double mean, double max, double serviceP50, double serviceP99,
            Map<String, Long> perSession) {
        Map<String, Object> json() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("mode", mode);
            m.put("cuda_graph", cudaGraph);
            m.put("branches", branches);
            m.put("sessions_per_device", sessionsPerDevice);
            m.put("sessions", sessions);
            m.put("threads_per_session", threads);
            m.put("inflight", inflight);
            m.put("frames", frames);
            m.put("failed", failed);
            m.put("wall_s", wallS);
            m.put("frames_per_s", framesPerS);
            m.put("latency_ms", Map.of("p50", p50, "p99", p99, "mean", mean, "max", max));
            m.put("service_ms", Map.of("p50", serviceP50, "p99", serviceP99));
            m.put("frames_per_session", new LinkedHashMap<>(perSession));
            return m;
        }
    }

    /** The first failed frame's error, said once at the end (the table only counts them). */
    private final java.util.concurrent.atomic.AtomicReference<String> firstFailure = new java.util.concurrent.atomic.AtomicReference<>();

    /**
     * Refuses, before any is opened, more CPU sessions than the host's available memory holds: each keeps its
     * model's weights (prepacked by ORT: about twice the file) and ORT's arenas and plans, a few MB more (the tiny
     * model's sessions measured 5-6 MB each). 4096 of them (the bound on --sessions) ran a 23 GB machine into
     * the OOM killer. Nothing is checked where /proc/meminfo cannot be read.
     */
    private static void requireHostMemoryFor(int sessions, long modelBytes) {
        long available = availableHostBytes();
        long each = 2 * modelBytes + (8L << 20);
        if (available > 0 && sessions * each > available) {
            throw new OrtException(org.pvn3d.ort.OrtErrorCode.ORT_FAIL, String.format(Locale.ROOT, "%d CPU sessions of this model need"
                    + " about %.1f GB of host memory (%.0f MB each), more than the %.1f GB available: fewer --sessions", sessions,
                    sessions * each / 1e9, each / 1e6, available / 1e9));
        }
    }

    /** MemAvailable from /proc/meminfo in bytes, or -1. */
    private static long availableHostBytes() {
        try {
            for (String line : java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/meminfo"))) {
                if (line.startsWith("MemAvailable:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux, or no such line: no check
        }
        return -1;
    }

    /** The checks picocli cannot make; usage errors (exit code 2). */
    private void check() {
        // pool-bench's --threads is the threads per session: 0 is not a count (leave it out for the default)
        if (spec.commandLine().getParseResult().hasMatchedOption("--threads")) {
            CommonOptions.atLeast(spec, "--threads", common.threads, 1);
        }
        common.check(spec);
        pipeline.check(spec);
        if (devices != null && spec.commandLine().getParseResult().hasMatchedOption("--device")) {
            throw CommonOptions.usage(spec, "--device and --devices: give one (--devices takes a list)");
        }
        if (devices != null && !common.cuda()) {
            throw CommonOptions.usage(spec, "--devices needs --ep cuda (the CPU provider is one device)");
        }
        for (int d : devices()) {
            CommonOptions.atLeast(spec, "--devices", d, 0);
        }
        if (sessions.length == 0) {
            throw CommonOptions.usage(spec, "--sessions takes one or more counts");
        }
        for (int s : sessions) {
            CommonOptions.within(spec, "--sessions", s, 1, Pvn3dPool.MAX_SESSIONS);
            CommonOptions.threadBudget(spec, "--sessions", (long) s * devices().length, common.threads);
        }
        CommonOptions.within(spec, "--frames", frames, 1, CommonOptions.MAX_RUNS);
        if (inflight != null) {
            CommonOptions.within(spec, "--inflight", inflight, 1, CommonOptions.MAX_POOL_INFLIGHT);
        }
        if (queue != null) {
            CommonOptions.within(spec, "--queue", queue, 1, Pvn3dPool.MAX_QUEUE);
        }
        if (model != null && sample == null) {
            throw CommonOptions.usage(spec, "--model needs --sample (the shipped sample belongs to the tiny model)");
        }
        if (model != null && !Files.isRegularFile(model)) {
            throw CommonOptions.usage(spec, "no model file " + model);
        }
        if (sample != null && !Files.exists(sample)) {
            throw CommonOptions.usage(spec, "no sample file or folder " + sample);
        }
        int[] d = devices();
        if (Arrays.stream(d).distinct().count() != d.length) {
            throw CommonOptions.usage(spec, "--devices lists a device twice: " + Arrays.toString(d));
        }
        List<Precision> modes = modes();
        if (modes.isEmpty()) {
            if (cudaGraph || branches || fp16Model != null) {
                throw CommonOptions.usage(spec, "--cuda-graph, --branches and --fp16-model go with --precision (the one-graph sessions)");
            }
            return;
        }
        CommonOptions.checkPrecisions(spec, common.cuda(), modes, cudaGraph, fp16Model);
        if (pipeline.pose != null || pipeline.noIoBinding || profiling.profile != null) {
            throw CommonOptions.usage(spec, "--pose, --no-io-binding and --profile set up the staged pipeline; with --precision "
                    + "the pose head runs inside the graph on bound device buffers");
        }
    }

    /** The precisions of --precision (empty: the staged pipeline). */
    private List<Precision> modes() {
        return precisions == null ? List.of() : CommonOptions.precisions(spec, precisions);
    }

    /** The devices the pool spreads over: --devices, else --device (default 0). */
    private int[] devices() {
        return devices != null ? devices : new int[] {common.device};
    }

    @Override
    public void checkOptions() {
        check();
        if (common.cuda()) {
            for (int d : devices()) { // before the table starts: no device, no provider or one that does not load
                CudaCheck.require(d);
            }
        }
    }

    @Override
    public Integer call() throws IOException {
        long started = System.currentTimeMillis();
        PrintStream human = profilingIo(io).out(); // with --json -, standard output is the JSON alone
        int code = measureAll(human);
        if (profiling.profile != null) {
            for (Path file : profiles(profiling.profile, started)) {
                ProfilingOptions.report(file, human);
            }
        }
        return code;
    }

    @Override
    public Io profilingIo(Io io) {
        return "-".equals(json) ? io.resultsOnErr() : io;
    }

    /** The ORT profiles the sessions wrote into {@code dir} since {@code since} (ms), oldest first. */
    static List<Path> profiles(Path dir, long since) throws IOException {
        try (var files = Files.list(dir)) {
            return files.filter(f -> f.getFileName().toString().matches("pvn3d_.*\\.json") && !f.toString().endsWith(".summary.json"))
                    .filter(f -> f.toFile().lastModified() >= since - 1000)
                    .sorted(java.util.Comparator.comparingLong(f -> f.toFile().lastModified())).toList();
        }
    }

    private int measureAll(PrintStream out) throws IOException {
        byte[] bytes = model == null ? Pvn3dPipeline.tinyModelBytes() : OrtSession.readModel(model);
        List<Pvn3dSample> samples = samples();
        boolean cuda = common.cuda();
        if (!cuda) {
            requireHostMemoryFor(Arrays.stream(sessions).max().orElse(1), bytes.length);
        }
        int[] devices = devices();
        int cores = Runtime.getRuntime().availableProcessors();
        out.printf(Locale.ROOT, "pvn3d-ort pool-bench: %s, %d sample(s) from %s, %s provider%s, ONNX Runtime %s, %d cores%n",
                model == null ? "PVN3D tiny (class path)" : model, samples.size(),
                sample == null ? "class path " + Pvn3dSample.RESOURCE : sample, cuda ? "CUDA" : "CPU",
                cuda ? " on device(s) " + Arrays.toString(devices) : "", OrtRuntime.get().version(), cores);
        String head = String.format(Locale.ROOT, "%8s %7s %8s %6s %8s %9s %8s %8s %12s %12s %6s  %s", "sessions", "threads", "inflight",
                "frames", "wall s", "frames/s", "p50 ms", "p99 ms", "service p50", "service p99", "failed", "sessions of");
        out.println(head);
        List<Run> runs = new ArrayList<>();
        List<Precision> modes = modes();
        byte[] fp16 = fp16Model == null ? null : OrtSession.readModel(fp16Model);
        for (Precision mode : modes.isEmpty() ? java.util.Collections.<Precision>singletonList(null) : modes) {
            for (int s : sessions) {
                Run r = measure(mode == Precision.FP16 ? fp16 : bytes, samples, s, mode);
                runs.add(r);
                out.printf(Locale.ROOT, "%8d %7d %8d %6d %8.2f %9.2f %8.2f %8.2f %12.2f %12.2f %6d  %s%n", r.sessions(), r.threads(),
                        r.inflight(), r.frames(), r.wallS(), r.framesPerS(), r.p50(), r.p99(), r.serviceP50(), r.serviceP99(), r.failed(),
                        mode == null ? "the staged pipeline" : "one graph, " + mode.label() + (cudaGraph ? ", CUDA graph" : "")
                                + (branches ? ", branches" : ""));
                out.flush();
            }
        }
        if (json != null) {
            Map<String, Object> doc = new LinkedHashMap<>();
            doc.put("tool", "pvn3d-ort pool-bench");
            doc.put("model", model == null ? "class path " + Pvn3dPipeline.MODEL_RESOURCE : model.toString());
            doc.put("samples", samples.size());
            doc.put("ep", cuda ? "cuda" : "cpu");
            doc.put("devices", cuda ? Arrays.stream(devices).boxed().toList() : List.of());
            doc.put("warmup_runs_per_session", pipeline.warmup);
            doc.put("refinement", pipeline.refine);
            if (fp16Model != null) {
                doc.put("fp16_model", fp16Model.toString());
            }
            doc.put("ort_version", OrtRuntime.get().version());
            doc.put("java", System.getProperty("java.version"));
            doc.put("cores", cores);
            doc.put("runs", runs.stream().map(Run::json).toList());
            io.writeJson(Path.of(json), Json.write(doc), out, "json");
        }
        if (runs.stream().anyMatch(r -> r.failed() > 0)) {
            io.err().println("pvn3d-ort: " + runs.stream().mapToInt(Run::failed).sum() + " frame(s) failed; the first: "
                    + firstFailure.get());
            return Main.FAILED;
        }
        return Main.OK;
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

    /** One pool: the staged pipeline ({@code mode} null) or one-graph sessions in {@code mode}. */
    private Run measure(byte[] bytes, List<Pvn3dSample> samples, int sessionsPerDevice, Precision mode) {
        boolean cuda = common.cuda();
        int[] devices = devices();
        int sessions = sessionsPerDevice * (cuda ? devices.length : 1);
        int inFlight = inflight != null ? inflight : 2 * sessions;
        Pvn3dPool.Builder b = Pvn3dPool.builder(bytes).provider(cuda ? Pvn3dPipeline.Provider.CUDA : Pvn3dPipeline.Provider.CPU)
                .devices(devices).sessionsPerDevice(sessionsPerDevice).warmup(samples.get(0), pipeline.warmup)
                .ioBinding(!pipeline.noIoBinding).profiling(profiling.profile).refinement(pipeline.refinement());
        if (common.threads > 0) {
            b.threadsPerSession(common.threads);
        }
        if (queue != null) {
            b.queueCapacity(queue);
        }
        if (pipeline.pose != null) {
            String pose = pipeline.pose;
            b.poseSolver(d -> PoseSolver.named(pose, d));
        }
        if (mode != null) {
            FrameToPose.Config c = (cuda ? FrameToPose.Config.cuda(devices[0]) : FrameToPose.Config.cpu()).withPrecision(mode)
                    .withCudaGraph(cudaGraph).withConcurrentBranches(branches);
            b.sessionFactory(FrameToPoseSession.factory(bytes, c, samples.get(0), pipeline.refinement()));
        }
        double[] latency = new double[frames];
        double[] service = new double[frames];
        AtomicInteger failed = new AtomicInteger();
        try (Pvn3dPool pool = b.build()) {
            int threads = pool.slots().get(0).config().threads();
            Semaphore slots = new Semaphore(inFlight);
            CountDownLatch done = new CountDownLatch(frames);
            long t0 = System.nanoTime();
            for (int i = 0; i < frames; i++) {
                slots.acquireUninterruptibly();
                int frame = i;
                pool.submit(samples.get(i % samples.size())).whenComplete((r, e) -> {
                    if (r != null) {
                        latency[frame] = r.latencyMs();
                        service[frame] = r.serviceMs();
                    } else {
                        latency[frame] = Double.NaN;
                        service[frame] = Double.NaN;
                        failed.incrementAndGet();
                        firstFailure.compareAndSet(null, Errors.describe(e));
                    }
                    slots.release();
                    done.countDown();
                });
            }
            try {
                done.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new OrtException("interrupted");
            }
            double wall = (System.nanoTime() - t0) / 1e9;
            Map<String, Long> per = new LinkedHashMap<>();
            for (Pvn3dPool.SessionStats s : pool.stats().sessions()) {
                per.put(s.name(), s.frames());
            }
            // the warm-up runs are not frames the pool served: the counters hold only the timed ones
            double[] l = Arrays.stream(latency).filter(Double::isFinite).sorted().toArray();
            double[] sv = Arrays.stream(service).filter(Double::isFinite).sorted().toArray();
            int ok = frames - failed.get();
            return new Run(mode == null ? "pipeline" : mode.label(), mode != null && cudaGraph, mode != null && branches, sessionsPerDevice, sessions, threads,
                    inFlight, frames, failed.get(), wall, ok / wall, percentile(l, 0.5),
                    percentile(l, 0.99), Arrays.stream(l).average().orElse(Double.NaN), l.length == 0 ? Double.NaN : l[l.length - 1],
                    percentile(sv, 0.5), percentile(sv, 0.99), per);
        }
    }

    /** Nearest-rank percentile of sorted values (NaN when there are none). */
    static double percentile(double[] sorted, double p) {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        return sorted[Math.max(0, Math.min(sorted.length - 1, (int) Math.ceil(p * sorted.length) - 1))];
    }
}
