package org.pvn3d.ort;

import java.lang.System.Logger.Level;

/** ORT's log severities ({@code OrtLoggingLevel}), with the {@link System.Logger} level each maps to. */
public enum OrtLoggingLevel {
    ORT_LOGGING_LEVEL_VERBOSE(0, Level.TRACE),
    ORT_LOGGING_LEVEL_INFO(1, Level.DEBUG),
    ORT_LOGGING_LEVEL_WARNING(2, Level.WARNING),
    ORT_LOGGING_LEVEL_ERROR(3, Level.ERROR),
    ORT_LOGGING_LEVEL_FATAL(4, Level.ERROR);

    private final int value;
    private final Level javaLevel;

    OrtLoggingLevel(int value, Level javaLevel) {
        this.value = value;
        this.javaLevel = javaLevel;
    }

    public int value() {
        return value;
    }

    /** The level ORT's messages of this severity are logged at on the Java side. */
    public Level javaLevel() {
        return javaLevel;
    }

    public static OrtLoggingLevel of(int value) {
        for (OrtLoggingLevel level : values()) {
            if (level.value == value) {
                return level;
            }
        }
        return value < 0 ? ORT_LOGGING_LEVEL_VERBOSE : ORT_LOGGING_LEVEL_FATAL;
    }
}
