package org.pvn3d.ort.ops;

import static java.lang.foreign.ValueLayout.ADDRESS;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.pvn3d.ort.internal.NativeObject;

/**
 * A CUDA stream created by Java (through libpvn3d_ops's device API), e.g. to run a session on with
 * {@link org.pvn3d.ort.providers.OrtCUDAProviderOptions#setUserComputeStream}. The stream must
 * outlive the sessions that use it.
 */
public final class CudaStream extends NativeObject {
    private CudaStream(MemorySegment stream) {
        super("cudaStream", stream);
    }

    /** A new non-blocking stream on the current device. */
    public static CudaStream create() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            Pvn3dNative.check((int) Pvn3dNative.CUDA_STREAM_CREATE.invokeExact(out, 1));
            return new CudaStream(out.get(ADDRESS, 0));
        } catch (Throwable t) {
            throw Pvn3dNative.rethrow(t);
        }
    }

    /** Waits for the work queued on this stream. */
    public void synchronize() {
        MemorySegment s = acquire();
        try {
            Pvn3dNative.check((int) Pvn3dNative.CUDA_STREAM_SYNCHRONIZE.invokeExact(s));
        } catch (Throwable t) {
            throw Pvn3dNative.rethrow(t);
        } finally {
            release();
        }
    }

    @Override
    protected void releaseNative(MemorySegment handle) {
        try {
            Pvn3dNative.check((int) Pvn3dNative.CUDA_STREAM_DESTROY.invokeExact(handle));
        } catch (Throwable t) {
            throw Pvn3dNative.rethrow(t);
        }
    }
}
