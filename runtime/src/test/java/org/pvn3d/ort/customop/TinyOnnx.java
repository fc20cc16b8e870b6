package org.pvn3d.ort.customop;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/** A minimal ONNX protobuf writer for test models whose custom node carries attributes of every kind. */
final class TinyOnnx {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();

    static TinyOnnx msg() {
        return new TinyOnnx();
    }

    byte[] bytes() {
        return out.toByteArray();
    }

    private void varint(long v) {
        while ((v & ~0x7FL) != 0) {
            out.write((int) ((v & 0x7F) | 0x80));
            v >>>= 7;
        }
        out.write((int) v);
    }

    TinyOnnx i(int field, long v) {
        varint((long) field << 3);
        varint(v);
        return this;
    }

    TinyOnnx f(int field, float v) {
        varint(((long) field << 3) | 5);
        int b = Float.floatToRawIntBits(v);
        for (int k = 0; k < 4; k++) {
            out.write((b >>> (8 * k)) & 0xff);
        }
        return this;
    }

    TinyOnnx b(int field, byte[] v) {
        varint(((long) field << 3) | 2);
        varint(v.length);
        out.writeBytes(v);
        return this;
    }

    TinyOnnx s(int field, String v) {
        return b(field, v.getBytes(StandardCharsets.UTF_8));
    }

    TinyOnnx m(int field, TinyOnnx v) {
        return b(field, v.bytes());
    }

    /** A float tensor value info with symbolic dims. */
    static TinyOnnx valueInfo(String name, int elemType, String... dims) {
        TinyOnnx shape = msg();
        for (String d : dims) {
            shape.m(1, msg().s(2, d));
        }
        return msg().s(1, name).m(2, msg().m(1, msg().i(1, elemType).m(2, shape)));
    }

    /** A model with one node (given) from input x to output y, opsets for "" and {@code domain}. */
    static byte[] model(TinyOnnx node, String domain, TinyOnnx... extraOutputs) {
        TinyOnnx graph = msg().m(1, node).s(2, "g").m(11, valueInfo("x", 1, "n")).m(12, valueInfo("y", 1, "n"));
        for (TinyOnnx o : extraOutputs) {
            graph.m(12, o);
        }
        return msg().i(1, 8).s(2, "hostile").m(8, msg().s(1, "").i(2, 17)).m(8, msg().s(1, domain).i(2, 1)).m(7, graph).bytes();
    }

    static TinyOnnx attrFloat(String name, float v) {
        return msg().s(1, name).f(2, v).i(20, 1);
    }

    static TinyOnnx attrInt(String name, long v) {
        return msg().s(1, name).i(3, v).i(20, 2);
    }

    static TinyOnnx attrString(String name, String v) {
        return msg().s(1, name).s(4, v).i(20, 3);
    }

    static TinyOnnx attrInts(String name, long... v) {
        TinyOnnx a = msg().s(1, name);
        for (long x : v) {
            a.i(8, x);
        }
        return a.i(20, 7);
    }

    static TinyOnnx attrFloats(String name, float... v) {
        TinyOnnx a = msg().s(1, name);
        for (float x : v) {
            a.f(7, x);
        }
        return a.i(20, 6);
    }
}
