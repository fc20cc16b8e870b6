package org.pvn3d.ort.ops;

import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_vote_aggregate_cpu;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_vote_aggregate_cuda;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_vote_aggregate_cuda_workspace_bytes;

import java.lang.foreign.MemorySegment;
import org.pvn3d.ort.OnnxTensorType;
import org.pvn3d.ort.customop.CustomOp;
import org.pvn3d.ort.customop.KernelContext;
import org.pvn3d.ort.customop.KernelInfo;
import org.pvn3d.ort.customop.KernelTensor;

/**
 * PVN3D_VoteAggregate: votes [B,K,N,3], mask [B,N] (bool or float, nonzero = used) -> kps [B,K,3],
 * inliers int64 [B]: mean-shift clustering of the votes (spec/ops.md,
 * cuda-ops/vote_aggregate/vote_aggregate.h). An empty mask gives NaN keypoints and inliers 0.
 */
final class VoteAggregate extends Pvn3dKernel {
    static final String NAME = "PVN3D_VoteAggregate";

    private final PoseSolve.MeanShift attributes;
    private final CudaScratch scratch;

    static CustomOp op(boolean cuda, CudaIndexCheck check) {
        return PoseSolve.MeanShift.declare(CustomOp.builder(NAME)
                .executionProvider(provider(cuda))
                .input("votes", OnnxTensorType.FLOAT)
                .input("mask", OnnxTensorType.UNDEFINED)
                .output("kps", OnnxTensorType.FLOAT)
                .output("inliers", OnnxTensorType.INT64))
                .kernel(info -> new VoteAggregate(info, cuda, check))
                .build();
    }

    private VoteAggregate(KernelInfo info, boolean cuda, CudaIndexCheck check) {
        super(NAME, cuda, check, null);
        attributes = PoseSolve.MeanShift.read(info);
        scratch = cuda ? new CudaScratch() : null;
    }

    @Override
    void computeKernel(KernelContext ctx) {
        KernelTensor votes = PoseSolve.votes(ctx, 0);
        long b = votes.dim(0);
        long k = votes.dim(1);
        long n = votes.dim(2);
        KernelTensor mask = ctx.input(1, OnnxTensorType.UNDEFINED, 2);
        int maskDtype = PoseSolve.maskDtype(ctx, mask, b, n);
        KernelTensor kps = ctx.output(0, b, k, 3);
        KernelTensor inliers = ctx.output(1, b);
        if (b == 0) {
            return; // an empty batch: empty outputs, nothing to compute
        }
        PoseSolve.MeanShift a = attributes;
        if (!cuda) {
            OpsLibrary.check(pvn3d_vote_aggregate_cpu(votes.data(), mask.data(), maskDtype, b,
                    k, n, a.bandwidth, a.maxIter, a.centerFilter, kps.data(), inliers.data()));
            return;
        }
        MemorySegment stream = cudaStream(ctx);
        long bytes = pvn3d_vote_aggregate_cuda_workspace_bytes(b, k, n);
        MemorySegment workspace = bytes == 0 ? MemorySegment.NULL : scratch.get(ctx, votes, stream, bytes);
        OpsLibrary.check(pvn3d_vote_aggregate_cuda(votes.data(), mask.data(), maskDtype, b, k,
                n, a.bandwidth, a.maxIter, a.centerFilter, kps.data(), inliers.data(), workspace, bytes, stream));
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
