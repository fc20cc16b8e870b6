package org.pvn3d.ort.ops;

import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_kabsch_solver_cpu;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_kabsch_solver_cuda;

import java.lang.foreign.MemorySegment;
import org.pvn3d.ort.OnnxTensorType;
import org.pvn3d.ort.customop.CustomOp;
import org.pvn3d.ort.customop.KernelContext;
import org.pvn3d.ort.customop.KernelTensor;

/**
 * PVN3D_KabschSolver: model_kps [K,3] or [B,K,3], pred_kps [B,K,3] -> R [B,3,3], t [B,3], the
 * rigid transform minimising sum |R a_i + t - b_i|^2 with det R = +1 (spec/ops.md,
 * cuda-ops/kabsch_solver/kabsch_solver.h). A non-finite input value fails the run (on CUDA as
 * the {@link CudaIndexCheck} setting says: the items concerned get NaN R and t either way).
 */
final class KabschSolver extends Pvn3dKernel {
    static final String NAME = "PVN3D_KabschSolver";

    private final PoseSolve.InputErrors inputErrors;

    static CustomOp op(boolean cuda, CudaIndexCheck check) {
        return CustomOp.builder(NAME)
                .executionProvider(provider(cuda))
                .input("model_kps", OnnxTensorType.FLOAT)
                .input("pred_kps", OnnxTensorType.FLOAT)
                .output("R", OnnxTensorType.FLOAT)
                .output("t", OnnxTensorType.FLOAT)
                .kernel(info -> new KabschSolver(cuda, check))
                .build();
    }

    private KabschSolver(boolean cuda, CudaIndexCheck check) {
        super(NAME, cuda, check, null);
        inputErrors = new PoseSolve.InputErrors(NAME, "pred_kps", cuda, check);
    }

    @Override
    void computeKernel(KernelContext ctx) {
        KernelTensor model = ctx.input(0, OnnxTensorType.FLOAT, -1);
        KernelTensor pred = ctx.input(1, OnnxTensorType.FLOAT, 3);
        ctx.requireDim(pred, 2, 3, "x, y, z");
        long b = pred.dim(0);
        long k = pred.dim(1);
        if (k < 3) {
            throw ctx.invalid("input pred_kps holds K = " + k + " keypoints (shape " + pred.shapeString()
                    + "), but a rigid fit needs K >= 3");
        }
        long modelB = PoseSolve.modelKps(ctx, model, b, k, pred, "pred_kps");
        KernelTensor r = ctx.output(0, b, 3, 3);
        KernelTensor t = ctx.output(1, b, 3);
        if (b == 0) {
            return; // an empty batch: empty outputs, nothing to compute
        }
        if (!cuda) {
            OpsLibrary.check(pvn3d_kabsch_solver_cpu(model.data(), modelB, k, pred.data(), b, k,
                    r.data(), t.data()));
            return;
        }
        MemorySegment stream = cudaStream(ctx);
        OpsLibrary.check(pvn3d_kabsch_solver_cuda(model.data(), modelB, k, pred.data(), b, k,
                r.data(), t.data(), inputErrors.flag(stream, model.elementCount()), stream));
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
        } finally {
            super.close();
        }
    }
}
