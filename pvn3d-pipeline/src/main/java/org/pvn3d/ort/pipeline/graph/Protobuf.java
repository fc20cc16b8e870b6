package org.pvn3d.ort.pipeline.graph;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * The few pieces of the protobuf wire format that editing an ONNX model needs: walking a message's fields
 * and writing new ones. An ONNX file is a ModelProto; protobuf lets repeated fields of a message appear
 * anywhere and in any number of runs, so new nodes, inputs and outputs can be appended to a GraphProto's
 * bytes without decoding the rest (initializers stay untouched bytes, however big).
 */
final class Protobuf {
    static final int VARINT = 0;
    static final int FIXED64 = 1;
    static final int LENGTH_DELIMITED = 2;
    static final int FIXED32 = 5;

    private Protobuf() {
    }

    /** One field of a message: its number, wire type, and where its value lies in the message's bytes. */
    record Field(int number, int wireType, long varint, int tagStart, int start, int end) {
        byte[] bytes(byte[] message) {
            return java.util.Arrays.copyOfRange(message, start, end);
        }

        String string(byte[] message) {
            return new String(message, start, end - start, StandardCharsets.UTF_8);
        }
    }

    /** The fields of {@code message} in order; a malformed message is an {@link IllegalArgumentException}. */
    static List<Field> fields(byte[] message) {
        List<Field> out = new ArrayList<>();
        int[] pos = {0};
        while (pos[0] < message.length) {
            int fieldStart = pos[0];
            long key = varint(message, pos);
            int wire = (int) (key & 7);
            int number = (int) (key >>> 3);
            switch (wire) {
                case VARINT -> {
                    long v = varint(message, pos);
                    out.add(new Field(number, wire, v, fieldStart, fieldStart, pos[0]));
                }
                case FIXED64, FIXED32 -> {
                    int start = pos[0];
                    pos[0] += wire == FIXED64 ? 8 : 4;
                    require(pos[0] <= message.length, "a fixed-size field runs past the end");
                    out.add(new Field(number, wire, 0, fieldStart, start, pos[0]));
                }
                case LENGTH_DELIMITED -> {
                    long len = varint(message, pos);
                    require(len >= 0 && len <= message.length - pos[0], "a length-delimited field runs past the end");
                    int start = pos[0];
                    pos[0] += (int) len;
                    out.add(new Field(number, wire, 0, fieldStart, start, pos[0]));
                }
                default -> throw new IllegalArgumentException("not a protobuf message: wire type " + wire + " at byte " + fieldStart);
            }
        }
        return out;
    }

    /** The values of the length-delimited fields numbered {@code number}, as byte arrays. */
    static List<byte[]> messages(byte[] message, int number) {
        List<byte[]> out = new ArrayList<>();
        for (Field f : fields(message)) {
            if (f.number() == number && f.wireType() == LENGTH_DELIMITED) {
                out.add(f.bytes(message));
            }
        }
        return out;
    }

    /** The first string field numbered {@code number}, or null. */
    static String string(byte[] message, int number) {
        for (Field f : fields(message)) {
            if (f.number() == number && f.wireType() == LENGTH_DELIMITED) {
                return f.string(message);
            }
        }
        return null;
    }

    /** The last varint field numbered {@code number} (protobuf's rule for a repeated scalar), or {@code absent}. */
    static long varintField(byte[] message, int number, long absent) {
        long v = absent;
        for (Field f : fields(message)) {
            if (f.number() == number && f.wireType() == VARINT) {
                v = f.varint();
            }
        }
        return v;
    }

    private static long varint(byte[] b, int[] pos) {
        long v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            require(pos[0] < b.length, "a varint runs past the end");
            int x = b[pos[0]++] & 0xFF;
            v |= (long) (x & 0x7F) << shift;
            if ((x & 0x80) == 0) {
                return v;
            }
        }
        throw new IllegalArgumentException("not a protobuf message: a varint longer than 10 bytes");
    }

    private static void require(boolean ok, String what) {
        if (!ok) {
            throw new IllegalArgumentException("not a protobuf message: " + what);
        }
    }

    /** Builds a message field by field. */
    static final class Writer {
        private final ByteArrayOutputStream out = new ByteArrayOutputStream();

        Writer varint(int number, long value) {
            tag(number, VARINT);
            rawVarint(value);
            return this;
        }

        Writer fixed32Float(int number, float value) {
            tag(number, FIXED32);
            int bits = Float.floatToRawIntBits(value);
            for (int i = 0; i < 4; i++) {
                out.write((bits >>> (8 * i)) & 0xFF);
            }
            return this;
        }

        Writer bytes(int number, byte[] value) {
            tag(number, LENGTH_DELIMITED);
            rawVarint(value.length);
            out.writeBytes(value);
            return this;
        }

        Writer string(int number, String value) {
            return bytes(number, value.getBytes(StandardCharsets.UTF_8));
        }

        Writer message(int number, Consumer<Writer> body) {
            Writer inner = new Writer();
            body.accept(inner);
            return bytes(number, inner.toByteArray());
        }

        /** Copies bytes that already are encoded fields. */
        Writer raw(byte[] encodedFields, int start, int end) {
            out.write(encodedFields, start, end - start);
            return this;
        }

        byte[] toByteArray() {
            return out.toByteArray();
        }

        private void tag(int number, int wire) {
            rawVarint(((long) number << 3) | wire);
        }

        private void rawVarint(long v) {
            while ((v & ~0x7FL) != 0) {
                out.write((int) ((v & 0x7F) | 0x80));
                v >>>= 7;
            }
            out.write((int) v);
        }
    }
}
