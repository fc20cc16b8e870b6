package org.pvn3d.ort.customop;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.ffm.OrtApi;
import org.pvn3d.ort.internal.Api;
import org.pvn3d.ort.internal.CString;

/**
 * What ORT tells a {@link KernelFactory} about the node it creates a kernel for: the node's name and
 * its attributes. Valid only during the factory call (ORT's {@code OrtKernelInfo} is borrowed):
 * read what the kernel needs into fields.
 *
 * <p>A missing or mistyped attribute is an {@link OrtException} whose message names the operator,
 * the node and the attribute; it fails the creation of the session.
 */
public final class KernelInfo {
    private final CustomOp op;
    private final MemorySegment info;
    private final String nodeName;
    private boolean valid = true;

    KernelInfo(CustomOp op, MemorySegment info) {
        this.op = op;
        this.info = info;
        this.nodeName = readNodeName(info);
    }

    /** The operator being instantiated. */
    public CustomOp op() {
        return op;
    }

    /** The graph node's name ("" when the node has none). */
    public String nodeName() {
        return nodeName;
    }

    /** Whether the node carries the attribute, of any kind. */
    public boolean hasAttribute(String name) {
        check();
        try (Arena arena = Arena.ofConfined()) {
            // probe with the int64 reader: it succeeds for an int, fails with "No attribute with
            // name" when the attribute is absent, and with a type mismatch for any other kind
            MemorySegment s = OrtApi.KernelInfoGetAttribute_int64.invoke(Api.Kernel.KernelInfoGetAttribute_int64,
                    info, CString.of(arena, name), arena.allocate(JAVA_LONG));
            return s.address() == 0 || !statusMessage(s).contains("No attribute with name");
        }
    }

    public long getInt(String name) {
        check();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_LONG);
            attributeCheck(OrtApi.KernelInfoGetAttribute_int64.invoke(Api.Kernel.KernelInfoGetAttribute_int64, info,
                    CString.of(arena, name), out), name, "int");
            return out.get(JAVA_LONG, 0);
        }
    }

    public long getInt(String name, long defaultValue) {
        return hasAttribute(name) ? getInt(name) : defaultValue;
    }

    public float getFloat(String name) {
        check();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_FLOAT);
            attributeCheck(OrtApi.KernelInfoGetAttribute_float.invoke(Api.Kernel.KernelInfoGetAttribute_float, info,
                    CString.of(arena, name), out), name, "float");
            return out.get(JAVA_FLOAT, 0);
        }
    }

    public float getFloat(String name, float defaultValue) {
        return hasAttribute(name) ? getFloat(name) : defaultValue;
    }

    public String getString(String name) {
        check();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment cname = CString.of(arena, name);
            MemorySegment size = arena.allocate(JAVA_LONG);
            attributeCheck(OrtApi.KernelInfoGetAttribute_string.invoke(Api.Kernel.KernelInfoGetAttribute_string, info,
                    cname, MemorySegment.NULL, size), name, "string");
            MemorySegment buf = arena.allocate(Math.max(1, size.get(JAVA_LONG, 0)));
            attributeCheck(OrtApi.KernelInfoGetAttribute_string.invoke(Api.Kernel.KernelInfoGetAttribute_string, info,
                    cname, buf, size), name, "string");
            return buf.getString(0);
        }
    }

    public long[] getInts(String name) {
        check();
        requireArray(name, "ints");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment cname = CString.of(arena, name);
            MemorySegment size = arena.allocate(JAVA_LONG);
            attributeCheck(OrtApi.KernelInfoGetAttributeArray_int64.invoke(Api.Kernel.KernelInfoGetAttributeArray_int64,
                    info, cname, MemorySegment.NULL, size), name, "ints");
            long n = size.get(JAVA_LONG, 0);
            MemorySegment buf = arena.allocate(JAVA_LONG, Math.max(1, n));
            attributeCheck(OrtApi.KernelInfoGetAttributeArray_int64.invoke(Api.Kernel.KernelInfoGetAttributeArray_int64,
                    info, cname, buf, size), name, "ints");
            if (n == 0 && arrayLength(name, true) > 0) { // no ints: read as floats, it has some
                throw invalidAttribute(name, "is floats, not ints");
            }
            return buf.asSlice(0, n * 8).toArray(JAVA_LONG);
        }
    }

    public float[] getFloats(String name) {
        check();
        requireArray(name, "floats");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment cname = CString.of(arena, name);
            MemorySegment size = arena.allocate(JAVA_LONG);
            attributeCheck(OrtApi.KernelInfoGetAttributeArray_float.invoke(Api.Kernel.KernelInfoGetAttributeArray_float,
                    info, cname, MemorySegment.NULL, size), name, "floats");
            long n = size.get(JAVA_LONG, 0);
            MemorySegment buf = arena.allocate(JAVA_FLOAT, Math.max(1, n));
            attributeCheck(OrtApi.KernelInfoGetAttributeArray_float.invoke(Api.Kernel.KernelInfoGetAttributeArray_float,
                    info, cname, buf, size), name, "floats");
            if (n == 0 && arrayLength(name, false) > 0) { // no floats: read as ints, it has some
                throw invalidAttribute(name, "is ints, not floats");
            }
            return buf.asSlice(0, n * 4).toArray(JAVA_FLOAT);
        }
    }

    /**
     * Throws when attribute {@code name} is a single int, float or string: ORT's array readers answer such
     * an attribute with an empty array, not an error, which would read a wrong attribute as "no values".
     */
    private void requireArray(String name, String wanted) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment cname = CString.of(arena, name);
            String scalar = succeeded(OrtApi.KernelInfoGetAttribute_int64.invoke(Api.Kernel.KernelInfoGetAttribute_int64, info,
                    cname, arena.allocate(JAVA_LONG))) ? "an int"
                    : succeeded(OrtApi.KernelInfoGetAttribute_float.invoke(Api.Kernel.KernelInfoGetAttribute_float, info, cname,
                            arena.allocate(JAVA_FLOAT))) ? "a float"
                    : succeeded(OrtApi.KernelInfoGetAttribute_string.invoke(Api.Kernel.KernelInfoGetAttribute_string, info, cname,
                            MemorySegment.NULL, arena.allocate(JAVA_LONG))) ? "a string" : null;
            if (scalar != null) {
                throw invalidAttribute(name, "is " + scalar + ", not " + wanted);
            }
        }
    }

    /** The length of array attribute {@code name} read as ints ({@code floats} false) or floats; 0 when it fails. */
    private long arrayLength(String name, boolean floats) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment size = arena.allocate(JAVA_LONG);
            MemorySegment status = floats
                    ? OrtApi.KernelInfoGetAttributeArray_float.invoke(Api.Kernel.KernelInfoGetAttributeArray_float, info,
                            CString.of(arena, name), MemorySegment.NULL, size)
                    : OrtApi.KernelInfoGetAttributeArray_int64.invoke(Api.Kernel.KernelInfoGetAttributeArray_int64, info,
                            CString.of(arena, name), MemorySegment.NULL, size);
            return succeeded(status) ? size.get(JAVA_LONG, 0) : 0;
        }
    }

    /** Whether {@code status} is OK (a failed one is released). */
    private static boolean succeeded(MemorySegment status) {
        if (status.address() == 0) {
            return true;
        }
        statusMessage(status);
        return false;
    }

    /** An {@link OrtErrorCode#ORT_INVALID_ARGUMENT} exception naming the operator and node. */
    public OrtException invalidAttribute(String name, String problem) {
        return new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, where() + ": attribute " + name + " " + problem);
    }

    /** "OpName (node 'x')" for messages. */
    public String where() {
        return op.name() + (nodeName.isEmpty() ? "" : " (node '" + nodeName + "')");
    }

    void invalidate() {
        valid = false;
    }

    private void check() {
        if (!valid) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, where()
                    + ": KernelInfo is only valid while the kernel is created; read attributes in the factory");
        }
    }

    private void attributeCheck(MemorySegment status, String name, String kind) {
        if (status.address() != 0) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, where() + ": cannot read attribute " + name
                    + " as " + kind + ": " + statusMessage(status));
        }
    }

    /** ORT's message of a failed status (which is released), without the exception's "[CODE] " prefix. */
    private static String statusMessage(MemorySegment status) {
        return Upcalls.rawMessage(Api.toException(status, null));
    }

    private static String readNodeName(MemorySegment info) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment size = arena.allocate(JAVA_LONG);
            MemorySegment s = OrtApi.KernelInfo_GetNodeName.invoke(Api.Kernel.KernelInfo_GetNodeName, info,
                    MemorySegment.NULL, size);
            if (s.address() != 0) {
                statusMessage(s);
                return "";
            }
            MemorySegment buf = arena.allocate(Math.max(1, size.get(JAVA_LONG, 0)));
            s = OrtApi.KernelInfo_GetNodeName.invoke(Api.Kernel.KernelInfo_GetNodeName, info, buf, size);
            if (s.address() != 0) {
                statusMessage(s);
                return "";
            }
            return buf.getString(0);
        }
    }
}
