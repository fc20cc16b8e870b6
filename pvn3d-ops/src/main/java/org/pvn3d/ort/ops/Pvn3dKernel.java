package org.pvn3d.ort.ops;

import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_cuda_stream_synchronize;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicLong;
import org.pvn3d.ort.OnnxTensorType;
import org.pvn3d.ort.customop.CustomKernel;
import org.pvn3d.ort.customop.CustomOp;
import org.pvn3d.ort.customop.KernelContext;
import org.pvn3d.ort.customop.KernelTensor;

/**
 * What the kernels share: which provider they run on, the CUDA index-error flags of the operators that
 * read indices, the checks of 3-vector point clouds, and the optional device timing of the CUDA
 * launches ({@link LaunchTimer}).
 */
abstract class Pvn3dKernel implements CustomKernel {
    /** Diagnostics: how many CUDA launches there were and on which stream the last one ran. */
    static final AtomicLong CUDA_LAUNCHES = new AtomicLong();
    static final AtomicLong LAST_CUDA_STREAM = new AtomicLong();

    final boolean cuda;
    private final CudaIndexCheck indexCheck;
    private final IndexErrorSlots slots;
    private final LaunchTimer timer;

    /**
     * Loads libpvn3d_ops (once per process) before any kernel can call into it.
     *
     * @param indexInput the index input's name for a kernel that reads indices, else null
     */
    Pvn3dKernel(String op, boolean cuda, CudaIndexCheck indexCheck, String indexInput) {
        OpsLibrary.load();
        this.cuda = cuda;
        this.indexCheck = indexCheck;
        this.slots = cuda && indexInput != null && indexCheck != CudaIndexCheck.OFF
                ? new IndexErrorSlots(op, indexInput) : null;
        this.timer = cuda ? new LaunchTimer(op) : null;
    }

    /** The operator's work: reads the inputs, allocates the outputs, calls the CPU kernel or the CUDA launcher. */
    abstract void computeKernel(KernelContext ctx);

    /**
     * {@link #computeKernel}; with device timing on, a CUDA event is recorded on the compute stream when
     * the kernel asks for it ({@link #cudaStream}) and another once the launch is enqueued.
     */
    @Override
    public final void compute(KernelContext ctx) {
        if (timer == null) {
            computeKernel(ctx);
            return;
        }
        try {
            computeKernel(ctx);
        } finally {
            timer.stop();
        }
    }

    static String provider(boolean cuda) {
        return cuda ? CustomOp.CUDA : CustomOp.CPU;
    }

    /**
     * ORT's compute stream for this kernel's launch (recorded for {@link Pvn3dOps#lastCudaStream()}); with
     * device timing on, the launch's start event is recorded on it here.
     */
    MemorySegment cudaStream(KernelContext ctx) {
        MemorySegment stream = ctx.gpuStream();
        LAST_CUDA_STREAM.set(stream.address());
        CUDA_LAUNCHES.incrementAndGet();
        if (timer != null && LaunchTimer.isEnabled()) {
            timer.start(stream);
        }
        return stream;
    }

    /** A float32 [B, n, 3] input whose batch is {@code batch} (or any when batch < 0). */
    static KernelTensor points(KernelContext ctx, int index, long batch, String batchOrigin) {
        KernelTensor t = ctx.input(index, OnnxTensorType.FLOAT, 3);
        ctx.requireDim(t, 2, 3, "x, y, z");
        if (batch >= 0) {
            ctx.requireDim(t, 0, batch, "the batch size B of ", batchOrigin); // the message is built only on failure
        }
        return t;
    }

    /** The device flag for an index-reading CUDA launch (NULL when reporting is off). */
    MemorySegment indexFlag(MemorySegment stream, long limit) {
        return slots == null ? MemorySegment.NULL : slots.flagFor(stream, limit);
    }

    /** In {@link CudaIndexCheck#SYNC} mode: waits for the launch and fails the run on a bad index. */
    void afterIndexLaunch(MemorySegment stream) {
        if (slots != null && indexCheck == CudaIndexCheck.SYNC) {
            OpsLibrary.check(pvn3d_cuda_stream_synchronize(stream));
            slots.check(stream);
        }
    }

    @Override
    public void checkDeferred() {
        if (timer != null) {
            timer.collect(); // the launches' times that are complete (never waits)
        }
        if (slots != null && indexCheck == CudaIndexCheck.DEFERRED) {
            slots.checkAll();
        }
    }

    @Override
    public void close() {
        try {
            if (timer != null) {
                timer.close();
            }
        } finally {
            if (slots != null) {
                slots.close();
            }
        }
    }
}
