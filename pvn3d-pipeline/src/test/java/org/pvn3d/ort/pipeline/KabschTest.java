package org.pvn3d.ort.pipeline;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import org.junit.jupiter.api.Test;

/** Kabsch and the 3x3 SVD against hand-checkable cases. */
class KabschTest {
    static final double[] RZ90 = {0, -1, 0, 1, 0, 0, 0, 0, 1};

    @Test
    void recoversAQuarterTurnAndATranslationExactly() {
        // model: origin and the unit axes; observed: rotated 90 degrees about z, shifted by (1, 2, 3)
        double[] a = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
        double[] b = {1, 2, 3, 1, 3, 3, 0, 2, 3, 1, 2, 4};
        Pose p = Kabsch.fit(a, b);
        assertArrayEquals(RZ90, p.r(), 1e-12);
        assertArrayEquals(new double[] {1, 2, 3}, p.t(), 1e-12);
        assertEquals(1.0, p.determinant(), 1e-12);
    }

    /** Points near the float limit: alpha * beta overflowed in the SVD and every Jacobi pair was skipped (as in the native kernel). */
    @Test
    void recoversAQuarterTurnNearTheFloatLimit() {
        for (double scale : new double[] {1e38, 3e38}) {
            double[] a = {1, 0, 0, 0, 1, 0, 0, 0, 1, -1, -1, -1};
            double[] b = new double[a.length];
            for (int i = 0; i < 4; i++) { // a quarter turn about z
                b[3 * i] = -a[3 * i + 1];
                b[3 * i + 1] = a[3 * i];
                b[3 * i + 2] = a[3 * i + 2];
            }
            for (int i = 0; i < a.length; i++) {
                a[i] *= scale;
                b[i] *= scale;
            }
            Pose p = Kabsch.fit(a, b);
            assertArrayEquals(RZ90, p.r(), 1e-9, "at " + scale);
            assertEquals(1.0, p.determinant(), 1e-9);
        }
    }

    @Test
    void theFirstKRowsOfLongerArrays() {
        double[] a = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 7, 7, 7};
        double[] b = {1, 2, 3, 1, 3, 3, 0, 2, 3, 1, 2, 4, -5, 0, 9};
        Pose p = Kabsch.fit(a, b, 4);
        assertArrayEquals(RZ90, p.r(), 1e-12);
        assertArrayEquals(new double[] {1, 2, 3}, p.t(), 1e-12);
        assertThrows(IllegalArgumentException.class, () -> Kabsch.fit(a, b, 6));
        assertThrows(IllegalArgumentException.class, () -> Kabsch.fit(a, b, 2));
    }

    @Test
    void coplanarPointsGiveARotationNotAReflection() {
        // four points in the z = 0 plane: H has rank 2, so the SVD's third direction is arbitrary and
        // V U^T may come out as a reflection; the det fix must give exactly the quarter turn
        double[] a = {1, 0, 0, 0, 1, 0, -1, 0, 0, 0, -1, 0};
        double[] b = {0, 1, 0, -1, 0, 0, 0, -1, 0, 1, 0, 0};
        Pose p = Kabsch.fit(a, b);
        assertArrayEquals(RZ90, p.r(), 1e-12);
        assertArrayEquals(new double[] {0, 0, 0}, p.t(), 1e-12);
        assertEquals(1.0, p.determinant(), 1e-12);
    }

    @Test
    void aMirroredTargetGivesTheBestProperRotation() {
        // the target is the model mirrored in x (a reflection): the answer must still be a rotation.
        // Pairs along x (+-2), y (+-1) and z (+-0.5): H = diag(-8, 2, 0.5), so V U^T = diag(-1, 1, 1) has
        // det -1; the fix negates V's last column (the smallest singular value, the z axis).
        double[] a = {2, 0, 0, -2, 0, 0, 0, 1, 0, 0, -1, 0, 0, 0, 0.5, 0, 0, -0.5};
        double[] b = a.clone();
        for (int i = 0; i < b.length; i += 3) {
            b[i] = -b[i];
        }
        Pose p = Kabsch.fit(a, b);
        assertEquals(1.0, p.determinant(), 1e-12);
        // R = diag(-1, 1, -1): x flipped as asked, z (least spread, least cost) flipped to stay proper
        assertArrayEquals(new double[] {-1, 0, 0, 0, 1, 0, 0, 0, -1}, p.r(), 1e-12);
    }

    @Test
    void randomRigidMotionsAreRecoveredToRoundOff() {
        Random rng = new Random(7);
        for (int trial = 0; trial < 200; trial++) {
            double[] rot = Pose.axisAngle(rng.nextGaussian(), rng.nextGaussian(), rng.nextGaussian(), Math.PI * rng.nextDouble());
            Pose truth = new Pose(rot, new double[] {rng.nextGaussian(), rng.nextGaussian(), rng.nextGaussian()});
            double[] a = new double[9 * 3];
            for (int i = 0; i < a.length; i++) {
                a[i] = rng.nextGaussian() * 0.1;
            }
            double[] b = new double[a.length];
            for (int i = 0; i < a.length; i += 3) {
                truth.apply(a[i], a[i + 1], a[i + 2], b, i);
            }
            Pose p = Kabsch.fit(a, b);
            assertArrayEquals(truth.r(), p.r(), 1e-9, "trial " + trial);
            assertArrayEquals(truth.t(), p.t(), 1e-9, "trial " + trial);
        }
        // a half turn (180 degrees), where angle-based methods are at their worst
        double[] half = Pose.axisAngle(1, 1, 0, Math.PI);
        Pose truth = new Pose(half, new double[] {0, 0, 0.5});
        double[] a = {0.1, 0, 0, 0, 0.1, 0, 0, 0, 0.1, -0.05, 0.02, 0.03};
        double[] b = new double[a.length];
        for (int i = 0; i < a.length; i += 3) {
            truth.apply(a[i], a[i + 1], a[i + 2], b, i);
        }
        Pose p = Kabsch.fit(a, b);
        assertEquals(0, p.rotationErrorDegrees(truth), 1e-7);
        assertEquals(0, p.translationError(truth), 1e-12);
    }

    @Test
    void badInputs() {
        assertThrows(IllegalArgumentException.class, () -> Kabsch.fit(new double[] {0, 0, 0, 1, 0, 0}, new double[] {0, 0, 0, 1, 0, 0}));
        assertThrows(IllegalArgumentException.class, () -> Kabsch.fit(new double[9], new double[12]));
        Pose nan = Kabsch.fit(new float[] {0, 0, 0, 1, 0, 0, 0, 1, 0}, new float[] {0, 0, 0, Float.NaN, 0, 0, 0, 1, 0});
        assertFalse(nan.isFinite());
    }

    @Test
    void svdOfHandMadeMatrices() {
        // diagonal with mixed signs and order: singular values sorted, u diag(s) v^T reproduces it
        Mat3.Svd d = Mat3.svd(new double[] {2, 0, 0, 0, -5, 0, 0, 0, 3});
        assertArrayEquals(new double[] {5, 3, 2}, d.s(), 1e-14);
        assertArrayEquals(new double[] {2, 0, 0, 0, -5, 0, 0, 0, 3}, d.product(), 1e-14);
        // rank 1: the outer product (1,2,2)(2,1,-2)^T has the one singular value |(1,2,2)|*|(2,1,-2)| = 9
        double[] r1 = {2, 1, -2, 4, 2, -4, 4, 2, -4};
        Mat3.Svd s1 = Mat3.svd(r1);
        assertArrayEquals(new double[] {9, 0, 0}, s1.s(), 1e-12);
        assertArrayEquals(r1, s1.product(), 1e-12);
        assertOrthonormal(s1.u());
        assertOrthonormal(s1.v());
        // zero matrix
        Mat3.Svd z = Mat3.svd(new double[9]);
        assertArrayEquals(new double[3], z.s(), 0);
        assertOrthonormal(z.u());
        // random matrices, including nearly singular ones
        Random rng = new Random(3);
        for (int t = 0; t < 500; t++) {
            double[] m = new double[9];
            for (int i = 0; i < 9; i++) {
                m[i] = rng.nextGaussian();
            }
            if (t % 5 == 0) { // make the third row almost a combination of the first two
                for (int c = 0; c < 3; c++) {
                    m[6 + c] = m[c] - 2 * m[3 + c] + 1e-13 * rng.nextGaussian();
                }
            }
            Mat3.Svd s = Mat3.svd(m);
            assertArrayEquals(m, s.product(), 1e-12);
            assertOrthonormal(s.u());
            assertOrthonormal(s.v());
            assertTrue(s.s()[0] >= s.s()[1] && s.s()[1] >= s.s()[2] && s.s()[2] >= 0);
        }
    }

    static void assertOrthonormal(double[] m) {
        assertArrayEquals(new double[] {1, 0, 0, 0, 1, 0, 0, 0, 1}, Mat3.mul(Mat3.transpose(m), m), 1e-12);
    }
}
