package org.pvn3d.ort.pipeline;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The Java mean shift (PVN3D_VoteAggregate's reference) on cases that can be checked by hand. */
class MeanShiftTest {
    static final float BW = 0.08f;

    @Test
    void oneVoteIsItsOwnAnswer() {
        MeanShift.Cluster c = new MeanShift(BW, 300, false).cluster(new float[] {0.1f, -0.2f, 0.5f});
        assertEquals(0.1f, c.x());
        assertEquals(-0.2f, c.y());
        assertEquals(0.5f, c.z());
        assertEquals(0, c.best());
        assertEquals(1, c.iterations(), "the first iteration moves nothing, so it stops");
    }

    @Test
    void farApartVotesDoNotAttractAndTheLowestIndexWinsTheTie() {
        // 2 m apart: every cross weight is exp(-0.5 * 625) = 0 (flushed); each mode stays on its vote
        float[] x = {0, 0, 0, 2, 0, 0};
        MeanShift.Cluster c = new MeanShift(BW, 300, false).cluster(x);
        assertEquals(0, c.best());
        assertEquals(1, c.count());
        assertArrayEquals(new float[] {0, 0, 0}, new float[] {c.x(), c.y(), c.z()});
    }

    @Test
    void aSymmetricPairMeetsInTheMiddle() {
        // two votes 2 cm apart: each mode moves to the weighted mean; by symmetry both converge to 0
        float a = 0.01f;
        MeanShift.Cluster c = new MeanShift(BW, 300, false).cluster(new float[] {-a, 0, 0, a, 0, 0});
        assertEquals(0, c.best());
        assertEquals(0, c.x(), BW * 1e-3, "converged to the midpoint within the tolerance");
        assertEquals(0, c.y());
        assertEquals(0, c.z());
        // one step by hand: w = exp(-0.5 (2a)^2 / bw^2); m0 <- -a + w * 2a / (1 + w)
        double w = Math.exp(-0.5 * (2 * a) * (2 * a) / (BW * BW));
        MeanShift.Cluster one = new MeanShift(BW, 1, false).cluster(new float[] {-a, 0, 0, a, 0, 0});
        assertEquals(-a + w * 2 * a / (1 + w), one.x(), 1e-7);
        assertEquals(1, one.iterations());
    }

    @Test
    void theDensestClusterWinsOverOutliers() {
        // five votes around (0.3, 0.3, 0.3) (+-1 cm along each axis, symmetric) and two far outliers:
        // the centre vote has the most neighbours, the mode converges to the cluster mean
        float[] x = {
            5, 5, 5, // outlier
            0.30f, 0.30f, 0.30f, 0.31f, 0.30f, 0.30f, 0.29f, 0.30f, 0.30f, 0.30f, 0.31f, 0.30f, 0.30f, 0.29f, 0.30f,
            -5, 0, 0}; // outlier
        MeanShift.Cluster c = new MeanShift(BW, 300, false).cluster(x);
        assertEquals(1, c.best(), "the first vote with the most votes within bandwidth (5)");
        assertEquals(5, c.count());
        assertEquals(0.30f, c.x(), 1e-4);
        assertEquals(0.30f, c.y(), 1e-4);
        assertEquals(0.30f, c.z(), 1e-4);
    }

    @Test
    void zeroIterationsAnswerTheChosenVote() {
        float[] x = {0, 0, 0, 0.05f, 0, 0, 0.06f, 0, 0};
        MeanShift.Cluster c = new MeanShift(BW, 0, false).cluster(x);
        // counts within 0.08: vote 0 -> {0, 0.05, 0.06} = 3, vote 1 -> 3, vote 2 -> 3: lowest index
        assertEquals(0, c.best());
        assertEquals(0f, c.x());
        assertEquals(0, c.iterations());
    }

    @Test
    void theCentreFilterKeepsOnlyPointsVotingForTheChosenCentre() {
        // K = 2: row 0 a keypoint, row 1 the centre. Points 0-2 vote for the centre near the origin, points
        // 3-4 for a centre 1 m away; the keypoint votes of points 3-4 are elsewhere and must be ignored.
        int k = 2;
        int n = 5;
        float[] votes = new float[k * n * 3];
        float[][] kp = {{0.1f, 0, 0}, {0.1f, 0.002f, 0}, {0.1f, -0.002f, 0}, {-3, 0, 0}, {-3, 0.001f, 0}};
        float[][] ctr = {{0, 0, 0}, {0.001f, 0, 0}, {-0.001f, 0, 0}, {1, 0, 0}, {1.001f, 0, 0}};
        for (int i = 0; i < n; i++) {
            System.arraycopy(kp[i], 0, votes, i * 3, 3);
            System.arraycopy(ctr[i], 0, votes, (n + i) * 3, 3);
        }
        MeanShift.Aggregate agg = new MeanShift(BW, 300, true).aggregate(votes, k, n, null);
        assertEquals(3, agg.inliers());
        assertEquals(5, agg.candidates());
        assertEquals(0, agg.kps()[3], 1e-4);
        assertEquals(0.1f, agg.kps()[0], 1e-4);
        assertEquals(0, agg.kps()[1], 1e-4);
        // without the filter the keypoint row sees all five points; the 3-vote cluster still wins
        MeanShift.Aggregate all = new MeanShift(BW, 300, false).aggregate(votes, k, n, null);
        assertEquals(5, all.inliers());
        assertEquals(0.1f, all.kps()[0], 1e-4);
    }

    @Test
    void maskAndNonFiniteVotesSelectTheCandidates() {
        int k = 1;
        int n = 4;
        float[] votes = {0, 0, 0, 0.01f, 0, 0, Float.NaN, 0, 0, 9, 9, 9};
        MeanShift ms = new MeanShift(BW, 300, true);
        MeanShift.Aggregate a = ms.aggregate(votes, k, n, new boolean[] {true, true, true, false});
        assertEquals(2, a.candidates(), "the NaN vote and the unmasked point are left out");
        assertEquals(0.005f, a.kps()[0], BW * 1e-3);
        MeanShift.Aggregate empty = ms.aggregate(votes, k, n, new boolean[4]);
        assertEquals(0, empty.inliers());
        assertTrue(Float.isNaN(empty.kps()[0]) && Float.isNaN(empty.kps()[1]) && Float.isNaN(empty.kps()[2]));
        assertThrows(IllegalArgumentException.class, () -> ms.aggregate(votes, 2, n, null));
        assertThrows(IllegalArgumentException.class, () -> new MeanShift(0, 300, true));
    }

    @Test
    void votesFollowPvn3dsConvention() {
        // two points, xyz + 6 more channels; one keypoint; vote = point - offset; mask = argmax == 1
        float[] cld = {1, 2, 3, 0, 0, 0, 0, 0, 0, 4, 5, 6, 0, 0, 0, 0, 0, 0};
        float[] kpOf = {0.5f, 0.5f, 0.5f, -1, -1, -1};
        float[] ctrOf = {1, 2, 3, 4, 5, 6};
        float[] seg = {0.1f, 0.9f, 0.7f, 0.2f};
        Votes v = Votes.fromPredictions(cld, 9, kpOf, ctrOf, seg, 2, 1);
        assertEquals(2, v.k());
        assertArrayEquals(new float[] {0.5f, 1.5f, 2.5f, 5, 6, 7, 0, 0, 0, 0, 0, 0}, v.votes());
        assertArrayEquals(new boolean[] {true, false}, v.mask());
        assertEquals(1, v.maskedCount());
    }
}
