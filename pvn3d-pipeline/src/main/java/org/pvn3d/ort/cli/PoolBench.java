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
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.OrtRuntime;
import org.pvn3d.ort.OrtSession;
import org.pvn3d.ort.pipeline.CudaPoseSolver;
import org.pvn3d.ort.pipeline.FolderEvaluation;
import org.pvn3d.ort.pipeline.JavaPoseSolver;
import org.pvn3d.ort.pipeline.Json;
import org.pvn3d.ort.pipeline.NativePoseSolver;
import org.pvn3d.ort.pipeline.Pvn3dPipeline;
import org.pvn3d.ort.pipeline.Pvn3dSample;
import org.pvn3d.ort.pipeline.pool.Pvn3dPool;

/**
 * {@code pvn3d-ort pool-bench}: throughput and latency of a {@link Pvn3dPool} for one or more session
 * counts (e.g. 1 and 2 sessions on one GPU: does a second frame in flight help?). For each count it
 * builds the pool (every session warmed up on the first sample), then keeps {@code --inflight} frames
 * submitted at all times until {@code --frames} are done, and reports frames/s over the wall time,
 * the per-frame latency from submit to result (p50, p99) and the sessions' own time per frame.
 */
final class PoolBench {
    static final String USAGE = """
            usage: pvn3d-ort pool-bench [--ep cpu|cuda] [--devices 0,1,...] [--sessions 1,2,...] [--frames N]
                                        [--warmup N] [--inflight N] [--threads N] [--queue N] [--no-io-binding]
                                        [--model FILE.onnx --sample FILE.bin|DIR] [--pose native|cuda|java]
                                        [--json FILE|-] [--jfr FILE] [--profile DIR] [--nvtx] [--device-timing]
              --ep            execution provider (default cpu)
              --devices       CUDA devices the pool spreads over (default 0)
              --sessions      sessions per device, one measurement per value (default 1,2)
              --frames        timed frames per measurement (default 100)
              --warmup        untimed runs of the first sample on each session when it opens (default 2)
              --inflight      frames submitted and not yet done at any time (default 2 x the sessions)
              --threads       ORT intra-op threads per session (default: the cores shared out)
              --queue         the pool's queue capacity (default 2 x the sessions)
              --model/--sample  another model and its sample(s): a PVT1 file, or a folder of them that
                              the frames cycle through (default: the tiny model and its shipped sample)
              --pose          the pose stage (default: the fused kernel on the provider's side)
              --json F        the figures as JSON to F ('-': standard output)
              --jfr F         a JDK Flight Recorder recording of the whole benchmark to F (the project's events too)
              --profile DIR   ONNX Runtime's profiler for every session into DIR; each session's profile is
                              summarised after the benchmark (table, .summary.json, .summary.png)
              --nvtx          NVTX ranges around runs and pipeline stages (Nsight Systems / Compute)
              --device-timing CUDA events around the custom operators' launches; device time per operator""";

    private PoolBench() {}

    /** One measurement: a pool of {@code sessions} per device, {@code frames} frames. */
    record Run(int sessionsPerDevice, int sessions, int threads, int inflight, int frames, int failed, double wallS,
            double framesPerS, double p50, double p99, double mean, double max, double serviceP50, double serviceP99,
            Map<String, Long> perSession) {
        Map<String, Object> json() {
            Map<String, Object> m = new LinkedHashMap<>();
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

    static int run(String[] args, PrintStream out, PrintStream err) {
        Options o;
        try {
            o = Options.parse(args);
        } catch (IllegalArgumentException e) {
            err.println("pvn3d-ort pool-bench: " + e.getMessage());
            err.println(USAGE);
            return 2;
        }
        if (o.help) {
            out.println(USAGE);
            return 0;
        }
        ProfilingOptions profiling = new ProfilingOptions();
        profiling.jfr = o.jfr;
        profiling.profile = o.profile;
        profiling.nvtx = o.nvtx;
        profiling.deviceTiming = o.deviceTiming;
        if (o.jfr != null && !org.pvn3d.ort.jfr.OrtEvents.isAvailable()) {
            err.println("pvn3d-ort pool-bench: --jfr needs the jdk.jfr module, which this Java runtime does not have");
            return 2;
        }
        long started = System.currentTimeMillis();
        try (AutoCloseable session = profiling.start(new Io(out, err, false))) {
            int code = measureAll(o, out);
            if (o.profile != null) {
                for (Path file : profiles(o.profile, started)) {
                    ProfilingOptions.report(file, out);
                }
            }
            return code;
        } catch (OrtException | IOException e) {
            err.println("pvn3d-ort pool-bench: " + e.getMessage());
            return 1;
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            err.println("pvn3d-ort pool-bench: " + Errors.describe(e));
            return 1;
        }
    }

    /** The ORT profiles the sessions wrote into {@code dir} since {@code since} (ms), oldest first. */
    static List<Path> profiles(Path dir, long since) throws IOException {
        try (var files = Files.list(dir)) {
            return files.filter(f -> f.getFileName().toString().matches("pvn3d_.*\\.json") && !f.toString().endsWith(".summary.json"))
                    .filter(f -> f.toFile().lastModified() >= since - 1000)
                    .sorted(java.util.Comparator.comparingLong(f -> f.toFile().lastModified())).toList();
        }
    }

    private static int measureAll(Options o, PrintStream out) throws IOException {
        byte[] model = o.model == null ? tinyModel() : OrtSession.readModel(o.model);
        List<Pvn3dSample> samples = samples(o);
        int cores = Runtime.getRuntime().availableProcessors();
        out.printf(Locale.ROOT, "pvn3d-ort pool-bench: %s, %d sample(s) from %s, %s provider%s, ONNX Runtime %s, %d cores%n",
                o.model == null ? "PVN3D tiny (class path)" : o.model, samples.size(),
                o.sample == null ? "class path " + Pvn3dSample.RESOURCE : o.sample, o.cuda ? "CUDA" : "CPU",
                o.cuda ? " on device(s) " + Arrays.toString(o.devices) : "", OrtRuntime.get().version(), cores);
        String head = String.format(Locale.ROOT, "%8s %7s %8s %6s %8s %9s %8s %8s %12s %12s %6s", "sessions", "threads", "inflight",
                "frames", "wall s", "frames/s", "p50 ms", "p99 ms", "service p50", "service p99", "failed");
        out.println(head);
        List<Run> runs = new ArrayList<>();
        for (int s : o.sessions) {
            Run r = measure(o, model, samples, s);
            runs.add(r);
            out.printf(Locale.ROOT, "%8d %7d %8d %6d %8.2f %9.2f %8.2f %8.2f %12.2f %12.2f %6d%n", r.sessions(), r.threads(), r.inflight(),
                    r.frames(), r.wallS(), r.framesPerS(), r.p50(), r.p99(), r.serviceP50(), r.serviceP99(), r.failed());
        }
        if (o.json != null) {
            Map<String, Object> doc = new LinkedHashMap<>();
            doc.put("tool", "pvn3d-ort pool-bench");
            doc.put("model", o.model == null ? "class path " + Pvn3dPipeline.MODEL_RESOURCE : o.model.toString());
            doc.put("samples", samples.size());
            doc.put("ep", o.cuda ? "cuda" : "cpu");
            doc.put("devices", o.cuda ? Arrays.stream(o.devices).boxed().toList() : List.of());
            doc.put("warmup_runs_per_session", o.warmup);
            doc.put("ort_version", OrtRuntime.get().version());
            doc.put("java", System.getProperty("java.version"));
            doc.put("cores", cores);
            doc.put("runs", runs.stream().map(Run::json).toList());
            String json = Json.write(doc);
            if (o.json.equals("-")) {
                out.print(json);
            } else {
                Files.writeString(Path.of(o.json), json);
                out.println("json: " + o.json);
            }
        }
        return runs.stream().anyMatch(r -> r.failed() > 0) ? 1 : 0;
    }

    private static List<Pvn3dSample> samples(Options o) {
        if (o.sample == null) {
            return List.of(Pvn3dSample.resource(Pvn3dSample.RESOURCE));
        }
        if (Files.isDirectory(o.sample)) {
            List<Pvn3dSample> s = FolderEvaluation.samples(o.sample).stream().map(Pvn3dSample::read).toList();
            if (s.isEmpty()) {
                throw new OrtException("no *.bin samples in " + o.sample);
            }
            return s;
        }
        return List.of(Pvn3dSample.read(o.sample));
    }

    static Run measure(Options o, byte[] model, List<Pvn3dSample> samples, int sessionsPerDevice) {
        int sessions = sessionsPerDevice * (o.cuda ? o.devices.length : 1);
        int inflight = o.inflight > 0 ? o.inflight : 2 * sessions;
        Pvn3dPool.Builder b = Pvn3dPool.builder(model).provider(o.cuda ? Pvn3dPipeline.Provider.CUDA : Pvn3dPipeline.Provider.CPU)
                .devices(o.devices).sessionsPerDevice(sessionsPerDevice).warmup(samples.get(0), o.warmup).ioBinding(!o.noIoBinding)
                .profiling(o.profile);
        if (o.threads > 0) {
            b.threadsPerSession(o.threads);
        }
        if (o.queue > 0) {
            b.queueCapacity(o.queue);
        }
        if (o.pose != null) {
            b.poseSolver(switch (o.pose) {
                case "java" -> d -> new JavaPoseSolver();
                case "cuda" -> CudaPoseSolver::new;
                default -> d -> new NativePoseSolver();
            });
        }
        double[] latency = new double[o.frames];
        double[] service = new double[o.frames];
        AtomicInteger failed = new AtomicInteger();
        try (Pvn3dPool pool = b.build()) {
            int threads = pool.slots().get(0).config().threads();
            Semaphore slots = new Semaphore(inflight);
            CountDownLatch done = new CountDownLatch(o.frames);
            long t0 = System.nanoTime();
            for (int i = 0; i < o.frames; i++) {
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
            int ok = o.frames - failed.get();
            return new Run(sessionsPerDevice, sessions, threads, inflight, o.frames, failed.get(), wall, ok / wall, percentile(l, 0.5),
                    percentile(l, 0.99), Arrays.stream(l).average().orElse(Double.NaN), l.length == 0 ? Double.NaN : l[l.length - 1],
                    percentile(sv, 0.5), percentile(sv, 0.99), per);
        }
    }

    private static byte[] tinyModel() {
        try (var in = Pvn3dPipeline.class.getResourceAsStream(Pvn3dPipeline.MODEL_RESOURCE)) {
            if (in == null) {
                throw new OrtException("missing class-path resource " + Pvn3dPipeline.MODEL_RESOURCE);
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new OrtException("cannot read " + Pvn3dPipeline.MODEL_RESOURCE + ": " + e);
        }
    }

    /** Nearest-rank percentile of sorted values (NaN when there are none). */
    static double percentile(double[] sorted, double p) {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        return sorted[Math.max(0, Math.min(sorted.length - 1, (int) Math.ceil(p * sorted.length) - 1))];
    }

    static final class Options {
        boolean help;
        boolean cuda;
        int[] devices = {0};
        int[] sessions = {1, 2};
        int frames = 100;
        int warmup = 2;
        int inflight;
        int threads;
        int queue;
        boolean noIoBinding;
        String pose;
        String json;
        Path model;
        Path sample;
        Path jfr;
        Path profile;
        boolean nvtx;
        boolean deviceTiming;

        static Options parse(String[] args) {
            Options o = new Options();
            for (int i = 0; i < args.length; i++) {
                String a = args[i];
                switch (a) {
                    case "-h", "--help" -> o.help = true;
                    case "--ep" -> {
                        String ep = value(args, ++i, a).toLowerCase(Locale.ROOT);
                        if (!ep.equals("cpu") && !ep.equals("cuda")) {
                            throw new IllegalArgumentException("--ep takes cpu or cuda, not " + ep);
                        }
                        o.cuda = ep.equals("cuda");
                    }
                    case "--devices" -> o.devices = list(value(args, ++i, a), a, true);
                    case "--sessions" -> o.sessions = list(value(args, ++i, a), a, false);
                    case "--frames" -> o.frames = number(value(args, ++i, a), a, false);
                    case "--warmup" -> o.warmup = number(value(args, ++i, a), a, true);
                    case "--inflight" -> o.inflight = number(value(args, ++i, a), a, false);
                    case "--threads" -> o.threads = number(value(args, ++i, a), a, false);
                    case "--queue" -> o.queue = number(value(args, ++i, a), a, false);
                    case "--no-io-binding" -> o.noIoBinding = true;
                    case "--model" -> o.model = Path.of(value(args, ++i, a));
                    case "--sample" -> o.sample = Path.of(value(args, ++i, a));
                    case "--json" -> o.json = value(args, ++i, a);
                    case "--jfr" -> o.jfr = Path.of(value(args, ++i, a));
                    case "--profile" -> o.profile = Path.of(value(args, ++i, a));
                    case "--nvtx" -> o.nvtx = true;
                    case "--device-timing" -> o.deviceTiming = true;
                    case "--pose" -> {
                        o.pose = value(args, ++i, a);
                        if (!List.of("native", "cuda", "java").contains(o.pose)) {
                            throw new IllegalArgumentException("--pose takes native, cuda or java, not " + o.pose);
                        }
                    }
                    default -> throw new IllegalArgumentException("unknown argument " + a);
                }
            }
            if (o.model != null && o.sample == null) {
                throw new IllegalArgumentException("--model needs --sample (the shipped sample belongs to the tiny model)");
            }
            if (o.model != null && !Files.isRegularFile(o.model)) {
                throw new IllegalArgumentException("no model file " + o.model);
            }
            if (o.sample != null && !Files.exists(o.sample)) {
                throw new IllegalArgumentException("no sample file or folder " + o.sample);
            }
            if (o.profile != null && Files.exists(o.profile) && !Files.isDirectory(o.profile)) {
                throw new IllegalArgumentException("--profile takes a folder; " + o.profile + " is a file");
            }
            if (Arrays.stream(o.devices).distinct().count() != o.devices.length) {
                throw new IllegalArgumentException("--devices lists a device twice: " + Arrays.toString(o.devices));
            }
            return o;
        }

        private static String value(String[] args, int i, String flag) {
            if (i >= args.length) {
                throw new IllegalArgumentException(flag + " needs a value");
            }
            return args[i];
        }

        private static int number(String s, String flag, boolean zeroAllowed) {
            try {
                int v = Integer.parseInt(s.trim());
                if (v < 0 || (v == 0 && !zeroAllowed)) {
                    throw new NumberFormatException();
                }
                return v;
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(flag + " takes a " + (zeroAllowed ? "non-negative" : "positive") + " integer, not " + s);
            }
        }

        private static int[] list(String s, String flag, boolean zeroAllowed) {
            return Arrays.stream(s.split(",")).mapToInt(v -> number(v, flag, zeroAllowed)).toArray();
        }
    }
}
