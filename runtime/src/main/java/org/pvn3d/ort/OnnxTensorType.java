package org.pvn3d.ort;

/**
 * Tensor element types ({@code ONNXTensorElementDataType}) with their size in bytes. Unsigned types
 * travel in the Java type of the same width (uint8 in {@code byte}, uint64 in {@code long}, as bit
 * patterns); float16 and bfloat16 travel as their 16 bits in a {@code short} (see {@link Float16}).
 */
public enum OnnxTensorType {
    UNDEFINED(0, 0),
    FLOAT(1, 4),
    UINT8(2, 1),
    INT8(3, 1),
    UINT16(4, 2),
    INT16(5, 2),
    INT32(6, 4),
    INT64(7, 8),
    STRING(8, 0),
    BOOL(9, 1),
    FLOAT16(10, 2),
    DOUBLE(11, 8),
    UINT32(12, 4),
    UINT64(13, 8),
    COMPLEX64(14, 8),
    COMPLEX128(15, 16),
    BFLOAT16(16, 2),
    FLOAT8E4M3FN(17, 1),
    FLOAT8E4M3FNUZ(18, 1),
    FLOAT8E5M2(19, 1),
    FLOAT8E5M2FNUZ(20, 1);

    private final int value;
    private final int byteSize;

    OnnxTensorType(int value, int byteSize) {
        this.value = value;
        this.byteSize = byteSize;
    }

    /** The C API's numeric value. */
    public int value() {
        return value;
    }

    /** Bytes per element; 0 for {@link #STRING} and {@link #UNDEFINED}. */
    public int byteSize() {
        return byteSize;
    }

    /** {@code values()} once: that method returns a new array on every call. */
    private static final OnnxTensorType[] ALL = values();

    public static OnnxTensorType of(int value) {
        for (OnnxTensorType t : ALL) {
            if (t.value == value) {
                return t;
            }
        }
        return UNDEFINED;
    }
}
