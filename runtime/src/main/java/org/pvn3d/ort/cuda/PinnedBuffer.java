package org.pvn3d.ort.cuda;

import static java.lang.foreign.ValueLayout.ADDRESS;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.OrtMemoryInfo;
import org.pvn3d.ort.internal.Lease;

/**
 * Page-locked host memory ({@code cudaHostAlloc}, portable) for fast and truly asynchronous copies to
 * and from the device; optionally mapped into the device's address space. Host-accessible: read and
 * write it through {@link #segment()}. Ownership and lifetime: see {@link CudaBuffer}.
 */
public final class PinnedBuffer extends CudaBuffer {
    private final Arena scope; // closed when the memory is freed, so that the segment cannot outlive it
    private final MemorySegment segment;
    private final boolean mapped;

    private PinnedBuffer(MemorySegment pointer, long bytes, int device, boolean mapped, Arena scope) {
        super("cudaMallocHost", pointer, bytes, device, p -> freeHost(p, scope));
        this.scope = scope;
        this.segment = pointer.reinterpret(bytes, scope, null);
        this.mapped = mapped;
    }

    /** {@code bytes} (at least 1) of pinned host memory. */
    public static PinnedBuffer allocate(long bytes) {
        return allocate(bytes, false);
    }

    /** {@code bytes} of pinned host memory; {@code mapped}: also mapped into the device address space. */
    public static PinnedBuffer allocate(long bytes, boolean mapped) {
        if (bytes <= 0) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "a PinnedBuffer needs at least 1 byte, not " + bytes);
        }
        int device = CudaDevice.current();
        Arena scope = Arena.ofShared();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            DeviceApi.check((int) DeviceApi.functions().MALLOC_HOST.invokeExact(out, bytes, mapped ? 1 : 0));
            return new PinnedBuffer(out.get(ADDRESS, 0), bytes, device, mapped, scope);
        } catch (Throwable t) {
            scope.close();
            throw DeviceApi.rethrow(t);
        }
    }

    private static void freeHost(MemorySegment pointer, Arena scope) {
        scope.close();
        try {
            DeviceApi.check((int) DeviceApi.functions().FREE_HOST.invokeExact(pointer));
        } catch (Throwable t) {
            throw DeviceApi.rethrow(t);
        }
    }

    /**
     * The memory as a host segment, valid until the memory is freed (accessing it after that throws
     * {@link IllegalStateException}, it never reads freed memory). Throws if the owner closed the buffer.
     */
    public MemorySegment segment() {
        pointer();
        return segment;
    }

    /** Whether the memory is mapped into the device address space. */
    public boolean isMapped() {
        return mapped;
    }

    /** The device alias of mapped memory ({@code cudaHostGetDevicePointer}). */
    public long devicePointer() {
        if (!mapped) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "this PinnedBuffer was not allocated mapped");
        }
        try (Lease p = use(); Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            DeviceApi.check((int) DeviceApi.functions().HOST_DEVICE_POINTER.invokeExact(out, p.handle()));
            return out.get(ADDRESS, 0).address();
        } catch (Throwable t) {
            throw DeviceApi.rethrow(t);
        }
    }

    /** A "CudaPinned" memory description (caller closes it). */
    @Override
    public OrtMemoryInfo memoryInfo() {
        return OrtMemoryInfo.cudaPinned(device());
    }

    /** The host segment, for a tensor over this buffer (an {@link org.pvn3d.ort.OnnxTensor} Java reads). */
    @Override
    protected MemorySegment memory() {
        return segment();
    }
}
