package org.pvn3d.ort.ops;

import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_three_nn_cpu;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_three_nn_cuda;

import java.lang.foreign.MemorySegment;
import org.pvn3d.ort.OnnxTensorType;
import org.pvn3d.ort.customop.CustomOp;
import org.pvn3d.ort.customop.KernelContext;
import org.pvn3d.ort.customop.KernelTensor;

/** PVN3D_ThreeNN: unknown [B,n,3], known [B,m,3] -> dist2 [B,n,3], idx int64 [B,n,3] (spec/ops.md). */
final class ThreeNN extends Pvn3dKernel {
    static final String NAME = "PVN3D_ThreeNN";

    static CustomOp op(boolean cuda, CudaIndexCheck check) {
        return CustomOp.builder(NAME)
                .executionProvider(provider(cuda))
                .input("unknown", OnnxTensorType.FLOAT)
                .input("known", OnnxTensorType.FLOAT)
                .output("dist2", OnnxTensorType.FLOAT)
                .output("idx", OnnxTensorType.INT64)
                .kernel(info -> new ThreeNN(cuda, check))
                .build();
    }

    private ThreeNN(boolean cuda, CudaIndexCheck check) {
        super(NAME, cuda, check, null);
    }

    @Override
    void computeKernel(KernelContext ctx) {
        KernelTensor unknown = points(ctx, 0, -1, null);
        KernelTensor known = points(ctx, 1, unknown.dim(0), "unknown");
        long b = unknown.dim(0);
        long n = unknown.dim(1);
        long m = known.dim(1);
        if (m < 3) {
            throw ctx.invalid("input known holds m = " + m + " points (shape " + known.shapeString()
                    + "), but three nearest neighbours need m >= 3");
        }
        KernelTensor dist2 = ctx.output(0, b, n, 3);
        KernelTensor idx = ctx.output(1, b, n, 3);
        if (!cuda) {
            OpsLibrary.check(pvn3d_three_nn_cpu(b, n, m, unknown.data(), known.data(),
                    dist2.data(), idx.data()));
            return;
        }
        MemorySegment stream = cudaStream(ctx);
        OpsLibrary.check(pvn3d_three_nn_cuda(b, n, m, unknown.data(), known.data(),
                dist2.data(), idx.data(), stream));
    }
}
