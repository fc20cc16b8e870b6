package org.pvn3d.ort.customop;

import static java.lang.foreign.ValueLayout.ADDRESS;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.pvn3d.ort.NativeObject;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.ffm.OrtApi;
import org.pvn3d.ort.internal.Api;
import org.pvn3d.ort.internal.Handles;
import org.pvn3d.ort.internal.Lease;

/**
 * ORT's allocator for one memory location as a kernel sees it ({@code KernelContext_GetAllocator}):
 * scratch memory from the session's own pool (ORT's CUDA arena on the CUDA provider) instead of a
 * raw {@code cudaMalloc}. It may outlive the compute call that obtained it (it holds ORT's
 * allocator), so a kernel may keep buffers across runs and free them in its {@code close()}.
 * Closing releases the allocator handle, not the blocks: free those first.
 */
public final class KernelAllocator extends NativeObject {
    KernelAllocator(MemorySegment handle) {
        super("OrtAllocator(kernel)", handle);
    }

    /** {@code bytes} of memory at the allocator's location (device memory: an address-only segment). */
    public MemorySegment alloc(long bytes) {
        if (bytes < 0 || bytes > org.pvn3d.ort.OrtAllocator.MAX_BLOCK_BYTES) { // -1 is a huge size_t to ORT
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "cannot allocate " + bytes + " bytes of kernel scratch"
                    + (bytes < 0 ? "" : ": more than any address space holds (at most 2^56)"));
        }
        try (Lease h = Handles.acquire(this); Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            Api.checkStatus(OrtApi.AllocatorAlloc.invoke(Api.Allocator.AllocatorAlloc, h.handle(), bytes, out),
                    "kernel scratch of " + bytes + " bytes");
            MemorySegment p = out.get(ADDRESS, 0);
            if (p.address() == 0 && bytes > 0) {
                throw new OrtException(OrtErrorCode.ORT_FAIL, "ORT's allocator returned no memory for " + bytes + " bytes");
            }
            return p;
        }
    }

    /** Returns a block from {@link #alloc} to the allocator. */
    public void free(MemorySegment block) {
        if (block.address() == 0) {
            return;
        }
        try (Lease h = Handles.acquire(this)) {
            Api.checkStatus(OrtApi.AllocatorFree.invoke(Api.Allocator.AllocatorFree, h.handle(), block));
        }
    }

    @Override
    protected void releaseNative(MemorySegment handle) {
        OrtApi.ReleaseAllocator.invoke(Api.Allocator.ReleaseAllocator, handle);
    }
}
