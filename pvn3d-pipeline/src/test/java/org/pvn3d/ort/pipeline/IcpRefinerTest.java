package org.pvn3d.ort.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.pvn3d.ort.io.PvtFile;

/**
 * The ICP refinement against a known truth: the bunny's model points (the held-out set's model.bin, 1839
 * points) under a ground-truth pose; observed = a partial view (the half nearer the camera, 280 of its
 * points) with 1 mm Gaussian sensor noise per axis plus 10% outliers uniform in a 0.3 m box around the
 * object; the start = the truth turned by 8 degrees about a random axis and moved 15 mm in a random
 * direction.
 */
class IcpRefinerTest {
    static float[] model;
    static double diameter;

    @BeforeAll
    static void loadTheBunny() throws Exception {
        Path file = Path.of(IcpRefinerTest.class.getResource("/heldout/model.bin").toURI());
        Map<String, PvtFile.Entry> entries = PvtFile.read(file);
        model = entries.get("model_points").floats();
        diameter = entries.get("model_diameter").floats()[0];
        assertTrue(model.length / 3 > 1000, "the bunny's points: " + model.length / 3);
    }

    /** A random unit vector. */
    static double[] direction(Random rng) {
        double x = rng.nextGaussian();
        double y = rng.nextGaussian();
        double z = rng.nextGaussian();
        double n = Math.sqrt(x * x + y * y + z * z);
        return new double[] {x / n, y / n, z / n};
    }

    static Pose truth(Random rng) {
        return new Pose(BunnyPoseTest.randomRotation(rng),
                new double[] {0.03 * rng.nextGaussian(), 0.03 * rng.nextGaussian(), 0.5 + 0.3 * rng.nextDouble()});
    }

    /** The truth turned by {@code degrees} about a random axis through the object's origin and moved {@code metres}. */
    static Pose perturbed(Pose gt, Random rng, double degrees, double metres) {
        double[] axis = direction(rng);
        double[] move = direction(rng);
        Pose turn = new Pose(Pose.axisAngle(axis[0], axis[1], axis[2], Math.toRadians(degrees)), new double[3]);
        Pose turned = gt.compose(turn);
        double[] t = turned.t();
        for (int c = 0; c < 3; c++) {
            t[c] += metres * move[c];
        }
        return new Pose(turned.r(), t);
    }

    /** The visible half of the object under {@code gt}, {@code count} points with sensor noise, then the outliers. */
    static float[] observed(Pose gt, Random rng, int count, double sensor, int outliers) {
        double[] pc = gt.apply(model);
        List<Integer> visible = new ArrayList<>();
        for (int i = 0; i < pc.length / 3; i++) {
            if (pc[3 * i + 2] <= gt.t(2)) {
                visible.add(i);
            }
        }
        Collections.shuffle(visible, rng);
        int n = Math.min(count, visible.size());
        float[] out = new float[3 * (n + outliers)];
        for (int i = 0; i < n; i++) {
            int v = visible.get(i);
            for (int c = 0; c < 3; c++) {
                out[3 * i + c] = (float) (pc[3 * v + c] + sensor * rng.nextGaussian());
            }
        }
        for (int i = n; i < n + outliers; i++) {
            for (int c = 0; c < 3; c++) {
                out[3 * i + c] = (float) (gt.t(c) + (2 * rng.nextDouble() - 1) * 0.15);
            }
        }
        return out;
    }

    @Test
    void refinesAPerturbedPoseOfAPartialNoisyViewToTheTruth() {
        Random rng = new Random(7);
        IcpRefiner icp = new IcpRefiner();
        for (int i = 0; i < 8; i++) {
            Pose gt = truth(rng);
            float[] obs = observed(gt, rng, 280, 0.001, 28);
            Pose start = perturbed(gt, rng, 8, 0.015);
            double startAdd = PoseMetrics.add(start, gt, model);
            IcpRefiner.Result r = icp.refine(start, obs, model, diameter);
            double rot = r.pose().rotationErrorDegrees(gt);
            double trans = r.pose().translationError(gt);
            double add = PoseMetrics.add(r.pose(), gt, model);
            System.out.printf(Locale.ROOT, "IcpRefinerTest: start %.1f deg, %.1f mm, ADD %.2f mm -> %.3f deg, %.2f mm, ADD %.2f mm; %s%n",
                    start.rotationErrorDegrees(gt), 1e3 * start.translationError(gt), 1e3 * startAdd, rot, 1e3 * trans, 1e3 * add,
                    r.describe(icp.settings()));
            // the start is far off: 8 degrees and 15 mm, ADD above a centimetre
            assertTrue(start.rotationErrorDegrees(gt) > 7.9 && start.translationError(gt) > 0.0149 && startAdd > 0.010, "start " + i);
            assertTrue(r.refined(), r.toString());
            assertTrue(rot < 1.0, i + ": rotation error " + rot + " deg, " + r);
            assertTrue(trans < 0.002, i + ": translation error " + trans + " m, " + r);
            assertTrue(add < 0.002, i + ": ADD " + add + " m, " + r);
            assertEquals(1.0, r.pose().determinant(), 1e-9);
            assertEquals(308, r.observed());
            assertTrue(r.correspondences() >= 280 && r.correspondences() < 308, "the outliers far from the object are trimmed: " + r);
            assertTrue(r.rmsError() > 0.0005 && r.rmsError() < 0.01, "rms of 1 mm noise per axis and some outliers: " + r);
        }
    }

    @Test
    void exactDataConvergesToThePose() {
        Random rng = new Random(11);
        Pose gt = truth(rng);
        float[] obs = observed(gt, rng, 1000, 0, 0);
        IcpRefiner.Result r = new IcpRefiner().refine(perturbed(gt, rng, 3, 0.005), obs, model, diameter);
        assertEquals(IcpRefiner.Status.CONVERGED, r.status(), r.toString());
        assertTrue(r.iterations() < 30, r.toString());
        assertTrue(r.pose().rotationErrorDegrees(gt) < 1e-3, r.toString());
        assertTrue(r.pose().translationError(gt) < 1e-5, r.toString());
        assertTrue(r.rmsError() < 1e-5, r.toString());
    }

    @Test
    void oneIterationAtMostStopsAtTheLimit() {
        Random rng = new Random(12);
        Pose gt = truth(rng);
        IcpRefiner.Result r = new IcpRefiner(IcpRefinement.DEFAULT.withMaxIterations(1))
                .refine(perturbed(gt, rng, 8, 0.015), observed(gt, rng, 280, 0.001, 0), model, diameter);
        assertEquals(IcpRefiner.Status.MAX_ITERATIONS, r.status());
        assertEquals(1, r.iterations());
        assertTrue(r.refined());
    }

    @Test
    void tooFewPointsGiveTheInitialPoseUnchanged() {
        Random rng = new Random(13);
        Pose gt = truth(rng);
        Pose start = perturbed(gt, rng, 8, 0.015);
        IcpRefiner icp = new IcpRefiner();
        // fewer observed points than correspondences needed
        IcpRefiner.Result few = icp.refine(start, observed(gt, rng, 9, 0.001, 0), model, diameter);
        assertSame(start, few.pose());
        assertEquals(IcpRefiner.Status.TOO_FEW_POINTS, few.status());
        assertFalse(few.refined());
        assertEquals(0, few.iterations());
        assertEquals(9, few.observed());
        assertTrue(few.describe(icp.settings()).contains("needs 10"), few.describe(icp.settings()));
        // an empty cloud
        IcpRefiner.Result empty = icp.refine(start, new float[0], model, diameter);
        assertSame(start, empty.pose());
        assertEquals(IcpRefiner.Status.TOO_FEW_POINTS, empty.status());
        assertEquals(0, empty.observed());
        // plenty of points, none within the trim distance of the model under the initial pose
        float[] far = observed(gt, rng, 200, 0.001, 0);
        for (int i = 2; i < far.length; i += 3) {
            far[i] += 1.0f;
        }
        IcpRefiner.Result none = icp.refine(start, far, model, diameter);
        assertSame(start, none.pose());
        assertEquals(IcpRefiner.Status.TOO_FEW_POINTS, none.status());
        assertEquals(0, none.correspondences());
        assertEquals(200, none.observed());
        // a pose that is not finite (an empty mask's) is not refined either
        IcpRefiner.Result invalid = icp.refine(Pose.invalid(), observed(gt, rng, 200, 0.001, 0), model, diameter);
        assertEquals(IcpRefiner.Status.INVALID_POSE, invalid.status());
        assertFalse(invalid.pose().isFinite());
    }

    @Test
    void nonFiniteInputIsRejected() {
        Random rng = new Random(14);
        Pose gt = truth(rng);
        float[] obs = observed(gt, rng, 100, 0.001, 0);
        IcpRefiner icp = new IcpRefiner();
        obs[3 * 17 + 1] = Float.NaN;
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> icp.refine(gt, obs, model, diameter));
        assertTrue(e.getMessage().contains("observed points") && e.getMessage().contains("row 17, column 1"), e.getMessage());
        float[] badModel = model.clone();
        badModel[5] = Float.POSITIVE_INFINITY;
        float[] good = observed(gt, rng, 100, 0.001, 0);
        e = assertThrows(IllegalArgumentException.class, () -> icp.refine(gt, good, badModel, diameter));
        assertTrue(e.getMessage().contains("model points"), e.getMessage());
        // even where there would be too few points to refine
        assertThrows(IllegalArgumentException.class, () -> icp.refine(gt, new float[] {0, Float.NaN, 0}, model, diameter));
        assertThrows(IllegalArgumentException.class, () -> icp.refine(gt, good, model, Double.NaN));
        assertThrows(IllegalArgumentException.class, () -> icp.refine(gt, good, model, 0));
        assertThrows(IllegalArgumentException.class, () -> icp.refine(gt, new float[4], model, diameter));
        assertThrows(IllegalArgumentException.class, () -> icp.refine(gt, good, new float[6], diameter));
        assertThrows(IllegalArgumentException.class, () -> new IcpRefinement(30, 0.15, 2, 1e-6, 1e-6));
        assertThrows(IllegalArgumentException.class, () -> new IcpRefinement(0, 0.15, 10, 1e-6, 1e-6));
        assertThrows(IllegalArgumentException.class, () -> new IcpRefinement(30, Double.NaN, 10, 1e-6, 1e-6));
    }

    @Test
    void theGridFindsTheSameNearestNeighbourAsBruteForce() {
        Random rng = new Random(15);
        for (double radius : new double[] {0.03, 0.005, 0.5}) {
            IcpRefiner.ModelGrid grid = new IcpRefiner.ModelGrid(model, radius);
            float r2 = (float) (radius * radius);
            int hits = 0;
            for (int q = 0; q < 3000; q++) {
                // near the model: a model point plus up to 4 cm of offset, some farther out
                int base = rng.nextInt(model.length / 3);
                float spread = q % 10 == 0 ? 0.3f : 0.04f;
                float x = model[3 * base] + spread * (float) rng.nextGaussian();
                float y = model[3 * base + 1] + spread * (float) rng.nextGaussian();
                float z = model[3 * base + 2] + spread * (float) rng.nextGaussian();
                float best = Float.POSITIVE_INFINITY;
                for (int j = 0; j < model.length / 3; j++) {
                    float dx = model[3 * j] - x;
                    float dy = model[3 * j + 1] - y;
                    float dz = model[3 * j + 2] - z;
                    best = Math.min(best, dx * dx + dy * dy + dz * dz);
                }
                int found = grid.nearest(x, y, z, r2);
                if (best < r2) {
                    hits++;
                    assertTrue(found >= 0, "radius " + radius + ", query " + q + ": brute force finds " + Math.sqrt(best));
                    assertEquals(best, grid.lastDistance2, 0f, "radius " + radius + ", query " + q);
                    float dx = model[3 * found] - x;
                    float dy = model[3 * found + 1] - y;
                    float dz = model[3 * found + 2] - z;
                    assertEquals(best, dx * dx + dy * dy + dz * dz, 0f);
                } else {
                    assertEquals(-1, found, "radius " + radius + ", query " + q);
                }
            }
            assertTrue(hits > 100, "radius " + radius + ": " + hits + " queries had a neighbour");
        }
    }

    @Test
    void maskedPointsAndDiameter() {
        float[] cloud = {1, 2, 3, 9, 9, 9, 4, 5, 6, 9, 9, 9, 7, 8, 9, 9, 9, 9};
        float[] xyz = IcpRefiner.maskedPoints(cloud, 6, new boolean[] {true, false, true});
        assertEquals(List.of(1f, 2f, 3f, 7f, 8f, 9f), List.of(xyz[0], xyz[1], xyz[2], xyz[3], xyz[4], xyz[5]));
        assertEquals(6, xyz.length);
        assertEquals(0, IcpRefiner.maskedPoints(cloud, 6, new boolean[3]).length);
        assertThrows(IllegalArgumentException.class, () -> IcpRefiner.maskedPoints(cloud, 6, new boolean[2]));
        assertEquals(diameter, IcpRefiner.diameter(model), 1e-3);
    }
}
