package org.pvn3d.ort.cuda;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import org.pvn3d.ort.internal.NativeObject;

/**
 * A CUDA stream created by Java (through the CUDA runtime), e.g. to run a session on with
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
            DeviceApi.check((int) DeviceApi.functions().STREAM_CREATE.invokeExact(out), "cudaStreamCreateWithFlags");
            return new CudaStream(out.get(ADDRESS, 0));
        } catch (Throwable t) {
            throw DeviceApi.rethrow(t);
        }
    }

    /** Waits for the work queued on this stream. */
    public void synchronize() {
        MemorySegment s = acquire();
        try {
            DeviceApi.check((int) DeviceApi.functions().STREAM_SYNCHRONIZE.invokeExact(s), "cudaStreamSynchronize");
        } catch (Throwable t) {
            throw DeviceApi.rethrow(t);
        } finally {
            release();
        }
    }

    @Override
    protected void releaseNative(MemorySegment handle) {
        try {
            DeviceApi.check((int) DeviceApi.functions().STREAM_DESTROY.invokeExact(handle), "cudaStreamDestroy");
        } catch (Throwable t) {
            throw DeviceApi.rethrow(t);
        }
    }
}
