package org.pvn3d.ort.ops;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.pvn3d.ort.customop.KernelAllocator;
import org.pvn3d.ort.customop.KernelContext;
import org.pvn3d.ort.customop.KernelTensor;

/**
 * Device scratch of one kernel, from ORT's allocator for the kernel's device (the session's CUDA
 * arena), never from {@code cudaMalloc}. One block per stream, kept across runs and grown by
 * doubling: a block is only ever reused by later launches on the same stream, which the stream
 * orders after the earlier ones, so no synchronisation is needed. Outgrown blocks are not handed
 * back until the kernel is destroyed, because a launch still queued may be using them.
 */
final class CudaScratch implements AutoCloseable {
    private KernelAllocator allocator;
    private final Map<Long, MemorySegment> blocks = new HashMap<>();
    private final Map<Long, Long> sizes = new HashMap<>();
    private final List<MemorySegment> retired = new ArrayList<>();
    // the block of the last stream, looked up without a boxed key
    private long lastStream;
    private long lastSize = -1;
    private MemorySegment lastBlock;

    /** At least {@code bytes} of device memory for launches on {@code stream}. */
    synchronized MemorySegment get(KernelContext ctx, KernelTensor like, MemorySegment stream, long bytes) {
        long key = stream.address();
        if (lastBlock != null && key == lastStream && lastSize >= bytes) {
            return lastBlock;
        }
        Long have = sizes.get(key);
        if (have != null && have >= bytes) {
            return remember(key, have, blocks.get(key));
        }
        if (allocator == null) {
            allocator = ctx.allocator(like);
        }
        long size = Math.max(bytes, have == null ? 0 : have * 2);
        MemorySegment block = allocator.alloc(size);
        if (have != null) {
            retired.add(blocks.get(key));
        }
        blocks.put(key, block);
        sizes.put(key, size);
        return remember(key, size, block);
    }

    private MemorySegment remember(long stream, long size, MemorySegment block) {
        lastStream = stream;
        lastSize = size;
        lastBlock = block;
        return block;
    }

    @Override
    public synchronized void close() {
        if (allocator == null) {
            return;
        }
        try {
            for (MemorySegment b : retired) {
                allocator.free(b);
            }
            for (MemorySegment b : blocks.values()) {
                allocator.free(b);
            }
        } finally {
            retired.clear();
            blocks.clear();
            lastBlock = null;
            sizes.clear();
            allocator.close();
            allocator = null;
        }
    }
}
