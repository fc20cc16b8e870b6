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
 * What the six PointNet++ kernels share: which provider they run on, the CUDA index-error flags of
 * the operators that read indices, and the checks of 3-vector point clouds.
 */
abstract class Pvn3dKernel implements CustomKernel {
    /** Diagnostics: how many CUDA launches there were and on which stream the last one ran. */
    static final AtomicLong CUDA_LAUNCHES = new AtomicLong();
    static final AtomicLong LAST_CUDA_STREAM = new AtomicLong();

    final boolean cuda;
    private final CudaIndexCheck indexCheck;
    private final IndexErrorSlots slots;

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
    }

    static String provider(boolean cuda) {
        return cuda ? CustomOp.CUDA : CustomOp.CPU;
    }

    /** ORT's compute stream for this kernel's launch (recorded for {@link Pvn3dOps#lastCudaStream()}). */
    static MemorySegment cudaStream(KernelContext ctx) {
        MemorySegment stream = ctx.gpuStream();
        LAST_CUDA_STREAM.set(stream.address());
        CUDA_LAUNCHES.incrementAndGet();
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
        if (slots != null && indexCheck == CudaIndexCheck.DEFERRED) {
            slots.checkAll();
        }
    }

    @Override
    public void close() {
        if (slots != null) {
            slots.close();
        }
    }
}
