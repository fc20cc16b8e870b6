package org.pvn3d.ort;

/**
 * ONNX Runtime's error codes ({@code OrtErrorCode} in the C API), plus {@link #ORT_JAVA_UNKNOWN} for
 * failures found on the Java side (a closed object, a bad argument caught before any native call).
 */
public enum OrtErrorCode {
    ORT_OK(0),
    ORT_FAIL(1),
    ORT_INVALID_ARGUMENT(2),
    ORT_NO_SUCHFILE(3),
    ORT_NO_MODEL(4),
    ORT_ENGINE_ERROR(5),
    ORT_RUNTIME_EXCEPTION(6),
    ORT_INVALID_PROTOBUF(7),
    ORT_MODEL_LOADED(8),
    ORT_NOT_IMPLEMENTED(9),
    ORT_INVALID_GRAPH(10),
    ORT_EP_FAIL(11),
    ORT_JAVA_UNKNOWN(-1);

    private final int value;

    OrtErrorCode(int value) {
        this.value = value;
    }

    /** The C API's numeric value ({@code -1} for {@link #ORT_JAVA_UNKNOWN}). */
    public int value() {
        return value;
    }

    /** The code for a C API value; unknown values map to {@link #ORT_JAVA_UNKNOWN}. */
    public static OrtErrorCode of(int value) {
        for (OrtErrorCode code : values()) {
            if (code.value == value) {
                return code;
            }
        }
        return ORT_JAVA_UNKNOWN;
    }
}
