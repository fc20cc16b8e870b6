package org.pvn3d.ort.pipeline;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.pvn3d.ort.DeviceTensor;
import org.pvn3d.ort.OnnxTensor;
import org.pvn3d.ort.OnnxTensorLike;
import org.pvn3d.ort.OnnxTensorType;
import org.pvn3d.ort.OrtEnvironment;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.OrtIoBinding;
import org.pvn3d.ort.OrtMemoryInfo;
import org.pvn3d.ort.OrtSession;
import org.pvn3d.ort.RunOptions;
import org.pvn3d.ort.SessionOptions;
import org.pvn3d.ort.cuda.CudaDevice;
import org.pvn3d.ort.cuda.CudaEvent;
import org.pvn3d.ort.cuda.CudaStream;
import org.pvn3d.ort.cuda.DeviceBuffer;
import org.pvn3d.ort.cuda.PinnedBuffer;
import org.pvn3d.ort.io.PvtFile;
import org.pvn3d.ort.ops.Pvn3dOps;
import org.pvn3d.ort.pipeline.graph.BranchSplit;
import org.pvn3d.ort.pipeline.graph.PoseHeadGraph;
import org.pvn3d.ort.providers.OrtCUDAProviderOptions;

/**
 * Frame to pose in one ORT graph: the PVN3D network with its pose head ({@link PoseHeadGraph}: votes,
 * mask, mean shift and the Kabsch fit inside the graph), so that on CUDA a frame goes up once and only
 * the pose comes back.
 *
 * <p>On CUDA everything per run is fixed in advance: one device buffer holds every input of a batch
 * (and the model keypoints), one holds every bound output (R, t, keypoints, inlier count, and the mask
 * when {@link Config#downloadMask()}), both mirrored in pinned host memory, and the session computes on a
 * stream of this object's own. A run is then one host-to-device copy, the graph, one device-to-host copy
 * of a few hundred bytes and one stream synchronisation; with {@link Config#cudaGraph()} ORT captures the
 * graph on the first runs and replays it after, which the fixed addresses allow. On the CPU provider the
 * same graph runs on host tensors (the reference path CI checks against the Java pose stage).
 *
 * <p>With {@link Config#concurrentBranches()} the graph is cut into three sessions ({@link BranchSplit}): PVN3D's
 * point branch (PointNet++, which reads only the cloud), its image branch (the CNN and its pick of the chosen
 * pixels) and the join (fusion, heads, pose). On CUDA the point branch runs on a thread and stream of its own
 * while the image branch runs on this object's stream; CUDA events order the upload before the point branch and
 * the point branch before the join; the tensors between the parts live in one preallocated device buffer. A
 * frame then costs about the longer branch instead of both (measured on the H200: 16-22% less at batch 1). On
 * the CPU provider the branches also run on two threads.
 *
 * <p>Not thread-safe: one run at a time per object (two objects, two frames in flight). With CUDA graphs,
 * ORT keeps the captured graph per calling thread: the constructor captures for its own thread, and the
 * first run on any other thread captures again (three runs, with the device to itself), which costs time
 * and device memory per thread; run each object from one thread where latency matters.
 */
public final class FrameToPose implements AutoCloseable {
    /** How the network computes. The custom operators and the pose stage are float32 in every mode. */
    public enum Precision {
        /** float32 with TF32 off: parity with PyTorch within 1e-3. */
        STRICT("fp32, TF32 off"),
        /** float32 tensors, convolutions and matrix products on TF32 tensor cores (ORT's default on CUDA). */
        TF32("fp32, TF32 on"),
        /**
         * The CNN and MLPs in float16: the model must be an fp16 conversion (exporter/convert_fp16.py: float16
         * weights, the custom operators and the graph's inputs and outputs float32).
         */
        FP16("fp16 network, fp32 custom operators and pose");

        private final String description;

        Precision(String description) {
            this.description = description;
        }

        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }

        public String description() {
            return description;
        }

        /** {@code strict}, {@code tf32} or {@code fp16}; anything else is an {@link IllegalArgumentException}. */
        public static Precision parse(String s) {
            for (Precision p : values()) {
                if (p.label().equalsIgnoreCase(s.trim())) {
                    return p;
                }
            }
            throw new IllegalArgumentException("precision must be strict, tf32 or fp16, not '" + s + "'");
        }
    }

    /**
     * Settings: provider and device, precision, whether ORT captures a CUDA graph, the frames per run, the
     * object's class in {@code pred_rgbd_seg}, the mean shift, ORT's intra-op threads (0: ORT's choice) and
     * whether each run also returns the object mask (for a refinement on the host), and any further options
     * for ORT's CUDA provider (e.g. {@code prefer_nhwc = 1}; the ones this class sets itself are refused here),
     * and whether the network's two branches run side by side ({@code concurrentBranches}: PointNet++ in a
     * session of its own, on its own thread and CUDA stream, beside the CNN; the fusion, heads and pose in a
     * third session after both; see {@link org.pvn3d.ort.pipeline.graph.BranchSplit}).
     */
    public record Config(Pvn3dPipeline.Provider provider, int device, Precision precision, boolean cudaGraph, int batch,
            int objectClass, MeanShift meanShift, int threads, boolean downloadMask, Map<String, String> cudaOptions,
            boolean concurrentBranches) {
        /** The CUDA provider options {@link FrameToPose} sets from the other settings. */
        private static final Set<String> OWN_CUDA_OPTIONS = Set.of("device_id", "use_tf32", "enable_cuda_graph",
                "has_user_compute_stream", "user_compute_stream");

        public Config {
            cudaOptions = Collections.unmodifiableMap(new TreeMap<>(cudaOptions));
            for (String key : cudaOptions.keySet()) {
                if (OWN_CUDA_OPTIONS.contains(key)) {
                    throw new IllegalArgumentException("CUDA option " + key + " follows from the other settings (device, precision,"
                            + " cudaGraph); it cannot be given as an extra option");
                }
            }
            if (provider == Pvn3dPipeline.Provider.CPU && !cudaOptions.isEmpty()) {
                throw new IllegalArgumentException("CUDA options " + cudaOptions.keySet() + " need the CUDA provider");
            }
            if (batch < 1 || device < 0 || threads < 0 || objectClass < 0) {
                throw new IllegalArgumentException("batch >= 1, device >= 0, threads >= 0 and objectClass >= 0, not " + batch + ", "
                        + device + ", " + threads + ", " + objectClass);
            }
            if (provider == Pvn3dPipeline.Provider.CPU && (precision != Precision.STRICT || cudaGraph)) {
                throw new IllegalArgumentException("precision " + precision.label() + (cudaGraph ? " and CUDA graphs" : "")
                        + " need the CUDA provider; the CPU provider computes in strict fp32");
            }
        }

        /** CUDA on {@code device}, strict, no CUDA graph, one frame, class 1, PVN3D's mean shift, no mask. */
        public static Config cuda(int device) {
            return new Config(Pvn3dPipeline.Provider.CUDA, device, Precision.STRICT, false, 1, 1, MeanShift.PVN3D, 0, false, Map.of(), false);
        }

        /** The CPU provider, strict, one frame, class 1, PVN3D's mean shift, no mask. */
        public static Config cpu() {
            return new Config(Pvn3dPipeline.Provider.CPU, 0, Precision.STRICT, false, 1, 1, MeanShift.PVN3D, 0, false, Map.of(), false);
        }

        /** The same on another CUDA device (on the CPU provider only 0). */
        public Config withDevice(int d) {
            return new Config(provider, d, precision, cudaGraph, batch, objectClass, meanShift, threads, downloadMask, cudaOptions, concurrentBranches);
        }

        public Config withPrecision(Precision p) {
            return new Config(provider, device, p, cudaGraph, batch, objectClass, meanShift, threads, downloadMask, cudaOptions, concurrentBranches);
        }

        public Config withCudaGraph(boolean g) {
            return new Config(provider, device, precision, g, batch, objectClass, meanShift, threads, downloadMask, cudaOptions, concurrentBranches);
        }

        public Config withBatch(int b) {
            return new Config(provider, device, precision, cudaGraph, b, objectClass, meanShift, threads, downloadMask, cudaOptions, concurrentBranches);
        }

        public Config withThreads(int t) {
            return new Config(provider, device, precision, cudaGraph, batch, objectClass, meanShift, t, downloadMask, cudaOptions, concurrentBranches);
        }

        public Config withMeanShift(MeanShift m) {
            return new Config(provider, device, precision, cudaGraph, batch, objectClass, m, threads, downloadMask, cudaOptions, concurrentBranches);
        }

        public Config withMask(boolean m) {
            return new Config(provider, device, precision, cudaGraph, batch, objectClass, meanShift, threads, m, cudaOptions, concurrentBranches);
        }

        /** The same with these extra CUDA provider options (replacing any given before). */
        public Config withCudaOptions(Map<String, String> options) {
            return new Config(provider, device, precision, cudaGraph, batch, objectClass, meanShift, threads, downloadMask, options, concurrentBranches);
        }

        /** The class whose points vote (the mask is {@code argmax(seg) == objectClass}); default 1, PVN3D's object. */
        public Config withObjectClass(int c) {
            return new Config(provider, device, precision, cudaGraph, batch, c, meanShift, threads, downloadMask, cudaOptions, concurrentBranches);
        }

        /** The same with the network's two branches side by side or not. */
        public Config withConcurrentBranches(boolean c) {
            return new Config(provider, device, precision, cudaGraph, batch, objectClass, meanShift, threads, downloadMask, cudaOptions, c);
        }

        /** e.g. {@code cuda:0 strict B=1 cuda-graph branches prefer_nhwc=1}. */
        public String describe() {
            return provider.label() + (provider == Pvn3dPipeline.Provider.CUDA ? ":" + device : "") + " " + precision.label()
                    + " B=" + batch + (cudaGraph ? " cuda-graph" : "") + (concurrentBranches ? " branches" : "")
                    + cudaOptions.entrySet().stream().map(e -> " " + e.getKey() + "=" + e.getValue()).collect(Collectors.joining());
        }
    }

    /**
     * One frame's result: the voting pose (invalid when the mask was empty), its keypoints {@code [K*3]},
     * the inlier count, and the object mask (null unless {@link Config#downloadMask()}).
     */
    public record FramePose(Pose pose, float[] kps, int inliers, boolean[] mask) {
    }

    private static final long ALIGN = 256;
    /**
     * Runs on a thread before ORT replays a CUDA graph there: it runs normally twice (allocating what the
     * graph will use), captures in the third and replays the capture at its end.
     */
    static final int CAPTURE_RUNS = 3;
    /**
     * ORT captures a CUDA graph in CUDA's global capture mode: while one stream captures, no thread of the
     * process may call what CUDA deems unsafe then (allocations, device-wide synchronisation), or the capture
     * and that call both fail (measured on the H200: a session created beside a capturing one failed with
     * "operation not permitted when stream is capturing" and left the device unusable). So on CUDA the
     * creation of these objects, their captures (made in the constructor) and their closing take this lock
     * alone; runs share it.
     */
    private static final java.util.concurrent.locks.ReentrantReadWriteLock CUDA_LIFECYCLE =
            new java.util.concurrent.locks.ReentrantReadWriteLock();

    /** PVN3D's two branches ({@link Config#concurrentBranches()}): PointNet++ reads the cloud, the CNN the image and its pixel pick. */
    static final Set<String> POINT_INPUTS = Set.of("cld_rgb_nrm");
    static final Set<String> IMAGE_INPUTS = Set.of("rgb", "choose");

    private final Config config;
    /** The threads on which ORT has captured this session's CUDA graph (it keeps one per thread). */
    private final Set<Long> capturedOn = java.util.concurrent.ConcurrentHashMap.newKeySet();
    /** Everything this object created, closed in the reverse order (bindings before buffers, sessions before streams). */
    private final List<AutoCloseable> owned = new ArrayList<>();
    // set once by the constructor
    private OrtSession session;
    private final List<String> inputs = new ArrayList<>();
    private final List<PvtFile.Entry> template = new ArrayList<>();
    private static final long MAX_HOST_BATCH_BYTES = Integer.MAX_VALUE - 8; // a Java array's limit
    private volatile boolean closed;
    private final int k;
    private final int n;
    // concurrent branches only: a session per branch (the join is session), the point branch on a thread of its own
    private OrtSession pointSession;
    private OrtSession imageSession;
    private List<String> pointCuts;
    private List<String> imageCuts;
    private java.util.concurrent.ExecutorService worker;
    // CUDA only
    private CudaStream stream;
    private DeviceBuffer deviceIn;
    private DeviceBuffer deviceOut;
    private PinnedBuffer hostIn;
    private PinnedBuffer hostOut;
    private OrtIoBinding binding;
    private long[] inOffsets;
    private long kpsOffset;
    private long[] outOffsets;
    private long[] outSizes;
    // CUDA and concurrent branches: the point branch's stream, the events that order the streams, the cuts' buffer
    private CudaStream pointStream;
    private CudaEvent inputsReady;
    private CudaEvent pointsDone;
    private DeviceBuffer cutBuffer;
    private OrtIoBinding pointBinding;
    private OrtIoBinding imageBinding;
    private final Map<String, DeviceTensor> cutTensors = new LinkedHashMap<>();

    /**
     * A session for {@code network} (ONNX bytes of a PVN3D network, without a pose head) with the pose head
     * appended; {@code template} fixes the frame's shapes (every input one frame, {@code [1,...]}) and the
     * number of keypoints.
     */
    public FrameToPose(byte[] network, Config config, Pvn3dSample template) {
        this.config = config;
        boolean fp16 = PoseHeadGraph.holdsFloat16(network);
        if (config.precision() == Precision.FP16 && !fp16) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "precision fp16 needs an fp16 model (float16 weights,"
                    + " e.g. from exporter/convert_fp16.py); this model holds float32 only");
        }
        if (config.precision() != Precision.FP16 && fp16) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "this model holds float16 weights: run it with precision fp16");
        }
        byte[] model = PoseHeadGraph.append(network, config.meanShift(), config.objectClass());
        // the template runs too (its shapes fix the bindings; on CUDA with the branches apart it runs once to
        // size the cuts, and ORT's CUDA gathers do not check their indices): it must be a frame run would take
        template.checkInputs();
        this.k = template.modelKps().length / 3;
        this.n = template.points();
        boolean cuda = config.provider() == Pvn3dPipeline.Provider.CUDA;
        if (cuda) {
            CUDA_LIFECYCLE.writeLock().lock();
        }
        try {
            open(model, template);
            if (cuda && config.cudaGraph()) {
                // the first run on a thread captures (CAPTURE_RUNS runs); afterwards every run there is a replay
                run(Collections.nCopies(config.batch(), template));
            }
        } catch (RuntimeException e) {
            closeQuietly(e, this::closeAll);
            throw e;
        } finally {
            if (cuda) {
                CUDA_LIFECYCLE.writeLock().unlock();
            }
        }
    }

    /**
     * The session(s) with the custom operators and, on CUDA, the streams and bound buffers: one session for
     * the whole graph, or with {@link Config#concurrentBranches()} one per branch and one for the join.
     */
    private void open(byte[] model, Pvn3dSample template) {
        boolean cuda = config.provider() == Pvn3dPipeline.Provider.CUDA;
        if (cuda) {
            CudaDevice.setCurrent(config.device());
            stream = own(CudaStream.create());
        }
        if (!config.concurrentBranches()) {
            session = newSession(model, stream);
            frameInputs(session.getInputNames(), template);
            if (cuda) {
                allocateDevice();
                bind(session, List.of(), true);
            }
            return;
        }
        BranchSplit split = BranchSplit.of(model, POINT_INPUTS, IMAGE_INPUTS);
        worker = java.util.concurrent.Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "pvn3d-point-branch");
            t.setDaemon(true);
            return t;
        });
        if (cuda) {
            pointStream = own(CudaStream.create());
            inputsReady = own(CudaEvent.createUntimed());
            pointsDone = own(CudaEvent.createUntimed());
        }
        pointSession = newSession(split.first().model(), pointStream);
        imageSession = newSession(split.second().model(), stream);
        pointCuts = split.first().cuts();
        imageCuts = split.second().cuts();
        List<String> frame = new ArrayList<>(split.first().inputs());
        frame.addAll(split.second().inputs());
        split.joinInputs().stream().filter(x -> !pointCuts.contains(x) && !imageCuts.contains(x)).forEach(frame::add);
        frameInputs(frame, template);
        Map<String, BranchSplit.TensorType> cuts = cuda ? cutsOnDevice() : cutsOnHost();
        session = newSession(split.join(cuts).model(), stream);
        if (cuda) {
            long[] offsets = new long[cuts.size()];
            long at = 0;
            int i = 0;
            for (BranchSplit.TensorType t : cuts.values()) {
                offsets[i++] = at;
                at = align(at + bytes(t));
            }
            cutBuffer = own(DeviceBuffer.allocate(config.device(), Math.max(at, ALIGN)));
            i = 0;
            for (Map.Entry<String, BranchSplit.TensorType> e : cuts.entrySet()) {
                BranchSplit.TensorType t = e.getValue();
                cutTensors.put(e.getKey(), own(view(cutBuffer, offsets[i++], bytes(t), OnnxTensorType.of(t.elementType()), t.shape())));
            }
            pointBinding.clearBoundOutputs();
            imageBinding.clearBoundOutputs();
            bind(pointSession, pointCuts, false);
            bind(imageSession, imageCuts, false);
            bind(session, List.of(), true);
        }
    }

    /** A session for {@code model} on {@code cudaStream} (CUDA) or the CPU; it, its options and its domain are owned. */
    private OrtSession newSession(byte[] model, CudaStream cudaStream) {
        SessionOptions opts = own(new SessionOptions());
        if (config.threads() > 0) {
            opts.setIntraOpNumThreads(config.threads());
        }
        own(Pvn3dOps.register(opts));
        if (config.provider() == Pvn3dPipeline.Provider.CUDA) {
            OrtCUDAProviderOptions cuda = new OrtCUDAProviderOptions(config.device())
                    .setUseTf32(config.precision() != Precision.STRICT).setUserComputeStream(cudaStream);
            if (config.cudaGraph()) {
                cuda.add("enable_cuda_graph", "1");
            }
            config.cudaOptions().forEach(cuda::add);
            opts.addExecutionProvider(cuda);
        } else {
            Pvn3dOps.letIntraOpThreadsSleep(opts); // as Pvn3dPipeline's CPU sessions
        }
        return own(OrtEnvironment.getEnvironment().createSession(model, opts));
    }

    /** The frame's inputs: {@code names} without the model keypoints and repeats, each checked against the template. */
    private void frameInputs(List<String> names, Pvn3dSample template) {
        for (String name : names) {
            if (name.equals(PoseHeadGraph.MODEL_KPS) || inputs.contains(name)) {
                continue;
            }
            PvtFile.Entry e = template.entry(name);
            if (e.shape().length == 0 || e.shape()[0] != 1) {
                throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "template input " + name + " must hold one frame, shape [1,...], not "
                        + java.util.Arrays.toString(e.shape()));
            }
            if (config.provider() != Pvn3dPipeline.Provider.CUDA && (long) config.batch() * e.data().length > MAX_HOST_BATCH_BYTES) {
                // the host path stacks a batch of each input in one Java array
                throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "a batch of " + config.batch() + " frames of input " + name
                        + " (" + e.data().length + " bytes a frame) is more than one Java array holds on the host: lower the batch");
            }
            inputs.add(name);
            this.template.add(e);
        }
    }

    /**
     * Runs both branches once on the template (a batch of it), on the host, and returns what each cut came
     * out as: the join's inputs are declared with these.
     */
    private Map<String, BranchSplit.TensorType> cutsOnHost() {
        Map<String, BranchSplit.TensorType> cuts = new LinkedHashMap<>();
        List<byte[]> data = new ArrayList<>();
        for (int i = 0; i < inputs.size(); i++) {
            for (int f = 0; f < config.batch(); f++) {
                data.add(template.get(i).data());
            }
        }
        Map<String, OnnxTensor> feeds = feeds(data, null);
        try {
            for (OrtSession s : List.of(pointSession, imageSession)) {
                List<String> names = s == pointSession ? pointCuts : imageCuts;
                try (org.pvn3d.ort.Result r = s.run(only(feeds, s.getInputNames()), Set.copyOf(names))) {
                    for (String name : names) {
                        OnnxTensor t = r.tensor(name);
                        cuts.put(name, new BranchSplit.TensorType(t.getType().value(), t.getShape()));
                    }
                }
            }
        } finally {
            feeds.values().forEach(OnnxTensor::close);
        }
        return cuts;
    }

    /**
     * The same on the device: the template batch uploaded into the bound inputs, the cuts bound to device
     * memory ORT allocates for this one run (the runs that follow write into this object's own buffer).
     */
    private Map<String, BranchSplit.TensorType> cutsOnDevice() {
        allocateDevice();
        MemorySegment in = hostIn.segment();
        for (int i = 0; i < inputs.size(); i++) {
            byte[] bytes = template.get(i).data();
            for (int f = 0; f < config.batch(); f++) {
                MemorySegment.copy(bytes, 0, in, JAVA_BYTE, inOffsets[i] + (long) f * bytes.length, bytes.length);
            }
        }
        deviceIn.copyFromHostAsync(in, 0, stream);
        stream.synchronize();
        pointBinding = own(pointSession.createIoBinding());
        imageBinding = own(imageSession.createIoBinding());
        Map<String, BranchSplit.TensorType> cuts = new LinkedHashMap<>();
        // outside any CUDA graph ("-1"): ORT neither captures this run nor counts it towards a capture, and
        // outputs ORT allocates are allowed
        try (OrtMemoryInfo device = OrtMemoryInfo.cuda(config.device());
                RunOptions once = new RunOptions().addRunConfigEntry(RunOptions.GPU_GRAPH_ID, "-1")) {
            for (OrtSession s : List.of(pointSession, imageSession)) {
                OrtIoBinding b = s == pointSession ? pointBinding : imageBinding;
                List<String> names = s == pointSession ? pointCuts : imageCuts;
                bindInputs(s, b);
                for (String name : names) {
                    b.bindOutput(name, device);
                }
                s.run(b, once);
                try (org.pvn3d.ort.Result r = b.getOutputs()) {
                    for (String name : names) {
                        DeviceTensor t = r.deviceTensor(name);
                        cuts.put(name, new BranchSplit.TensorType(t.getType().value(), t.getShape()));
                    }
                }
            }
        }
        return cuts;
    }

    private static Map<String, OnnxTensor> only(Map<String, OnnxTensor> feeds, List<String> names) {
        Map<String, OnnxTensor> out = new LinkedHashMap<>();
        for (String name : names) {
            OnnxTensor t = feeds.get(name);
            if (t == null) {
                throw new IllegalStateException("no feed for input " + name);
            }
            out.put(name, t);
        }
        return out;
    }

    private static long bytes(BranchSplit.TensorType t) {
        long n = OnnxTensorType.of(t.elementType()).byteSize();
        for (long d : t.shape()) {
            n = Math.multiplyExact(n, d);
        }
        return n;
    }

    /** The device buffers of a batch: every frame input and the model keypoints in one, the bound outputs in another. */
    private void allocateDevice() {
        int b = config.batch();
        inOffsets = new long[inputs.size()];
        long at = 0;
        for (int i = 0; i < inputs.size(); i++) {
            inOffsets[i] = at;
            at = align(at + b * (long) template.get(i).data().length);
        }
        kpsOffset = at;
        long inBytes = align(at + 3L * k * Float.BYTES);
        // R [B,3,3], t [B,3], kps [B,K,3], inliers [B], mask [B,N]
        long[] outBytes = {b * 9L * Float.BYTES, b * 3L * Float.BYTES, b * 3L * k * Float.BYTES, b * (long) Long.BYTES,
            b * (long) n};
        int outs = config.downloadMask() ? 5 : 4;
        outOffsets = new long[outs];
        outSizes = java.util.Arrays.copyOf(outBytes, outs);
        at = 0;
        for (int i = 0; i < outs; i++) {
            outOffsets[i] = at;
            at = align(at + outBytes[i]);
        }
        deviceIn = own(DeviceBuffer.allocate(config.device(), inBytes));
        deviceOut = own(DeviceBuffer.allocate(config.device(), at));
        hostIn = own(PinnedBuffer.allocate(inBytes));
        hostOut = own(PinnedBuffer.allocate(at));
    }

    /** Binds {@code s}'s inputs: frame inputs and model keypoints into the input buffer, cuts to their tensors. */
    private void bindInputs(OrtSession s, OrtIoBinding b) {
        int batch = config.batch();
        for (String name : s.getInputNames()) {
            int i = inputs.indexOf(name);
            if (name.equals(PoseHeadGraph.MODEL_KPS)) {
                b.bindInput(name, own(view(deviceIn, kpsOffset, 3L * k * Float.BYTES, OnnxTensorType.FLOAT, k, 3)));
            } else if (i >= 0) {
                PvtFile.Entry e = template.get(i);
                long[] shape = e.shape().clone();
                shape[0] = batch;
                b.bindInput(name, own(view(deviceIn, inOffsets[i], batch * (long) e.data().length, e.type(), shape)));
            } else if (cutTensors.containsKey(name)) {
                b.bindInput(name, cutTensors.get(name));
            } else {
                throw new IllegalStateException("input " + name + " is neither a frame input nor a cut");
            }
        }
    }

    /** Binds {@code s}: its inputs, its {@code cuts} outputs and, for the session that ends in the pose, the pose outputs. */
    private void bind(OrtSession s, List<String> cuts, boolean pose) {
        OrtIoBinding b = s == pointSession ? pointBinding : s == imageSession ? imageBinding : null;
        if (b == null) {
            b = own(s.createIoBinding());
            binding = b;
        }
        bindInputs(s, b);
        for (String name : cuts) {
            b.bindOutput(name, cutTensors.get(name));
        }
        if (pose) {
            int batch = config.batch();
            b.bindOutput(PoseHeadGraph.R, own(view(deviceOut, outOffsets[0], outSizes[0], OnnxTensorType.FLOAT, batch, 3, 3)));
            b.bindOutput(PoseHeadGraph.T, own(view(deviceOut, outOffsets[1], outSizes[1], OnnxTensorType.FLOAT, batch, 3)));
            b.bindOutput(PoseHeadGraph.KPS, own(view(deviceOut, outOffsets[2], outSizes[2], OnnxTensorType.FLOAT, batch, k, 3)));
            b.bindOutput(PoseHeadGraph.INLIERS, own(view(deviceOut, outOffsets[3], outSizes[3], OnnxTensorType.INT64, batch)));
            if (config.downloadMask()) {
                b.bindOutput(PoseHeadGraph.MASK, own(view(deviceOut, outOffsets[4], outSizes[4], OnnxTensorType.BOOL, batch, n)));
            }
        }
    }

    private static DeviceTensor view(DeviceBuffer buffer, long offset, long bytes, OnnxTensorType type, long... shape) {
        MemorySegment at = MemorySegment.ofAddress(buffer.address() + offset).reinterpret(bytes);
        try (var info = buffer.memoryInfo()) {
            return DeviceTensor.createTensor(info, at, type, shape);
        }
    }

    private <T extends AutoCloseable> T own(T resource) {
        owned.add(resource);
        return resource;
    }

    private static long align(long x) {
        return (x + ALIGN - 1) / ALIGN * ALIGN;
    }

    public Config config() {
        return config;
    }

    /** The session (with the pose head). */
    public OrtSession session() {
        return session;
    }

    /** A frame this FrameToPose cannot run: ORT's invalid-argument error, as the samples' own checks give. */
    private static OrtException invalidFrame(String message) {
        return new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, message);
    }

    /** Keypoint rows K (the centre included) and points N of a frame. */
    public int keypoints() {
        return k;
    }

    public int points() {
        return n;
    }

    /**
     * The pose of each of {@link Config#batch()} frames, which must have the template's shapes; the model
     * keypoints are the first frame's (one object per run).
     */
    public List<FramePose> run(List<Pvn3dSample> frames) {
        if (closed) {
            throw closedError();
        }
        try {
            return runOpen(frames);
        } catch (RuntimeException e) {
            if (!closed) {
                throw e;
            }
            // close() came while this ran and freed what the run used: say that, not which object it met closed
            OrtException c = closedError();
            c.addSuppressed(e);
            throw c;
        }
    }

    private List<FramePose> runOpen(List<Pvn3dSample> frames) {
        if (frames.size() != config.batch()) {
            throw invalidFrame("this FrameToPose runs batches of " + config.batch() + " frames, got " + frames.size());
        }
        float[] modelKps = frames.get(0).modelKps();
        if (modelKps.length != 3 * k) {
            throw invalidFrame("model keypoints: " + modelKps.length / 3.0 + " rows, the template has " + k);
        }
        for (float v : modelKps) {
            if (!Float.isFinite(v)) {
                throw invalidFrame("the model keypoints hold a non-finite value (" + v + ")");
            }
        }
        List<byte[]> data = new ArrayList<>(inputs.size() * frames.size());
        for (int i = 0; i < inputs.size(); i++) {
            PvtFile.Entry t = template.get(i);
            for (Pvn3dSample f : frames) {
                PvtFile.Entry e = f.entry(inputs.get(i));
                if (e.type() != t.type() || !java.util.Arrays.equals(e.shape(), t.shape())) {
                    throw invalidFrame("input " + inputs.get(i) + " of " + f.source() + ": " + e.type() + " "
                            + java.util.Arrays.toString(e.shape()) + ", this FrameToPose was made for " + t.type() + " "
                            + java.util.Arrays.toString(t.shape()));
                }
                data.add(e.data());
            }
        }
        // with every shape the template's: the cloud and image finite, every choose a pixel of the image (ORT's
        // CUDA gathers do not check their indices, and ONNX reads a negative one from the end)
        for (Pvn3dSample f : frames) {
            f.checkInputs();
        }
        if (config.provider() != Pvn3dPipeline.Provider.CUDA) {
            return runOnHost(data, modelKps);
        }
        if (config.cudaGraph() && !capturedOn.contains(Thread.currentThread().threadId())) {
            // ORT keeps a CUDA graph per calling thread (the CUDA provider's per-thread context): a thread
            // other than the one that captured runs normally twice and then captures its own, and that
            // capture must be as alone on the device as the constructor's
            CUDA_LIFECYCLE.writeLock().lock();
            try {
                List<FramePose> out = null;
                for (int i = 0; i < CAPTURE_RUNS; i++) {
                    out = runOnDevice(data, modelKps, true);
                }
                capturedOn.add(Thread.currentThread().threadId());
                return out;
            } finally {
                CUDA_LIFECYCLE.writeLock().unlock();
            }
        }
        CUDA_LIFECYCLE.readLock().lock();
        try {
            return runOnDevice(data, modelKps, false);
        } finally {
            CUDA_LIFECYCLE.readLock().unlock();
        }
    }

    /** One frame: {@code run(List.of(frame)).get(0)} (batch 1 only). */
    public FramePose run(Pvn3dSample frame) {
        return run(List.of(frame)).get(0);
    }

    private List<FramePose> runOnDevice(List<byte[]> data, float[] modelKps, boolean alone) {
        int b = config.batch();
        MemorySegment in = hostIn.segment();
        int d = 0;
        for (int i = 0; i < inputs.size(); i++) {
            long at = inOffsets[i];
            for (int f = 0; f < b; f++) {
                byte[] bytes = data.get(d++);
                MemorySegment.copy(bytes, 0, in, JAVA_BYTE, at, bytes.length);
                at += bytes.length;
            }
        }
        MemorySegment.copy(modelKps, 0, in, JAVA_FLOAT, kpsOffset, modelKps.length);
        // the copy, the graph and the copy back are queued on the session's own stream, in that order
        deviceIn.copyFromHostAsync(in, 0, stream);
        if (pointSession == null) {
            session.run(binding);
        } else {
            // the point branch on its own stream after the upload, the image branch meanwhile on this one, the
            // join on this one after both; the host waits for the point thread too, as ORT may end a run
            // before its stream is done (a graph replay) or after (a normal run synchronises)
            inputsReady.record(stream);
            java.util.concurrent.Future<Object> points = submitPoints(() -> {
                CudaDevice.setCurrent(config.device());
                pointStream.waitFor(inputsReady);
                pointSession.run(pointBinding);
                pointsDone.record(pointStream);
                return null;
            });
            if (alone) {
                await(points); // a capture must have the device to itself
            }
            bothBranches(points, () -> {
                imageSession.run(imageBinding);
                return null;
            });
            stream.waitFor(pointsDone);
            session.run(binding);
        }
        deviceOut.copyToHostAsync(hostOut.segment(), 0, stream);
        stream.synchronize();
        MemorySegment out = hostOut.segment();
        List<FramePose> poses = new ArrayList<>(b);
        for (int f = 0; f < b; f++) {
            float[] r = out.asSlice(outOffsets[0] + f * 9L * Float.BYTES, 9L * Float.BYTES).toArray(JAVA_FLOAT);
            float[] t = out.asSlice(outOffsets[1] + f * 3L * Float.BYTES, 3L * Float.BYTES).toArray(JAVA_FLOAT);
            float[] kps = out.asSlice(outOffsets[2] + f * 3L * k * Float.BYTES, 3L * k * Float.BYTES).toArray(JAVA_FLOAT);
            long inliers = out.get(JAVA_LONG, outOffsets[3] + f * (long) Long.BYTES);
            boolean[] mask = null;
            if (config.downloadMask()) {
                mask = new boolean[n];
                long base = outOffsets[4] + f * (long) n;
                for (int i = 0; i < n; i++) {
                    mask[i] = out.get(JAVA_BYTE, base + i) != 0;
                }
            }
            poses.add(new FramePose(pose(r, t), kps, (int) inliers, mask));
        }
        return poses;
    }

    /** Runs {@code image} here while {@code points} runs on the point thread; the first failure of either is thrown once both are done. */
    private static <T> T bothBranches(java.util.concurrent.Future<?> points, java.util.function.Supplier<T> image) {
        T result = null;
        RuntimeException failure = null;
        try {
            result = image.get();
        } catch (RuntimeException e) {
            failure = e;
        }
        Object pointResult = null;
        try {
            pointResult = await(points);
        } catch (RuntimeException e) {
            if (failure == null) {
                failure = e;
            } else {
                failure.addSuppressed(e);
            }
        }
        if (failure != null) {
            // both results are dropped: the caller never sees them (a host run's are Results holding OrtValues)
            for (Object r : new Object[] {result, pointResult}) {
                if (r instanceof AutoCloseable c) {
                    closeQuietly(failure, c);
                }
            }
            throw failure;
        }
        return result;
    }

    /**
     * The task's result; its exception as it was thrown (an OrtException stays one). An interrupt does not end
     * the wait: the point run cannot be stopped halfway (neither can the run of a FrameToPose without the
     * branches apart, which ignores interrupts), so this waits it out and keeps the interrupt flag set.
     */
    private static <T> T await(java.util.concurrent.Future<T> task) {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return task.get();
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } catch (java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof RuntimeException re) {
                throw re;
            }
            if (e.getCause() instanceof Error err) {
                throw err;
            }
            throw new IllegalStateException(e.getCause());
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Host tensors of a batch: every frame input stacked, and the model keypoints unless null. */
    private Map<String, OnnxTensor> feeds(List<byte[]> data, float[] modelKps) {
        int b = config.batch();
        Map<String, OnnxTensor> feeds = new LinkedHashMap<>();
        try {
            int d = 0;
            for (int i = 0; i < inputs.size(); i++) {
                PvtFile.Entry t = template.get(i);
                byte[] stacked = new byte[b * t.data().length];
                for (int f = 0; f < b; f++) {
                    byte[] bytes = data.get(d++);
                    System.arraycopy(bytes, 0, stacked, f * bytes.length, bytes.length);
                }
                long[] shape = t.shape().clone();
                shape[0] = b;
                feeds.put(inputs.get(i), new PvtFile.Entry(inputs.get(i), t.type(), shape, stacked).toTensor());
            }
            if (modelKps != null) {
                feeds.put(PoseHeadGraph.MODEL_KPS, OnnxTensor.createTensor(modelKps, k, 3));
            }
            return feeds;
        } catch (RuntimeException e) {
            feeds.values().forEach(OnnxTensor::close);
            throw e;
        }
    }

    private List<FramePose> runOnHost(List<byte[]> data, float[] modelKps) {
        int b = config.batch();
        Map<String, OnnxTensor> feeds = feeds(data, modelKps);
        org.pvn3d.ort.Result pointCut = null;
        org.pvn3d.ort.Result imageCut = null;
        try {
            Set<String> wanted = config.downloadMask() ? Set.copyOf(PoseHeadGraph.OUTPUTS)
                    : Set.of(PoseHeadGraph.R, PoseHeadGraph.T, PoseHeadGraph.KPS, PoseHeadGraph.INLIERS);
            Map<String, ? extends OnnxTensorLike> runFeeds = feeds;
            if (pointSession != null) {
                java.util.concurrent.Future<org.pvn3d.ort.Result> points = submitPoints(
                        () -> pointSession.run(only(feeds, pointSession.getInputNames()), Set.copyOf(pointCuts)));
                imageCut = bothBranches(points, () -> imageSession.run(only(feeds, imageSession.getInputNames()), Set.copyOf(imageCuts)));
                pointCut = await(points);
                Map<String, OnnxTensorLike> joinFeeds = new LinkedHashMap<>();
                for (String name : session.getInputNames()) {
                    OnnxTensorLike t = feeds.containsKey(name) ? feeds.get(name)
                            : pointCuts.contains(name) ? pointCut.tensor(name) : imageCut.tensor(name);
                    joinFeeds.put(name, t);
                }
                runFeeds = joinFeeds;
            }
            try (org.pvn3d.ort.Result r = session.run(runFeeds, wanted)) {
                float[] rr = r.tensor(PoseHeadGraph.R).getFloatArray();
                float[] tt = r.tensor(PoseHeadGraph.T).getFloatArray();
                float[] kk = r.tensor(PoseHeadGraph.KPS).getFloatArray();
                long[] inl = r.tensor(PoseHeadGraph.INLIERS).getLongArray();
                boolean[] masks = config.downloadMask() ? r.tensor(PoseHeadGraph.MASK).getBooleanArray() : null;
                List<FramePose> poses = new ArrayList<>(b);
                for (int f = 0; f < b; f++) {
                    boolean[] mask = masks == null ? null : java.util.Arrays.copyOfRange(masks, f * n, (f + 1) * n);
                    Pose pose = pose(java.util.Arrays.copyOfRange(rr, f * 9, f * 9 + 9), java.util.Arrays.copyOfRange(tt, f * 3, f * 3 + 3));
                    poses.add(new FramePose(pose, java.util.Arrays.copyOfRange(kk, f * 3 * k, (f + 1) * 3 * k), (int) inl[f], mask));
                }
                return poses;
            }
        } finally {
            if (pointCut != null) {
                pointCut.close();
            }
            if (imageCut != null) {
                imageCut.close();
            }
            feeds.values().forEach(OnnxTensor::close);
        }
    }

    private static Pose pose(float[] r, float[] t) {
        return Float.isNaN(r[0]) ? Pose.invalid() : Pose.of(r, t);
    }

    private static void closeQuietly(Throwable primary, AutoCloseable... resources) {
        for (AutoCloseable c : resources) {
            if (c != null) {
                try {
                    c.close();
                } catch (Exception e) {
                    primary.addSuppressed(e);
                }
            }
        }
    }

    private static OrtException closedError() {
        return new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "FrameToPose is closed");
    }

    /** Submits the point branch's run to its thread; a close under way makes it the closed error. */
    private <T> java.util.concurrent.Future<T> submitPoints(java.util.concurrent.Callable<T> task) {
        try {
            return worker.submit(task);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            throw closedError();
        }
    }

    @Override
    public void close() {
        closed = true;
        boolean cuda = config.provider() == Pvn3dPipeline.Provider.CUDA;
        if (cuda) {
            CUDA_LIFECYCLE.writeLock().lock();
        }
        try {
            closeAll();
        } finally {
            if (cuda) {
                CUDA_LIFECYCLE.writeLock().unlock();
            }
        }
    }

    private void closeAll() {
        RuntimeException failure = null;
        if (worker != null) {
            worker.shutdown(); // a point run in flight ends before its session closes
            try {
                if (!worker.awaitTermination(1, java.util.concurrent.TimeUnit.MINUTES)) {
                    failure = new IllegalStateException("the point branch's thread did not stop");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                failure = new IllegalStateException("interrupted while the point branch's thread stopped", e);
            }
        }
        // in the reverse order of creation: bindings and tensors before the buffers they point into, sessions
        // before their options, domains and the streams they compute on
        List<AutoCloseable> order = new ArrayList<>(owned);
        Collections.reverse(order);
        for (AutoCloseable c : order) {
            try {
                c.close();
            } catch (Exception e) {
                if (failure == null) {
                    failure = e instanceof RuntimeException re ? re : new IllegalStateException(e);
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        owned.clear();
        if (failure != null) {
            throw failure;
        }
    }
}
