package org.pvn3d.ort.ops;

import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_group_points_cpu;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_group_points_cuda;

import java.lang.foreign.MemorySegment;
import org.pvn3d.ort.OnnxTensorType;
import org.pvn3d.ort.customop.CustomOp;
import org.pvn3d.ort.customop.KernelContext;
import org.pvn3d.ort.customop.KernelTensor;

/** PVN3D_GroupPoints: features [B,C,N], idx int64 [B,M,S] -> out [B,C,M,S] (spec/ops.md). */
final class GroupPoints extends Pvn3dKernel {
    static final String NAME = "PVN3D_GroupPoints";

    static CustomOp op(boolean cuda, CudaIndexCheck check) {
        return CustomOp.builder(NAME)
                .executionProvider(provider(cuda))
                .input("features", OnnxTensorType.FLOAT)
                .input("idx", OnnxTensorType.INT64)
                .output("out", OnnxTensorType.FLOAT)
                .kernel(info -> new GroupPoints(cuda, check))
                .build();
    }

    private GroupPoints(boolean cuda, CudaIndexCheck check) {
        super(NAME, cuda, check, "idx");
    }

    @Override
    void computeKernel(KernelContext ctx) {
        KernelTensor features = ctx.input(0, OnnxTensorType.FLOAT, 3);
        KernelTensor idx = ctx.input(1, OnnxTensorType.INT64, 3);
        long b = features.dim(0);
        long c = features.dim(1);
        long n = features.dim(2);
        ctx.requireDim(idx, 0, b, "the batch size B of features");
        long m = idx.dim(1);
        long s = idx.dim(2);
        KernelTensor out = ctx.output(0, b, c, m, s);
        if (!cuda) {
            OpsLibrary.check(pvn3d_group_points_cpu(b, c, n, m, s, features.data(), idx.data(),
                    out.data()));
            return;
        }
        MemorySegment stream = cudaStream(ctx);
        OpsLibrary.check(pvn3d_group_points_cuda(b, c, n, m, s, features.data(), idx.data(),
                out.data(), indexFlag(stream, n), stream));
        afterIndexLaunch(stream);
    }
}
