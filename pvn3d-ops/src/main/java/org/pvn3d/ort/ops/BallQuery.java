package org.pvn3d.ort.ops;

import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_ball_query_cpu;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_ball_query_cuda;

import java.lang.foreign.MemorySegment;
import org.pvn3d.ort.OnnxTensorType;
import org.pvn3d.ort.customop.AttributeSpec;
import org.pvn3d.ort.customop.CustomOp;
import org.pvn3d.ort.customop.KernelContext;
import org.pvn3d.ort.customop.KernelInfo;
import org.pvn3d.ort.customop.KernelTensor;

/** PVN3D_BallQuery: xyz [B,N,3], new_xyz [B,M,3] -> idx int64 [B,M,nsample] (spec/ops.md). */
final class BallQuery extends Pvn3dKernel {
    static final String NAME = "PVN3D_BallQuery";

    private final float radius;
    private final long nsample;

    static CustomOp op(boolean cuda, CudaIndexCheck check) {
        return CustomOp.builder(NAME)
                .executionProvider(provider(cuda))
                .input("xyz", OnnxTensorType.FLOAT)
                .input("new_xyz", OnnxTensorType.FLOAT)
                .output("idx", OnnxTensorType.INT64)
                .attribute("radius", AttributeSpec.Type.FLOAT, true, "ball radius, > 0")
                .attribute("nsample", AttributeSpec.Type.INT, true, "neighbours per centre, >= 1")
                .kernel(info -> new BallQuery(info, cuda, check))
                .build();
    }

    private BallQuery(KernelInfo info, boolean cuda, CudaIndexCheck check) {
        super(NAME, cuda, check, null);
        radius = info.getFloat("radius");
        nsample = info.getInt("nsample");
        if (!(radius > 0)) { // also rejects NaN
            throw info.invalidAttribute("radius", "must be > 0, got " + radius);
        }
        if (nsample < 1) {
            throw info.invalidAttribute("nsample", "must be >= 1, got " + nsample);
        }
    }

    @Override
    void computeKernel(KernelContext ctx) {
        KernelTensor xyz = points(ctx, 0, -1, null);
        KernelTensor centres = points(ctx, 1, xyz.dim(0), "xyz");
        long b = xyz.dim(0);
        long n = xyz.dim(1);
        long m = centres.dim(1);
        KernelTensor idx = ctx.output(0, b, m, nsample);
        if (!cuda) {
            OpsLibrary.check(pvn3d_ball_query_cpu(b, n, m, radius, nsample, xyz.data(),
                    centres.data(), idx.data()));
            return;
        }
        MemorySegment stream = cudaStream(ctx);
        OpsLibrary.check(pvn3d_ball_query_cuda(b, n, m, radius, nsample, xyz.data(),
                centres.data(), idx.data(), stream));
    }
}
