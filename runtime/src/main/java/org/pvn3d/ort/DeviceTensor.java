package org.pvn3d.ort;

import java.lang.foreign.MemorySegment;
import org.pvn3d.ort.internal.Handles;
import org.pvn3d.ort.internal.Lease;

/**
 * A tensor ({@code OrtValue}) whose data is in device memory, which the host cannot read: an input
 * or output a session keeps on the GPU (IO binding with outputs bound to a device, a run of a CUDA
 * session), or a tensor over device memory Java allocated. Its data is reached by device code through
 * {@link #deviceAddress()}, or copied to and from the host with {@code org.pvn3d.ort.cuda.CudaCopy}.
 *
 * <p>Who owns the data: ORT for a run's outputs (freed by {@link #close()}); the tensor itself, through
 * a hold on the allocator or memory it was created in ({@link OrtAllocator}, {@link TensorMemory} such
 * as a {@code DeviceBuffer}), so their owners may close them first; or, for
 * {@link #createTensor(OrtMemoryInfo, MemorySegment, OnnxTensorType, long...)}, the caller.
 */
public final class DeviceTensor extends OnnxTensorLike {
    private final long deviceAddress;

    DeviceTensor(MemorySegment value, TensorInfo info, long deviceAddress, AutoCloseable memoryHold) {
        super(value, info, memoryHold);
        this.deviceAddress = deviceAddress;
    }

    /**
     * A tensor over device memory that {@code memory}'s owner allocated (e.g. a {@code DeviceBuffer}), no
     * copy, covering its first bytes. The tensor holds the memory allocated until it is closed, so the
     * owner may be closed first. Host-accessible memory is refused: it makes an {@link OnnxTensor}.
     */
    public static DeviceTensor createTensor(TensorMemory memory, OnnxTensorType type, long... shape) {
        long bytes = checkWrappable(type, shape, memory.byteSize());
        try (OrtMemoryInfo info = memory.memoryInfo()) {
            requireDeviceMemory(info.isHostAccessible(), memory.toString(), "createTensor(TensorMemory, ...)");
            AutoCloseable hold = memory.hold();
            try {
                MemorySegment data = memory.memory();
                return new DeviceTensor(createOver(info, data, bytes, type, shape), infoOf(type, shape), data.address(), hold);
            } catch (RuntimeException e) {
                closeHold(hold);
                throw e;
            }
        }
    }

    /**
     * A tensor over device memory described by {@code memoryInfo} (e.g. memory from another CUDA
     * library), no copy. The memory stays the caller's, who keeps it allocated while the tensor is used;
     * the segment's address and size are what matter (it is never accessed from Java).
     */
    public static DeviceTensor createTensor(OrtMemoryInfo memoryInfo, MemorySegment memory, OnnxTensorType type,
            long... shape) {
        requireDeviceMemory(memoryInfo.isHostAccessible(), memoryInfo.toString(), "createTensor(OrtMemoryInfo, ...)");
        long bytes = checkWrappable(type, shape, memory.byteSize());
        return new DeviceTensor(createOver(memoryInfo, memory, bytes, type, shape), infoOf(type, shape),
                memory.address(), null);
    }

    /**
     * A tensor whose memory {@code allocator} allocates on its device ({@code CreateTensorAsOrtValue}),
     * e.g. through a CUDA session's allocator. ORT frees it through the allocator when the tensor is
     * closed, so the tensor holds the allocator until then. Contents are uninitialised.
     */
    public static DeviceTensor createTensor(OrtAllocator allocator, OnnxTensorType type, long... shape) {
        requireDeviceMemory(allocator.isHostAccessible(), allocator.toString(), "createTensor(OrtAllocator, ...)");
        if (type == OnnxTensorType.STRING || type == OnnxTensorType.UNDEFINED) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "cannot allocate a " + type + " tensor this way");
        }
        checkShape(shape, -1, type);
        Lease hold = Handles.retain(allocator);
        try {
            MemorySegment[] valueAndData = allocateIn(allocator, type, shape);
            return new DeviceTensor(valueAndData[0], infoOf(type, shape), valueAndData[1].address(), hold);
        } catch (RuntimeException e) {
            hold.close();
            throw e;
        }
    }

    private static void requireDeviceMemory(boolean hostAccessible, String what, String call) {
        if (hostAccessible) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, what + " is host memory: make an OnnxTensor"
                    + " (OnnxTensor." + call + "), which Java can read");
        }
    }

    /** Always true. */
    @Override
    public boolean isOnDevice() {
        return true;
    }

    /**
     * The device address of the data, for device code (a kernel launch, a copy); valid while this tensor
     * is open. Throws once it is closed.
     */
    public long deviceAddress() {
        Handles.handle(this);
        return deviceAddress;
    }
}
