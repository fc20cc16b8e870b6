package org.pvn3d.ort;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import org.pvn3d.ort.ffm.OrtApi;
import org.pvn3d.ort.internal.Api;
import org.pvn3d.ort.internal.Handles;
import org.pvn3d.ort.internal.Lease;
import org.pvn3d.ort.internal.OrtLibrary;
import org.pvn3d.ort.internal.RunScratch;

/**
 * What every tensor ({@code OrtValue} holding a tensor) has, wherever its data lives: a type, a shape,
 * a memory description. An {@link OnnxTensor}'s data is in host memory, which Java reads and writes; a
 * {@link DeviceTensor}'s is in device memory, which only device code (or a copy, see
 * {@code org.pvn3d.ort.cuda.CudaCopy}) reaches. Both go into runs and IO bindings alike. (ORT's own
 * Java API has the same split of {@code OnnxTensorLike} and {@code OnnxTensor}.)
 *
 * <p>A tensor over memory that another object owns (an {@link OrtAllocator}, a {@link TensorMemory})
 * holds that memory until it is closed, so the owner may be closed first.
 */
public abstract sealed class OnnxTensorLike extends NativeObject implements OnnxValue permits OnnxTensor, DeviceTensor {
    final TensorInfo info;
    private final AutoCloseable memoryHold; // keeps the allocator or memory behind the data; may be null

    OnnxTensorLike(MemorySegment value, TensorInfo info, AutoCloseable memoryHold) {
        super("OrtValue", value);
        this.info = info;
        this.memoryHold = memoryHold;
    }

    @Override
    public OnnxValueType getValueType() {
        return OnnxValueType.TENSOR;
    }

    public TensorInfo getInfo() {
        return info;
    }

    public OnnxTensorType getType() {
        return info.getType();
    }

    public long[] getShape() {
        return info.getShape();
    }

    public long getElementCount() {
        return info.getElementCount();
    }

    /** Whether the data is in device memory, which the host cannot read ({@link DeviceTensor}). */
    public abstract boolean isOnDevice();

    /**
     * Whether the data may only be read: a tensor over a read-only segment ({@link OnnxTensor#fromSegment}
     * of a file mapped read-only, say). It can be an input but never an output: runs and bindings refuse it
     * there, since ORT would write into it.
     */
    public boolean isReadOnly() {
        return false;
    }

    /**
     * Throws unless this tensor can receive output {@code name} of element type {@code expected} (null when
     * the model does not say): the same element type (ORT 1.16 checks only the shape of a preallocated
     * output, and writes its own type's bytes), and writable memory. Builds no string unless it fails.
     */
    void checkCanReceive(String name, OnnxTensorType expected) {
        if (expected != null && info.getType() != expected) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "output '" + name + "' is " + expected
                    + " but the tensor given for it is " + info.getType());
        }
        if (isReadOnly()) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "output '" + name
                    + "': the tensor's memory is read-only");
        }
    }

    /** Where the data lives ({@code GetTensorMemoryInfo}): a copy the caller closes. */
    public OrtMemoryInfo getMemoryInfo() {
        try (Lease value = Handles.acquire(this); Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            Api.checkStatus(OrtApi.GetTensorMemoryInfo.invoke(Api.Value.GetTensorMemoryInfo, value.handle(), out));
            return OrtMemoryInfo.copyOf(out.get(ADDRESS, 0));
        }
    }

    /** The size of the data in bytes (0 for string tensors, whose data ORT keeps apart). */
    public long byteSize() {
        return info.getType() == OnnxTensorType.STRING ? 0 : info.getElementCount() * info.getType().byteSize();
    }

    /**
     * A use of this tensor for a run or a binding, whose failure names the tensor's role ({@code what},
     * e.g. "input 'x'").
     */
    Lease acquireFor(String what) {
        Lease use;
        try {
            use = Handles.acquire(this);
        } catch (OrtException e) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, what + ": tensor is closed");
        }
        try {
            checkMemoryAlive();
            return use;
        } catch (RuntimeException e) {
            use.close();
            throw e;
        }
    }

    /**
     * Begins a use of this tensor for a run, kept (and ended) by {@code scratch}, and returns the
     * {@code OrtValue*}; a closed tensor fails with "{@code role 'name'}: tensor is closed". Builds no
     * string unless it fails.
     */
    long beginRunUse(RunScratch scratch, String role, String name) {
        if (!scratch.tryBeginUse(this)) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, role + " '" + name + "': tensor is closed");
        }
        checkMemoryAlive(); // on a throw the scratch still ends the use
        return Handles.address(this);
    }

    /** Throws when memory the caller owns behind this tensor has been freed; nothing to check by default. */
    void checkMemoryAlive() {}

    @Override
    protected void releaseNative(MemorySegment handle) {
        OrtApi.ReleaseValue.invoke(Api.Value.ReleaseValue, handle);
    }

    @Override
    protected void afterClose() {
        if (memoryHold != null) {
            try {
                memoryHold.close();
            } catch (Exception e) {
                throw new OrtException(OrtErrorCode.ORT_JAVA_UNKNOWN, "releasing the memory behind " + this + ": " + e, e);
            }
        }
    }

    /**
     * Wraps an {@code OrtValue} holding a tensor that ORT allocated (a run's output); the tensor releases
     * it. Reads type, shape, data and memory through {@code scratch}'s out-parameters (4 calls on ORT 1.24
     * and later, 8 before; none of them allocating Java objects). A value that cannot be read stays the
     * caller's to release.
     */
    static OnnxTensorLike fromOrtValue(long value, RunScratch scratch) {
        OnnxTensorType type;
        long[] shape;
        if (Api.Direct.SHAPE_REFERENCE) { // ORT 1.24 on: one call, no info object
            Api.checkStatus(Api.Direct.getTensorElementTypeAndShapeDataReference(value, scratch.out(1),
                    scratch.out(0), scratch.out(2)));
            type = OnnxTensorType.of(scratch.outInt(1));
            long dims = scratch.outLong(0);
            shape = new long[Math.toIntExact(scratch.outLong(2))];
            for (int i = 0; i < shape.length; i++) {
                shape[i] = Api.Direct.longAt(dims + 8L * i);
            }
            return wrap(value, type, shape, scratch);
        }
        Api.checkStatus(Api.Direct.getTensorTypeAndShape(value, scratch.out(0)));
        long typeAndShape = scratch.outLong(0);
        try {
            Api.checkStatus(Api.Direct.getTensorElementType(typeAndShape, scratch.out(1)));
            type = OnnxTensorType.of(scratch.outInt(1));
            Api.checkStatus(Api.Direct.getDimensionsCount(typeAndShape, scratch.out(1)));
            int rank = Math.toIntExact(scratch.outLong(1));
            shape = new long[rank];
            if (rank > 0) {
                Api.checkStatus(Api.Direct.getDimensions(typeAndShape, scratch.dims(rank), rank));
                for (int i = 0; i < rank; i++) {
                    shape[i] = scratch.dim(i);
                }
            }
        } finally {
            Api.Direct.releaseTensorTypeAndShapeInfo(typeAndShape);
        }
        return wrap(value, type, shape, scratch);
    }

    /** The tensor over ORT's {@code value} of {@code type} and {@code shape}: its data and memory read. */
    private static OnnxTensorLike wrap(long value, OnnxTensorType type, long[] shape, RunScratch scratch) {
        TensorInfo info = TensorInfo.ofValue(type, shape); // a value's shape is concrete: no names
        MemorySegment handle = MemorySegment.ofAddress(value);
        if (type == OnnxTensorType.STRING) {
            return new OnnxTensor(handle, info, MemorySegment.NULL, null);
        }
        Api.checkStatus(Api.Direct.getTensorMutableData(value, scratch.out(0)));
        long data = scratch.outLong(0);
        Api.checkStatus(Api.Direct.getTensorMemoryInfo(value, scratch.out(1)));
        Api.Direct.memoryInfoGetDeviceType(scratch.outLong(1), scratch.out(2)); // borrowed: not released
        if (scratch.outInt(2) != 0) { // not OrtMemoryInfoDeviceType_CPU
            return new DeviceTensor(handle, info, data, null);
        }
        return new OnnxTensor(handle, info, MemorySegment.ofAddress(data).reinterpret(info.getElementCount()
                * type.byteSize()), null);
    }

    /**
     * An {@code OrtValue} over {@code bytes} of memory at {@code data} described by {@code memoryInfo}
     * ({@code CreateTensorWithDataAsOrtValue}); the memory stays its owner's.
     */
    static MemorySegment createOver(OrtMemoryInfo memoryInfo, MemorySegment data, long bytes, OnnxTensorType type,
            long[] shape) {
        try (Lease info = Handles.acquire(memoryInfo)) {
            return createOver(info.handle(), memoryInfo.getName(), data, bytes, type, shape);
        }
    }

    /** Like {@link #createOver(OrtMemoryInfo, MemorySegment, long, OnnxTensorType, long[])} with a native description. */
    static MemorySegment createOver(MemorySegment memoryInfo, String where, MemorySegment data, long bytes,
            OnnxTensorType type, long[] shape) {
        OrtLibrary.require();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            Api.checkStatus(OrtApi.CreateTensorWithDataAsOrtValue.invoke(Api.Value.CreateTensorWithDataAsOrtValue,
                    memoryInfo, data, bytes, arena.allocateFrom(JAVA_LONG, shape), shape.length, type.value(), out),
                    "CreateTensorWithDataAsOrtValue(" + where + ")");
            return out.get(ADDRESS, 0);
        }
    }

    /**
     * An {@code OrtValue} whose memory {@code allocator} allocates ({@code CreateTensorAsOrtValue}), and
     * its data pointer: {@code out[0]} is the value, {@code out[1]} the data.
     */
    static MemorySegment[] allocateIn(OrtAllocator allocator, OnnxTensorType type, long[] shape) {
        OrtAllocator.checkSize(checkShape(shape, -1, type) * type.byteSize());
        OrtLibrary.require();
        MemorySegment value = MemorySegment.NULL;
        try (Lease a = Handles.acquire(allocator); Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            Api.checkStatus(OrtApi.CreateTensorAsOrtValue.invoke(Api.Value.CreateTensorAsOrtValue, a.handle(),
                    arena.allocateFrom(JAVA_LONG, shape), shape.length, type.value(), out), "CreateTensorAsOrtValue");
            value = out.get(ADDRESS, 0);
            Api.checkStatus(OrtApi.GetTensorMutableData.invoke(Api.Value.GetTensorMutableData, value, out));
            return new MemorySegment[] {value, out.get(ADDRESS, 0)};
        } catch (RuntimeException e) {
            if (value.address() != 0) {
                OrtApi.ReleaseValue.invoke(Api.Value.ReleaseValue, value);
            }
            throw e;
        }
    }

    /**
     * The number of elements {@code shape} holds, checking that no dimension is negative and that the
     * count and its bytes fit in a {@code long}; when {@code count} is not negative it must match.
     */
    static long checkShape(long[] shape, long count, OnnxTensorType type) {
        for (long d : shape) {
            if (d < 0) {
                throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "negative dimension in shape "
                        + Arrays.toString(shape));
            }
        }
        long n = TensorInfo.elementCount(shape);
        if (type.byteSize() > 0 && n > Long.MAX_VALUE / type.byteSize()) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "a " + type + " tensor of shape "
                    + Arrays.toString(shape) + " has " + n + " elements, whose bytes do not fit in a long");
        }
        if (count >= 0 && n != count) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "shape " + Arrays.toString(shape) + " holds "
                    + n + " elements but " + count + " " + type + " values were given");
        }
        return n;
    }

    /** Checks a tensor of {@code type} and {@code shape} over {@code available} bytes; returns its bytes. */
    static long checkWrappable(OnnxTensorType type, long[] shape, long available) {
        if (type == OnnxTensorType.STRING || type == OnnxTensorType.UNDEFINED) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "cannot wrap memory as a " + type + " tensor");
        }
        long bytes = checkShape(shape, -1, type) * type.byteSize();
        if (available < bytes) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "memory of " + available
                    + " bytes is too small for a " + type + " tensor of shape " + Arrays.toString(shape) + " (" + bytes + " bytes)");
        }
        return bytes;
    }

    static TensorInfo infoOf(OnnxTensorType type, long[] shape) {
        String[] names = new String[shape.length];
        Arrays.fill(names, "");
        return new TensorInfo(type, shape, names);
    }

    /** Closes a hold taken for a tensor whose creation failed. */
    static void closeHold(AutoCloseable hold) {
        try {
            hold.close();
        } catch (Exception ignored) {
            // only ending a hold the failed tensor would have kept
        }
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "(" + info + (isClosed() ? ", closed)" : ")");
    }
}
