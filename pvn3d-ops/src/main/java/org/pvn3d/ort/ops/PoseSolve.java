package org.pvn3d.ort.ops;

import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.PVN3D_MASK_BOOL;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.PVN3D_MASK_FLOAT32;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_cuda_stream_synchronize;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_pose_solve_cpu;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_pose_solve_cuda;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_pose_solve_cuda_workspace_bytes;

import java.lang.foreign.MemorySegment;
import org.pvn3d.ort.OnnxTensorType;
import org.pvn3d.ort.customop.AttributeSpec;
import org.pvn3d.ort.customop.CustomOp;
import org.pvn3d.ort.customop.KernelContext;
import org.pvn3d.ort.customop.KernelInfo;
import org.pvn3d.ort.customop.KernelTensor;
import org.pvn3d.ort.customop.Port;

/**
 * PVN3D_PoseSolve: votes [B,K,N,3], mask [B,N] (bool or float), model_kps [K,3] or [B,K,3] -> R
 * [B,3,3], t [B,3], kps [B,K,3], inliers int64 [B] (optional output): VoteAggregate and
 * KabschSolver fused, the keypoints never leaving the device on CUDA (spec/ops.md,
 * cuda-ops/pose_solve/pose_solve.h). Also holds what the three pose kernels share: the mean-shift
 * attributes, the input checks and the CUDA non-finite-input flag.
 */
final class PoseSolve extends Pvn3dKernel {
    static final String NAME = "PVN3D_PoseSolve";

    private final MeanShift attributes;
    private final InputErrors inputErrors;
    private final CudaScratch scratch;

    static CustomOp op(boolean cuda, CudaIndexCheck check) {
        return MeanShift.declare(CustomOp.builder(NAME)
                .executionProvider(provider(cuda))
                .input("votes", OnnxTensorType.FLOAT)
                .input("mask", OnnxTensorType.UNDEFINED)
                .input("model_kps", OnnxTensorType.FLOAT)
                .output("R", OnnxTensorType.FLOAT)
                .output("t", OnnxTensorType.FLOAT)
                .output("kps", OnnxTensorType.FLOAT)
                .output(Port.optional("inliers", OnnxTensorType.INT64)))
                .kernel(info -> new PoseSolve(info, cuda, check))
                .build();
    }

    private PoseSolve(KernelInfo info, boolean cuda, CudaIndexCheck check) {
        super(NAME, cuda, check, null);
        attributes = MeanShift.read(info);
        inputErrors = new InputErrors(NAME, "kps", cuda, check);
        scratch = cuda ? new CudaScratch() : null;
    }

    @Override
    void computeKernel(KernelContext ctx) {
        KernelTensor votes = votes(ctx, 0);
        long b = votes.dim(0);
        long k = votes.dim(1);
        long n = votes.dim(2);
        KernelTensor mask = ctx.input(1, OnnxTensorType.UNDEFINED, 2);
        int maskDtype = maskDtype(ctx, mask, b, n);
        if (k < 3) {
            throw ctx.invalid("input votes holds K = " + k + " keypoint rows (shape " + votes.shapeString()
                    + "), but the rigid fit needs K >= 3");
        }
        KernelTensor model = ctx.input(2, OnnxTensorType.FLOAT, -1);
        long modelB = modelKps(ctx, model, b, k, votes, "votes");
        KernelTensor r = ctx.output(0, b, 3, 3);
        KernelTensor t = ctx.output(1, b, 3);
        KernelTensor kps = ctx.output(2, b, k, 3);
        KernelTensor inliers = ctx.outputCount() > 3 ? ctx.output(3, b) : null;
        if (b == 0) {
            return; // an empty batch: empty outputs, nothing to compute
        }
        MemorySegment inl = inliers == null ? MemorySegment.NULL : inliers.data();
        MeanShift a = attributes;
        if (!cuda) {
            OpsLibrary.check(pvn3d_pose_solve_cpu(votes.data(), mask.data(), maskDtype, b, k,
                    n, model.data(), modelB, model.dim(model.rank() - 2), a.bandwidth, a.maxIter, a.centerFilter,
                    r.data(), t.data(), kps.data(), inl));
            return;
        }
        MemorySegment stream = cudaStream(ctx);
        long bytes = pvn3d_pose_solve_cuda_workspace_bytes(b, k, n);
        MemorySegment workspace = bytes == 0 ? MemorySegment.NULL : scratch.get(ctx, votes, stream, bytes);
        OpsLibrary.check(pvn3d_pose_solve_cuda(votes.data(), mask.data(), maskDtype, b, k,
                n, model.data(), modelB, model.dim(model.rank() - 2), a.bandwidth, a.maxIter, a.centerFilter,
                r.data(), t.data(), kps.data(), inl, inputErrors.flag(stream, model.elementCount()), workspace,
                bytes, stream));
        inputErrors.afterLaunch(stream);
    }

    @Override
    public void checkDeferred() {
        super.checkDeferred();
        inputErrors.checkDeferred();
    }

    @Override
    public void close() {
        try {
            inputErrors.close();
            if (scratch != null) {
                scratch.close();
            }
        } finally {
            super.close();
        }
    }

    // ---- shared by the three pose kernels ----

    /** A float32 votes input [B,K,N,3]. */
    static KernelTensor votes(KernelContext ctx, int index) {
        KernelTensor votes = ctx.input(index, OnnxTensorType.FLOAT, 4);
        ctx.requireDim(votes, 3, 3, "x, y, z");
        if (votes.dim(1) < 1) {
            throw ctx.invalid("input votes holds K = 0 keypoint rows (shape " + votes.shapeString() + "), needs K >= 1");
        }
        return votes;
    }

    /** Checks the mask [B,N] against the votes and gives its pvn3d_mask_dtype (float32 or bool). */
    static int maskDtype(KernelContext ctx, KernelTensor mask, long b, long n) {
        int dtype = switch (mask.type()) {
            case FLOAT -> PVN3D_MASK_FLOAT32();
            case BOOL -> PVN3D_MASK_BOOL();
            default -> throw ctx.invalid("input mask must hold bool or float elements (nonzero = the point votes), got "
                    + mask.type().name().toLowerCase(java.util.Locale.ROOT));
        };
        ctx.requireDim(mask, 0, b, "the batch size B of votes");
        ctx.requireDim(mask, 1, n, "the point count N of votes");
        return dtype;
    }

    /**
     * Checks model_kps ([K,3] shared, or [B,K,3] one per batch item) against the K and B of
     * {@code other}, and gives the native model_B (0 for a shared model, else B).
     */
    static long modelKps(KernelContext ctx, KernelTensor model, long b, long k, KernelTensor other, String otherName) {
        if (model.rank() != 2 && model.rank() != 3) {
            throw ctx.invalid("input model_kps must have rank 2 ([K,3], one model for the batch) or 3 ([B,K,3], one per"
                    + " batch item), got rank " + model.rank() + " (shape " + model.shapeString() + ")");
        }
        int rank = model.rank();
        ctx.requireDim(model, rank - 1, 3, "x, y, z");
        long modelK = model.dim(rank - 2);
        if (modelK != k) {
            throw ctx.invalid("mismatched K: input model_kps holds K = " + modelK + " keypoints (shape "
                    + model.shapeString() + "), but " + otherName + " holds K = " + k + " (shape " + other.shapeString()
                    + ")");
        }
        if (rank == 3) {
            if (model.dim(0) != b) {
                ctx.requireDim(model, 0, b, "the batch size B of " + otherName + ": one model per batch item");
            }
            return b;
        }
        return 0;
    }

    /** The mean-shift attributes of VoteAggregate and PoseSolve, checked when the kernel is created. */
    static final class MeanShift {
        static final float DEFAULT_BANDWIDTH = 0.08f;
        static final long DEFAULT_MAX_ITER = 300;
        static final long DEFAULT_CENTER_FILTER = 1;

        final float bandwidth;
        final long maxIter;
        final int centerFilter;

        private MeanShift(float bandwidth, long maxIter, int centerFilter) {
            this.bandwidth = bandwidth;
            this.maxIter = maxIter;
            this.centerFilter = centerFilter;
        }

        static CustomOp.Builder declare(CustomOp.Builder b) {
            return b.attribute("bandwidth", AttributeSpec.Type.FLOAT, false,
                            "mean-shift bandwidth in metres, finite and > 0 (default 0.08)")
                    .attribute("max_iter", AttributeSpec.Type.INT, false, "mean-shift iterations, >= 0 (default 300)")
                    .attribute("center_filter", AttributeSpec.Type.INT, false,
                            "1: the last keypoint row is the centre and filters the points (default), 0: no filter");
        }

        static MeanShift read(KernelInfo info) {
            float bw = info.getFloat("bandwidth", DEFAULT_BANDWIDTH);
            if (!Float.isFinite(bw) || !(bw > 0)) {
                throw info.invalidAttribute("bandwidth", "must be finite and > 0, got " + bw);
            }
            float bw2 = bw * bw;
            if (!Float.isFinite(bw2) || !(bw2 >= Float.MIN_NORMAL)) {
                throw info.invalidAttribute("bandwidth", "squared leaves the float32 range, got " + bw);
            }
            long maxIter = info.getInt("max_iter", DEFAULT_MAX_ITER);
            if (maxIter < 0) {
                throw info.invalidAttribute("max_iter", "must be >= 0, got " + maxIter);
            }
            long cf = info.getInt("center_filter", DEFAULT_CENTER_FILTER);
            if (cf != 0 && cf != 1) {
                throw info.invalidAttribute("center_filter", "must be 0 or 1, got " + cf);
            }
            return new MeanShift(bw, maxIter, (int) cf);
        }
    }

    /**
     * The CUDA non-finite model_kps / pred_kps report of the Kabsch launchers (kabsch_solver.h):
     * the same two-word device flag and the same {@link CudaIndexCheck} modes as the index flags of
     * GatherPoints and friends. The CPU kernels fail the run themselves.
     */
    static final class InputErrors implements AutoCloseable {
        private final CudaIndexCheck check;
        private final IndexErrorSlots slots;

        InputErrors(String op, String secondInput, boolean cuda, CudaIndexCheck check) {
            this.check = check;
            this.slots = cuda && check != CudaIndexCheck.OFF
                    ? IndexErrorSlots.kabsch(op, secondInput, " (CUDA kernel; R and t of the batch items concerned are NaN)")
                    : null;
        }

        /** The device flag for a launch on {@code stream} (NULL when reporting is off). */
        MemorySegment flag(MemorySegment stream, long modelNumel) {
            return slots == null ? MemorySegment.NULL : slots.flagFor(stream, modelNumel);
        }

        /** In {@link CudaIndexCheck#SYNC} mode: waits for the launch and fails the run on a non-finite input. */
        void afterLaunch(MemorySegment stream) {
            if (slots != null && check == CudaIndexCheck.SYNC) {
                OpsLibrary.check(pvn3d_cuda_stream_synchronize(stream));
                slots.check(stream);
            }
        }

        void checkDeferred() {
            if (slots != null && check == CudaIndexCheck.DEFERRED) {
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
}
