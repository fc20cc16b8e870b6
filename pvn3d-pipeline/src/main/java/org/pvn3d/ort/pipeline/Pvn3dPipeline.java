package org.pvn3d.ort.pipeline;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.pvn3d.ort.DeviceTensor;
import org.pvn3d.ort.OnnxTensor;
import org.pvn3d.ort.OnnxTensorLike;
import org.pvn3d.ort.OnnxTensorType;
import org.pvn3d.ort.OnnxValue;
import org.pvn3d.ort.OrtEnvironment;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.OrtIoBinding;
import org.pvn3d.ort.OrtMemoryInfo;
import org.pvn3d.ort.OrtSession;
import org.pvn3d.ort.SessionOptions;
import org.pvn3d.ort.cuda.CudaCopy;
import org.pvn3d.ort.cuda.DeviceBuffer;
import org.pvn3d.ort.customop.CustomOpDomain;
import org.pvn3d.ort.io.PvtFile;
import org.pvn3d.ort.ops.Pvn3dOps;
import org.pvn3d.ort.profile.ProfileSummary;
import org.pvn3d.ort.providers.OrtCUDAProviderOptions;

/**
 * PVN3D end to end on ONNX Runtime: the network (with the PointNet++ custom operators) on the CPU or
 * CUDA provider, then votes ({@code point - offset}), the object mask ({@code argmax == objectClass}),
 * the pose stage ({@link PoseSolver}: clustering and the keypoint fit), the refinement stage
 * ({@link IcpRefiner}: ICP of the model points against the masked points, on the host for every provider, when
 * the sample has model points and {@link Config#refinement()} is set) and, when the sample has a ground
 * truth, ADD / ADD-S.
 *
 * <p>On CUDA the network runs device-resident by default: the inputs live in GPU buffers bound with an
 * {@link OrtIoBinding} together with outputs that ORT allocates on the GPU, so the run itself reads
 * and writes only device memory; each run's inputs are copied in first ("upload") and its outputs
 * out afterwards ("download", for the pose stage), each timed on its own.
 * {@link Config#withIoBinding(boolean) withIoBinding(false)} runs host tensors through a plain
 * {@code session.run} instead (ORT then copies in and out on every run), which is the CPU provider's
 * only path.
 *
 * <p>The inference stage is timed on its own: warm-up runs first (untimed; the first CUDA run
 * includes cuDNN's algorithm search), then {@link Config#repeat()} timed runs whose median is the
 * stage's time ({@link Latency} keeps their spread).
 */
public final class Pvn3dPipeline implements AutoCloseable {
    /**
     * The class-path resource of the shipped PVN3D model: the tiny network trained on synthetic scenes of the
     * Stanford bunny (exporter/train_pvn3d.py, exported by exporter/export_pvn3d.py; MODEL.md).
     */
    public static final String MODEL_RESOURCE = "/pvn3d/pvn3d_tiny.onnx";
    /** The class-path resource of the PyTorch outputs and pose for {@link Pvn3dSample#RESOURCE}. */
    public static final String EXPECTED_RESOURCE = "/pvn3d/pvn3d_tiny_expected.bin";

    /** Where the network runs. */
    public enum Provider {
        CPU, CUDA;

        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * Settings: the provider and CUDA device, ORT's intra-op threads (0 = ORT's choice), the pose stage,
     * the class index of the object in {@code pred_rgbd_seg}, untimed warm-up runs before the timed
     * inference, where ORT's profiler writes (null: off), and the refinement of the voting pose (null:
     * none; the constructors without it and {@link #cpu()} take {@link IcpRefinement#DEFAULT}).
     */
    public record Config(Provider provider, int device, int threads, PoseSolver poseSolver, int objectClass, int warmup,
            int repeat, boolean ioBinding, Path profileDir, IcpRefinement refinement) {
        public Config {
            if (warmup < 0 || repeat < 1 || threads < 0 || device < 0 || objectClass < 0) {
                throw new IllegalArgumentException("warmup >= 0, repeat >= 1, threads >= 0, device >= 0 and objectClass >= 0, not "
                        + warmup + ", " + repeat + ", " + threads + ", " + device + ", " + objectClass);
            }
        }

        /** With the default ICP refinement. */
        public Config(Provider provider, int device, int threads, PoseSolver poseSolver, int objectClass, int warmup, int repeat,
                boolean ioBinding, Path profileDir) {
            this(provider, device, threads, poseSolver, objectClass, warmup, repeat, ioBinding, profileDir, IcpRefinement.DEFAULT);
        }

        /** Without ORT profiling, with the default ICP refinement. */
        public Config(Provider provider, int device, int threads, PoseSolver poseSolver, int objectClass, int warmup, int repeat,
                boolean ioBinding) {
            this(provider, device, threads, poseSolver, objectClass, warmup, repeat, ioBinding, null);
        }

        /** CPU provider, ORT's thread count, the Java pose stage, class 1, no warm-up, one timed run, ICP refinement. */
        public static Config cpu() {
            return new Config(Provider.CPU, 0, 0, new JavaPoseSolver(), 1, 0, 1, true, null, IcpRefinement.DEFAULT);
        }

        public Config withProvider(Provider p, int dev) {
            return new Config(p, dev, threads, poseSolver, objectClass, warmup, repeat, ioBinding, profileDir, refinement);
        }

        public Config withThreads(int t) {
            return new Config(provider, device, t, poseSolver, objectClass, warmup, repeat, ioBinding, profileDir, refinement);
        }

        /** Untimed runs before the timed ones (of the network, and in {@link #measure} of the stages after it too). */
        public Config withWarmup(int w) {
            return new Config(provider, device, threads, poseSolver, objectClass, w, repeat, ioBinding, profileDir, refinement);
        }

        /**
         * Timed runs (of the network, and in {@link #measure} of the stages after it too); each stage reports their
         * median (the outputs are the last run's).
         */
        public Config withRepeat(int r) {
            return new Config(provider, device, threads, poseSolver, objectClass, warmup, r, ioBinding, profileDir, refinement);
        }

        /** On CUDA: device-resident inputs and outputs through IO binding (true, the default) or host tensors through plain run. */
        public Config withIoBinding(boolean b) {
            return new Config(provider, device, threads, poseSolver, objectClass, warmup, repeat, b, profileDir, refinement);
        }

        public Config withPoseSolver(PoseSolver s) {
            return new Config(provider, device, threads, s, objectClass, warmup, repeat, ioBinding, profileDir, refinement);
        }

        /**
         * ORT's profiler on, writing {@code dir/pvn3d_<n>_<date and time>.json} (n counts the profiled
         * pipelines of the process; the folder is made if missing;
         * null: off). The profile covers the session's every run, warm-ups included; {@link
         * Pvn3dPipeline#endProfiling()} ends it and {@link Pvn3dPipeline#profileSummary()} summarises it.
         */
        public Config withProfiling(Path dir) {
            return new Config(provider, device, threads, poseSolver, objectClass, warmup, repeat, ioBinding, dir, refinement);
        }

        /**
         * The refinement of the voting pose: ICP with these settings ({@link IcpRefinement#DEFAULT} by default),
         * or null for none (the final pose is the voting pose).
         */
        public Config withRefinement(IcpRefinement r) {
            return new Config(provider, device, threads, poseSolver, objectClass, warmup, repeat, ioBinding, profileDir, r);
        }

        /** What {@link #refinement()} means in reports: {@code none} or {@code icp (...)}. */
        public String refinementName() {
            return refinement == null ? "none" : refinement.describe();
        }

        /** Whether runs are device-resident (CUDA with IO binding). */
        public boolean deviceResident() {
            return provider == Provider.CUDA && ioBinding;
        }
    }

    /** Milliseconds of the timed inference runs: their count, median, fastest, 90th percentile and slowest. */
    public record Latency(int runs, double median, double min, double p90, double max) {
        static Latency of(double[] ms) {
            double[] s = ms.clone();
            java.util.Arrays.sort(s);
            int n = s.length;
            double median = n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
            return new Latency(n, median, s[0], s[Math.min(n - 1, (int) Math.ceil(0.9 * n) - 1)], s[n - 1]);
        }
    }

    /**
     * Wall-clock milliseconds of each stage. {@code upload} and {@code download} are the median copies
     * in and out of a device-resident run (zero otherwise); {@code inference} is the median network run
     * ({@code latency} has the spread); the stages after it ran once ({@link #run}) or are medians over
     * as many timed runs ({@link #measure}); {@code refinement} is the ICP stage (about zero when it did
     * not run).
     */
    public record Timings(double load, double upload, double inference, double download, double voting, double clustering,
            double fit, double refinement, double metrics, Latency latency) {
        /** Every stage once: load, upload, one inference (the median), download and the pose stages. */
        public double total() {
            return load + upload + inference + download + voting + clustering + fit + refinement + metrics;
        }
    }

    /** The network's outputs on the host and how long getting them took. */
    public record Inference(Map<String, Output> outputs, double uploadMs, Latency latency, double downloadMs) {
    }

    /** One model output copied to the host: floats or int64 values with its shape. */
    public record Output(String name, OnnxTensorType type, long[] shape, float[] floats, long[] longs) {
        public boolean isFloat() {
            return floats != null;
        }
    }

    /**
     * Everything one run produced. {@code pose} is the final pose with the keypoints and inliers it came
     * from: the pose solver's solution with its pose replaced by the refined one when refinement ran, the
     * same as {@code voting} otherwise. {@code voting} is the pose solver's solution as it came (keypoint
     * voting and the Kabsch fit: what the parity against PyTorch compares); {@code refinement} says how the
     * refinement went ({@link IcpRefiner.Status#DISABLED} when off). {@code metrics} are the final pose's
     * ADD / ADD-S and {@code votingMetrics} the voting pose's (the same object when refinement did not run);
     * both null when the sample has no ground truth.
     */
    public record Result(Map<String, Output> outputs, Votes votes, PoseSolver.Solution pose, PoseSolver.Solution voting,
            IcpRefiner.Result refinement, PoseMetrics.Result metrics, PoseMetrics.Result votingMetrics, Timings timings) {
        public Output output(String name) {
            Output o = outputs.get(name);
            if (o == null) {
                throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "the model has no output '" + name + "' (it has " + outputs.keySet() + ")");
            }
            return o;
        }
    }

    private static final java.util.concurrent.atomic.AtomicInteger PROFILES = new java.util.concurrent.atomic.AtomicInteger();

    private final Config config;
    private final SessionOptions options;
    private final CustomOpDomain domain;
    private final OrtSession session;
    private final double loadMs;
    private Path profile;

    /** Creates the session for {@code model} (ONNX bytes); the time it takes is the "load" stage. */
    public Pvn3dPipeline(byte[] model, Config config) {
        this.config = config;
        Object stage = Stages.begin("load");
        long t0 = System.nanoTime();
        SessionOptions opts = new SessionOptions();
        CustomOpDomain dom = null;
        try {
            if (config.threads() > 0) {
                opts.setIntraOpNumThreads(config.threads());
            }
            if (config.profileDir() != null) {
                // one name per pipeline: ORT stamps the file to the second, and a pool opens several at once
                opts.enableProfiling(config.profileDir(), "pvn3d_" + PROFILES.incrementAndGet());
            }
            dom = Pvn3dOps.register(opts);
            if (config.provider() == Provider.CUDA) {
                // full fp32 (no TF32): the pipeline is also how parity with PyTorch is measured
                opts.addExecutionProvider(new OrtCUDAProviderOptions(config.device()).setUseTf32(false));
            } else {
                // ORT's spinning threads would take the cores from the PVN3D nodes' OpenMP kernels (Pvn3dOps)
                Pvn3dOps.letIntraOpThreadsSleep(opts);
            }
            this.session = OrtEnvironment.getEnvironment().createSession(model, opts);
        } catch (RuntimeException e) {
            if (dom != null) {
                dom.close();
            }
            opts.close();
            throw e;
        }
        this.options = opts;
        this.domain = dom;
        this.loadMs = (System.nanoTime() - t0) / 1e6;
        Stages.end(stage, "load", config, 0);
    }

    /** The options the session was made with (for tests: what the pipeline chose). */
    SessionOptions sessionOptions() {
        return options;
    }

    /** The tiny PVN3D model from the class path. */
    public static Pvn3dPipeline tiny(Config config) {
        return new Pvn3dPipeline(tinyModelBytes(), config);
    }

    /** The bytes of the tiny PVN3D model ({@link #MODEL_RESOURCE}). */
    public static byte[] tinyModelBytes() {
        return resourceBytes(MODEL_RESOURCE);
    }

    public Config config() {
        return config;
    }

    /** Milliseconds the session took to create (model load, custom-op registration, provider setup). */
    public double loadMs() {
        return loadMs;
    }

    public OrtSession session() {
        return session;
    }

    /**
     * Runs the network on the sample's inputs (untimed warm-up runs first, then {@link Config#repeat()}
     * timed runs) and copies every output of the last run to the host.
     */
    public Inference infer(Pvn3dSample sample) {
        sample.checkInputs();
        return config.deviceResident() ? inferOnDevice(sample) : inferOnHost(sample);
    }

    private Inference inferOnHost(Pvn3dSample sample) {
        List<OnnxTensor> tensors = new ArrayList<>();
        try {
            Map<String, OnnxTensor> feeds = new LinkedHashMap<>();
            for (String name : session.getInputNames()) {
                OnnxTensor t = sample.entry(name).toTensor();
                tensors.add(t);
                feeds.put(name, t);
            }
            for (int i = 0; i < config.warmup(); i++) {
                Object stage = Stages.begin("inference");
                session.run(feeds).close();
                Stages.end(stage, "inference", config, i - config.warmup());
            }
            double[] ms = new double[config.repeat()];
            for (int i = 0; ; i++) {
                Object stage = Stages.begin("inference");
                long t0 = System.nanoTime();
                org.pvn3d.ort.Result r = session.run(feeds);
                ms[i] = (System.nanoTime() - t0) / 1e6;
                Stages.end(stage, "inference", config, i);
                try (r) {
                    if (i == ms.length - 1) {
                        return new Inference(toHost(r), 0, Latency.of(ms), 0);
                    }
                }
            }
        } finally {
            tensors.forEach(OnnxTensor::close);
        }
    }

    /**
     * The CUDA path, as a GPU service would serve one request after another: device buffers for the
     * inputs and an IO binding set up once (untimed), then per run the inputs copied in ("upload"), the
     * network on device memory only (every output bound to the GPU, where ORT allocates it), and the
     * outputs copied back ("download"). Each of the three is timed on every timed run; the stages report
     * their medians, and the outputs are the last run's.
     */
    private Inference inferOnDevice(Pvn3dSample sample) {
        List<AutoCloseable> owned = new ArrayList<>();
        Inference result;
        try (OrtIoBinding binding = session.createIoBinding(); OrtMemoryInfo gpu = OrtMemoryInfo.cuda(config.device())) {
            List<String> names = session.getInputNames();
            List<DeviceBuffer> buffers = new ArrayList<>();
            List<MemorySegment> hostData = new ArrayList<>();
            for (String name : names) {
                PvtFile.Entry e = sample.entry(name);
                DeviceBuffer buffer = DeviceBuffer.allocate(config.device(), Math.max(1, e.data().length));
                owned.add(buffer);
                buffers.add(buffer);
                hostData.add(MemorySegment.ofArray(e.data()));
                DeviceTensor t = DeviceTensor.createTensor(buffer, e.type(), e.shape());
                owned.add(t);
                binding.bindInput(name, t);
            }
            for (String name : session.getOutputNames()) {
                binding.bindOutput(name, gpu);
            }
            int runs = config.repeat();
            double[] upload = new double[runs];
            double[] network = new double[runs];
            double[] download = new double[runs];
            Map<String, Output> out = null;
            for (int i = -config.warmup(); i < runs; i++) {
                Object stage = Stages.begin("upload");
                long t0 = System.nanoTime();
                for (int j = 0; j < buffers.size(); j++) {
                    buffers.get(j).copyFromHost(hostData.get(j));
                }
                long t1 = System.nanoTime();
                Stages.end(stage, "upload", config, i);
                stage = Stages.begin("inference");
                // run returns once the CUDA provider has synchronised its stream: the outputs are complete
                session.run(binding);
                long t2 = System.nanoTime();
                Stages.end(stage, "inference", config, i);
                stage = Stages.begin("download");
                try (org.pvn3d.ort.Result r = binding.getOutputs()) {
                    out = toHost(r);
                }
                long t3 = System.nanoTime();
                Stages.end(stage, "download", config, i);
                if (i >= 0) {
                    upload[i] = (t1 - t0) / 1e6;
                    network[i] = (t2 - t1) / 1e6;
                    download[i] = (t3 - t2) / 1e6;
                }
            }
            result = new Inference(out, Latency.of(upload).median(), Latency.of(network), Latency.of(download).median());
        } catch (RuntimeException | Error e) {
            closeAll(owned, e);
            throw e;
        }
        closeAll(owned, null);
        return result;
    }

    /** Every tensor output as host arrays (device tensors are copied first). */
    private static Map<String, Output> toHost(org.pvn3d.ort.Result r) {
        Map<String, Output> out = new LinkedHashMap<>();
        for (Map.Entry<String, OnnxValue> e : r) {
            if (e.getValue() instanceof OnnxTensorLike tensor) {
                try (OnnxTensor t = tensor instanceof DeviceTensor device ? CudaCopy.toHost(device) : null) {
                    OnnxTensor h = t != null ? t : (OnnxTensor) tensor;
                    out.put(e.getKey(), switch (h.getType()) {
                        case FLOAT -> new Output(e.getKey(), h.getType(), h.getShape(), h.getFloatArray(), null);
                        case INT64 -> new Output(e.getKey(), h.getType(), h.getShape(), null, h.getLongArray());
                        default -> throw new OrtException(OrtErrorCode.ORT_NOT_IMPLEMENTED, "output " + e.getKey() + " has type " + h.getType());
                    });
                }
            }
        }
        return out;
    }

    /**
     * The whole pipeline on one sample: the network as the config says ({@code warmup} untimed runs, then
     * {@code repeat} timed, the outputs of the last), then the stages after it (voting, pose, refinement,
     * metrics) once. For a service, or an evaluation over many samples; {@link #measure} times the stages
     * after the network as the network is timed.
     */
    public Result run(Pvn3dSample sample) {
        return runStages(sample, 0, 1);
    }

    /**
     * The whole pipeline on one sample as a benchmark: the stages after the network run as often as the
     * network does, {@code warmup} untimed times and then {@code repeat} timed, so that each stage's time
     * is a median of warm runs like the network's (a first run of a stage also pays the JIT and first-touch
     * costs); the results are the last run's, the same every run.
     */
    public Result measure(Pvn3dSample sample) {
        return runStages(sample, config.warmup(), config.repeat());
    }

    private Result runStages(Pvn3dSample sample, int warmup, int runs) {
        Inference inference = infer(sample);
        Map<String, Output> outputs = inference.outputs();
        double[][] ms = new double[5][runs];  // voting, clustering, fit, refinement, metrics
        PoseStages last = null;
        for (int i = -warmup; i < runs; i++) {
            last = poseStages(sample, outputs, i);
            if (i >= 0) {
                ms[0][i] = last.votingMs();
                ms[1][i] = last.pose().clusteringMs();
                ms[2][i] = last.pose().fitMs();
                ms[3][i] = last.refinementMs();
                ms[4][i] = last.metricsMs();
            }
        }
        Latency latency = inference.latency();
        return new Result(outputs, last.votes(), last.refined(), last.pose(), last.refinement(), last.metrics(), last.votingMetrics(),
                new Timings(loadMs, inference.uploadMs(), latency.median(), inference.downloadMs(), Latency.of(ms[0]).median(),
                        Latency.of(ms[1]).median(), Latency.of(ms[2]).median(), Latency.of(ms[3]).median(), Latency.of(ms[4]).median(),
                        latency));
    }

    /** What the stages after the network produced in one run, and how long voting, refinement and metrics took. */
    private record PoseStages(Votes votes, PoseSolver.Solution pose, PoseSolver.Solution refined, IcpRefiner.Result refinement,
            PoseMetrics.Result metrics, PoseMetrics.Result votingMetrics, double votingMs, double refinementMs, double metricsMs) {
    }

    /** Voting, the pose solver, refinement and metrics once; {@code run} is the index {@link Stages} records (< 0: warm-up). */
    private PoseStages poseStages(Pvn3dSample sample, Map<String, Output> outputs, int run) {
        Object stage = Stages.begin("voting");
        long t1 = System.nanoTime();
        Output seg = output(outputs, "pred_rgbd_seg");
        Votes votes = Votes.fromPredictions(sample.cloud(), sample.cloudChannels(), output(outputs, "pred_kp_of").floats(),
                output(outputs, "pred_ctr_of").floats(), seg.floats(), (int) seg.shape()[seg.shape().length - 1], config.objectClass());
        long t2 = System.nanoTime();
        Stages.end(stage, "voting", config, run);
        stage = Stages.begin("pose");
        PoseSolver.Solution pose = config.poseSolver().solve(votes, sample.modelKps());
        long t3 = System.nanoTime();
        Stages.end(stage, "pose", config, run);
        stage = Stages.begin("refinement");
        IcpRefiner.Result refinement = refine(sample, votes, pose.pose());
        PoseSolver.Solution refined = refinement.refined()
                ? new PoseSolver.Solution(pose.kps(), pose.inliers(), refinement.pose(), pose.clusteringMs(), pose.fitMs())
                : pose;
        long t4 = System.nanoTime();
        Stages.end(stage, "refinement", config, run);
        stage = Stages.begin("metrics");
        PoseMetrics.Result metrics = null;
        PoseMetrics.Result votingMetrics = null;
        if (sample.hasGroundTruth()) {
            float[] points = sample.modelPoints();
            metrics = PoseMetrics.evaluate(refined.pose(), sample.groundTruth(), points, sample.diameter());
            votingMetrics = refinement.refined() ? PoseMetrics.evaluate(pose.pose(), sample.groundTruth(), points, sample.diameter())
                    : metrics;
        }
        long t5 = System.nanoTime();
        Stages.end(stage, "metrics", config, run);
        return new PoseStages(votes, pose, refined, refinement, metrics, votingMetrics, (t2 - t1) / 1e6, (t4 - t3) / 1e6,
                (t5 - t4) / 1e6);
    }

    /**
     * The refinement stage on the host, whatever the provider (the segmentation comes back with every
     * output): ICP of the sample's model points against the cloud points the mask keeps, the trim distance
     * a fraction of {@code model_diameter} (computed from the points where the sample has none).
     */
    private IcpRefiner.Result refine(Pvn3dSample sample, Votes votes, Pose initial) {
        IcpRefinement settings = config.refinement();
        if (settings == null) {
            return IcpRefiner.Result.notRun(initial, IcpRefiner.Status.DISABLED);
        }
        return new IcpRefiner(settings).refine(initial, sample, votes.mask());
    }

    private static Output output(Map<String, Output> outputs, String name) {
        Output o = outputs.get(name);
        if (o == null || !o.isFloat()) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "the model has no float output '" + name + "' (it has " + outputs.keySet() + ")");
        }
        return o;
    }

    /** The PyTorch reference for the shipped sample. */
    public static Map<String, PvtFile.Entry> tinyExpected() {
        return Pvn3dSample.readResource(EXPECTED_RESOURCE);
    }

    /**
     * The bytes of one of this module's class-path resources, e.g. {@link #MODEL_RESOURCE}; an
     * {@link OrtErrorCode#ORT_NO_SUCHFILE} error when it is missing or cannot be read.
     */
    public static byte[] resourceBytes(String name) {
        try (java.io.InputStream in = Pvn3dPipeline.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new OrtException(OrtErrorCode.ORT_NO_SUCHFILE, "missing class-path resource " + name);
            }
            return in.readAllBytes();
        } catch (java.io.IOException e) {
            throw new OrtException(OrtErrorCode.ORT_NO_SUCHFILE, "cannot read " + name + ": " + e, e);
        }
    }

    /**
     * Closes every buffer, tensor and binding of a device-resident run, newest first, even when one fails.
     * With a run that already failed ({@code primary}), close failures are added to it as suppressed;
     * otherwise the first is thrown (with the later ones suppressed) once all are closed.
     */
    private static void closeAll(List<? extends AutoCloseable> owned, Throwable primary) {
        RuntimeException failure = null;
        for (int i = owned.size() - 1; i >= 0; i--) {
            try {
                owned.get(i).close();
            } catch (Exception e) {
                if (primary != null) {
                    primary.addSuppressed(e);
                } else if (failure == null) {
                    failure = e instanceof RuntimeException r ? r : new IllegalStateException("closing " + owned.get(i), e);
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    /**
     * Ends ORT's profiling (with {@link Config#withProfiling}) and returns the profile file; null when
     * profiling is off. Later calls return the same file; runs after the first call are not profiled.
     */
    public synchronized Path endProfiling() {
        if (config.profileDir() == null) {
            return null;
        }
        if (profile == null) {
            profile = Path.of(session.endProfiling());
        }
        return profile;
    }

    /**
     * The summary of this pipeline's ORT profile ({@link #endProfiling()} first), with the custom
     * operators' device times when they were measured ({@code Pvn3dOps.deviceTiming}); null when profiling
     * is off.
     */
    public ProfileSummary profileSummary() {
        Path file = endProfiling();
        return file == null ? null : ProfileSummary.read(file).withDeviceTimes(Pvn3dOps.deviceTimes());
    }

    @Override
    public void close() {
        try {
            endProfiling();
        } catch (RuntimeException e) {
            // the profile is lost; closing goes on
        }
        session.close();
        domain.close();
        options.close();
    }
}
