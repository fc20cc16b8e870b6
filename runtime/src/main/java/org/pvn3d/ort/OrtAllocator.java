package org.pvn3d.ort;

import static java.lang.foreign.ValueLayout.ADDRESS;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.pvn3d.ort.ffm.OrtApi;
import org.pvn3d.ort.internal.Api;
import org.pvn3d.ort.internal.Handles;
import org.pvn3d.ort.internal.Lease;

/**
 * One of ORT's allocators as a session uses it ({@code CreateAllocator}; see
 * {@link OrtSession#getAllocator(OrtMemoryInfo)}): for example the CUDA provider's device arena, or
 * the environment's shared arena when the session was created with {@code session.use_env_allocators}.
 *
 * <p><b>Ownership.</b> ORT's allocator object keeps the allocator it wraps alive (a shared pointer),
 * so this object stays usable after its session is closed. The caller closes it; tensors created from
 * it ({@link OnnxTensor#createTensor(OrtAllocator, OnnxTensorType, long...)} for host memory,
 * {@link DeviceTensor#createTensor(OrtAllocator, OnnxTensorType, long...)} for device memory) each hold
 * it until they are closed (ORT's tensor frees through it), so the native allocator goes when the owner
 * and every such tensor have closed. Memory from {@link #alloc} must be given back with {@link #free}
 * before closing; {@link #free} refuses pointers this object did not hand out (no double free).
 *
 * <p>Allocator statistics: the OrtAllocator struct of API 16 has only {@code Alloc}, {@code Free} and
 * {@code Info} (no {@code Reserve}, no {@code GetStats}, which later APIs add), so this binding offers
 * none; {@link JavaAllocator} keeps its own counters.
 */
public final class OrtAllocator extends NativeObject {
    private final boolean hostAccessible;
    private final Set<Long> outstanding = ConcurrentHashMap.newKeySet();

    OrtAllocator(MemorySegment allocator) {
        super("OrtAllocator", allocator);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            Api.checkStatus(OrtApi.AllocatorGetInfo.invoke(Api.Allocator.AllocatorGetInfo, allocator, out));
            this.hostAccessible = OrtMemoryInfo.isHostAccessible(out.get(ADDRESS, 0));
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /** The allocator's memory description (a copy the caller closes). */
    public OrtMemoryInfo getMemoryInfo() {
        try (Lease a = Handles.acquire(this); Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            Api.checkStatus(OrtApi.AllocatorGetInfo.invoke(Api.Allocator.AllocatorGetInfo, a.handle(), out));
            return OrtMemoryInfo.copyOf(out.get(ADDRESS, 0));
        }
    }

    /** Whether the memory it hands out is host-accessible (CPU, CUDA-pinned). */
    public boolean isHostAccessible() {
        return hostAccessible;
    }

    /**
     * Allocates {@code bytes} through ORT ({@code AllocatorAlloc}). For host-accessible memory the segment
     * is {@code bytes} long and readable; for device memory it is a zero-length segment carrying the
     * device address.
     */
    public MemorySegment alloc(long bytes) {
        checkSize(bytes);
        try (Lease a = Handles.acquire(this); Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            Api.checkStatus(OrtApi.AllocatorAlloc.invoke(Api.Allocator.AllocatorAlloc, a.handle(), bytes, out),
                    "AllocatorAlloc(" + bytes + ")");
            MemorySegment p = out.get(ADDRESS, 0);
            outstanding.add(p.address());
            return hostAccessible ? p.reinterpret(bytes) : p;
        }
    }

    /**
     * The most bytes one block may ask for: 2^56, more than a 57-bit address space holds, so no allocator
     * can give it. Asked for more than 2^62 bytes, ORT's arena fails and stays broken (every later
     * allocation of the session fails on an integer overflow), so such sizes never reach it.
     */
    public static final long MAX_BLOCK_BYTES = 1L << 56;

    /** Throws unless {@code bytes} is a size one block may ask ORT for (0 to {@link #MAX_BLOCK_BYTES}). */
    static void checkSize(long bytes) {
        if (bytes < 0 || bytes > MAX_BLOCK_BYTES) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "cannot allocate " + bytes + " bytes"
                    + (bytes < 0 ? "" : ": more than any address space holds (at most 2^56)"));
        }
    }

    /** Gives back memory from {@link #alloc} ({@code AllocatorFree}). */
    public void free(MemorySegment memory) {
        if (!outstanding.remove(memory.address())) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "0x" + Long.toHexString(memory.address())
                    + " was not allocated by this allocator or was freed already");
        }
        // allowed after the owner closed, while tensors still hold the allocator
        try (Lease a = Handles.acquireUnlessReleased(this)) {
            Api.checkStatus(OrtApi.AllocatorFree.invoke(Api.Allocator.AllocatorFree, a.handle(), memory), "AllocatorFree");
        }
    }

    /** Blocks from {@link #alloc} not freed yet. */
    public int outstandingAllocations() {
        return outstanding.size();
    }

    @Override
    protected OrtException closedException() {
        return new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "OrtAllocator is closed");
    }

    @Override
    protected void releaseNative(MemorySegment handle) {
        OrtApi.ReleaseAllocator.invoke(Api.Allocator.ReleaseAllocator, handle);
    }

    @Override
    public String toString() {
        return "OrtAllocator(" + (hostAccessible ? "host" : "device") + (isClosed() ? ", closed)" : ")");
    }
}
