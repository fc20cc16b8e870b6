package org.pvn3d.ort.pipeline;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * The native pose stage (libpvn3d_ops's fused CPU kernel) against the Java reference on the same
 * votes: the tiny model's votes on its sample, and an empty mask.
 */
class NativePoseSolverTest {
    /** The tiny model's votes on its shipped sample (the CPU provider). */
    static Votes tinyVotes(Pvn3dSample sample) {
        try (Pvn3dPipeline p = Pvn3dPipeline.tiny(Pvn3dPipeline.Config.cpu())) {
            return p.run(sample).votes();
        }
    }

    static double maxDiff(float[] a, float[] b) {
        double m = 0;
        for (int i = 0; i < a.length; i++) {
            m = Math.max(m, Math.abs(a[i] - b[i]));
        }
        return m;
    }

    static double maxDiff(double[] a, double[] b) {
        double m = 0;
        for (int i = 0; i < a.length; i++) {
            m = Math.max(m, Math.abs(a[i] - b[i]));
        }
        return m;
    }

    @Test
    void solversByName() {
        assertInstanceOf(NativePoseSolver.class, PoseSolver.named("native", 0));
        assertInstanceOf(JavaPoseSolver.class, PoseSolver.named("java", 0));
        PoseSolver cuda = PoseSolver.named("cuda", 3); // libpvn3d_ops loads without a GPU; nothing runs here
        assertInstanceOf(CudaPoseSolver.class, cuda);
        assertTrue(cuda.name().contains("on GPU 3"), cuda.name());
        assertThrows(IllegalArgumentException.class, () -> PoseSolver.named("gpu", 0));
    }

    @Test
    void theTinyModelFromTheClassPath() {
        assertArrayEquals(Pvn3dPipeline.resourceBytes(Pvn3dPipeline.MODEL_RESOURCE), Pvn3dPipeline.tinyModelBytes());
        org.pvn3d.ort.OrtException e = assertThrows(org.pvn3d.ort.OrtException.class, () -> Pvn3dPipeline.resourceBytes("/no/such.onnx"));
        assertEquals(org.pvn3d.ort.OrtErrorCode.ORT_NO_SUCHFILE, e.getCode());
    }

    @Test
    void nativeEqualsTheJavaReferenceOnTheTinySample() {
        Pvn3dSample sample = Pvn3dSample.resource(Pvn3dSample.RESOURCE);
        Votes votes = tinyVotes(sample);
        PoseSolver.Solution java = new JavaPoseSolver().solve(votes, sample.modelKps());
        PoseSolver.Solution nat = new NativePoseSolver().solve(votes, sample.modelKps());
        assertEquals(java.inliers(), nat.inliers(), "points used after the centre filter");
        double maxKp = maxDiff(java.kps(), nat.kps());
        double maxR = maxDiff(java.pose().r(), nat.pose().r());
        System.out.printf("NativePoseSolverTest: %d inliers, max |kps java - native| = %.3g m, max |R java - native| = %.3g%n",
                nat.inliers(), maxKp, maxR);
        // same float32 distances and weights on both sides; sums in double: the keypoints agree to float
        // rounding, R to the float32 the kernel returns
        assertTrue(maxKp < 1e-5, "keypoints differ by " + maxKp);
        assertTrue(maxR < 1e-5, "rotations differ by " + maxR);
        assertEquals(1.0, nat.pose().determinant(), 1e-5);
    }

    @Test
    void anEmptyMaskGivesNoPoseAndNoError() {
        int k = 9;
        int n = 16;
        Votes votes = new Votes(k, n, new float[k * n * 3], new boolean[n]);
        PoseSolver.Solution s = new NativePoseSolver().solve(votes, new float[k * 3]);
        assertEquals(0, s.inliers());
        assertTrue(Float.isNaN(s.kps()[0]) && Double.isNaN(s.pose().r()[0]));
    }
}
