package org.pvn3d.ort;

/** A value passed to or returned from a session; owns its native {@code OrtValue}. */
public interface OnnxValue extends AutoCloseable {
    OnnxValueType getValueType();

    boolean isClosed();

    @Override
    void close();
}
