package org.pvn3d.ort.internal;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.pvn3d.ort.NativeObject;

/**
 * What one run needs for its length, kept per thread so that a run allocates nothing: native words
 * for the arrays a run passes to ORT (names and values) and for the out-parameters of the calls that
 * read its outputs, and the objects whose uses the run began (ended together by {@link #endUses()},
 * like a {@link LeaseGroup}, but without a lease per use).
 *
 * <p>One per thread, taken by {@link #take} and given back by {@link #give} in a {@code finally}. A
 * run begun while the thread's scratch is taken (a custom kernel that runs another session, on the
 * thread ORT called it on) gets a fresh one instead. The native memory is {@link Arena#ofAuto()}'s,
 * freed when the scratch is no longer reachable; it only grows.
 */
public final class RunScratch {
    private static final ThreadLocal<RunScratch> CURRENT = new ThreadLocal<>() { // no lambda: no bootstrap on the first run
        @Override
        protected RunScratch initialValue() {
            return new RunScratch();
        }
    };
    /** Out-parameter words, after the arrays. */
    private static final int OUT_WORDS = 4;

    private MemorySegment block;
    private long base;
    private int words; // array words (out-parameters and dims come after them)
    private int dimWords;
    private NativeObject[] used = new NativeObject[8];
    private int usedCount;
    private boolean busy;

    private RunScratch() {
        grow(32, 16);
    }

    /** This thread's scratch with room for {@code arrayWords} words of arrays (a fresh one if it is taken). */
    public static RunScratch take(int arrayWords) {
        RunScratch s = CURRENT.get();
        if (s.busy) {
            s = new RunScratch();
        }
        s.busy = true;
        if (arrayWords > s.words) {
            s.grow(Math.max(arrayWords, 2 * s.words), s.dimWords);
        }
        return s;
    }

    /** Ends the uses still begun (see {@link #endUses()}) and gives the scratch back to its thread. */
    public void give() {
        endUses();
        busy = false;
    }

    private void grow(int arrayWords, int dims) {
        long bytes = (long) (arrayWords + OUT_WORDS + dims) * Long.BYTES;
        block = Arena.ofAuto().allocate(bytes, Long.BYTES);
        base = block.address();
        words = arrayWords;
        dimWords = dims;
    }

    /** The address of array word {@code i}. */
    public long address(int i) {
        return base + (long) i * Long.BYTES;
    }

    public void set(int i, long value) {
        block.setAtIndex(JAVA_LONG, i, value);
    }

    public long get(int i) {
        return block.getAtIndex(JAVA_LONG, i);
    }

    /** The address of out-parameter word {@code k} (0 to 3). */
    public long out(int k) {
        return base + (long) (words + k) * Long.BYTES;
    }

    public long outLong(int k) {
        return block.getAtIndex(JAVA_LONG, words + k);
    }

    public int outInt(int k) {
        return block.get(JAVA_INT, (long) (words + k) * Long.BYTES);
    }

    /** The address of room for {@code n} longs (dimensions), after the out-parameters. */
    public long dims(int n) {
        if (n > dimWords) {
            // only between calls: nothing in the old block is needed past this point but the arrays
            MemorySegment old = block;
            grow(words, Math.max(n, 2 * dimWords));
            MemorySegment.copy(old, 0, block, 0, (long) (words + OUT_WORDS) * Long.BYTES);
        }
        return base + (long) (words + OUT_WORDS) * Long.BYTES;
    }

    /** Dimension {@code i} of what was read to {@link #dims}. */
    public long dim(int i) {
        return block.getAtIndex(JAVA_LONG, words + OUT_WORDS + i);
    }

    /** Begins a use of {@code o} and keeps it for {@link #endUses()}; throws if {@code o} is closed. */
    public void beginUse(NativeObject o) {
        Handles.beginUse(o);
        track(o);
    }

    /**
     * Begins a use of {@code o} if it is open and keeps it for {@link #endUses()}; {@code false} (and no
     * use) when it is closed.
     */
    public boolean tryBeginUse(NativeObject o) {
        if (!Handles.tryBeginUse(o)) {
            return false;
        }
        track(o);
        return true;
    }

    private void track(NativeObject o) {
        if (usedCount == used.length) {
            NativeObject[] more = new NativeObject[used.length * 2];
            System.arraycopy(used, 0, more, 0, usedCount);
            used = more;
        }
        used[usedCount++] = o;
    }

    /** Ends every use begun through this scratch, last first. */
    public void endUses() {
        while (usedCount > 0) {
            NativeObject o = used[--usedCount];
            used[usedCount] = null;
            Handles.endUse(o);
        }
    }
}
