package org.pvn3d.ort.cuda;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.pvn3d.ort.JavaAllocator;
import org.pvn3d.ort.OrtMemoryInfo;

/**
 * A {@link JavaAllocator} of CUDA device memory: one {@link DeviceBuffer} ({@code cudaMalloc}) per
 * block ORT asks for, described as {@code Cuda} / device allocator / default memory, so that a CUDA
 * session created with {@code session.use_env_allocators = 1} takes its device memory from Java.
 */
public final class CudaJavaAllocator implements JavaAllocator.Backing {
    private final int device;
    private final Map<Long, DeviceBuffer> blocks = new ConcurrentHashMap<>();

    private CudaJavaAllocator(int device) {
        this.device = device;
    }

    /** An allocator of device memory on CUDA device {@code device}. */
    public static JavaAllocator create(int device) {
        return JavaAllocator.create("cuda:" + device, OrtMemoryInfo.cuda(device), new CudaJavaAllocator(device));
    }

    @Override
    public long allocate(long bytes) {
        DeviceBuffer b = DeviceBuffer.allocate(device, bytes);
        blocks.put(b.address(), b);
        return b.address();
    }

    @Override
    public void free(long address) {
        DeviceBuffer b = blocks.remove(address);
        if (b != null) {
            b.close();
        }
    }
}
