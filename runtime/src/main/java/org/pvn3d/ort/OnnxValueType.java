package org.pvn3d.ort;

/** Kinds of ONNX value ({@code ONNXType}). */
public enum OnnxValueType {
    UNKNOWN(0), TENSOR(1), SEQUENCE(2), MAP(3), OPAQUE(4), SPARSETENSOR(5), OPTIONAL(6);

    private final int value;

    OnnxValueType(int value) {
        this.value = value;
    }

    public int value() {
        return value;
    }

    /** {@code values()} once: that method returns a new array on every call. */
    private static final OnnxValueType[] ALL = values();

    public static OnnxValueType of(int value) {
        for (OnnxValueType t : ALL) {
            if (t.value == value) {
                return t;
            }
        }
        return UNKNOWN;
    }
}
