package org.pvn3d.ort;

/**
 * The one exception type of this library: every failed ORT status, every error of our own kernels
 * and every misuse caught on the Java side (a closed object, a wrong name, type or shape) surfaces
 * as an {@code OrtException} carrying an {@link OrtErrorCode} and a readable message.
 *
 * <p>Unlike ORT's own Java API this exception is unchecked: custom-operator compute functions and
 * stream pipelines are lambdas, where a checked exception only gets wrapped.
 */
public class OrtException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final OrtErrorCode code;

    public OrtException(OrtErrorCode code, String message) {
        super(message);
        this.code = code;
    }

    public OrtException(OrtErrorCode code, String message, Throwable cause) {
        super(message, cause);
        this.code = code;
    }

    /** A Java-side failure ({@link OrtErrorCode#ORT_JAVA_UNKNOWN}). */
    public OrtException(String message) {
        this(OrtErrorCode.ORT_JAVA_UNKNOWN, message);
    }

    public OrtErrorCode getCode() {
        return code;
    }

    @Override
    public String getMessage() {
        return "[" + code + "] " + super.getMessage();
    }
}
