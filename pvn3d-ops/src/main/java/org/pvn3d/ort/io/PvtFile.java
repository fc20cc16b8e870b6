package org.pvn3d.ort.io;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
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

    /** One tensor of a PVT1 file, held as little-endian bytes. */
    public record Entry(String name, OnnxTensorType type, long[] shape, byte[] data) {
        public long elementCount() {
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

    public static Map<String, Entry> read(Path path) {
        try (InputStream in = Files.newInputStream(path)) {
            return read(in, path.toString());
        } catch (IOException e) {
            throw new OrtException(OrtErrorCode.ORT_NO_SUCHFILE, "cannot read " + path + ": " + e, e);
        }
    }

    /** Reads a whole PVT1 stream; {@code source} names it in error messages. */
    public static Map<String, Entry> read(InputStream in, String source) throws IOException {
        ByteBuffer buf = ByteBuffer.wrap(in.readAllBytes()).order(ByteOrder.LITTLE_ENDIAN);
        try {
            byte[] magic = new byte[4];
            buf.get(magic);
            if (!Arrays.equals(magic, MAGIC)) {
                throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, source + " is not a PVT1 file");
            }
            int count = buf.getInt();
            Map<String, Entry> out = new LinkedHashMap<>();
            for (int i = 0; i < count; i++) {
                byte[] name = new byte[buf.getInt()];
                buf.get(name);
                OnnxTensorType type = OnnxTensorType.of(buf.getInt());
                int rank = buf.getInt();
                long[] shape = new long[rank];
                long n = 1;
                for (int d = 0; d < rank; d++) {
                    shape[d] = buf.getLong();
                    n = Math.multiplyExact(n, shape[d]);
                }
                if (type.byteSize() == 0) {
                    throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, source + ": unsupported element type " + type);
                }
                byte[] data = new byte[Math.toIntExact(n * type.byteSize())];
                buf.get(data);
                String key = new String(name, StandardCharsets.UTF_8);
                out.put(key, new Entry(key, type, shape, data));
            }
            return Collections.unmodifiableMap(out);
        } catch (java.nio.BufferUnderflowException e) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, source + " is truncated", e);
        }
    }
}
