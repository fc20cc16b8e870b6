package org.pvn3d.ort.ops;

import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_three_interpolate_cpu;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_three_interpolate_cuda;

import java.lang.foreign.MemorySegment;
import org.pvn3d.ort.OnnxTensorType;
import org.pvn3d.ort.customop.CustomOp;
import org.pvn3d.ort.customop.KernelContext;
import org.pvn3d.ort.customop.KernelTensor;

/**
 * PVN3D_ThreeInterpolate: features [B,C,m], idx int64 [B,n,3], weight [B,n,3] -> out [B,C,n]
 * (spec/ops.md).
 */
final class ThreeInterpolate extends Pvn3dKernel {
    static final String NAME = "PVN3D_ThreeInterpolate";

    static CustomOp op(boolean cuda, CudaIndexCheck check) {
        return CustomOp.builder(NAME)
                .executionProvider(provider(cuda))
                .input("features", OnnxTensorType.FLOAT)
                .input("idx", OnnxTensorType.INT64)
                .input("weight", OnnxTensorType.FLOAT)
                .output("out", OnnxTensorType.FLOAT)
                .kernel(info -> new ThreeInterpolate(cuda, check))
                .build();
    }

    private ThreeInterpolate(boolean cuda, CudaIndexCheck check) {
        super(NAME, cuda, check, "idx");
    }

    @Override
    void computeKernel(KernelContext ctx) {
        KernelTensor features = ctx.input(0, OnnxTensorType.FLOAT, 3);
        KernelTensor idx = ctx.input(1, OnnxTensorType.INT64, 3);
        KernelTensor weight = ctx.input(2, OnnxTensorType.FLOAT, 3);
        long b = features.dim(0);
        long c = features.dim(1);
        long m = features.dim(2);
        ctx.requireDim(idx, 0, b, "the batch size B of features");
        ctx.requireDim(idx, 2, 3, "three neighbours");
        long n = idx.dim(1);
        ctx.requireDim(weight, 0, b, "the batch size B of features");
        ctx.requireDim(weight, 1, n, "the point count n of idx");
        ctx.requireDim(weight, 2, 3, "three neighbours");
        KernelTensor out = ctx.output(0, b, c, n);
        if (!cuda) {
            OpsLibrary.check(pvn3d_three_interpolate_cpu(b, c, m, n, features.data(),
                    idx.data(), weight.data(), out.data()));
            return;
        }
        MemorySegment stream = cudaStream(ctx);
        OpsLibrary.check(pvn3d_three_interpolate_cuda(b, c, m, n, features.data(),
                idx.data(), weight.data(), out.data(), indexFlag(stream, m), stream));
        afterIndexLaunch(stream);
    }
}
