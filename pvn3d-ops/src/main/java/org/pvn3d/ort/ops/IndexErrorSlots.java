package org.pvn3d.ort.ops;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_cuda_free_host;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_cuda_host_device_pointer;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_cuda_malloc_host;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_index_error_describe;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_kabsch_error_describe;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.ConcurrentHashMap;
import org.pvn3d.ort.OrtException;

/**
 * The CUDA index-error flags of one kernel (cuda-ops/common/index_check.h, reading option b): one
 * 16-byte mapped pinned buffer per CUDA stream the kernel has launched on, so that runs in flight on
 * different streams never share a flag. The kernel writes the host memory directly through its
 * device alias, only when it meets a bad index; the host reads it once the stream's work is done and
 * resets it to {-1, -1} with two stores (the launchers add no reset and no second kernel to the
 * stream: that is the caller's part of the protocol). The words carry the position and the value
 * packed (position in the high half of both, the value's high and low halves below it).
 *
 * <p>The same two-word protocol carries the non-finite-input report of the CUDA Kabsch launchers
 * (cuda-ops/kabsch_solver/kabsch_solver.h): {@link #kabsch} builds slots that decode it with
 * {@code pvn3d_kabsch_error_describe}.
 */
final class IndexErrorSlots implements AutoCloseable {
    private static final long NONE = -1;

    /** Turns a report (position, value, the launch's context value) into a library status. */
    @FunctionalInterface
    interface Describer {
        int describe(Arena arena, long position, long value, long context);
    }

    private final String op;
    private final String input;
    private final Describer describer;
    private final String suffix;
    private final ConcurrentHashMap<Long, Slot> slots = new ConcurrentHashMap<>();
    // what each launch and each check after a run read without a map lookup (a boxed key) or an
    // iterator: the slot of the last stream, and every slot as an array (rebuilt when one is added)
    private volatile Slot last;
    private volatile Slot[] all = new Slot[0];

    private static final class Slot {
        final long stream;
        final MemorySegment host;
        final MemorySegment device;
        volatile long limit;

        Slot(long stream, MemorySegment host, MemorySegment device) {
            this.stream = stream;
            this.host = host;
            this.device = device;
        }
    }

    /** Index flags: {@code pvn3d_index_error_describe(op, input, position, value, limit)}. */
    IndexErrorSlots(String op, String input) {
        this(op, input, null, " (CUDA kernel; the run wrote 0 there)");
    }

    private IndexErrorSlots(String op, String input, Describer describer, String suffix) {
        this.op = op;
        this.input = input;
        this.describer = describer;
        this.suffix = suffix;
    }

    /**
     * Non-finite-input flags of a CUDA Kabsch launch: {@code pvn3d_kabsch_error_describe(op,
     * position, bits, model_numel, secondInput)}, where the launch's context value ({@link
     * #flagFor}'s {@code limit}) is model_kps's element count.
     */
    static IndexErrorSlots kabsch(String op, String secondInput, String suffix) {
        Describer d = (arena, position, value, modelNumel) -> pvn3d_kabsch_error_describe(
                arena.allocateFrom(op), position, value, modelNumel, arena.allocateFrom(secondInput));
        return new IndexErrorSlots(op, secondInput, d, suffix);
    }

    /**
     * The device-side flag for a launch on {@code stream} whose valid indices are [0, limit) (for
     * {@link #kabsch} slots: whose model_kps holds {@code limit} elements).
     */
    MemorySegment flagFor(MemorySegment stream, long limit) {
        Slot slot = slotOf(stream.address());
        slot.limit = limit;
        // Normally already {-1, -1} (reset when read); a run that failed before its check could have
        // left a report behind. The previous launch on this stream is done (ORT synchronises its
        // stream at the end of a run), so nothing writes the words now.
        slot.host.set(JAVA_LONG, 0, NONE);
        slot.host.set(JAVA_LONG, 8, NONE);
        return slot.device;
    }

    private Slot slotOf(long stream) {
        Slot slot = last;
        if (slot == null || slot.stream != stream) {
            slot = slots.get(stream);
            if (slot == null) {
                synchronized (this) {
                    slot = slots.get(stream);
                    if (slot == null) {
                        slot = allocate(stream);
                        slots.put(stream, slot);
                        Slot[] more = java.util.Arrays.copyOf(all, all.length + 1);
                        more[more.length - 1] = slot;
                        all = more;
                    }
                }
            }
            last = slot;
        }
        return slot;
    }

    /** After the stream's work is done: throws the launch's index error, if any, and clears it. */
    void check(MemorySegment stream) {
        Slot slot = last;
        if (slot == null || slot.stream != stream.address()) {
            slot = slots.get(stream.address());
        }
        if (slot != null) {
            report(slot);
        }
    }

    /** Reports the first recorded error of any stream (deferred mode, after the run). */
    void checkAll() {
        for (Slot slot : all) {
            report(slot);
        }
    }

    private void report(Slot slot) {
        long w0 = slot.host.get(JAVA_LONG, 0);
        if (w0 == NONE) {
            return;
        }
        long w1 = slot.host.get(JAVA_LONG, 8);
        slot.host.set(JAVA_LONG, 0, NONE);
        slot.host.set(JAVA_LONG, 8, NONE);
        // the Kabsch report keeps its plain {position, bits}
        long position = describer != null ? w0 : reportedPosition(w0);
        long value = describer != null ? w1 : reportedValue(w0, w1);
        try (Arena arena = Arena.ofConfined()) {
            int status = describer != null ? describer.describe(arena, position, value, slot.limit)
                    : pvn3d_index_error_describe(arena.allocateFrom(op),
                            arena.allocateFrom(input), position, value, slot.limit);
            OrtException e = OpsLibrary.failure(status);
            throw new OrtException(e.getCode(), Pvn3dOps.rawMessage(e) + suffix);
        }
    }

    /** PVN3D_INDEX_ERROR_POSITION of index_check.h: the position in the high half of word 0 (-1: none). */
    static long reportedPosition(long w0) {
        return w0 == NONE ? NONE : w0 >>> 32;
    }

    /** PVN3D_INDEX_ERROR_VALUE of index_check.h: the bad index's high half in word 0, its low half in word 1. */
    static long reportedValue(long w0, long w1) {
        return (w0 << 32) | (w1 & 0xFFFF_FFFFL);
    }

    private Slot allocate(long stream) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            OpsLibrary.check(pvn3d_cuda_malloc_host(out, 16L, 1));
            MemorySegment host = out.get(ADDRESS, 0).reinterpret(16);
            host.set(JAVA_LONG, 0, NONE);
            host.set(JAVA_LONG, 8, NONE);
            int status = pvn3d_cuda_host_device_pointer(out, host);
            if (status != OpsLibrary.OK) {
                OrtException e = OpsLibrary.failure(status);
                int ignored = pvn3d_cuda_free_host(host);
                throw e;
            }
            return new Slot(stream, host, out.get(ADDRESS, 0));
        }
    }

    @Override
    public synchronized void close() {
        last = null;
        all = new Slot[0];
        for (Slot slot : slots.values()) {
            try {
                int ignored = pvn3d_cuda_free_host(slot.host);
            } catch (Throwable t) {
                // freeing pinned memory at session release cannot be retried; nothing else to do
            }
        }
        slots.clear();
    }
}
