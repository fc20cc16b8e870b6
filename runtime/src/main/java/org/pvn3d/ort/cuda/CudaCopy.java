package org.pvn3d.ort.cuda;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.pvn3d.ort.internal.Lease;

/**
 * Copies between host memory and a raw device address (e.g. the memory behind a device tensor that
 * ORT allocated), on a stream. These wait for the stream before returning; the device address must
 * stay valid for the call (the caller holds whatever owns it).
 */
public final class CudaCopy {
    private CudaCopy() {}

    /** Copies {@code dst.byteSize()} bytes from device address {@code src} into {@code dst} and waits. */
    public static void deviceToHost(long src, MemorySegment dst, CudaStream stream) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment staged = dst.isNative() ? dst : arena.allocate(Math.max(1, dst.byteSize()), 64).asSlice(0, dst.byteSize());
            try (Lease use = CudaStream.use(stream)) {
                MemorySegment s = CudaStream.handleOf(use);
                DeviceApi.check((int) DeviceApi.functions().D2H_ASYNC.invokeExact(staged, MemorySegment.ofAddress(src), dst.byteSize(), s));
                DeviceApi.check((int) DeviceApi.functions().STREAM_SYNCHRONIZE.invokeExact(s));
            }
            if (staged != dst) {
                dst.copyFrom(staged);
            }
        } catch (Throwable t) {
            throw DeviceApi.rethrow(t);
        }
    }

    /** Copies all of {@code src} to device address {@code dst} and waits. */
    public static void hostToDevice(MemorySegment src, long dst, CudaStream stream) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment staged = src.isNative() ? src : arena.allocate(Math.max(1, src.byteSize()), 64).asSlice(0, src.byteSize()).copyFrom(src);
            try (Lease use = CudaStream.use(stream)) {
                MemorySegment s = CudaStream.handleOf(use);
                DeviceApi.check((int) DeviceApi.functions().H2D_ASYNC.invokeExact(MemorySegment.ofAddress(dst), staged, src.byteSize(), s));
                DeviceApi.check((int) DeviceApi.functions().STREAM_SYNCHRONIZE.invokeExact(s));
            }
        } catch (Throwable t) {
            throw DeviceApi.rethrow(t);
        }
    }
}
