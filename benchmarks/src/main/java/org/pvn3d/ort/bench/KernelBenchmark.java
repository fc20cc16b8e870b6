package org.pvn3d.ort.bench;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
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
import org.pvn3d.ort.ops.OpsLibrary;

/**
 * Every operator's CPU kernel and CUDA kernel called directly through libpvn3d_ops's C ABI (FFM
 * downcalls, no ORT), at PVN3D's sizes (perf-targets.md; the same sizes and input kinds as
 * cuda-ops/tests/bench_cuda_ops.cpp).
 *
 * <p>{@code device}:
 * <ul>
 *   <li>{@code cpu}: the CPU kernel on host memory (the library's helper threads over the machine's cores). The primary
 *       result is JMH's wall-clock time per call.</li>
 *   <li>{@code cuda}: inputs and outputs already in device memory; each call records a start event,
 *       launches, records an end event on a stream of its own and waits for the end event. The
 *       primary result is the wall time of that (launch and wait included, as the Java caller sees
 *       it); the GPU time of the launch is the {@code cuda-event} secondary result, which
 *       {@link CudaEventProfiler} adds (the run scripts pass {@code -prof}).</li>
 *   <li>{@code cudaCopy}: as {@code cuda}, but the events also bracket copying the inputs from
 *       pageable host memory and the outputs back: what the CUDA provider of ORT does around a
 *       one-node model run with host tensors, so {@link OrtNodeBenchmark}'s CUDA time minus this
 *       is the cost of ORT and the Java upcall bridge.</li>
 * </ul>
 * The CUDA launchers of GatherPoints, GroupPoints and ThreeInterpolate get a device index-error flag
 * (their default protocol: a 16-byte memset and a one-thread kernel on the stream), PoseSolve's its
 * device {@code input_error} flag (non-finite model keypoints), as the ORT nodes pass them.
 *
 * <p>The pose operators (VoteAggregate = mean shift, and the fused PoseSolve = mean shift + Kabsch)
 * run at PVN3D's sizes, 9 keypoints × 3000 votes, B = 1 and 4, with PVN3D's attributes (see
 * {@link KernelCase}); their CUDA launchers get a device workspace of
 * {@code pvn3d_*_cuda_workspace_bytes}, allocated once in the set-up, as FPS's.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xmx4g"})
public class KernelBenchmark {
    /**
     * Every size of perf-targets.md, and the pose operators at B = 1 and 4; the first of each
     * operator is its main size.
     */
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

    @Param({"cpu", "cuda", "cudaCopy"})
    public String device;

    private KernelCase kc;
    private Arena arena;
    private MemorySegment[] hostIn;
    private MemorySegment[] hostOut;
    private MemorySegment[] devIn;
    private MemorySegment[] devOut;
    private MemorySegment workspace = MemorySegment.NULL;
    private long workspaceBytes;
    private MemorySegment indexError = MemorySegment.NULL;
    private MemorySegment stream;
    private MemorySegment start;
    private MemorySegment end;
    private MemorySegment elapsed;
    private boolean copies;

    @Setup(Level.Trial)
    public void setUp() {
        kc = new KernelCase(kernel);
        arena = Arena.ofShared();
        List<KernelCase.HostTensor> ins = kc.inputs(arena);
        List<KernelCase.HostTensor> outs = kc.outputs(arena);
        hostIn = ins.stream().map(KernelCase.HostTensor::data).toArray(MemorySegment[]::new);
        hostOut = outs.stream().map(KernelCase.HostTensor::data).toArray(MemorySegment[]::new);
        EventSamples.setWork(kc.bytesPerCall(), kc.pairsPerCall());
        switch (device) {
            case "cpu" -> {
                // one call up front: fails here, not in the timed loop, on a bad size
                call();
            }
            case "cuda", "cudaCopy" -> {
                Cuda.require();
                copies = device.equals("cudaCopy");
                stream = Cuda.streamCreate();
                start = Cuda.eventCreate();
                end = Cuda.eventCreate();
                elapsed = arena.allocate(JAVA_FLOAT);
                devIn = new MemorySegment[hostIn.length];
                for (int i = 0; i < hostIn.length; i++) {
                    devIn[i] = Cuda.upload(hostIn[i], stream);
                }
                devOut = new MemorySegment[hostOut.length];
                for (int i = 0; i < hostOut.length; i++) {
                    devOut[i] = Cuda.malloc(hostOut[i].byteSize());
                }
                workspaceBytes = kc.cudaWorkspaceBytes();
                if (workspaceBytes > 0) {
                    workspace = Cuda.malloc(workspaceBytes);
                }
                if (kc.hasIndexError()) {
                    indexError = Cuda.malloc(16);
                }
                call();
                EventSamples.clear();
            }
            default -> throw new IllegalArgumentException("device must be cpu, cuda or cudaCopy, not " + device);
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        if (stream != null) {
            Cuda.streamSynchronize(stream);
            for (MemorySegment p : devIn) {
                Cuda.free(p);
            }
            for (MemorySegment p : devOut) {
                Cuda.free(p);
            }
            if (workspaceBytes > 0) {
                Cuda.free(workspace);
            }
            if (kc.hasIndexError()) {
                Cuda.free(indexError);
            }
            Cuda.eventDestroy(start);
            Cuda.eventDestroy(end);
            Cuda.streamDestroy(stream);
            stream = null;
        }
        arena.close();
    }

    /** One call; on CUDA, bracketed by events and waited for, its GPU time handed to the profiler. */
    @Benchmark
    public void call() {
        if (stream == null) {
            OpsLibrary.check(kc.cpu(hostIn, hostOut));
            return;
        }
        Cuda.eventRecord(start, stream);
        if (copies) {
            for (int i = 0; i < hostIn.length; i++) {
                Cuda.h2d(devIn[i], hostIn[i], stream);
            }
        }
        OpsLibrary.check(kc.cuda(devIn, devOut, workspace, workspaceBytes, indexError, stream));
        if (copies) {
            for (int i = 0; i < hostOut.length; i++) {
                Cuda.d2h(hostOut[i], devOut[i], stream);
            }
        }
        Cuda.eventRecord(end, stream);
        Cuda.eventSynchronize(end);
        EventSamples.add(Math.round(Cuda.elapsedMs(elapsed, start, end) * 1e6));
    }
}
