package org.pvn3d.ort.cuda;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.pvn3d.ort.DeviceTensor;
import org.pvn3d.ort.OnnxTensor;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.internal.Handles;
import org.pvn3d.ort.internal.Lease;
import org.pvn3d.ort.internal.Probes;

/**
 * Copies between host memory and device memory: a {@link DeviceTensor} (an input or output a CUDA
 * session keeps on the GPU, or a tensor over a {@link DeviceBuffer}) or a raw device address. Each copy
 * runs on a stream ({@code null}: the legacy default stream) and waits for it before returning.
 */
public final class CudaCopy {
    private CudaCopy() {}

    /** A copy of {@code tensor} in host memory (a new tensor the caller owns), made on the legacy default stream. */
    public static OnnxTensor toHost(DeviceTensor tensor) {
        return toHost(tensor, null);
    }

    /** A copy of {@code tensor} in host memory (a new tensor the caller owns), made on {@code stream}. */
    public static OnnxTensor toHost(DeviceTensor tensor, CudaStream stream) {
        java.util.Objects.requireNonNull(tensor, "the device tensor to copy is null");
        try (Lease use = Handles.acquire(tensor)) {
            OnnxTensor host = OnnxTensor.allocate(tensor.getType(), tensor.getShape());
            try {
                if (tensor.byteSize() > 0) {
                    deviceToHost(tensor.deviceAddress(), host.data(), stream);
                }
                return host;
            } catch (RuntimeException e) {
                host.close();
                throw e;
            }
        }
    }

    /** Copies {@code dst.byteSize()} bytes (at most the tensor's size) of {@code tensor} into host memory {@code dst}. */
    public static void copyToHost(DeviceTensor tensor, MemorySegment dst, CudaStream stream) {
        try (Lease use = Handles.acquire(tensor)) {
            if (dst.byteSize() > tensor.byteSize()) {
                throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "the tensor holds " + tensor.byteSize()
                        + " bytes, not " + dst.byteSize());
            }
            deviceToHost(tensor.deviceAddress(), dst, stream);
        }
    }

    /** Overwrites {@code tensor}'s data with all of {@code src}, which must be exactly the tensor's size. */
    public static void copyFromHost(MemorySegment src, DeviceTensor tensor, CudaStream stream) {
        try (Lease use = Handles.acquire(tensor)) {
            if (src.byteSize() != tensor.byteSize()) {
                throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "the tensor holds " + tensor.byteSize()
                        + " bytes, not " + src.byteSize());
            }
            hostToDevice(src, tensor.deviceAddress(), stream);
        }
    }

    /**
     * Copies {@code dst.byteSize()} bytes from device address {@code src} into {@code dst} and waits; the
     * caller keeps whatever owns the device memory open for the call.
     */
    public static void deviceToHost(long src, MemorySegment dst, CudaStream stream) {
        Object probe = Probes.copyBegin();
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
        } finally {
            if (probe != null) {
                Probes.copyEnd(probe, "DeviceToHost", dst.byteSize(), true, CudaStream.addressOf(stream));
            }
        }
    }

    /** Copies all of {@code src} to device address {@code dst} and waits (the caller keeps the device memory open). */
    public static void hostToDevice(MemorySegment src, long dst, CudaStream stream) {
        Object probe = Probes.copyBegin();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment staged = src.isNative() ? src : arena.allocate(Math.max(1, src.byteSize()), 64).asSlice(0, src.byteSize()).copyFrom(src);
            try (Lease use = CudaStream.use(stream)) {
                MemorySegment s = CudaStream.handleOf(use);
                DeviceApi.check((int) DeviceApi.functions().H2D_ASYNC.invokeExact(MemorySegment.ofAddress(dst), staged, src.byteSize(), s));
                DeviceApi.check((int) DeviceApi.functions().STREAM_SYNCHRONIZE.invokeExact(s));
            }
        } catch (Throwable t) {
            throw DeviceApi.rethrow(t);
        } finally {
            if (probe != null) {
                Probes.copyEnd(probe, "HostToDevice", src.byteSize(), true, CudaStream.addressOf(stream));
            }
        }
    }
}
