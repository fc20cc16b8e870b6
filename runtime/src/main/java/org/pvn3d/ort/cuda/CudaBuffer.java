package org.pvn3d.ort.cuda;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicBoolean;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.OrtMemoryInfo;
import org.pvn3d.ort.internal.NativeObject;

/**
 * Memory that Java allocated through libpvn3d_ops's device API: {@link DeviceBuffer} (device memory,
 * {@code cudaMalloc}) or {@link PinnedBuffer} (page-locked host memory, {@code cudaHostAlloc}).
 *
 * <p><b>Ownership.</b> The code that allocates a buffer owns it and closes it. Tensors created over
 * a buffer ({@link org.pvn3d.ort.OnnxTensor#createTensor(CudaBuffer, org.pvn3d.ort.OnnxTensorType, long...)})
 * each hold a {@link Claim} that keeps the memory allocated: the memory is freed when the owner has
 * closed the buffer <em>and</em> every tensor over it has been closed, whichever comes last. Closing the
 * buffer ends the owner's use of it: its own methods (copies, {@link #address()}) then throw, while
 * the tensors over it stay valid. Closing twice is a no-op.
 */
public abstract sealed class CudaBuffer implements AutoCloseable permits DeviceBuffer, PinnedBuffer {
    private final Block block;
    private final long byteSize;
    private final int device;
    private int claims = 1; // the owner's, plus one per Claim
    private boolean ownerClosed;

    CudaBuffer(String kind, MemorySegment pointer, long byteSize, int device, Freer freer) {
        this.block = new Block(kind, pointer, freer);
        this.byteSize = byteSize;
        this.device = device;
    }

    /** How the memory is freed (once, when the last claim goes). */
    interface Freer {
        void free(MemorySegment pointer);
    }

    /** Size in bytes. */
    public final long byteSize() {
        return byteSize;
    }

    /** The CUDA device the memory belongs to (for pinned memory: the device current when it was allocated). */
    public final int device() {
        return device;
    }

    /** The memory's address (a device address for device memory); throws once the owner closed the buffer. */
    public final long address() {
        return pointer().address();
    }

    /** A description of this memory for ORT (a new object the caller closes). */
    public abstract OrtMemoryInfo memoryInfo();

    /** Whether the owner has closed this buffer (its memory may still be held by tensors). */
    public final synchronized boolean isClosed() {
        return ownerClosed;
    }

    /** Whether the memory itself has been freed (owner closed and no claim left). */
    public final boolean isFreed() {
        return block.isClosed();
    }

    /**
     * A claim that keeps the memory allocated until the claim is closed (what a tensor over this
     * buffer holds). Throws if the owner has closed the buffer already.
     */
    public final synchronized Claim claim() {
        if (ownerClosed) {
            throw closedException();
        }
        claims++;
        return new Claim(this);
    }

    private synchronized void unclaim() {
        if (--claims == 0) {
            block.close();
        }
    }

    /** Ends the owner's use; the memory goes once no tensor holds it either. Idempotent. */
    @Override
    public final void close() {
        synchronized (this) {
            if (ownerClosed) {
                return;
            }
            ownerClosed = true;
        }
        unclaim();
    }

    /** The pointer for a use by the owner; throws if the owner closed the buffer. */
    final MemorySegment pointer() {
        synchronized (this) {
            if (ownerClosed) {
                throw closedException();
            }
        }
        return block.handle();
    }

    /** Marks a native call on the memory (excluding the final free); pair with {@link #endUse()}. */
    final MemorySegment beginUse() {
        synchronized (this) {
            if (ownerClosed) {
                throw closedException();
            }
        }
        return block.acquire();
    }

    final void endUse() {
        block.release();
    }

    final void checkRange(long offset, long bytes) {
        if (offset < 0 || bytes < 0 || offset > byteSize || bytes > byteSize - offset) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, getClass().getSimpleName() + " of " + byteSize
                    + " bytes: range [" + offset + ", " + offset + " + " + bytes + ") is out of bounds");
        }
    }

    OrtException closedException() {
        return new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, getClass().getSimpleName() + " is closed");
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "(" + byteSize + " bytes, device " + device
                + (isClosed() ? ", closed" : "") + (isFreed() ? ", freed" : "") + ")";
    }

    /** Keeps a buffer's memory allocated until closed; closing twice is a no-op. */
    public static final class Claim implements AutoCloseable {
        private final CudaBuffer buffer;
        private final AtomicBoolean closed = new AtomicBoolean();

        private Claim(CudaBuffer buffer) {
            this.buffer = buffer;
        }

        public CudaBuffer buffer() {
            return buffer;
        }

        @Override
        public void close() {
            if (closed.compareAndSet(false, true)) {
                buffer.unclaim();
            }
        }
    }

    /** The native allocation itself (counted by {@link NativeObject#liveCounts()} under its kind). */
    private static final class Block extends NativeObject {
        private final Freer freer;

        Block(String kind, MemorySegment pointer, Freer freer) {
            super(kind, pointer);
            this.freer = freer;
        }

        @Override
        protected void releaseNative(MemorySegment handle) {
            freer.free(handle);
        }
    }
}
