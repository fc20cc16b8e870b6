package org.pvn3d.ort.ops;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_cuda_device_count;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_get_num_threads;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_set_num_threads;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.SessionOptions;
import org.pvn3d.ort.customop.CustomOp;
import org.pvn3d.ort.customop.CustomOpDomain;
import org.pvn3d.ort.profile.ProfileSummary;

/**
 * The six PointNet++ operators and the three pose operators of spec/ops.md as ORT custom operators,
 * each with a CPU kernel and a CUDA kernel from libpvn3d_ops, under the domain {@value #DOMAIN}.
 * One {@link #register} call adds all nine.
 *
 * <pre>{@code
 * try (var options = new SessionOptions()) {
 *     CustomOpDomain ops = Pvn3dOps.register(options);
 *     try (OrtSession session = env.createSession(model, options)) { ... }
 * }
 * }</pre>
 *
 * The CPU kernels run on ORT's calling thread; the CUDA kernels launch on ORT's compute stream
 * ({@code KernelContext_GetGPUComputeStream}) and never synchronise it (see {@link CudaIndexCheck}
 * for the one thing that can only be known afterwards).
 *
 * <p><b>CPU threads.</b> A CPU kernel fans out over libpvn3d_ops's own helper threads, up to
 * {@link #cpuThreads()} threads with the caller (by default {@code OMP_NUM_THREADS}, else every core),
 * whatever the session's {@link SessionOptions#setIntraOpNumThreads intra-op threads} are: those are
 * ORT's pool, a separate set of threads that ORT's built-in nodes use. ORT runs one node at a time, so
 * the two sets take turns. The helpers sleep as soon as a kernel's work is handed out and never hold a
 * kernel up while they wake (the calling thread starts at once); one kernel call at a time has them, and
 * a call that finds them busy (another session's node) runs on its own thread. FurthestPointSample's
 * teams, which exchange a result every step, are an OpenMP region, whose idle threads spin as
 * {@code OMP_WAIT_POLICY} says (libgomp's default spins, then sleeps). ORT's pool keeps spinning after
 * its work unless {@code session.intra_op.allow_spinning} is {@code "0"}. What to do about it:
 * <ul>
 *   <li>a graph that mixes both (the PVN3D network): let one side sleep when idle, ORT's with
 *       {@link #letIntraOpThreadsSleep} (its own nodes then start a little later; the PVN3D pipelines do
 *       this on the CPU provider) or OpenMP's with {@code OMP_WAIT_POLICY=PASSIVE} (read once, when the
 *       library loads). Measured on 2 cores (benchmarks/results/2026-12-05-cpu-spinning): the tiny PVN3D
 *       network's median run 15.9 -&gt; 9.3 ms and its p90 25-133 -&gt; 13-18 ms with ORT's threads
 *       sleeping, the embedded PointNet++ model 8.3 -&gt; 5.3 ms; on 16 cores one FurthestPointSample node
 *       took 143 ms beside ORT's spinning threads and 54 ms with OpenMP passive;</li>
 *   <li>several sessions at once: their PVN3D nodes share the helpers, one node at a time, the others
 *       on their own threads; {@link #setCpuThreads} caps the helpers;</li>
 *   <li>a graph of mostly PVN3D nodes: one intra-op thread ({@code setIntraOpNumThreads(1)}: ORT
 *       then makes no pool at all) and the kernels on every core.</li>
 * </ul>
 */
public final class Pvn3dOps {
    /** The ONNX domain of the operators. */
    public static final String DOMAIN = "ai.onnx.contrib";

    /** The PointNet++ operator names, in spec order. */
    public static final List<String> OPERATORS = List.of(FurthestPointSample.NAME, GatherPoints.NAME, BallQuery.NAME,
            GroupPoints.NAME, ThreeNN.NAME, ThreeInterpolate.NAME);

    /** The pose operator names, in spec order (registered together with {@link #OPERATORS}). */
    public static final List<String> POSE_OPERATORS = List.of(VoteAggregate.NAME, KabschSolver.NAME, PoseSolve.NAME);

    private Pvn3dOps() {}

    /**
     * The eighteen operator descriptions: each of the nine operators ({@link #OPERATORS}, then
     * {@link #POSE_OPERATORS}) for the CPU and the CUDA provider. {@code indexCheck} also governs
     * the CUDA Kabsch kernels' report of a non-finite model_kps / pred_kps value. Loads libpvn3d_ops
     * first, so a missing library fails here.
     */
    public static List<CustomOp> operators(CudaIndexCheck indexCheck) {
        OpsLibrary.load();
        List<CustomOp> ops = new ArrayList<>();
        for (boolean cuda : new boolean[] {false, true}) {
            ops.add(FurthestPointSample.op(cuda, indexCheck));
            ops.add(GatherPoints.op(cuda, indexCheck));
            ops.add(BallQuery.op(cuda, indexCheck));
            ops.add(GroupPoints.op(cuda, indexCheck));
            ops.add(ThreeNN.op(cuda, indexCheck));
            ops.add(ThreeInterpolate.op(cuda, indexCheck));
            ops.add(VoteAggregate.op(cuda, indexCheck));
            ops.add(KabschSolver.op(cuda, indexCheck));
            ops.add(PoseSolve.op(cuda, indexCheck));
        }
        return ops;
    }

    /** A new domain with all eighteen kernels; loads libpvn3d_ops first so a missing library fails here. */
    public static CustomOpDomain createDomain(CudaIndexCheck indexCheck) {
        nativeVersion();
        return new CustomOpDomain(DOMAIN, operators(indexCheck));
    }

    /** {@link #createDomain(CudaIndexCheck)} with {@link CudaIndexCheck#DEFERRED}. */
    public static CustomOpDomain createDomain() {
        return createDomain(CudaIndexCheck.DEFERRED);
    }

    /**
     * Adds all nine operators (CPU and CUDA kernels) to {@code options}. The returned domain lives as
     * long as the options and their sessions need it; a session's run fails with the CUDA kernels'
     * deferred index errors by itself (see {@link CudaIndexCheck#DEFERRED}). Closing it is optional.
     */
    public static CustomOpDomain register(SessionOptions options, CudaIndexCheck indexCheck) {
        CustomOpDomain domain = createDomain(indexCheck);
        options.registerCustomOps(domain);
        return domain;
    }

    /** {@link #register(SessionOptions, CudaIndexCheck)} with {@link CudaIndexCheck#DEFERRED}. */
    public static CustomOpDomain register(SessionOptions options) {
        return register(options, CudaIndexCheck.DEFERRED);
    }

    /**
     * Lets ORT's intra-op threads sleep when they have no work ({@code session.intra_op.allow_spinning} = 0)
     * instead of spinning on every core while these operators' CPU kernels run (see "CPU threads" above).
     * For sessions on the CPU provider that run PVN3D nodes; the CUDA kernels use no CPU threads. Returns
     * {@code options}.
     */
    public static SessionOptions letIntraOpThreadsSleep(SessionOptions options) {
        return options.addConfigEntry("session.intra_op.allow_spinning", "0");
    }

    /** The most threads {@link #setCpuThreads} takes (the native library's {@code PVN3D_MAX_THREADS}). */
    public static final int MAX_CPU_THREADS = 1024;

    /**
     * Sets how many threads the CPU kernels use, for the whole process and every session in it (the
     * kernels read it at each call): {@code 1 <= n <= MAX_CPU_THREADS} sets it, {@code n <= 0} restores
     * the default, {@code OMP_NUM_THREADS} or else every core. The results never depend on it. See "CPU
     * threads" above for when to lower it.
     *
     * @throws IllegalArgumentException for more than {@link #MAX_CPU_THREADS}
     */
    public static void setCpuThreads(int n) {
        if (n > MAX_CPU_THREADS) {
            throw new IllegalArgumentException("at most " + MAX_CPU_THREADS + " CPU kernel threads, not " + n);
        }
        OpsLibrary.load();
        pvn3d_set_num_threads(n);
    }

    /** The threads the CPU kernels use now (see {@link #setCpuThreads}). */
    public static int cpuThreads() {
        OpsLibrary.load();
        return pvn3d_get_num_threads();
    }

    /** The loaded libpvn3d_ops's version ("MAJOR.MINOR.PATCH"). */
    public static String nativeVersion() {
        OpsLibrary.load();
        return OpsLibrary.version();
    }

    /** Where libpvn3d_ops was loaded from. */
    public static Path nativeLibrary() {
        return OpsLibrary.load();
    }

    /** Whether libpvn3d_ops was built with its CUDA kernels. */
    public static boolean nativeBuiltWithCuda() {
        OpsLibrary.load();
        return OpsLibrary.builtWithCuda();
    }

    /** CUDA devices visible to libpvn3d_ops (0 without a device, a driver, or a CUDA build). */
    public static int cudaDeviceCount() {
        OpsLibrary.load();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_INT);
            int status = pvn3d_cuda_device_count(out);
            return status == OpsLibrary.OK ? out.get(JAVA_INT, 0) : 0;
        }
    }

    /**
     * Diagnostics: the CUDA stream (its address) the most recent CUDA launch of a PVN3D operator
     * ran on, as ORT handed it to the kernel ({@code KernelContext_GetGPUComputeStream}); 0 before any.
     */
    public static long lastCudaStream() {
        return Pvn3dKernel.LAST_CUDA_STREAM.get();
    }

    /** Diagnostics: how many CUDA launches the PVN3D operators made in this process. */
    public static long cudaLaunchCount() {
        return Pvn3dKernel.CUDA_LAUNCHES.get();
    }

    /**
     * Device timing of the CUDA kernels (off by default; {@code -Dpvn3d.deviceTiming=true} turns it on at
     * start): each CUDA launch of these operators is bracketed by two CUDA events on ORT's compute stream,
     * read after the run without synchronising inside it; {@link #deviceTimings()} has the totals.
     */
    public static void setDeviceTiming(boolean on) {
        LaunchTimer.setEnabled(on);
    }

    public static boolean isDeviceTiming() {
        return LaunchTimer.isEnabled();
    }

    /** One operator's timed CUDA launches: how many, and their device time (milliseconds) in all, fastest, slowest. */
    public record DeviceTiming(String operator, long launches, double totalMs, double minMs, double maxMs) {
        public double meanMs() {
            return launches == 0 ? 0 : totalMs / launches;
        }
    }

    /** The device times measured so far, by operator name (a run's are added once the run has returned). */
    public static List<DeviceTiming> deviceTimings() {
        List<DeviceTiming> out = new ArrayList<>();
        LaunchTimer.totals().forEach((op, t) -> out.add(new DeviceTiming(op, (long) t[0], t[1], t[2], t[3])));
        return out;
    }

    /** {@link #deviceTimings()} as {@link ProfileSummary#withDeviceTimes} takes them. */
    public static Map<String, ProfileSummary.DeviceTime> deviceTimes() {
        Map<String, ProfileSummary.DeviceTime> m = new LinkedHashMap<>();
        for (DeviceTiming t : deviceTimings()) {
            m.put(t.operator(), new ProfileSummary.DeviceTime(t.launches(), t.totalMs()));
        }
        return m;
    }

    /** Forgets the device times measured so far. */
    public static void resetDeviceTimes() {
        LaunchTimer.reset();
    }

    /** The device times as a table (one line per operator), or a line saying there are none. */
    public static String deviceTimingTable() {
        List<DeviceTiming> all = deviceTimings();
        if (all.isEmpty()) {
            return "device timing: no CUDA launch timed" + (isDeviceTiming() ? "" : " (off)") + "\n";
        }
        StringBuilder sb = new StringBuilder("device time of the CUDA launches (CUDA events on ORT's stream):\n");
        sb.append(String.format(Locale.ROOT, "  %-28s %8s %11s %10s %10s %10s%n", "operator", "launches", "total ms", "mean us",
                "min us", "max us"));
        for (DeviceTiming t : all) {
            sb.append(String.format(Locale.ROOT, "  %-28s %8d %11.3f %10.1f %10.1f %10.1f%n", t.operator(), t.launches(), t.totalMs(),
                    1000 * t.meanMs(), 1000 * t.minMs(), 1000 * t.maxMs()));
        }
        return sb.toString();
    }

    /** An OrtException's message without its "[CODE] " prefix. */
    static String rawMessage(OrtException e) {
        String m = e.getMessage();
        String prefix = "[" + e.getCode() + "] ";
        return m.startsWith(prefix) ? m.substring(prefix.length()) : m;
    }
}
