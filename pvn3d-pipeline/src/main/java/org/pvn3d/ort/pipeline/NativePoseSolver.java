package org.pvn3d.ort.pipeline;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.PVN3D_MASK_BOOL;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_pose_solve_cpu;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.pvn3d.ort.ops.OpsLibrary;

/**
 * The pose stage on libpvn3d_ops's fused CPU kernel ({@code pvn3d_pose_solve_cpu}: mean shift on all
 * cores, then Kabsch), the same code the PVN3D_PoseSolve operator runs on the CPU provider. Use it
 * where the Java reference is too slow (the full model's ten thousand votes per keypoint);
 * {@link JavaPoseSolver} stays the reference it is tested against.
 */
public final class NativePoseSolver implements PoseSolver {
    private final MeanShift settings;

    /** Loads libpvn3d_ops (an {@link org.pvn3d.ort.OrtException} where it cannot). */
    public NativePoseSolver(MeanShift settings) {
        OpsLibrary.load();
        this.settings = settings;
    }

    /** With PVN3D's settings (bandwidth 0.08 m, 300 iterations, centre filter). */
    public NativePoseSolver() {
        this(MeanShift.PVN3D);
    }

    @Override
    public String name() {
        return FusedPoseSolve.describe("pvn3d_pose_solve_cpu", settings);
    }

    @Override
    public Solution solve(Votes votes, float[] modelKps) {
        FusedPoseSolve.checkRows(votes, modelKps);
        int k = votes.k();
        int n = votes.n();
        long t0 = System.nanoTime();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment v = arena.allocateFrom(JAVA_FLOAT, votes.votes());
            MemorySegment mask = arena.allocate(Math.max(1, n)).copyFrom(MemorySegment.ofArray(FusedPoseSolve.maskBytes(votes)));
            MemorySegment model = arena.allocateFrom(JAVA_FLOAT, modelKps);
            MemorySegment r = arena.allocate(JAVA_FLOAT, 9);
            MemorySegment t = arena.allocate(JAVA_FLOAT, 3);
            MemorySegment kps = arena.allocate(JAVA_FLOAT, (long) k * 3);
            MemorySegment inliers = arena.allocate(JAVA_LONG);
            OpsLibrary.check(pvn3d_pose_solve_cpu(v, mask, PVN3D_MASK_BOOL(), 1L, k, n, model,
                    0L, k, settings.bandwidth(), settings.maxIter(), settings.centerFilter() ? 1 : 0, r, t,
                    kps, inliers));
            return FusedPoseSolve.solution(r, t, kps, inliers, t0);
        }
    }
}
