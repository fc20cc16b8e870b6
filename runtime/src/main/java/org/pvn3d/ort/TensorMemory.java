package org.pvn3d.ort;

import java.lang.foreign.MemorySegment;

/**
 * Memory allocated outside ORT that tensors can be created over without a copy: device memory makes
 * a {@link DeviceTensor} ({@link DeviceTensor#createTensor(TensorMemory, OnnxTensorType, long...)}),
 * host-accessible memory an {@link OnnxTensor}. The CUDA buffers ({@code org.pvn3d.ort.cuda.CudaBuffer})
 * are such memory.
 *
 * <p>Each tensor over the memory holds it allocated until the tensor is closed, whatever its owner
 * does; the protected methods are that hold's side, taken by the tensor factories, never by user code.
 */
public abstract class TensorMemory {
    protected TensorMemory() {}

    /** Size in bytes. */
    public abstract long byteSize();

    /** Where the memory is, for ORT (a new description the caller closes). */
    public abstract OrtMemoryInfo memoryInfo();

    /**
     * The memory for a tensor over it: a segment of {@link #byteSize()} bytes for host-accessible
     * memory, an address-only segment for device memory. Throws once the owner has closed it.
     */
    protected abstract MemorySegment memory();

    /** Keeps the memory allocated until the returned hold is closed; throws once the owner has closed it. */
    protected abstract AutoCloseable hold();
}
