package org.pvn3d.ort.ops;

import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_furthest_point_sample_cpu;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_furthest_point_sample_cuda;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_furthest_point_sample_cuda_workspace_bytes;

import java.lang.foreign.MemorySegment;
import org.pvn3d.ort.OnnxTensorType;
import org.pvn3d.ort.customop.AttributeSpec;
import org.pvn3d.ort.customop.CustomOp;
import org.pvn3d.ort.customop.KernelContext;
import org.pvn3d.ort.customop.KernelInfo;
import org.pvn3d.ort.customop.KernelTensor;

/** PVN3D_FurthestPointSample: xyz [B,N,3] -> idx int64 [B,npoint] (spec/ops.md). */
final class FurthestPointSample extends Pvn3dKernel {
    static final String NAME = "PVN3D_FurthestPointSample";

    private final long npoint;
    private final CudaScratch scratch;

    static CustomOp op(boolean cuda, CudaIndexCheck check) {
        return CustomOp.builder(NAME)
                .executionProvider(provider(cuda))
                .input("xyz", OnnxTensorType.FLOAT)
                .output("idx", OnnxTensorType.INT64)
                .attribute("npoint", AttributeSpec.Type.INT, true, "points to pick, >= 1 and <= N")
                .kernel(info -> new FurthestPointSample(info, cuda, check))
                .build();
    }

    private FurthestPointSample(KernelInfo info, boolean cuda, CudaIndexCheck check) {
        super(NAME, cuda, check, null);
        npoint = info.getInt("npoint");
        if (npoint < 1) {
            throw info.invalidAttribute("npoint", "must be >= 1, got " + npoint);
        }
        scratch = cuda ? new CudaScratch() : null;
    }

    @Override
    void computeKernel(KernelContext ctx) {
        KernelTensor xyz = points(ctx, 0, -1, null);
        long b = xyz.dim(0);
        long n = xyz.dim(1);
        if (npoint > n) {
            throw ctx.invalid("attribute npoint (" + npoint + ") is larger than the number of points N = " + n
                    + " of input xyz (shape " + xyz.shapeString() + ")");
        }
        KernelTensor idx = ctx.output(0, b, npoint);
        if (!cuda) {
            OpsLibrary.check(pvn3d_furthest_point_sample_cpu(b, n, npoint, xyz.data(), idx.data()));
            return;
        }
        MemorySegment stream = cudaStream(ctx);
        long bytes = pvn3d_furthest_point_sample_cuda_workspace_bytes(b, n, npoint);
        MemorySegment workspace = bytes == 0 ? MemorySegment.NULL : scratch.get(ctx, xyz, stream, bytes);
        OpsLibrary.check(pvn3d_furthest_point_sample_cuda(b, n, npoint, xyz.data(), idx.data(), workspace,
                bytes, stream));
    }

    @Override
    public void close() {
        try {
            if (scratch != null) {
                scratch.close();
            }
        } finally {
            super.close();
        }
    }
}
