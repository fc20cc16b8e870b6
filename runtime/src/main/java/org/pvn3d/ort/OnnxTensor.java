package org.pvn3d.ort;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_DOUBLE;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.pvn3d.ort.ffm.OrtApi;
import org.pvn3d.ort.internal.Api;
import org.pvn3d.ort.internal.Handles;
import org.pvn3d.ort.internal.HostMemory;
import org.pvn3d.ort.internal.Lease;
import org.pvn3d.ort.internal.Memory;

/**
 * A tensor ({@code OrtValue}) whose data is in host memory, read and written from Java: created from
 * Java arrays, over memory segments, or returned by a run. (Tensors in device memory are
 * {@link DeviceTensor}s.)
 *
 * <p>Who owns the data:
 * <ul>
 *   <li>created from a Java array ({@code createTensor}) or by {@link #allocate}: a native copy
 *       owned by this tensor, freed by {@link #close()};</li>
 *   <li>created over a {@link MemorySegment} ({@link #fromSegment}): no copy; the segment stays the
 *       caller's and must stay alive while the tensor is used (a tensor whose segment's arena was
 *       closed fails with an exception when used, it is never read);</li>
 *   <li>created over host-accessible memory another object owns (an {@link OrtAllocator}, a
 *       {@link TensorMemory} such as CUDA-pinned memory): the tensor holds that memory until it is
 *       closed;</li>
 *   <li>returned by a session run: ORT's memory, freed by {@link #close()}, independent of the
 *       session (a result may outlive its session).</li>
 * </ul>
 * Arrays and segments are in the platform's native byte order, row-major.
 */
public final class OnnxTensor extends OnnxTensorLike {
    private final MemorySegment data; // NULL for string tensors
    private final MemorySegment ownedData; // non-null when this tensor owns the data (HostMemory)
    private final MemorySegment userData; // the caller's segment behind the data, checked before each use

    /** A tensor over ORT's memory, or memory {@code memoryHold} keeps (may be null). */
    OnnxTensor(MemorySegment value, TensorInfo info, MemorySegment data, AutoCloseable memoryHold) {
        this(value, info, data, null, null, memoryHold);
    }

    private OnnxTensor(MemorySegment value, TensorInfo info, MemorySegment data, MemorySegment ownedData,
            MemorySegment userData, AutoCloseable memoryHold) {
        super(value, info, memoryHold);
        this.data = data;
        this.ownedData = ownedData;
        this.userData = userData;
    }

    // ---- creation from Java arrays (copied) ----

    public static OnnxTensor createTensor(float[] data, long... shape) {
        return copyOf(OnnxTensorType.FLOAT, MemorySegment.ofArray(data), data.length, shape);
    }

    public static OnnxTensor createTensor(double[] data, long... shape) {
        return copyOf(OnnxTensorType.DOUBLE, MemorySegment.ofArray(data), data.length, shape);
    }

    public static OnnxTensor createTensor(long[] data, long... shape) {
        return copyOf(OnnxTensorType.INT64, MemorySegment.ofArray(data), data.length, shape);
    }

    public static OnnxTensor createTensor(int[] data, long... shape) {
        return copyOf(OnnxTensorType.INT32, MemorySegment.ofArray(data), data.length, shape);
    }

    public static OnnxTensor createTensor(short[] data, long... shape) {
        return copyOf(OnnxTensorType.INT16, MemorySegment.ofArray(data), data.length, shape);
    }

    public static OnnxTensor createTensor(byte[] data, long... shape) {
        return copyOf(OnnxTensorType.INT8, MemorySegment.ofArray(data), data.length, shape);
    }

    public static OnnxTensor createTensor(boolean[] data, long... shape) {
        byte[] bytes = new byte[data.length];
        for (int i = 0; i < data.length; i++) {
            bytes[i] = (byte) (data[i] ? 1 : 0);
        }
        return copyOf(OnnxTensorType.BOOL, MemorySegment.ofArray(bytes), bytes.length, shape);
    }

    /**
     * A tensor of {@code type} from an array of the Java type of the same width: {@code byte[]} for
     * uint8/int8/bool, {@code short[]} for uint16/int16/float16/bfloat16 (bits), {@code int[]} for
     * uint32/int32, {@code long[]} for uint64/int64, {@code float[]}, {@code double[]}.
     */
    public static OnnxTensor createTensor(OnnxTensorType type, Object array, long... shape) {
        MemorySegment src = switch (array) {
            case byte[] a -> MemorySegment.ofArray(a);
            case short[] a -> MemorySegment.ofArray(a);
            case int[] a -> MemorySegment.ofArray(a);
            case long[] a -> MemorySegment.ofArray(a);
            case float[] a -> MemorySegment.ofArray(a);
            case double[] a -> MemorySegment.ofArray(a);
            default -> throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT,
                    "cannot make a " + type + " tensor from " + array.getClass().getSimpleName());
        };
        if (type.byteSize() == 0 || src.byteSize() % type.byteSize() != 0
                || elementBytes(array) != type.byteSize()) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "a " + type + " tensor needs an array of "
                    + type.byteSize() + "-byte elements, not " + array.getClass().getSimpleName());
        }
        return copyOf(type, src, src.byteSize() / type.byteSize(), shape);
    }

    /** A float16 tensor from floats (rounded to nearest even). */
    public static OnnxTensor createFloat16Tensor(float[] values, long... shape) {
        short[] bits = new short[values.length];
        for (int i = 0; i < values.length; i++) {
            bits[i] = Float16.floatToHalf(values[i]);
        }
        return createTensor(OnnxTensorType.FLOAT16, bits, shape);
    }

    /** A bfloat16 tensor from floats (rounded to nearest even). */
    public static OnnxTensor createBFloat16Tensor(float[] values, long... shape) {
        short[] bits = new short[values.length];
        for (int i = 0; i < values.length; i++) {
            bits[i] = Float16.floatToBfloat16(values[i]);
        }
        return createTensor(OnnxTensorType.BFLOAT16, bits, shape);
    }

    /** A string tensor (UTF-8). */
    public static OnnxTensor createStringTensor(String[] data, long... shape) {
        long count = checkShape(shape, data.length, OnnxTensorType.STRING);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment dims = arena.allocateFrom(JAVA_LONG, shape);
            MemorySegment out = arena.allocate(ADDRESS);
            org.pvn3d.ort.internal.OrtLibrary.require();
            Api.checkStatus(OrtApi.CreateTensorAsOrtValue.invoke(Api.Value.CreateTensorAsOrtValue, Memory.DEFAULT_ALLOCATOR,
                    dims, shape.length, OnnxTensorType.STRING.value(), out), "CreateTensorAsOrtValue(string)");
            MemorySegment value = out.get(ADDRESS, 0);
            try {
                if (count > 0) {
                    MemorySegment strings = arena.allocate(ADDRESS, count);
                    for (int i = 0; i < count; i++) {
                        if (data[i] == null) {
                            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "string tensor element " + i + " is null");
                        }
                        int nul = data[i].indexOf('\0');
                        if (nul >= 0) { // ORT takes each element as a C string: it would end there, silently
                            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "string tensor element " + i
                                    + " holds a NUL character (at " + nul + "), where ORT's C strings end");
                        }
                        strings.setAtIndex(ADDRESS, i, arena.allocateFrom(data[i], StandardCharsets.UTF_8));
                    }
                    Api.checkStatus(OrtApi.FillStringTensor.invoke(Api.Value.FillStringTensor, value, strings, count), "FillStringTensor");
                }
            } catch (RuntimeException e) {
                OrtApi.ReleaseValue.invoke(Api.Value.ReleaseValue, value);
                throw e;
            }
            return new OnnxTensor(value, infoOf(OnnxTensorType.STRING, shape), MemorySegment.NULL, null);
        }
    }

    /** A zero-filled tensor whose memory this tensor owns, e.g. for preallocated outputs. */
    public static OnnxTensor allocate(OnnxTensorType type, long... shape) {
        if (type == OnnxTensorType.STRING || type == OnnxTensorType.UNDEFINED) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "cannot preallocate a " + type + " tensor");
        }
        long count = checkShape(shape, -1, type);
        MemorySegment data = HostMemory.allocateZeroed(count * type.byteSize());
        return wrap(type, shape, data, data, null);
    }

    // ---- creation over memory, without a copy ----

    /**
     * A tensor over {@code data} without a copy. The segment must be a native segment holding at
     * least the tensor's bytes; it remains the caller's, who keeps it alive while the tensor is used.
     */
    public static OnnxTensor fromSegment(MemorySegment data, OnnxTensorType type, long... shape) {
        requireAlive(data);
        if (!data.isNative()) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT,
                    "fromSegment needs a native segment (a heap segment can move); use createTensor to copy");
        }
        if (type == OnnxTensorType.STRING || type == OnnxTensorType.UNDEFINED) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "cannot wrap memory as a " + type + " tensor");
        }
        long count = checkShape(shape, -1, type);
        long bytes = count * type.byteSize();
        requireAligned(data, type);
        if (data.byteSize() < bytes) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "segment of " + data.byteSize()
                    + " bytes is too small for a " + type + " tensor of shape " + Arrays.toString(shape)
                    + " (" + bytes + " bytes)");
        }
        return wrap(type, shape, data.asSlice(0, bytes), null, data);
    }

    /**
     * A tensor over host-accessible memory described by {@code memoryInfo} (for example page-locked
     * memory from another CUDA library), no copy. The memory stays the caller's, who keeps it allocated
     * while the tensor is used. Device memory is refused: it makes a {@link DeviceTensor}.
     */
    public static OnnxTensor createTensor(OrtMemoryInfo memoryInfo, MemorySegment memory, OnnxTensorType type,
            long... shape) {
        requireHostMemory(memoryInfo.isHostAccessible(), memoryInfo.toString(), "createTensor(OrtMemoryInfo, ...)");
        requireAlive(memory);
        if (!memory.isNative()) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "host memory for a tensor must be a native segment");
        }
        long bytes = checkWrappable(type, shape, memory.byteSize());
        requireAligned(memory, type);
        MemorySegment data = memory.asSlice(0, bytes);
        return new OnnxTensor(createOver(memoryInfo, data, bytes, type, shape), infoOf(type, shape), data, null, memory,
                null);
    }

    /**
     * Refuses memory not aligned to its element size: ORT's kernels read elements in place, and so do this
     * class's getters (an unaligned float array threw IllegalArgumentException on the first read).
     */
    private static void requireAligned(MemorySegment memory, OnnxTensorType type) {
        long size = type.byteSize();
        if (size > 1 && memory.address() % size != 0) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "memory at 0x" + Long.toHexString(memory.address())
                    + " is not aligned to the " + size + "-byte elements of a " + type + " tensor");
        }
    }

    /**
     * A tensor over host-accessible memory that {@code memory}'s owner allocated (e.g. a
     * {@code PinnedBuffer}), no copy, covering its first bytes. The tensor holds the memory allocated
     * until it is closed, so the owner may be closed first. Device memory is refused: it makes a
     * {@link DeviceTensor}.
     */
    public static OnnxTensor createTensor(TensorMemory memory, OnnxTensorType type, long... shape) {
        long bytes = checkWrappable(type, shape, memory.byteSize());
        try (OrtMemoryInfo info = memory.memoryInfo()) {
            requireHostMemory(info.isHostAccessible(), memory.toString(), "createTensor(TensorMemory, ...)");
            AutoCloseable hold = memory.hold();
            try {
                MemorySegment data = memory.memory().asSlice(0, bytes);
                return new OnnxTensor(createOver(info, data, bytes, type, shape), infoOf(type, shape), data, hold);
            } catch (RuntimeException e) {
                closeHold(hold);
                throw e;
            }
        }
    }

    /**
     * A tensor whose memory {@code allocator} allocates in host-accessible memory
     * ({@code CreateTensorAsOrtValue}). ORT frees it through the allocator when the tensor is closed, so
     * the tensor holds the allocator until then. Contents are uninitialised. A device allocator is
     * refused: it makes a {@link DeviceTensor}.
     */
    public static OnnxTensor createTensor(OrtAllocator allocator, OnnxTensorType type, long... shape) {
        requireHostMemory(allocator.isHostAccessible(), allocator.toString(), "createTensor(OrtAllocator, ...)");
        if (type == OnnxTensorType.STRING || type == OnnxTensorType.UNDEFINED) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "cannot allocate a " + type + " tensor this way");
        }
        long count = checkShape(shape, -1, type);
        Lease hold = Handles.retain(allocator);
        try {
            MemorySegment[] valueAndData = allocateIn(allocator, type, shape);
            return new OnnxTensor(valueAndData[0], infoOf(type, shape),
                    valueAndData[1].reinterpret(count * type.byteSize()), hold);
        } catch (RuntimeException e) {
            hold.close();
            throw e;
        }
    }

    private static void requireAlive(MemorySegment memory) {
        if (!memory.scope().isAlive()) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "the memory segment has been freed (its arena was closed)");
        }
    }

    private static void requireHostMemory(boolean hostAccessible, String what, String call) {
        if (!hostAccessible) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, what + " is device memory, which the host "
                    + "cannot read: make a DeviceTensor (DeviceTensor." + call + ")");
        }
    }

    private static OnnxTensor copyOf(OnnxTensorType type, MemorySegment src, long count, long[] shape) {
        checkShape(shape, count, type);
        long bytes = count * type.byteSize();
        MemorySegment data = HostMemory.allocate(bytes);
        MemorySegment.copy(src, 0, data, 0, bytes);
        return wrap(type, shape, data, data, null); // wrap frees the block if it fails
    }

    private static OnnxTensor wrap(OnnxTensorType type, long[] shape, MemorySegment data, MemorySegment owned,
            MemorySegment user) {
        try {
            org.pvn3d.ort.internal.OrtLibrary.require(); // before Memory's class initialisation touches the runtime
            MemorySegment value = createOver(Memory.CPU_MEMORY_INFO, OrtMemoryInfo.CPU, data, data.byteSize(), type, shape);
            return new OnnxTensor(value, infoOf(type, shape), data, owned, user, null);
        } catch (RuntimeException e) {
            if (owned != null) {
                HostMemory.free(owned);
            }
            throw e;
        }
    }

    private static int elementBytes(Object array) {
        return switch (array) {
            case byte[] a -> 1;
            case short[] a -> 2;
            case int[] a -> 4;
            case float[] a -> 4;
            case long[] a -> 8;
            case double[] a -> 8;
            default -> 0;
        };
    }

    /** Always false: an {@code OnnxTensor}'s data is in host memory. */
    @Override
    public boolean isOnDevice() {
        return false;
    }

    // ---- reading ----

    /**
     * The tensor's bytes as a segment (a view, not a copy, valid until this tensor is closed). For
     * string tensors use {@link #getStringArray()}.
     */
    @Override
    public boolean isReadOnly() {
        return data.isReadOnly();
    }

    public MemorySegment data() {
        Handles.handle(this);
        if (info.getType() == OnnxTensorType.STRING) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "a string tensor has no flat data segment");
        }
        checkMemoryAlive();
        return data;
    }

    public float[] getFloatArray() {
        return copyOut(d -> d.toArray(JAVA_FLOAT), OnnxTensorType.FLOAT);
    }

    public double[] getDoubleArray() {
        return copyOut(d -> d.toArray(JAVA_DOUBLE), OnnxTensorType.DOUBLE);
    }

    /** int64 or uint64 (bit patterns) values. */
    public long[] getLongArray() {
        return copyOut(d -> d.toArray(JAVA_LONG), OnnxTensorType.INT64, OnnxTensorType.UINT64);
    }

    /** int32 or uint32 (bit patterns) values. */
    public int[] getIntArray() {
        return copyOut(d -> d.toArray(JAVA_INT), OnnxTensorType.INT32, OnnxTensorType.UINT32);
    }

    /** int16, uint16, float16 or bfloat16 values as their 16 bits. */
    public short[] getShortArray() {
        return copyOut(d -> d.toArray(JAVA_SHORT), OnnxTensorType.INT16, OnnxTensorType.UINT16, OnnxTensorType.FLOAT16,
                OnnxTensorType.BFLOAT16);
    }

    /** int8, uint8 or bool values as bytes. */
    public byte[] getByteArray() {
        return copyOut(d -> d.toArray(JAVA_BYTE), OnnxTensorType.INT8, OnnxTensorType.UINT8, OnnxTensorType.BOOL);
    }

    public boolean[] getBooleanArray() {
        byte[] bytes = copyOut(d -> d.toArray(JAVA_BYTE), OnnxTensorType.BOOL);
        boolean[] out = new boolean[bytes.length];
        for (int i = 0; i < bytes.length; i++) {
            out[i] = bytes[i] != 0;
        }
        return out;
    }

    /** float16 or bfloat16 values widened to float. */
    public float[] getFloat16AsFloatArray() {
        short[] bits = copyOut(d -> d.toArray(JAVA_SHORT), OnnxTensorType.FLOAT16, OnnxTensorType.BFLOAT16);
        float[] out = new float[bits.length];
        boolean half = info.getType() == OnnxTensorType.FLOAT16;
        for (int i = 0; i < bits.length; i++) {
            out[i] = half ? Float16.halfToFloat(bits[i]) : Float16.bfloat16ToFloat(bits[i]);
        }
        return out;
    }

    public String[] getStringArray() {
        try (Lease use = Handles.acquire(this)) {
            MemorySegment value = use.handle();
            if (info.getType() != OnnxTensorType.STRING) {
                throw wrongType(OnnxTensorType.STRING);
            }
            requireArraySized();
            int count = (int) info.getElementCount();
            String[] out = new String[count];
            if (count == 0) {
                return out;
            }
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment lengthOut = arena.allocate(JAVA_LONG);
                Api.checkStatus(OrtApi.GetStringTensorDataLength.invoke(Api.Value.GetStringTensorDataLength, value, lengthOut));
                long length = lengthOut.get(JAVA_LONG, 0);
                MemorySegment chars = arena.allocate(Math.max(1, length));
                MemorySegment offsets = arena.allocate(JAVA_LONG, count);
                Api.checkStatus(OrtApi.GetStringTensorContent.invoke(Api.Value.GetStringTensorContent, value, chars, length,
                        offsets, count));
                for (int i = 0; i < count; i++) {
                    long start = offsets.getAtIndex(JAVA_LONG, i);
                    long end = i + 1 < count ? offsets.getAtIndex(JAVA_LONG, i + 1) : length;
                    out[i] = new String(chars.asSlice(start, end - start).toArray(JAVA_BYTE), StandardCharsets.UTF_8);
                }
            }
            return out;
        }
    }

    /**
     * {@code copy} applied to the data, one of the {@code accepted} types, while a use of this tensor is held:
     * a close() from another thread waits for the copy (it used to free the memory under it).
     */
    private <T> T copyOut(java.util.function.Function<MemorySegment, T> copy, OnnxTensorType... accepted) {
        try (Lease use = Handles.acquire(this)) {
            for (OnnxTensorType t : accepted) {
                if (t == info.getType()) {
                    checkMemoryAlive();
                    requireArraySized();
                    return copy.apply(data);
                }
            }
            throw wrongType(accepted[0]);
        }
    }

    /** The getters copy into one Java array: refuses a tensor with more elements than an array holds. */
    private void requireArraySized() {
        long n = info.getElementCount();
        if (n > MAX_ARRAY) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "the tensor has " + n + " elements, more than a Java array"
                    + " holds (" + MAX_ARRAY + "); read it through data()");
        }
    }

    /** The most elements a Java array may have on common JVMs. */
    private static final long MAX_ARRAY = Integer.MAX_VALUE - 8;

    private OrtException wrongType(OnnxTensorType wanted) {
        return new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "tensor holds " + info.getType()
                + " elements, not " + wanted);
    }

    /** Throws if the caller's segment behind this tensor has been freed (instead of reading freed memory). */
    @Override
    void checkMemoryAlive() {
        if (userData != null && !userData.scope().isAlive()) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT,
                    "the memory segment behind this tensor has been freed (its arena was closed)");
        }
    }

    @Override
    protected void afterClose() {
        if (ownedData != null) {
            HostMemory.free(ownedData);
        }
        super.afterClose();
    }
}
