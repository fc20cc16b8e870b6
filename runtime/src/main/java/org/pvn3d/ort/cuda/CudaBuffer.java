package org.pvn3d.ort.cuda;

import java.lang.foreign.MemorySegment;
import org.pvn3d.ort.DeviceTensor;
import org.pvn3d.ort.NativeObject;
import org.pvn3d.ort.OnnxTensorType;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.OrtMemoryInfo;
import org.pvn3d.ort.TensorMemory;
import org.pvn3d.ort.internal.Handles;
import org.pvn3d.ort.internal.Lease;

/**
 * Memory that Java allocated through the CUDA runtime: {@link DeviceBuffer} (device memory,
 * {@code cudaMalloc}) or {@link PinnedBuffer} (page-locked host memory, {@code cudaHostAlloc}).
 *
 * <p><b>Ownership.</b> The code that allocates a buffer owns it and closes it. Tensors created over
 * a buffer ({@link DeviceTensor#createTensor(TensorMemory, OnnxTensorType, long...)} for device memory,
 * {@link org.pvn3d.ort.OnnxTensor#createTensor(TensorMemory, OnnxTensorType, long...)} for pinned memory)
 * each hold the memory allocated: the memory is freed when the owner has closed the buffer
 * <em>and</em> every tensor over it has been closed, whichever comes last. Closing the buffer ends the
 * owner's use of it: its own methods (copies, {@link #address()}) then throw, while the tensors over
 * it stay valid. Closing twice is a no-op.
 */
public abstract sealed class CudaBuffer extends TensorMemory implements AutoCloseable permits DeviceBuffer, PinnedBuffer {
    private final Block block;
    private final long byteSize;
    private final int device;

    CudaBuffer(String kind, MemorySegment pointer, long byteSize, int device, Freer freer) {
        this.block = new Block(kind, getClass().getSimpleName(), pointer, freer);
        this.byteSize = byteSize;
        this.device = device;
    }

    /** How the memory is freed (once, when the owner and every tensor over it are done with it). */
    interface Freer {
        void free(MemorySegment pointer);
    }

    /** Size in bytes. */
    @Override
    public final long byteSize() {
        return byteSize;
    }

    /** The CUDA device the memory belongs to (for pinned memory: the device current when it was allocated). */
    public final int device() {
        return device;
    }

    /** The memory's address (a device address for device memory); throws once the owner closed the buffer. */
    public final long address() {
        return block.pointer().address();
    }

    /** A description of this memory for ORT (a new object the caller closes). */
    @Override
    public abstract OrtMemoryInfo memoryInfo();

    /** Whether the owner has closed this buffer (its memory may still be held by tensors). */
    public final boolean isClosed() {
        return block.isClosed();
    }

    /** Whether the memory itself has been freed (owner closed and no tensor holding it). */
    public final boolean isFreed() {
        return block.freed();
    }

    /** What a tensor over this buffer keeps: the memory stays allocated until it is closed. */
    @Override
    protected final AutoCloseable hold() {
        return block.hold();
    }

    /** Ends the owner's use; the memory goes once no tensor holds it either. Idempotent. */
    @Override
    public final void close() {
        block.close();
    }

    /** The pointer for a use by the owner; throws if the owner closed the buffer. */
    final MemorySegment pointer() {
        return block.pointer();
    }

    /** A use of the memory for the length of a native call on it (a copy); the free waits for it. */
    final Lease use() {
        return block.use();
    }

    final void checkRange(long offset, long bytes) {
        if (offset < 0 || bytes < 0 || offset > byteSize || bytes > byteSize - offset) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, getClass().getSimpleName() + " of " + byteSize
                    + " bytes: range [" + offset + ", " + offset + " + " + bytes + ") is out of bounds");
        }
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "(" + byteSize + " bytes, device " + device
                + (isClosed() ? ", closed" : "") + (isFreed() ? ", freed" : "") + ")";
    }

    /** The native allocation itself (counted by {@link NativeObject#liveCounts()} under its kind). */
    private static final class Block extends NativeObject {
        private final String owner;
        private final Freer freer;

        Block(String kind, String owner, MemorySegment pointer, Freer freer) {
            super(kind, pointer);
            this.owner = owner;
            this.freer = freer;
        }

        MemorySegment pointer() {
            return Handles.handle(this);
        }

        Lease use() {
            return Handles.acquire(this);
        }

        Lease hold() {
            return Handles.retain(this);
        }

        boolean freed() {
            return Handles.isReleased(this);
        }

        @Override
        protected OrtException closedException() {
            return new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, owner + " is closed");
        }

        @Override
        protected void releaseNative(MemorySegment handle) {
            freer.free(handle);
        }
    }
}
