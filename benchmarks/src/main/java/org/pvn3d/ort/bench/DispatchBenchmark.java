package org.pvn3d.ort.bench;

import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_cuda_memcpy_d2d_async;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
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
import org.pvn3d.ort.OnnxTensorType;
import org.pvn3d.ort.OrtEnvironment;
import org.pvn3d.ort.OrtIoBinding;
import org.pvn3d.ort.OrtSession;
import org.pvn3d.ort.SessionOptions;
import org.pvn3d.ort.cuda.DeviceBuffer;
import org.pvn3d.ort.customop.CustomKernel;
import org.pvn3d.ort.customop.CustomOp;
import org.pvn3d.ort.customop.CustomOpDomain;
import org.pvn3d.ort.customop.KernelContext;
import org.pvn3d.ort.customop.KernelTensor;
import org.pvn3d.ort.ops.OpsLibrary;
import org.pvn3d.ort.ops.Pvn3dOps;
import org.pvn3d.ort.providers.OrtCUDAProviderOptions;

/**
 * What a custom-operator node costs on top of a built-in node doing the same work: one-node models
 * (bench-models/dispatch_*.onnx and gather_points.onnx, written by make_bench_models.py), each run
 * into preallocated outputs, in pairs:
 * <ul>
 * <li>{@code javaNop} against {@code identity}: 16 floats copied from x to y, by a custom operator
 * defined in Java ({@code JavaNop}: a {@code MemorySegment.copy} on the CPU, a device-to-device
 * {@code cudaMemcpyAsync} on ORT's stream on CUDA) and by ORT's own {@code Identity} (a memcpy, a
 * {@code cudaMemcpyAsync}). The difference is the cost of the bridge: the upcall, the kernel's
 * context, reading the input and allocating the output through ORT's C API;</li>
 * <li>{@code gatherPoints} against {@code gather}: {@code PVN3D_GatherPoints} (features [1,3,1024],
 * idx [1,256] -> [1,3,256]; this project's C kernel) against ORT's {@code Gather} on axis 2 (idx
 * [256]) of the same data: the same work by a real operator, so the difference also holds the two
 * kernels' own speed.</li>
 * </ul>
 * Providers: {@code cpu} (host tensors, {@code run(inputs, outputs, null)}) and {@code cudaDevice}
 * (device-resident inputs and preallocated outputs bound once with an {@link OrtIoBinding}, one
 * {@code run(binding)} per call, which returns once ORT has synchronised its stream; needs a CUDA
 * build of ORT and of libpvn3d_ops). One intra-op thread; run the CPU case with
 * {@code OMP_NUM_THREADS=1} so that the PVN3D kernel is single-threaded like ORT's. Run with
 * {@code -prof gc}: the custom-operator runs allocate nothing ({@code gc.alloc.rate.norm} 0 B/op).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xmx1g"})
public class DispatchBenchmark {
    static final int NOP_FLOATS = 16;
    static final long C = 3;
    static final long N = 1024;
    static final long M = 256;

    @Param({"javaNop", "identity", "gatherPoints", "gather"})
    public String node;

    @Param({"cpu", "cudaDevice"})
    public String provider;

    private Arena arena;
    private SessionOptions options;
    private CustomOpDomain domain;
    private OrtSession session;
    private final Map<String, OnnxTensorLike> inputs = new LinkedHashMap<>();
    private final Map<String, OnnxTensorLike> outputs = new LinkedHashMap<>();
    private final List<DeviceBuffer> deviceBuffers = new ArrayList<>();
    private OrtIoBinding binding;

    /** JavaNop: y = x, copied by the kernel (host memory on the CPU, a device copy on ORT's stream on CUDA). */
    static final class Nop implements CustomKernel {
        private final boolean cuda;

        Nop(boolean cuda) {
            this.cuda = cuda;
        }

        @Override
        public void compute(KernelContext ctx) {
            KernelTensor x = ctx.input(0, OnnxTensorType.FLOAT, 1);
            KernelTensor y = ctx.output(0, x.dim(0));
            long bytes = x.dim(0) * Float.BYTES;
            if (cuda) {
                OpsLibrary.check(pvn3d_cuda_memcpy_d2d_async(y.data(), x.data(), bytes, ctx.gpuStream()));
            } else {
                MemorySegment.copy(x.data(), 0, y.data(), 0, bytes);
            }
        }
    }

    static CustomOp nop(boolean cuda) {
        return CustomOp.builder("JavaNop")
                .executionProvider(cuda ? CustomOp.CUDA : CustomOp.CPU)
                .input("x", OnnxTensorType.FLOAT)
                .output("y", OnnxTensorType.FLOAT)
                .kernel(info -> new Nop(cuda))
                .build();
    }

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        boolean onDevice = switch (provider) {
            case "cpu" -> false;
            case "cudaDevice" -> true;
            default -> throw new IllegalArgumentException("provider must be cpu or cudaDevice, not " + provider);
        };
        arena = Arena.ofShared();
        BenchData d = new BenchData(11);
        String model;
        switch (node) {
            case "javaNop", "identity" -> {
                model = node.equals("javaNop") ? "dispatch_java_nop" : "dispatch_identity";
                add(inputs, "x", OnnxTensorType.FLOAT, new long[] {NOP_FLOATS}, d.floats(arena, NOP_FLOATS, -1, 1), onDevice);
                add(outputs, "y", OnnxTensorType.FLOAT, new long[] {NOP_FLOATS}, zeros(NOP_FLOATS * 4), onDevice);
            }
            case "gatherPoints", "gather" -> {
                model = node.equals("gather") ? "dispatch_gather" : "gather_points";
                add(inputs, "features", OnnxTensorType.FLOAT, new long[] {1, C, N}, d.floats(arena, C * N, -1, 1), onDevice);
                MemorySegment idx = d.indices(arena, M, N);
                add(inputs, "idx", OnnxTensorType.INT64, node.equals("gather") ? new long[] {M} : new long[] {1, M}, idx, onDevice);
                add(outputs, "out", OnnxTensorType.FLOAT, new long[] {1, C, M}, zeros(C * M * 4), onDevice);
            }
            default -> throw new IllegalArgumentException("node must be javaNop, identity, gatherPoints or gather, not " + node);
        }
        options = new SessionOptions();
        options.setIntraOpNumThreads(1);
        if (node.equals("javaNop")) {
            if (onDevice) {
                OpsLibrary.load(); // the device copy is libpvn3d_ops's
            }
            domain = CustomOpDomain.of("bench.java", nop(false), nop(true));
            options.registerCustomOps(domain);
        } else if (node.equals("gatherPoints")) {
            domain = Pvn3dOps.register(options);
        }
        if (onDevice) {
            options.addExecutionProvider(new OrtCUDAProviderOptions(0));
        }
        session = OrtEnvironment.getEnvironment().createSession(BenchData.resource("/bench-models/" + model + ".onnx"), options);
        if (onDevice) {
            binding = session.createIoBinding();
            inputs.forEach(binding::bindInput);
            outputs.forEach(binding::bindOutput);
        }
        run();
    }

    private MemorySegment zeros(long bytes) {
        return arena.allocate(bytes, 8);
    }

    private void add(Map<String, OnnxTensorLike> m, String name, OnnxTensorType type, long[] shape, MemorySegment host,
            boolean onDevice) {
        if (!onDevice) {
            m.put(name, OnnxTensor.fromSegment(host, type, shape));
            return;
        }
        DeviceBuffer b = DeviceBuffer.allocate(0, host.byteSize());
        deviceBuffers.add(b);
        b.copyFromHost(host);
        m.put(name, DeviceTensor.createTensor(b, type, shape));
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        if (binding != null) {
            binding.close();
        }
        session.close();
        options.close();
        if (domain != null) {
            domain.close();
        }
        inputs.values().forEach(OnnxTensorLike::close);
        outputs.values().forEach(OnnxTensorLike::close);
        deviceBuffers.forEach(DeviceBuffer::close);
        arena.close();
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
