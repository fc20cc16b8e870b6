package org.pvn3d.ort.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.pvn3d.ort.pipeline.NativePoseSolverTest.maxDiff;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.ops.Pvn3dOps;

/**
 * The GPU pose stage (libpvn3d_ops's fused CUDA kernel) against the CPU kernel and the Java reference on
 * the same votes (GPU machine only), and, without a GPU, a clear exception instead of a crash.
 */
class CudaPoseSolverTest {
    static boolean hasGpu() {
        return Pvn3dOps.nativeBuiltWithCuda() && Pvn3dOps.cudaDeviceCount() > 0;
    }

    @Test
    void cudaEqualsTheCpuKernelAndTheJavaReferenceOnTheTinySample() {
        Assumptions.assumeTrue(hasGpu(), "no CUDA device (or a CPU-only libpvn3d_ops): this runs on the GPU machine");
        Pvn3dSample sample = Pvn3dSample.resource(Pvn3dSample.RESOURCE);
        Votes votes = NativePoseSolverTest.tinyVotes(sample);
        PoseSolver.Solution java = new JavaPoseSolver().solve(votes, sample.modelKps());
        PoseSolver.Solution cpu = new NativePoseSolver().solve(votes, sample.modelKps());
        PoseSolver.Solution gpu = new CudaPoseSolver(0).solve(votes, sample.modelKps());
        System.out.printf("CudaPoseSolverTest: %d inliers; max |kps cuda - cpu| = %.3g m, |kps cuda - java| = %.3g m, "
                + "|R cuda - cpu| = %.3g; %.2f ms on the GPU%n", gpu.inliers(), maxDiff(gpu.kps(), cpu.kps()),
                maxDiff(gpu.kps(), java.kps()), maxDiff(gpu.pose().r(), cpu.pose().r()), gpu.clusteringMs());
        assertEquals(cpu.inliers(), gpu.inliers(), "points used after the centre filter");
        assertEquals(java.inliers(), gpu.inliers());
        assertTrue(maxDiff(gpu.kps(), cpu.kps()) < 1e-5);
        assertTrue(maxDiff(gpu.kps(), java.kps()) < 1e-5);
        assertTrue(maxDiff(gpu.pose().r(), cpu.pose().r()) < 1e-5);
        assertTrue(maxDiff(gpu.pose().t(), cpu.pose().t()) < 1e-5);
        assertEquals(1.0, gpu.pose().determinant(), 1e-5);
    }

    @Test
    void anEmptyMaskGivesNoPoseOnTheGpuToo() {
        Assumptions.assumeTrue(hasGpu(), "no CUDA device (or a CPU-only libpvn3d_ops): this runs on the GPU machine");
        int k = 9;
        int n = 16;
        PoseSolver.Solution s = new CudaPoseSolver(0).solve(new Votes(k, n, new float[k * n * 3], new boolean[n]), new float[k * 3]);
        assertEquals(0, s.inliers());
        assertTrue(Float.isNaN(s.kps()[0]) && Double.isNaN(s.pose().r()[0]));
    }

    @Test
    void badModelKeypointsAreRefusedBeforeTheGpuIsTouched() {
        int k = 9;
        int n = 16;
        float[] model = new float[k * 3];
        model[4] = Float.NaN;
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new CudaPoseSolver(0).solve(new Votes(k, n, new float[k * n * 3], new boolean[n]), model));
        assertTrue(e.getMessage().contains("non-finite value (NaN) at flat position 4"), e.getMessage());
        assertThrows(IllegalArgumentException.class,
                () -> new CudaPoseSolver(0).solve(new Votes(k, n, new float[k * n * 3], new boolean[n]), new float[6]));
    }

    @Test
    void withoutAGpuItFailsWithAClearException() {
        Assumptions.assumeFalse(hasGpu(), "a CUDA device is present: the GPU tests above cover it");
        int k = 9;
        int n = 16;
        RuntimeException e = assertThrows(RuntimeException.class,
                () -> new CudaPoseSolver(0).solve(new Votes(k, n, new float[k * n * 3], new boolean[n]), new float[k * 3]));
        assertTrue(e instanceof OrtException || e instanceof UnsupportedOperationException, e.toString());
        assertTrue(e.getMessage() != null && !e.getMessage().isBlank(), e.toString());
        System.out.println("CudaPoseSolverTest without a GPU: " + e);
    }
}
