package org.pvn3d.ort.io;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import org.pvn3d.ort.OnnxTensor;
import org.pvn3d.ort.OnnxTensorType;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;

/**
 * PVT1, the project's tiny tensor container (written by exporter/pvn3d_export/pvt.py): magic "PVT1",
 * an int32 count, then per tensor an int32 name length, the UTF-8 name, an int32 ONNX element type,
 * an int32 rank, int64 dimensions and the raw row-major data; everything little-endian, no padding.
 */
public final class PvtFile {
    private static final byte[] MAGIC = "PVT1".getBytes(StandardCharsets.US_ASCII);
    /** The largest file or entry read: a Java array's limit. */
    private static final long MAX_BYTES = Integer.MAX_VALUE - 8;

    /** One tensor of a PVT1 file, held as little-endian bytes. */
    public record Entry(String name, OnnxTensorType type, long[] shape, byte[] data) {
        /** Checks that {@code data} holds exactly the bytes of {@code shape}'s elements of {@code type}. */
        public Entry {
            java.util.Objects.requireNonNull(name, "entry name is null");
            java.util.Objects.requireNonNull(type, "entry type is null");
            java.util.Objects.requireNonNull(shape, "entry shape is null");
            java.util.Objects.requireNonNull(data, "entry data is null");
            for (long d : shape) {
                if (d < 0) {
                    throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "PVT1 entry '" + name + "': negative dimension in "
                            + Arrays.toString(shape));
                }
            }
            long count;
            try {
                count = Math.multiplyExact(product(shape), type.byteSize());
            } catch (ArithmeticException e) {
                count = -1;
            }
            if (type.byteSize() > 0 && count != data.length) {
                throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "PVT1 entry '" + name + "': " + type + " "
                        + Arrays.toString(shape) + " needs " + (count < 0 ? "more than 2^63" : String.valueOf(count))
                        + " bytes, the data has " + data.length);
            }
        }

        public long elementCount() {
            return product(shape);
        }

        /** The product of the dimensions: 0 when one is 0, whatever the others (ArithmeticException past 2^63). */
        private static long product(long[] shape) {
            for (long d : shape) {
                if (d == 0) {
                    return 0;
                }
            }
            return Arrays.stream(shape).reduce(1, Math::multiplyExact);
        }

        public float[] floats() {
            expect(OnnxTensorType.FLOAT);
            float[] out = new float[Math.toIntExact(elementCount())];
            ByteBuffer.wrap(data).order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(out);
            return out;
        }

        public long[] longs() {
            expect(OnnxTensorType.INT64);
            long[] out = new long[Math.toIntExact(elementCount())];
            ByteBuffer.wrap(data).order(ByteOrder.LITTLE_ENDIAN).asLongBuffer().get(out);
            return out;
        }

        /** A host tensor holding a copy of this entry. */
        public OnnxTensor toTensor() {
            return switch (type) {
                case FLOAT -> OnnxTensor.createTensor(floats(), shape);
                case INT64 -> OnnxTensor.createTensor(longs(), shape);
                default -> {
                    byte[] nativeOrder = data;
                    if (type.byteSize() > 1 && ByteOrder.nativeOrder() != ByteOrder.LITTLE_ENDIAN) {
                        throw new OrtException(OrtErrorCode.ORT_NOT_IMPLEMENTED, "big-endian hosts read only float/int64 entries");
                    }
                    Object array = switch (type.byteSize()) {
                        case 1 -> nativeOrder;
                        case 4 -> {
                            int[] ints = new int[nativeOrder.length / 4];
                            ByteBuffer.wrap(nativeOrder).order(ByteOrder.LITTLE_ENDIAN).asIntBuffer().get(ints);
                            yield ints;
                        }
                        case 8 -> {
                            double[] doubles = new double[nativeOrder.length / 8];
                            ByteBuffer.wrap(nativeOrder).order(ByteOrder.LITTLE_ENDIAN).asDoubleBuffer().get(doubles);
                            yield doubles;
                        }
                        default -> throw new OrtException(OrtErrorCode.ORT_NOT_IMPLEMENTED, "PVT1 entry of type " + type);
                    };
                    yield OnnxTensor.createTensor(type, array, shape);
                }
            };
        }

        private void expect(OnnxTensorType wanted) {
            if (type != wanted) {
                throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "PVT1 entry '" + name + "' holds " + type + ", not " + wanted);
            }
        }
    }

    private PvtFile() {}

    /**
     * Reads a PVT1 file. A missing or unreadable file, and every way the content can be wrong (see
     * {@link #read(InputStream, String)}), throw an {@link OrtException} whose message starts with the path.
     */
    public static Map<String, Entry> read(Path path) {
        try {
            if (Files.isDirectory(path)) {
                throw new OrtException(OrtErrorCode.ORT_NO_SUCHFILE, path + ": a folder, not a PVT1 file");
            }
            if (Files.exists(path) && !Files.isRegularFile(path)) {
                // a device or a pipe: Files.size says 0, and /dev/zero would be read until the heap ran out
                throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, path + ": not a regular file (a device or a pipe);"
                        + " read a stream with read(InputStream, String)");
            }
            long size = Files.size(path);
            if (size > MAX_BYTES) {
                throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, path + ": " + size
                        + " bytes, more than a PVT1 file can hold here (" + MAX_BYTES + ")");
            }
            try (InputStream in = Files.newInputStream(path)) {
                return read(in, path.toString());
            }
        } catch (NoSuchFileException e) {
            throw new OrtException(OrtErrorCode.ORT_NO_SUCHFILE, path + ": no such file", e);
        } catch (IOException e) {
            throw new OrtException(OrtErrorCode.ORT_NO_SUCHFILE, path + ": cannot read it (" + e.getMessage() + ")", e);
        }
    }

    /**
     * Reads a whole PVT1 stream; {@code source} names it in error messages. A stream that is not PVT1
     * (wrong magic), a negative or impossible count, rank, name length or dimension, an element type
     * that is unknown or has no fixed size, a duplicate name, an entry cut short, or bytes after the last
     * entry throw an {@link OrtException} ({@link OrtErrorCode#ORT_INVALID_ARGUMENT}) that says which
     * entry and what is wrong, e.g. "x.bin: entry 2 of 5 ('rgb'): truncated: its data FLOAT [1, 3, 8, 8] needs 768
     * bytes, 512 are left". Nothing is allocated beyond what the stream actually holds.
     */
    public static Map<String, Entry> read(InputStream in, String source) throws IOException {
        return new Reader(in.readAllBytes(), source).read();
    }

    /** A bounds-checked cursor over the bytes of one stream. */
    private static final class Reader {
        private final ByteBuffer buf;
        private final String source;
        private String where = "";

        Reader(byte[] bytes, String source) {
            this.buf = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
            this.source = source;
        }

        Map<String, Entry> read() {
            if (!buf.hasRemaining()) {
                throw fail("empty, not a PVT1 file");
            }
            if (buf.remaining() < MAGIC.length || !Arrays.equals(Arrays.copyOf(buf.array(), MAGIC.length), MAGIC)) {
                throw fail("not a PVT1 file (it starts with " + head() + ", not \"PVT1\")");
            }
            buf.position(MAGIC.length);
            int count = int32("the tensor count");
            if (count < 0) {
                throw fail("negative tensor count " + count);
            }
            // an entry takes at least 12 bytes (name length, type, rank): refuse impossible counts before reading on
            if (count > buf.remaining() / 12) {
                throw fail("the header says " + count + (count == 1 ? " tensor" : " tensors") + ", but only " + buf.remaining()
                        + " bytes follow (at least 12 per tensor): corrupt or truncated");
            }
            Map<String, Entry> out = new LinkedHashMap<>();
            for (int i = 0; i < count; i++) {
                where = "entry " + (i + 1) + " of " + count + ": ";
                int nameLength = int32("the name length");
                if (nameLength < 0) {
                    throw fail("negative name length " + nameLength);
                }
                String name = utf8(bytes(nameLength, "the name"));
                where = "entry " + (i + 1) + " of " + count + " ('" + name + "'): ";
                if (out.containsKey(name)) {
                    throw fail("a second tensor with this name");
                }
                int code = int32("the element type");
                OnnxTensorType type = OnnxTensorType.of(code);
                if (type == OnnxTensorType.UNDEFINED) {
                    throw fail("unknown element type code " + code + " (PVT1 uses ONNX's codes: 1 float, 7 int64, ...)");
                }
                if (type.byteSize() == 0) {
                    throw fail("element type " + type + " has no fixed size and cannot be stored in PVT1");
                }
                int rank = int32("the rank");
                if (rank < 0) {
                    throw fail("negative rank " + rank);
                }
                if (rank > buf.remaining() / Long.BYTES) {
                    throw fail("truncated: rank " + rank + " needs " + (long) rank * Long.BYTES + " bytes of dimensions, "
                            + buf.remaining() + " are left");
                }
                long[] shape = new long[rank];
                boolean empty = false;
                for (int d = 0; d < rank; d++) {
                    shape[d] = buf.getLong();
                    if (shape[d] < 0) {
                        throw fail("dimension " + d + " is negative (" + shape[d] + ")");
                    }
                    empty |= shape[d] == 0;
                }
                long bytes = empty ? 0 : type.byteSize(); // an empty tensor holds no bytes, whatever its other dimensions
                for (int d = 0; d < rank && !empty; d++) {
                    if (bytes > MAX_BYTES / shape[d]) {
                        throw fail("shape " + Arrays.toString(Arrays.copyOf(shape, d + 1)) + (d + 1 < rank ? "..." : "")
                                + " of " + type + " is larger than a PVT1 file can hold");
                    }
                    bytes *= shape[d];
                }
                byte[] data = bytes((int) bytes, "its data " + type + " " + Arrays.toString(shape));
                out.put(name, new Entry(name, type, shape, data));
            }
            where = "";
            if (buf.hasRemaining()) {
                throw fail(buf.remaining() + " unexpected bytes after its last tensor");
            }
            return Collections.unmodifiableMap(out);
        }

        private int int32(String what) {
            if (buf.remaining() < Integer.BYTES) {
                throw fail("truncated: the file ends where " + what + " should be (" + buf.remaining() + " bytes left)");
            }
            return buf.getInt();
        }

        private byte[] bytes(int n, String what) {
            if (n > buf.remaining()) {
                throw fail("truncated: " + what + " needs " + n + " bytes, " + buf.remaining() + " are left");
            }
            byte[] out = new byte[n];
            buf.get(out);
            return out;
        }

        private String utf8(byte[] bytes) {
            try {
                return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                        .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes)).toString();
            } catch (CharacterCodingException e) {
                throw fail("the name (" + bytes.length + " bytes) is not UTF-8");
            }
        }

        /** The first bytes in hex, for "not a PVT1 file". */
        private String head() {
            int n = Math.min(4, buf.limit());
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < n; i++) {
                sb.append(i == 0 ? "" : " ").append(String.format("%02x", buf.get(i) & 0xff));
            }
            return sb.toString();
        }

        private OrtException fail(String what) {
            return new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, source + ": " + where + what);
        }
    }
}
