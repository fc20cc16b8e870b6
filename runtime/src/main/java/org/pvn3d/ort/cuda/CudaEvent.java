package org.pvn3d.ort.cuda;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.pvn3d.ort.NativeObject;
import org.pvn3d.ort.internal.Handles;
import org.pvn3d.ort.internal.Lease;

/**
 * A CUDA event: with timing ({@link #create()}), e.g. to time work queued on a stream, or without
 * ({@link #createUntimed()}), to order work across streams ({@link CudaStream#waitFor}).
 */
public final class CudaEvent extends NativeObject {
    private CudaEvent(MemorySegment event) {
        super("cudaEvent", event);
    }

    public static CudaEvent create() {
        return create(DeviceApi.functions().EVENT_CREATE);
    }

    /** An event without timing ({@code cudaEventDisableTiming}): only for ordering streams, cheaper to record. */
    public static CudaEvent createUntimed() {
        return create(DeviceApi.functions().EVENT_CREATE_UNTIMED);
    }

    /** An event from {@code creator}, a {@code (cudaEvent_t*) -> cudaError_t} handle. */
    private static CudaEvent create(java.lang.invoke.MethodHandle creator) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            DeviceApi.check((int) creator.invokeExact(out));
            return new CudaEvent(out.get(ADDRESS, 0));
        } catch (Throwable t) {
            throw DeviceApi.rethrow(t);
        }
    }

    /** Records this event on {@code stream} ({@code null}: the legacy default stream). */
    public void record(CudaStream stream) {
        try (Lease e = Handles.acquire(this); Lease s = CudaStream.use(stream)) {
            MemorySegment streamHandle = CudaStream.handleOf(s);
            DeviceApi.check((int) DeviceApi.functions().EVENT_RECORD.invokeExact(e.handle(), streamHandle));
        } catch (Throwable t) {
            throw DeviceApi.rethrow(t);
        }
    }

    /** Waits until the work recorded before this event is done. */
    public void synchronize() {
        try (Lease e = Handles.acquire(this)) {
            DeviceApi.check((int) DeviceApi.functions().EVENT_SYNCHRONIZE.invokeExact(e.handle()));
        } catch (Throwable t) {
            throw DeviceApi.rethrow(t);
        }
    }

    /** Milliseconds from {@code start} to {@code end}, both recorded and completed. */
    public static float elapsedMillis(CudaEvent start, CudaEvent end) {
        try (Lease s = Handles.acquire(start); Lease e = Handles.acquire(end); Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_FLOAT);
            DeviceApi.check((int) DeviceApi.functions().EVENT_ELAPSED.invokeExact(out, s.handle(), e.handle()));
            return out.get(JAVA_FLOAT, 0);
        } catch (Throwable t) {
            throw DeviceApi.rethrow(t);
        }
    }

    @Override
    protected void releaseNative(MemorySegment handle) {
        try {
            DeviceApi.check((int) DeviceApi.functions().EVENT_DESTROY.invokeExact(handle));
        } catch (Throwable t) {
            throw DeviceApi.rethrow(t);
        }
    }
}
