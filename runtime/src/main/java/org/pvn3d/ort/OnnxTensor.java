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
import org.pvn3d.ort.internal.NativeObject;
import org.pvn3d.ort.internal.Shapes;

/**
 * A tensor ({@code OrtValue}) in host memory.
 *
 * <p>Who owns the data:
 * <ul>
 *   <li>created from a Java array ({@code createTensor}) or by {@link #allocate}: a native copy
 *       owned by this tensor, freed by {@link #close()};</li>
 *   <li>created over a {@link MemorySegment} ({@link #fromSegment}): no copy; the segment stays the
 *       caller's and must stay alive while the tensor is used (a tensor whose segment's arena was
 *       closed fails with an exception when used, it is never read);</li>
 *   <li>returned by a session run: ORT's memory, freed by {@link #close()}, independent of the
 *       session (a result may outlive its session).</li>
 * </ul>
 * Arrays and segments are in the platform's native byte order, row-major.
 */
public final class OnnxTensor extends NativeObject implements OnnxValue {
    private final TensorInfo info;
    private final MemorySegment data; // host data; NULL for string tensors
    private final MemorySegment ownedData; // non-null when this tensor owns the data (HostMemory)
    private final MemorySegment userData;
    // ---- device tensors (issue 5): where the data lives and what keeps it alive ----
    private final long deviceAddress;      // non-zero for a tensor whose data the host cannot read
    private final AutoCloseable memoryClaim; // a claim on a CudaBuffer or OrtAllocator behind the data
    // ---- end of the device-tensor fields ----

    private OnnxTensor(MemorySegment value, TensorInfo info, MemorySegment data, MemorySegment ownedData,
            MemorySegment userData) {
        this(value, info, data, ownedData, userData, 0, null);
    }

    private OnnxTensor(MemorySegment value, TensorInfo info, MemorySegment data, MemorySegment ownedData,
            MemorySegment userData, long deviceAddress, AutoCloseable memoryClaim) {
        super("OrtValue", value);
        this.info = info;
        this.data = data;
        this.ownedData = ownedData;
        this.userData = userData;
        this.deviceAddress = deviceAddress;
        this.memoryClaim = memoryClaim;
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
                        strings.setAtIndex(ADDRESS, i, arena.allocateFrom(data[i], StandardCharsets.UTF_8));
                    }
                    Api.checkStatus(OrtApi.FillStringTensor.invoke(Api.Value.FillStringTensor, value, strings, count), "FillStringTensor");
                }
            } catch (RuntimeException e) {
                OrtApi.ReleaseValue.invoke(Api.Value.ReleaseValue, value);
                throw e;
            }
            return new OnnxTensor(value, new TensorInfo(OnnxTensorType.STRING, shape, blankNames(shape.length)),
                    MemorySegment.NULL, null, null);
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

    /**
     * A tensor over {@code data} without a copy. The segment must be a native segment holding at
     * least the tensor's bytes; it remains the caller's, who keeps it alive while the tensor is used.
     */
    public static OnnxTensor fromSegment(MemorySegment data, OnnxTensorType type, long... shape) {
        if (!data.isNative()) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT,
                    "fromSegment needs a native segment (a heap segment can move); use createTensor to copy");
        }
        if (type == OnnxTensorType.STRING || type == OnnxTensorType.UNDEFINED) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "cannot wrap memory as a " + type + " tensor");
        }
        long count = checkShape(shape, -1, type);
        long bytes = count * type.byteSize();
        if (data.byteSize() < bytes) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "segment of " + data.byteSize()
                    + " bytes is too small for a " + type + " tensor of shape " + Arrays.toString(shape)
                    + " (" + bytes + " bytes)");
        }
        return wrap(type, shape, data.asSlice(0, bytes), null, data);
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
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment dims = arena.allocateFrom(JAVA_LONG, shape);
            MemorySegment out = arena.allocate(ADDRESS);
            Api.checkStatus(OrtApi.CreateTensorWithDataAsOrtValue.invoke(Api.Value.CreateTensorWithDataAsOrtValue,
                    Memory.CPU_MEMORY_INFO, data, data.byteSize(), dims, shape.length, type.value(), out),
                    "CreateTensorWithDataAsOrtValue");
            return new OnnxTensor(out.get(ADDRESS, 0), new TensorInfo(type, shape, blankNames(shape.length)), data,
                    owned, user);
        } catch (RuntimeException e) {
            if (owned != null) {
                HostMemory.free(owned);
            }
            throw e;
        }
    }

    /** Wraps an {@code OrtValue} that ORT allocated (a run's output); this tensor releases it. */
    static OnnxTensor fromOrtValue(MemorySegment value) {
        TensorInfo info;
        MemorySegment data = MemorySegment.NULL;
        long deviceAddress = 0;
        try {
            info = Shapes.tensorInfoOfValue(value);
            if (info.getType() != OnnxTensorType.STRING) {
                try (Arena arena = Arena.ofConfined()) {
                    MemorySegment out = arena.allocate(ADDRESS);
                    Api.checkStatus(OrtApi.GetTensorMutableData.invoke(Api.Value.GetTensorMutableData, value, out));
                    MemorySegment p = out.get(ADDRESS, 0);
                    // (issue 5) an output ORT allocated on a device is a device tensor: never read from the host
                    if (isOnDevice(value)) {
                        deviceAddress = p.address() == 0 ? 1 : p.address();
                    } else {
                        data = p.reinterpret(info.getElementCount() * info.getType().byteSize());
                    }
                }
            }
        } catch (RuntimeException e) {
            OrtApi.ReleaseValue.invoke(Api.Value.ReleaseValue, value);
            throw e;
        }
        return new OnnxTensor(value, info, data, null, null, deviceAddress, null);
    }

    private static long checkShape(long[] shape, long count, OnnxTensorType type) {
        long n = 1;
        for (long d : shape) {
            if (d < 0) {
                throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "negative dimension in shape "
                        + Arrays.toString(shape));
            }
            n = Math.multiplyExact(n, d);
        }
        if (count >= 0 && n != count) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "shape " + Arrays.toString(shape) + " holds "
                    + n + " elements but " + count + " " + type + " values were given");
        }
        return n;
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

    private static String[] blankNames(int rank) {
        String[] names = new String[rank];
        Arrays.fill(names, "");
        return names;
    }

    // ---- description ----

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

    // ---- reading ----

    /**
     * The tensor's bytes as a segment (a view, not a copy, valid until this tensor is closed). For
     * string tensors use {@link #getStringArray()}.
     */
    public MemorySegment data() {
        handle();
        checkHostAccessible();
        if (info.getType() == OnnxTensorType.STRING) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "a string tensor has no flat data segment");
        }
        checkUserData();
        return data;
    }

    public float[] getFloatArray() {
        return read(JAVA_FLOAT, OnnxTensorType.FLOAT).toArray(JAVA_FLOAT);
    }

    public double[] getDoubleArray() {
        return read(JAVA_DOUBLE, OnnxTensorType.DOUBLE).toArray(JAVA_DOUBLE);
    }

    /** int64 or uint64 (bit patterns) values. */
    public long[] getLongArray() {
        return read(JAVA_LONG, OnnxTensorType.INT64, OnnxTensorType.UINT64).toArray(JAVA_LONG);
    }

    /** int32 or uint32 (bit patterns) values. */
    public int[] getIntArray() {
        return read(JAVA_INT, OnnxTensorType.INT32, OnnxTensorType.UINT32).toArray(JAVA_INT);
    }

    /** int16, uint16, float16 or bfloat16 values as their 16 bits. */
    public short[] getShortArray() {
        return read(JAVA_SHORT, OnnxTensorType.INT16, OnnxTensorType.UINT16, OnnxTensorType.FLOAT16,
                OnnxTensorType.BFLOAT16).toArray(JAVA_SHORT);
    }

    /** int8, uint8 or bool values as bytes. */
    public byte[] getByteArray() {
        return read(JAVA_BYTE, OnnxTensorType.INT8, OnnxTensorType.UINT8, OnnxTensorType.BOOL).toArray(JAVA_BYTE);
    }

    public boolean[] getBooleanArray() {
        byte[] bytes = read(JAVA_BYTE, OnnxTensorType.BOOL).toArray(JAVA_BYTE);
        boolean[] out = new boolean[bytes.length];
        for (int i = 0; i < bytes.length; i++) {
            out[i] = bytes[i] != 0;
        }
        return out;
    }

    /** float16 or bfloat16 values widened to float. */
    public float[] getFloat16AsFloatArray() {
        short[] bits = read(JAVA_SHORT, OnnxTensorType.FLOAT16, OnnxTensorType.BFLOAT16).toArray(JAVA_SHORT);
        float[] out = new float[bits.length];
        boolean half = info.getType() == OnnxTensorType.FLOAT16;
        for (int i = 0; i < bits.length; i++) {
            out[i] = half ? Float16.halfToFloat(bits[i]) : Float16.bfloat16ToFloat(bits[i]);
        }
        return out;
    }

    public String[] getStringArray() {
        try (Lease use = acquire()) {
            MemorySegment value = use.handle();
            if (info.getType() != OnnxTensorType.STRING) {
                throw wrongType(OnnxTensorType.STRING);
            }
            int count = Math.toIntExact(info.getElementCount());
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

    private MemorySegment read(ValueLayout layout, OnnxTensorType... accepted) {
        handle();
        checkHostAccessible();
        for (OnnxTensorType t : accepted) {
            if (t == info.getType()) {
                checkUserData();
                return data;
            }
        }
        throw wrongType(accepted[0]);
    }

    private OrtException wrongType(OnnxTensorType wanted) {
        return new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "tensor holds " + info.getType()
                + " elements, not " + wanted);
    }

    /**
     * A use of this tensor for a run or a binding, whose failure names the tensor's role ({@code what},
     * e.g. "input 'x'"); refuses a tensor whose caller-owned memory has been freed.
     */
    Lease acquireFor(String what) {
        Lease use;
        try {
            use = acquire();
        } catch (OrtException e) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, what + ": tensor is closed");
        }
        try {
            checkUserData();
            return use;
        } catch (RuntimeException e) {
            use.close();
            throw e;
        }
    }

    /** Throws if the caller's segment behind this tensor has been freed (instead of reading freed memory). */
    void checkUserData() {
        if (userData != null && !userData.scope().isAlive()) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT,
                    "the memory segment behind this tensor has been freed (its arena was closed)");
        }
    }

    // ---- device tensors, tensors over ORT or Java allocations, copies (issue 5) ----

    /**
     * A tensor over a {@link org.pvn3d.ort.cuda.CudaBuffer} (device or pinned memory Java allocated), no
     * copy. Ownership: the buffer's owner frees it, but this tensor holds a claim that keeps the memory
     * allocated until the tensor is closed too (closing the buffer first is safe). The tensor covers the
     * buffer's first bytes; the buffer must be large enough.
     */
    public static OnnxTensor createTensor(org.pvn3d.ort.cuda.CudaBuffer buffer, OnnxTensorType type, long... shape) {
        long bytes = checkWrappable(type, shape, buffer.byteSize());
        AutoCloseable claim = buffer.claim();
        try (OrtMemoryInfo mi = buffer.memoryInfo()) {
            MemorySegment p = MemorySegment.ofAddress(buffer.address());
            boolean host = buffer instanceof org.pvn3d.ort.cuda.PinnedBuffer;
            MemorySegment hostData = host ? ((org.pvn3d.ort.cuda.PinnedBuffer) buffer).segment().asSlice(0, bytes) : MemorySegment.NULL;
            return createOver(mi, p, bytes, type, shape, hostData, null, host ? 0 : p.address(), claim);
        } catch (RuntimeException e) {
            try {
                claim.close();
            } catch (Exception ignored) {
                // only ending a hold
            }
            throw e;
        }
    }

    /**
     * A tensor over memory described by {@code memoryInfo} (e.g. device memory from another CUDA
     * library), no copy. The memory stays the caller's, who keeps it allocated while the tensor is
     * used; the segment's address and size are what matter (for device memory it is never accessed
     * from Java). Host-accessible memory can be read with {@link #data()}, device memory cannot.
     */
    public static OnnxTensor createTensor(OrtMemoryInfo memoryInfo, MemorySegment memory, OnnxTensorType type,
            long... shape) {
        long bytes = checkWrappable(type, shape, memory.byteSize());
        if (memoryInfo.isHostAccessible()) {
            if (!memory.isNative()) {
                throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "host memory for a tensor must be a native segment");
            }
            return createOver(memoryInfo, memory, bytes, type, shape, memory.asSlice(0, bytes), memory, 0, null);
        }
        return createOver(memoryInfo, memory, bytes, type, shape, MemorySegment.NULL, null,
                memory.address() == 0 ? 1 : memory.address(), null);
    }

    /**
     * A tensor whose memory {@code allocator} allocates ({@code CreateTensorAsOrtValue}), e.g. on the
     * device through a CUDA session's allocator. ORT frees it through the allocator when the tensor is
     * closed, so the tensor keeps the allocator alive until then. Contents are uninitialised.
     */
    public static OnnxTensor createTensor(OrtAllocator allocator, OnnxTensorType type, long... shape) {
        if (type == OnnxTensorType.STRING || type == OnnxTensorType.UNDEFINED) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "cannot allocate a " + type + " tensor this way");
        }
        long count = checkShape(shape, -1, type);
        Lease claim = Handles.retain(allocator);
        MemorySegment value = MemorySegment.NULL;
        try (Arena arena = Arena.ofConfined()) {
            try (Lease a = Handles.acquire(allocator)) {
                MemorySegment out = arena.allocate(ADDRESS);
                Api.checkStatus(OrtApi.CreateTensorAsOrtValue.invoke(Api.Value.CreateTensorAsOrtValue, a.handle(),
                        arena.allocateFrom(JAVA_LONG, shape), shape.length, type.value(), out), "CreateTensorAsOrtValue");
                value = out.get(ADDRESS, 0);
            }
            MemorySegment dataOut = arena.allocate(ADDRESS);
            Api.checkStatus(OrtApi.GetTensorMutableData.invoke(Api.Value.GetTensorMutableData, value, dataOut));
            MemorySegment p = dataOut.get(ADDRESS, 0);
            TensorInfo ti = new TensorInfo(type, shape, blankNames(shape.length));
            if (allocator.isHostAccessible()) {
                return new OnnxTensor(value, ti, p.reinterpret(count * type.byteSize()), null, null, 0, claim);
            }
            return new OnnxTensor(value, ti, MemorySegment.NULL, null, null, p.address() == 0 ? 1 : p.address(), claim);
        } catch (RuntimeException e) {
            if (value.address() != 0) {
                OrtApi.ReleaseValue.invoke(Api.Value.ReleaseValue, value);
            }
            claim.close();
            throw e;
        }
    }

    private static long checkWrappable(OnnxTensorType type, long[] shape, long available) {
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

    private static OnnxTensor createOver(OrtMemoryInfo mi, MemorySegment p, long bytes, OnnxTensorType type, long[] shape,
            MemorySegment hostData, MemorySegment user, long deviceAddress, AutoCloseable claim) {
        try (Lease info = Handles.acquire(mi); Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            Api.checkStatus(OrtApi.CreateTensorWithDataAsOrtValue.invoke(Api.Value.CreateTensorWithDataAsOrtValue, info.handle(), p, bytes,
                    arena.allocateFrom(JAVA_LONG, shape), shape.length, type.value(), out),
                    "CreateTensorWithDataAsOrtValue(" + mi.getName() + ")");
            return new OnnxTensor(out.get(ADDRESS, 0), new TensorInfo(type, shape, blankNames(shape.length)), hostData,
                    null, user, deviceAddress, claim);
        }
    }

    /** Whether an {@code OrtValue}'s tensor data lives where the host cannot read it. */
    private static boolean isOnDevice(MemorySegment value) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            Api.checkStatus(OrtApi.GetTensorMemoryInfo.invoke(Api.Value.GetTensorMemoryInfo, value, out));
            return !OrtMemoryInfo.isHostAccessible(out.get(ADDRESS, 0));
        }
    }

    /** Whether this tensor's data is in device memory (not readable from the host). */
    public boolean isOnDevice() {
        handle();
        return deviceAddress != 0;
    }

    /** Where the data lives ({@code GetTensorMemoryInfo}): a copy the caller closes. */
    public OrtMemoryInfo getMemoryInfo() {
        try (Lease value = acquire(); Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            Api.checkStatus(OrtApi.GetTensorMemoryInfo.invoke(Api.Value.GetTensorMemoryInfo, value.handle(), out));
            return OrtMemoryInfo.copyOf(out.get(ADDRESS, 0));
        }
    }

    /** The device address of a device tensor's data (for passing to other CUDA code); throws for host tensors. */
    public long deviceAddress() {
        handle();
        if (deviceAddress == 0) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "this tensor is in host memory; use data()");
        }
        return deviceAddress;
    }

    private long byteCount() {
        return info.getElementCount() * info.getType().byteSize();
    }

    /** A copy of a device tensor in host memory, made on the legacy default stream (a host tensor is copied too). */
    public OnnxTensor toHost() {
        return toHost(null);
    }

    /** A copy of this tensor in host memory (a new tensor the caller owns), copied on {@code stream} and waited for. */
    public OnnxTensor toHost(org.pvn3d.ort.cuda.CudaStream stream) {
        try (Lease use = acquire()) {
            if (info.getType() == OnnxTensorType.STRING) {
                throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "string tensors live on the host only");
            }
            OnnxTensor host = allocate(info.getType(), info.getShape());
            try {
                if (deviceAddress == 0) {
                    checkUserData();
                    MemorySegment.copy(data, 0, host.data, 0, byteCount());
                } else if (byteCount() > 0) {
                    org.pvn3d.ort.cuda.CudaCopy.deviceToHost(deviceAddress, host.data, stream);
                }
                return host;
            } catch (RuntimeException e) {
                host.close();
                throw e;
            }
        }
    }

    /** Copies {@code dst.byteSize()} bytes (at most the tensor's size) of this tensor into host memory {@code dst}. */
    public void copyToHost(MemorySegment dst, org.pvn3d.ort.cuda.CudaStream stream) {
        try (Lease use = acquire()) {
            if (dst.byteSize() > byteCount()) {
                throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "the tensor holds " + byteCount() + " bytes, not " + dst.byteSize());
            }
            if (deviceAddress == 0) {
                checkUserData();
                MemorySegment.copy(data, 0, dst, 0, dst.byteSize());
            } else {
                org.pvn3d.ort.cuda.CudaCopy.deviceToHost(deviceAddress, dst, stream);
            }
        }
    }

    /** Overwrites this tensor's data (host or device) with all of {@code src}, which must be exactly the tensor's size. */
    public void copyFromHost(MemorySegment src, org.pvn3d.ort.cuda.CudaStream stream) {
        try (Lease use = acquire()) {
            if (src.byteSize() != byteCount()) {
                throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "the tensor holds " + byteCount() + " bytes, not " + src.byteSize());
            }
            if (info.getType() == OnnxTensorType.STRING) {
                throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "cannot overwrite a string tensor's bytes");
            }
            if (deviceAddress == 0) {
                checkUserData();
                MemorySegment.copy(src, 0, data, 0, src.byteSize());
            } else {
                org.pvn3d.ort.cuda.CudaCopy.hostToDevice(src, deviceAddress, stream);
            }
        }
    }

    /** Throws instead of reading device memory from the host. */
    private void checkHostAccessible() {
        if (deviceAddress != 0) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "this tensor's data is in device memory, which the host "
                    + "cannot read; copy it with toHost() or copyToHost(...) first");
        }
    }

    // ---- end of the device-tensor block ----

    @Override
    protected void releaseNative(MemorySegment handle) {
        OrtApi.ReleaseValue.invoke(Api.Value.ReleaseValue, handle);
    }

    @Override
    protected void afterClose() {
        if (ownedData != null) {
            HostMemory.free(ownedData);
        }
        if (memoryClaim != null) { // (issue 5) the buffer or allocator behind a device tensor
            try {
                memoryClaim.close();
            } catch (Exception e) {
                throw new OrtException(OrtErrorCode.ORT_JAVA_UNKNOWN, "releasing the memory behind " + this + ": " + e, e);
            }
        }
    }

    @Override
    public String toString() {
        return "OnnxTensor(" + info + (isClosed() ? ", closed)" : ")");
    }
}
