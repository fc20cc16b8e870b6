package org.pvn3d.ort.pipeline;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import org.pvn3d.ort.ops.OpsLibrary;

/**
 * The pose stage on libpvn3d_ops's fused CPU kernel ({@code pvn3d_pose_solve_cpu}: mean shift on all
 * cores, then Kabsch), the same code the PVN3D_PoseSolve operator runs on the CPU provider. Use it
 * where the Java reference is too slow (the full model's ten thousand votes per keypoint);
 * {@link JavaPoseSolver} stays the reference it is tested against.
 */
public final class NativePoseSolver implements PoseSolver {
    private static final MethodHandle POSE_SOLVE_CPU = OpsLibrary.bind("pvn3d_pose_solve_cpu",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS,
                    JAVA_LONG, JAVA_LONG, JAVA_FLOAT, JAVA_LONG, JAVA_INT, ADDRESS, ADDRESS, ADDRESS, ADDRESS));

    private final MeanShift settings;

    public NativePoseSolver(MeanShift settings) {
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
            OpsLibrary.check((int) POSE_SOLVE_CPU.invokeExact(v, mask, FusedPoseSolve.MASK_BOOL, 1L, (long) k, (long) n, model,
                    0L, (long) k, settings.bandwidth(), (long) settings.maxIter(), settings.centerFilter() ? 1 : 0, r, t,
                    kps, inliers));
            return FusedPoseSolve.solution(r, t, kps, inliers, t0);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw OpsLibrary.rethrow(e);
        }
    }
}
