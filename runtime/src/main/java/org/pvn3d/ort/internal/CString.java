package org.pvn3d.ort.internal;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.util.Objects;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;

/**
 * Java strings handed to the C API, NUL-terminated. A string holding a NUL character would end there in C:
 * a config key "a\0b" would set "a", an operator "Op\0x" would bind to nodes "Op", while the Java side kept
 * the whole string. Every string this library passes to ORT goes through {@link #of}, which refuses those.
 */
public final class CString {
    private CString() {}

    /** {@code s} as a C string allocated by {@code allocator}; an OrtException if it holds a NUL character. */
    public static MemorySegment of(SegmentAllocator allocator, String s) {
        Objects.requireNonNull(s, "a string for ONNX Runtime is null");
        int nul = s.indexOf('\0');
        if (nul >= 0) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "\"" + s.replace("\0", "\\0") + "\" holds a NUL character (at "
                    + nul + "), which would end it there in C");
        }
        return allocator.allocateFrom(s);
    }
}
