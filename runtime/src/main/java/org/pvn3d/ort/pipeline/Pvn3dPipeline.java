package org.pvn3d.ort.pipeline;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.pvn3d.ort.OnnxTensor;
import org.pvn3d.ort.OnnxTensorType;
import org.pvn3d.ort.OnnxValue;
import org.pvn3d.ort.OrtEnvironment;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.OrtSession;
import org.pvn3d.ort.customop.CustomOpDomain;
import org.pvn3d.ort.io.PvtFile;
import org.pvn3d.ort.ops.Pvn3dOps;

/**
 * PVN3D end to end on ONNX Runtime: the network (with the PointNet++ custom operators) on the CPU or
 * CUDA provider, then votes ({@code point - offset}), the object mask ({@code argmax == objectClass}),
 * the pose stage ({@link PoseSolver}: clustering and the keypoint fit) and, when the sample has a ground
 * truth, ADD / ADD-S.
 *
 * <p>On CUDA the inputs are host tensors and the outputs come back to the host ({@code session.run});
 * device-resident IO binding is not used here yet.
 */
public final class Pvn3dPipeline implements AutoCloseable {
    /** The class-path resource of the tiny PVN3D model (exporter/export_pvn3d.py, seeded random weights). */
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
     * the class index of the object in {@code pred_rgbd_seg}, and untimed warm-up runs before the timed
     * inference.
     */
    public record Config(Provider provider, int device, int threads, PoseSolver poseSolver, int objectClass, int warmup) {
        public static Config cpu() {
            return new Config(Provider.CPU, 0, 0, new JavaPoseSolver(), 1, 0);
        }

        public Config withProvider(Provider p, int dev) {
            return new Config(p, dev, threads, poseSolver, objectClass, warmup);
        }

        public Config withThreads(int t) {
            return new Config(provider, device, t, poseSolver, objectClass, warmup);
        }

        public Config withWarmup(int w) {
            return new Config(provider, device, threads, poseSolver, objectClass, w);
        }

        public Config withPoseSolver(PoseSolver s) {
            return new Config(provider, device, threads, s, objectClass, warmup);
        }
    }

    /** Wall-clock milliseconds of each stage. */
    public record Timings(double load, double inference, double voting, double clustering, double fit, double metrics) {
        public double total() {
            return load + inference + voting + clustering + fit + metrics;
        }
    }

    /** One model output copied to the host: floats or int64 values with its shape. */
    public record Output(String name, OnnxTensorType type, long[] shape, float[] floats, long[] longs) {
        public boolean isFloat() {
            return floats != null;
        }
    }

    /** Everything one run produced. {@code metrics} is null when the sample has no ground truth. */
    public record Result(Map<String, Output> outputs, Votes votes, PoseSolver.Solution pose, PoseMetrics.Result metrics,
            Timings timings) {
        public Output output(String name) {
            Output o = outputs.get(name);
            if (o == null) {
                throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "the model has no output '" + name + "' (it has " + outputs.keySet() + ")");
            }
            return o;
        }
    }

    private final Config config;
    private final OrtSession.SessionOptions options;
    private final CustomOpDomain domain;
    private final OrtSession session;
    private final double loadMs;

    /** Creates the session for {@code model} (ONNX bytes); the time it takes is the "load" stage. */
    public Pvn3dPipeline(byte[] model, Config config) {
        this.config = config;
        long t0 = System.nanoTime();
        OrtSession.SessionOptions opts = new OrtSession.SessionOptions();
        CustomOpDomain dom = null;
        try {
            if (config.threads() > 0) {
                opts.setIntraOpNumThreads(config.threads());
            }
            dom = Pvn3dOps.register(opts);
            if (config.provider() == Provider.CUDA) {
                // full fp32 (no TF32): the pipeline is also how parity with PyTorch is measured
                opts.addCUDA(new org.pvn3d.ort.providers.OrtCUDAProviderOptions(config.device()).setUseTf32(false));
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
    }

    /** The tiny PVN3D model from the class path. */
    public static Pvn3dPipeline tiny(Config config) {
        return new Pvn3dPipeline(resourceBytes(MODEL_RESOURCE), config);
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

    /** Runs the network on the sample's inputs (untimed warm-up runs first) and copies every output to the host. */
    public Map<String, Output> infer(Pvn3dSample sample) {
        List<OnnxTensor> tensors = new ArrayList<>();
        try {
            Map<String, OnnxTensor> feeds = new LinkedHashMap<>();
            for (String name : session.getInputNames()) {
                OnnxTensor t = sample.entry(name).toTensor();
                tensors.add(t);
                feeds.put(name, t);
            }
            for (int i = 0; i < config.warmup(); i++) {
                session.run(feeds).close();
            }
            try (OrtSession.Result r = session.run(feeds)) {
                if (config.provider() == Provider.CUDA) {
                    domain.checkDeferredErrors();
                }
                Map<String, Output> out = new LinkedHashMap<>();
                for (Map.Entry<String, OnnxValue> e : r) {
                    if (e.getValue() instanceof OnnxTensor t) {
                        out.put(e.getKey(), switch (t.getType()) {
                            case FLOAT -> new Output(e.getKey(), t.getType(), t.getShape(), t.getFloatArray(), null);
                            case INT64 -> new Output(e.getKey(), t.getType(), t.getShape(), null, t.getLongArray());
                            default -> throw new OrtException(OrtErrorCode.ORT_NOT_IMPLEMENTED, "output " + e.getKey() + " has type " + t.getType());
                        });
                    }
                }
                return out;
            }
        } finally {
            tensors.forEach(OnnxTensor::close);
        }
    }

    /** The whole pipeline on one sample. */
    public Result run(Pvn3dSample sample) {
        long t0 = System.nanoTime();
        Map<String, Output> outputs = infer(sample);
        long t1 = System.nanoTime();
        Output seg = output(outputs, "pred_rgbd_seg");
        Votes votes = Votes.fromPredictions(sample.cloud(), sample.cloudChannels(), output(outputs, "pred_kp_of").floats(),
                output(outputs, "pred_ctr_of").floats(), seg.floats(), (int) seg.shape()[seg.shape().length - 1], config.objectClass());
        long t2 = System.nanoTime();
        PoseSolver.Solution pose = config.poseSolver().solve(votes, sample.modelKps());
        long t3 = System.nanoTime();
        PoseMetrics.Result metrics = sample.hasGroundTruth()
                ? PoseMetrics.evaluate(pose.pose(), sample.groundTruth(), sample.modelPoints(), sample.diameter())
                : null;
        long t4 = System.nanoTime();
        return new Result(outputs, votes, pose, metrics, new Timings(loadMs, (t1 - t0) / 1e6, (t2 - t1) / 1e6,
                pose.clusteringMs(), pose.fitMs(), (t4 - t3) / 1e6));
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

    static byte[] resourceBytes(String name) {
        try (java.io.InputStream in = Pvn3dPipeline.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new OrtException(OrtErrorCode.ORT_NO_SUCHFILE, "missing class-path resource " + name);
            }
            return in.readAllBytes();
        } catch (java.io.IOException e) {
            throw new OrtException(OrtErrorCode.ORT_NO_SUCHFILE, "cannot read " + name + ": " + e, e);
        }
    }

    @Override
    public void close() {
        session.close();
        domain.close();
        options.close();
    }
}
