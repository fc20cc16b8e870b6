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
    private final Arena ownedData;    // non-null when this tensor owns the data
    private final MemorySegment userData;

    private OnnxTensor(MemorySegment value, TensorInfo info, MemorySegment data, Arena ownedData,
            MemorySegment userData) {
        super("OrtValue", value);
        this.info = info;
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
            Api.check(OrtApi.CreateTensorAsOrtValue.invoke(Api.CreateTensorAsOrtValue, Memory.DEFAULT_ALLOCATOR,
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
                    Api.check(OrtApi.FillStringTensor.invoke(Api.FillStringTensor, value, strings, count), "FillStringTensor");
                }
            } catch (RuntimeException e) {
                OrtApi.ReleaseValue.invoke(Api.ReleaseValue, value);
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
        Arena arena = Arena.ofShared();
        MemorySegment data = arena.allocate(Math.max(1, count * type.byteSize()), 64);
        return wrap(type, shape, data.asSlice(0, count * type.byteSize()), arena, null);
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
        Arena arena = Arena.ofShared();
        try {
            long bytes = count * type.byteSize();
            MemorySegment data = arena.allocate(Math.max(1, bytes), 64).asSlice(0, bytes);
            MemorySegment.copy(src, 0, data, 0, bytes);
            return wrap(type, shape, data, arena, null);
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    private static OnnxTensor wrap(OnnxTensorType type, long[] shape, MemorySegment data, Arena owned,
            MemorySegment user) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment dims = arena.allocateFrom(JAVA_LONG, shape);
            MemorySegment out = arena.allocate(ADDRESS);
            Api.check(OrtApi.CreateTensorWithDataAsOrtValue.invoke(Api.CreateTensorWithDataAsOrtValue,
                    Memory.CPU_MEMORY_INFO, data, data.byteSize(), dims, shape.length, type.value(), out),
                    "CreateTensorWithDataAsOrtValue");
            return new OnnxTensor(out.get(ADDRESS, 0), new TensorInfo(type, shape, blankNames(shape.length)), data,
                    owned, user);
        } catch (RuntimeException e) {
            if (owned != null) {
                owned.close();
            }
            throw e;
        }
    }

    /** Wraps an {@code OrtValue} that ORT allocated (a run's output); this tensor releases it. */
    static OnnxTensor fromOrtValue(MemorySegment value) {
        TensorInfo info;
        MemorySegment data = MemorySegment.NULL;
        try {
            info = Shapes.tensorInfoOfValue(value);
            if (info.getType() != OnnxTensorType.STRING) {
                try (Arena arena = Arena.ofConfined()) {
                    MemorySegment out = arena.allocate(ADDRESS);
                    Api.check(OrtApi.GetTensorMutableData.invoke(Api.GetTensorMutableData, value, out));
                    data = out.get(ADDRESS, 0).reinterpret(info.getElementCount() * info.getType().byteSize());
                }
            }
        } catch (RuntimeException e) {
            OrtApi.ReleaseValue.invoke(Api.ReleaseValue, value);
            throw e;
        }
        return new OnnxTensor(value, info, data, null, null);
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
        MemorySegment value = acquire();
        try {
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
                Api.check(OrtApi.GetStringTensorDataLength.invoke(Api.GetStringTensorDataLength, value, lengthOut));
                long length = lengthOut.get(JAVA_LONG, 0);
                MemorySegment chars = arena.allocate(Math.max(1, length));
                MemorySegment offsets = arena.allocate(JAVA_LONG, count);
                Api.check(OrtApi.GetStringTensorContent.invoke(Api.GetStringTensorContent, value, chars, length,
                        offsets, count));
                for (int i = 0; i < count; i++) {
                    long start = offsets.getAtIndex(JAVA_LONG, i);
                    long end = i + 1 < count ? offsets.getAtIndex(JAVA_LONG, i + 1) : length;
                    out[i] = new String(chars.asSlice(start, end - start).toArray(JAVA_BYTE), StandardCharsets.UTF_8);
                }
            }
            return out;
        } finally {
            release();
        }
    }

    private MemorySegment read(ValueLayout layout, OnnxTensorType... accepted) {
        handle();
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

    /** Throws if the caller's segment behind this tensor has been freed (instead of reading freed memory). */
    void checkUserData() {
        if (userData != null && !userData.scope().isAlive()) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT,
                    "the memory segment behind this tensor has been freed (its arena was closed)");
        }
    }

    @Override
    protected void releaseNative(MemorySegment handle) {
        OrtApi.ReleaseValue.invoke(Api.ReleaseValue, handle);
    }

    @Override
    protected void afterClose() {
        if (ownedData != null) {
            ownedData.close();
        }
    }

    @Override
    public String toString() {
        return "OnnxTensor(" + info + (isClosed() ? ", closed)" : ")");
    }
}
