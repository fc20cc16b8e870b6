package org.pvn3d.ort.cuda;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import org.pvn3d.ort.internal.NativeObject;
import org.pvn3d.ort.internal.OpsLibrary;

/**
 * A CUDA stream created by Java (through libpvn3d_ops's device API), e.g. to run a session on with
 * {@link org.pvn3d.ort.providers.OrtCUDAProviderOptions#setUserComputeStream}. The stream must
 * outlive the sessions that use it.
 */
public final class CudaStream extends NativeObject {
    private static final MethodHandle CREATE = OpsLibrary.bind("pvn3d_cuda_stream_create",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
    private static final MethodHandle DESTROY = OpsLibrary.bind("pvn3d_cuda_stream_destroy",
            FunctionDescriptor.of(JAVA_INT, ADDRESS));
    private static final MethodHandle SYNCHRONIZE = OpsLibrary.bind("pvn3d_cuda_stream_synchronize",
            FunctionDescriptor.of(JAVA_INT, ADDRESS));

    private CudaStream(MemorySegment stream) {
        super("cudaStream", stream);
    }

    /** A new non-blocking stream on the current device. */
    public static CudaStream create() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            OpsLibrary.check((int) CREATE.invokeExact(out, 1));
            return new CudaStream(out.get(ADDRESS, 0));
        } catch (Throwable t) {
            throw OpsLibrary.rethrow(t);
        }
    }

    /** Waits for the work queued on this stream. */
    public void synchronize() {
        MemorySegment s = acquire();
        try {
            OpsLibrary.check((int) SYNCHRONIZE.invokeExact(s));
        } catch (Throwable t) {
            throw OpsLibrary.rethrow(t);
        } finally {
            release();
        }
    }

    @Override
    protected void releaseNative(MemorySegment handle) {
        try {
            OpsLibrary.check((int) DESTROY.invokeExact(handle));
        } catch (Throwable t) {
            throw OpsLibrary.rethrow(t);
        }
    }
}
