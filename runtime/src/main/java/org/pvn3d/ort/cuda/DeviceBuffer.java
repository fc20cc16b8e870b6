package org.pvn3d.ort.cuda;

import static java.lang.foreign.ValueLayout.ADDRESS;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.OrtMemoryInfo;
import org.pvn3d.ort.internal.Lease;
import org.pvn3d.ort.internal.Probes;

/**
 * Device memory ({@code cudaMalloc}, 256-byte aligned) that Java allocated and owns; tensors over it
 * are {@link org.pvn3d.ort.DeviceTensor}s. Ownership and lifetime: see {@link CudaBuffer} (tensors over
 * the buffer keep its memory until they are closed).
 *
 * <p>Copies come in two kinds: the {@code ...Async} ones only enqueue the copy on a stream ({@code null}
 * means the legacy default stream), so the host memory must stay alive and unchanged until that
 * stream has been synchronised (use {@link PinnedBuffer} memory for truly asynchronous copies); the
 * others return once the copy is complete.
 */
public final class DeviceBuffer extends CudaBuffer {
    private DeviceBuffer(MemorySegment pointer, long bytes, int device) {
        super("cudaMalloc", pointer, bytes, device, DeviceBuffer::free);
    }

    /** {@code bytes} (at least 1) of uninitialised memory on the calling thread's current device. */
    public static DeviceBuffer allocate(long bytes) {
        if (bytes <= 0) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "a DeviceBuffer needs at least 1 byte, not " + bytes);
        }
        int device = CudaDevice.current();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            DeviceApi.check((int) DeviceApi.functions().MALLOC.invokeExact(out, bytes));
            return new DeviceBuffer(out.get(ADDRESS, 0), bytes, device);
        } catch (Throwable t) {
            throw DeviceApi.rethrow(t);
        }
    }

    /** {@code bytes} on {@code device}, which becomes the calling thread's current device. */
    public static DeviceBuffer allocate(int device, long bytes) {
        CudaDevice.setCurrent(device);
        return allocate(bytes);
    }

    /** A buffer on the current device holding a copy of {@code data}. */
    public static DeviceBuffer of(float[] data) {
        DeviceBuffer b = allocate(Math.max(1, (long) data.length * Float.BYTES));
        try {
            b.copyFromHost(MemorySegment.ofArray(data));
            return b;
        } catch (RuntimeException e) {
            b.close();
            throw e;
        }
    }

    private static void free(MemorySegment pointer) {
        try {
            DeviceApi.check((int) DeviceApi.functions().FREE.invokeExact(pointer));
        } catch (Throwable t) {
            throw DeviceApi.rethrow(t);
        }
    }

    /** A "Cuda" memory description on this buffer's device (caller closes it). */
    @Override
    public OrtMemoryInfo memoryInfo() {
        return OrtMemoryInfo.cuda(device());
    }

    /** The device address, for a tensor over this buffer. */
    @Override
    protected MemorySegment memory() {
        return pointer();
    }

    // ---- asynchronous (enqueued on a stream) ----

    /** Enqueues a copy of all of {@code src} (native host memory) to this buffer at {@code offset}. */
    public void copyFromHostAsync(MemorySegment src, long offset, CudaStream stream) {
        Object probe = Probes.copyBegin();
        try {
            enqueueFromHost(src, offset, stream);
        } finally {
            if (probe != null) {
                Probes.copyEnd(probe, "HostToDevice", src.byteSize(), false, CudaStream.addressOf(stream));
            }
        }
    }

    private void enqueueFromHost(MemorySegment src, long offset, CudaStream stream) {
        requireNative(src);
        checkRange(offset, src.byteSize());
        try (Lease p = use(); Lease s = CudaStream.use(stream)) {
            MemorySegment streamHandle = CudaStream.handleOf(s);
            DeviceApi.check((int) DeviceApi.functions().H2D_ASYNC.invokeExact(p.handle().reinterpret(byteSize()).asSlice(offset),
                    src, src.byteSize(), streamHandle));
        } catch (Throwable t) {
            throw DeviceApi.rethrow(t);
        }
    }

    /** Enqueues a copy of {@code dst.byteSize()} bytes from this buffer at {@code offset} into {@code dst}. */
    public void copyToHostAsync(MemorySegment dst, long offset, CudaStream stream) {
        Object probe = Probes.copyBegin();
        try {
            enqueueToHost(dst, offset, stream);
        } finally {
            if (probe != null) {
                Probes.copyEnd(probe, "DeviceToHost", dst.byteSize(), false, CudaStream.addressOf(stream));
            }
        }
    }

    private void enqueueToHost(MemorySegment dst, long offset, CudaStream stream) {
        requireNative(dst);
        checkRange(offset, dst.byteSize());
        try (Lease p = use(); Lease s = CudaStream.use(stream)) {
            MemorySegment streamHandle = CudaStream.handleOf(s);
            DeviceApi.check((int) DeviceApi.functions().D2H_ASYNC.invokeExact(dst, p.handle().reinterpret(byteSize()).asSlice(offset),
                    dst.byteSize(), streamHandle));
        } catch (Throwable t) {
            throw DeviceApi.rethrow(t);
        }
    }

    /** Enqueues a device-to-device copy of {@code bytes} from {@code src} at {@code srcOffset} to this buffer at {@code dstOffset}. */
    public void copyFromDeviceAsync(DeviceBuffer src, long srcOffset, long dstOffset, long bytes, CudaStream stream) {
        Object probe = Probes.copyBegin();
        try {
            enqueueFromDevice(src, srcOffset, dstOffset, bytes, stream);
        } finally {
            if (probe != null) {
                Probes.copyEnd(probe, "DeviceToDevice", bytes, false, CudaStream.addressOf(stream));
            }
        }
    }

    private void enqueueFromDevice(DeviceBuffer src, long srcOffset, long dstOffset, long bytes, CudaStream stream) {
        src.checkRange(srcOffset, bytes);
        checkRange(dstOffset, bytes);
        try (Lease s = src.use(); Lease d = use(); Lease st = CudaStream.use(stream)) {
            MemorySegment streamHandle = CudaStream.handleOf(st);
            DeviceApi.check((int) DeviceApi.functions().D2D_ASYNC.invokeExact(d.handle().reinterpret(byteSize()).asSlice(dstOffset),
                    s.handle().reinterpret(src.byteSize()).asSlice(srcOffset), bytes, streamHandle));
        } catch (Throwable t) {
            throw DeviceApi.rethrow(t);
        }
    }

    /** Enqueues setting every byte to {@code (byte) value}. */
    public void fillAsync(int value, CudaStream stream) {
        try (Lease p = use(); Lease s = CudaStream.use(stream)) {
            MemorySegment streamHandle = CudaStream.handleOf(s);
            DeviceApi.check((int) DeviceApi.functions().MEMSET_ASYNC.invokeExact(p.handle(), value, byteSize(), streamHandle));
        } catch (Throwable t) {
            throw DeviceApi.rethrow(t);
        }
    }

    // ---- synchronous ----

    /** Copies all of {@code src} (host memory, heap or native) to the start of this buffer and waits. */
    public void copyFromHost(MemorySegment src) {
        copyFromHost(src, null);
    }

    /** Like {@link #copyFromHost(MemorySegment)} on {@code stream}, waiting for that stream. */
    public void copyFromHost(MemorySegment src, CudaStream stream) {
        Object probe = Probes.copyBegin();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment staged = src.isNative() ? src : arena.allocate(Math.max(1, src.byteSize()), 64)
                    .asSlice(0, src.byteSize()).copyFrom(src);
            enqueueFromHost(staged, 0, stream);
            sync(stream);
        } finally {
            if (probe != null) {
                Probes.copyEnd(probe, "HostToDevice", src.byteSize(), true, CudaStream.addressOf(stream));
            }
        }
    }

    /** Copies {@code dst.byteSize()} bytes from the start of this buffer into {@code dst} (heap or native) and waits. */
    public void copyToHost(MemorySegment dst) {
        copyToHost(dst, null);
    }

    public void copyToHost(MemorySegment dst, CudaStream stream) {
        Object probe = Probes.copyBegin();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment staged = dst.isNative() ? dst : arena.allocate(Math.max(1, dst.byteSize()), 64)
                    .asSlice(0, dst.byteSize());
            enqueueToHost(staged, 0, stream);
            sync(stream);
            if (staged != dst) {
                dst.copyFrom(staged);
            }
        } finally {
            if (probe != null) {
                Probes.copyEnd(probe, "DeviceToHost", dst.byteSize(), true, CudaStream.addressOf(stream));
            }
        }
    }

    /** The first {@code count} floats of this buffer, copied to the host. */
    public float[] toFloatArray(int count) {
        float[] out = new float[count];
        copyToHost(MemorySegment.ofArray(out));
        return out;
    }

    private static void sync(CudaStream stream) {
        try (Lease s = CudaStream.use(stream)) {
            MemorySegment streamHandle = CudaStream.handleOf(s);
            DeviceApi.check((int) DeviceApi.functions().STREAM_SYNCHRONIZE.invokeExact(streamHandle));
        } catch (Throwable t) {
            throw DeviceApi.rethrow(t);
        }
    }

    private static void requireNative(MemorySegment s) {
        if (!s.isNative()) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT,
                    "an asynchronous copy needs native host memory (a heap segment can move); use the synchronous copy");
        }
    }

}
