package org.pvn3d.ort.pipeline;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.PVN3D_MASK_BOOL;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_pose_solve_cuda;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_pose_solve_cuda_workspace_bytes;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import org.pvn3d.ort.cuda.DeviceBuffer;
import org.pvn3d.ort.ops.OpsLibrary;

/**
 * The pose stage on the GPU: libpvn3d_ops's fused CUDA kernel ({@code pvn3d_pose_solve_cuda}: mean
 * shift, then Kabsch, the keypoints never leaving the device), the same code the PVN3D_PoseSolve
 * operator runs on the CUDA provider. The votes and the mask go to the device, the kernel runs on the
 * legacy default stream, and R, t, the keypoints and the inlier count come back; the time reported as
 * clustering covers all of it. On the full model's ten thousand votes per keypoint this is milliseconds
 * where the CPU kernel takes seconds. {@link JavaPoseSolver} stays the reference it is tested against.
 */
public final class CudaPoseSolver implements PoseSolver {
    private final MeanShift settings;
    private final int device;

    /** Loads libpvn3d_ops (an {@link org.pvn3d.ort.OrtException} where it cannot). */
    public CudaPoseSolver(MeanShift settings, int device) {
        OpsLibrary.load();
        this.settings = settings;
        this.device = device;
    }

    /** With PVN3D's settings (bandwidth 0.08 m, 300 iterations, centre filter) on {@code device}. */
    public CudaPoseSolver(int device) {
        this(MeanShift.PVN3D, device);
    }

    @Override
    public String name() {
        return FusedPoseSolve.describe("pvn3d_pose_solve_cuda on GPU " + device, settings);
    }

    @Override
    public Solution solve(Votes votes, float[] modelKps) {
        FusedPoseSolve.checkRows(votes, modelKps);
        FusedPoseSolve.checkFinite(modelKps);
        int k = votes.k();
        int n = votes.n();
        long t0 = System.nanoTime();
        List<DeviceBuffer> buffers = new ArrayList<>();
        try (Arena arena = Arena.ofConfined()) {
            DeviceBuffer v = upload(buffers, MemorySegment.ofArray(votes.votes()));
            DeviceBuffer m = upload(buffers, MemorySegment.ofArray(FusedPoseSolve.maskBytes(votes)));
            DeviceBuffer model = upload(buffers, MemorySegment.ofArray(modelKps));
            DeviceBuffer r = allocate(buffers, 9L * Float.BYTES);
            DeviceBuffer t = allocate(buffers, 3L * Float.BYTES);
            DeviceBuffer kps = allocate(buffers, 3L * k * Float.BYTES);
            DeviceBuffer inliers = allocate(buffers, Long.BYTES);
            long bytes = pvn3d_pose_solve_cuda_workspace_bytes(1L, k, n);
            MemorySegment workspace = bytes == 0 ? MemorySegment.NULL : p(allocate(buffers, bytes));
            OpsLibrary.check(pvn3d_pose_solve_cuda(p(v), p(m), PVN3D_MASK_BOOL(), 1L, k, n, p(model), 0L,
                    k, settings.bandwidth(), settings.maxIter(), settings.centerFilter() ? 1 : 0, p(r), p(t),
                    p(kps), p(inliers), MemorySegment.NULL, workspace, bytes, MemorySegment.NULL));
            // copies on the legacy default stream follow the kernel and wait for it
            MemorySegment rh = arena.allocate(JAVA_FLOAT, 9);
            MemorySegment th = arena.allocate(JAVA_FLOAT, 3);
            MemorySegment kh = arena.allocate(JAVA_FLOAT, 3L * k);
            MemorySegment ih = arena.allocate(JAVA_LONG);
            r.copyToHost(rh);
            t.copyToHost(th);
            kps.copyToHost(kh);
            inliers.copyToHost(ih);
            return FusedPoseSolve.solution(rh, th, kh, ih, t0);
        } finally {
            buffers.forEach(DeviceBuffer::close);
        }
    }

    private DeviceBuffer allocate(List<DeviceBuffer> owned, long bytes) {
        DeviceBuffer b = DeviceBuffer.allocate(device, Math.max(1, bytes));
        owned.add(b);
        return b;
    }

    private DeviceBuffer upload(List<DeviceBuffer> owned, MemorySegment host) {
        DeviceBuffer b = allocate(owned, host.byteSize());
        if (host.byteSize() > 0) {
            b.copyFromHost(host);
        }
        return b;
    }

    private static MemorySegment p(DeviceBuffer b) {
        return MemorySegment.ofAddress(b.address());
    }
}
