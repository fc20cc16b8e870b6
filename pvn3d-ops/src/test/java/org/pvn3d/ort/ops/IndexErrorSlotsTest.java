package org.pvn3d.ort.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/**
 * The decoding of the CUDA index report (cuda-ops/common/index_check.h) against the kernel side's
 * packing written out here: both words take atomicMin of (position << 32) | one half of the value, so
 * any number of bad indices leave the lowest position's pair. Runs without a GPU; the CUDA tests check
 * the kernels' half on the GPU machine.
 */
class IndexErrorSlotsTest {
    /** What record_bad_index does for bad index v at position p, applied to {w0, w1} (unsigned minima). */
    private static void record(long[] words, long p, long v) {
        long pos = Math.min(p, 0xFFFF_FFFEL);
        long hi = (pos << 32) | (v >>> 32);
        long lo = (pos << 32) | (v & 0xFFFF_FFFFL);
        if (Long.compareUnsigned(hi, words[0]) < 0) {
            words[0] = hi;
        }
        if (Long.compareUnsigned(lo, words[1]) < 0) {
            words[1] = lo;
        }
    }

    private static long[] reset() {
        return new long[] {-1, -1};
    }

    @Test
    void noReportDecodesAsNone() {
        assertEquals(-1, IndexErrorSlots.reportedPosition(-1));
    }

    @Test
    void everyValueComesBackWhole() {
        long[] values = {0, 1, -1, 50, -3, Integer.MAX_VALUE + 1L, Integer.MIN_VALUE - 1L, 1L << 40,
                -(1L << 35) - 7, Long.MAX_VALUE, Long.MIN_VALUE};
        long[] positions = {0, 1, 612, (1L << 31) + 5, 0xFFFF_FFFDL};
        for (long p : positions) {
            for (long v : values) {
                long[] w = reset();
                record(w, p, v);
                assertEquals(p, IndexErrorSlots.reportedPosition(w[0]), "position of " + v + " at " + p);
                assertEquals(v, IndexErrorSlots.reportedValue(w[0], w[1]), "value " + v + " at " + p);
            }
        }
    }

    @Test
    void theLowestPositionWinsInAnyOrder() {
        long[][] bad = {{777, -3}, {612, 55}, {613, Long.MIN_VALUE}, {5000, 1L << 40}, {612, 55}};
        for (int start = 0; start < bad.length; start++) {
            long[] w = reset();
            for (int k = 0; k < bad.length; k++) {
                long[] b = bad[(start + k) % bad.length];
                record(w, b[0], b[1]);
            }
            assertEquals(612, IndexErrorSlots.reportedPosition(w[0]));
            assertEquals(55, IndexErrorSlots.reportedValue(w[0], w[1]));
        }
    }

    @Test
    void positionsPastTheWordsAreClamped() {
        long[] w = reset();
        record(w, 1L << 40, 9);
        assertEquals(0xFFFF_FFFEL, IndexErrorSlots.reportedPosition(w[0]));
        assertEquals(9, IndexErrorSlots.reportedValue(w[0], w[1]));
    }
}
