package org.pvn3d.ort.cuda;

import static java.lang.foreign.ValueLayout.ADDRESS;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.pvn3d.ort.NativeObject;
import org.pvn3d.ort.internal.Handles;
import org.pvn3d.ort.internal.Lease;

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
        try (Lease s = Handles.acquire(this)) {
            DeviceApi.check((int) DeviceApi.functions().STREAM_SYNCHRONIZE.invokeExact(s.handle()), "cudaStreamSynchronize");
        } catch (Throwable t) {
            throw DeviceApi.rethrow(t);
        }
    }

    /**
     * Makes the work queued on this stream from now on wait, on the device, until {@code event}'s last
     * record completes ({@code cudaStreamWaitEvent}); the host does not wait.
     */
    public void waitFor(CudaEvent event) {
        try (Lease s = Handles.acquire(this); Lease e = Handles.acquire(event)) {
            DeviceApi.check((int) DeviceApi.functions().STREAM_WAIT_EVENT.invokeExact(s.handle(), e.handle()), "cudaStreamWaitEvent");
        } catch (Throwable t) {
            throw DeviceApi.rethrow(t);
        }
    }

    /**
     * The {@code cudaStream_t} as a number, for CUDA code outside this library that launches on this
     * stream; valid until the stream is closed. Throws once closed.
     */
    public long address() {
        return Handles.handle(this).address();
    }

    /** The stream's address for a profiling event: 0 for null (the legacy default stream) or a closed stream. */
    static long addressOf(CudaStream stream) {
        if (stream == null) {
            return 0;
        }
        try {
            return Handles.handle(stream).address();
        } catch (RuntimeException closed) {
            return 0;
        }
    }

    /** A use of {@code stream} for one call; null for {@code null}, the legacy default stream, which needs none. */
    static Lease use(CudaStream stream) {
        return stream == null ? null : Handles.acquire(stream);
    }

    /** The stream a {@link #use} leases, or NULL (the legacy default stream) for a null lease. */
    static MemorySegment handleOf(Lease use) {
        return use == null ? MemorySegment.NULL : use.handle();
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
