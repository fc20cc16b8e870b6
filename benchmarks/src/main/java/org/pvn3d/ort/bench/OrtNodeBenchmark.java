package org.pvn3d.ort.bench;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.pvn3d.ort.DeviceTensor;
import org.pvn3d.ort.OnnxTensor;
import org.pvn3d.ort.OnnxTensorLike;
import org.pvn3d.ort.OrtEnvironment;
import org.pvn3d.ort.OrtIoBinding;
import org.pvn3d.ort.OrtSession;
import org.pvn3d.ort.SessionOptions;
import org.pvn3d.ort.cuda.DeviceBuffer;
import org.pvn3d.ort.customop.CustomOpDomain;
import org.pvn3d.ort.ops.Pvn3dOps;
import org.pvn3d.ort.providers.OrtCUDAProviderOptions;

/**
 * The same operators and sizes as {@link KernelBenchmark}, each as a one-node model (written by
 * benchmarks/scripts/make_bench_models.py, on the class path under /bench-models/) run through this
 * project's API with {@link Pvn3dOps#register} on ORT's CPU provider or its CUDA provider
 * ({@code addExecutionProvider(new OrtCUDAProviderOptions(0))}). Providers:
 * <ul>
 * <li>{@code cpu}: one {@code session.run} with host input tensors over the same data as the direct
 * benchmark and preallocated host outputs; compare with {@link KernelBenchmark}'s {@code cpu}.
 * <li>{@code cuda}: the same host tensors on the CUDA provider: ORT copies the inputs in and the
 * outputs out on every run and waits for them, so compare with {@link KernelBenchmark}'s
 * {@code cudaCopy} (copies from pageable memory are noisy, so this difference is too).
 * <li>{@code cudaDevice}: device-resident, the way a GPU service runs: inputs and preallocated
 * outputs in GPU memory, bound once with an {@link OrtIoBinding}, one {@code session.run(binding)}
 * per call, which returns once ORT has synchronised its stream. Compare with
 * {@link KernelBenchmark}'s {@code cuda} wall time (launch + wait): the difference is ORT's own cost
 * plus the Java upcall bridge, per node, with no copies on either side.
 * </ul>
 *
 * <p>Sessions use one intra-op thread (the custom CPU kernels bring their own threads; ORT's
 * spinning pool would only compete with them) and {@link org.pvn3d.ort.ops.CudaIndexCheck#DEFERRED},
 * the default. Wall-clock time per run (JMH sample time).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xmx4g"})
public class OrtNodeBenchmark {
    @Param({
        "FPS_B1_N12288_np2048", "FPS_B1_N16384_np4096", "FPS_B8_N16384_np4096",
        "BallQuery_B1_N12288_M2048_S16_r0.0175", "BallQuery_B1_N12288_M2048_S32_r0.025",
        "BallQuery_B8_N16384_M4096_S32_r0.025",
        "GroupPoints_B8_C256_N1024_M512_S32", "GroupPoints_B1_C99_N2048_M1024_S32",
        "ThreeNN_B1_n12288_m2048", "ThreeNN_B8_n16384_m4096",
        "ThreeInterpolate_B1_C128_m2048_n12288", "ThreeInterpolate_B8_C256_m4096_n16384",
        "GatherPoints_B8_C256_N4096_M1024",
        "VoteAggregate_B1_K9_N3000", "VoteAggregate_B4_K9_N3000",
        "PoseSolve_B1_K9_N3000", "PoseSolve_B4_K9_N3000"})
    public String kernel;

    @Param({"cpu", "cuda", "cudaDevice"})
    public String provider;

    private Arena arena;
    private SessionOptions options;
    private CustomOpDomain domain;
    private OrtSession session;
    private final Map<String, OnnxTensorLike> inputs = new LinkedHashMap<>();
    private final Map<String, OnnxTensorLike> outputs = new LinkedHashMap<>();
    private final List<DeviceBuffer> deviceBuffers = new ArrayList<>();
    private OrtIoBinding binding;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        KernelCase kc = new KernelCase(kernel);
        byte[] model = BenchData.resource(kc.modelResource());
        EventSamples.setWork(kc.bytesPerCall(), kc.pairsPerCall());
        arena = Arena.ofShared();
        boolean cuda = switch (provider) {
            case "cpu" -> false;
            case "cuda", "cudaDevice" -> true;
            default -> throw new IllegalArgumentException("provider must be cpu, cuda or cudaDevice, not " + provider);
        };
        boolean onDevice = provider.equals("cudaDevice");
        List<KernelCase.HostTensor> ins = kc.inputs(arena);
        List<KernelCase.HostTensor> outs = kc.outputs(arena);
        for (KernelCase.HostTensor t : ins) {
            inputs.put(t.name(), onDevice ? deviceTensor(t, true) : OnnxTensor.fromSegment(t.data(), t.type(), t.shape()));
        }
        for (KernelCase.HostTensor t : outs) {
            outputs.put(t.name(), onDevice ? deviceTensor(t, false) : OnnxTensor.fromSegment(t.data(), t.type(), t.shape()));
        }
        options = new SessionOptions();
        options.setIntraOpNumThreads(1);
        domain = Pvn3dOps.register(options);
        if (cuda) {
            options.addExecutionProvider(new OrtCUDAProviderOptions(0));
        }
        session = OrtEnvironment.getEnvironment().createSession(model, options);
        if (onDevice) {
            binding = session.createIoBinding();
            inputs.forEach(binding::bindInput);
            outputs.forEach(binding::bindOutput);
        }
        long launches = Pvn3dOps.cudaLaunchCount();
        run();
        if (cuda && Pvn3dOps.cudaLaunchCount() == launches) {
            throw new IllegalStateException("the CUDA provider did not run the " + kc.operatorName()
                    + " node on the GPU (it fell back to the CPU kernel)");
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        domain.checkDeferredErrors();
        if (binding != null) {
            binding.close();
        }
        session.close();
        options.close();
        inputs.values().forEach(OnnxTensorLike::close);
        outputs.values().forEach(OnnxTensorLike::close);
        deviceBuffers.forEach(DeviceBuffer::close);
        arena.close();
    }

    /** A tensor over GPU memory holding a copy of {@code t}'s data (inputs) or {@code t}'s size (outputs). */
    private DeviceTensor deviceTensor(KernelCase.HostTensor t, boolean copy) {
        DeviceBuffer b = DeviceBuffer.allocate(0, Math.max(1, t.data().byteSize()));
        deviceBuffers.add(b);
        if (copy) {
            b.copyFromHost(t.data());
        }
        return DeviceTensor.createTensor(b, t.type(), t.shape());
    }

    /** One run of the one-node model into the preallocated outputs. */
    @Benchmark
    public void run() {
        if (binding != null) {
            session.run(binding);
        } else {
            session.run(inputs, outputs, null);
        }
    }
}
