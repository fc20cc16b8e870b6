package org.pvn3d.ort.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pvn3d.ort.OnnxTensorType;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;

/** PVT1 reading: a good file round-trips; every kind of damage is an OrtException naming the file and the fault. */
class PvtFileTest {
    /** Writes PVT1 the way exporter/pvn3d_export/pvt.py does, with every field settable for damage. */
    static final class Writer {
        private final ByteArrayOutputStream out = new ByteArrayOutputStream();

        Writer magic(String m) {
            out.writeBytes(m.getBytes(StandardCharsets.US_ASCII));
            return this;
        }

        Writer int32(int v) {
            out.writeBytes(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(v).array());
            return this;
        }

        Writer int64(long v) {
            out.writeBytes(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(v).array());
            return this;
        }

        Writer name(String n) {
            byte[] b = n.getBytes(StandardCharsets.UTF_8);
            return int32(b.length).raw(b);
        }

        Writer raw(byte[] b) {
            out.writeBytes(b);
            return this;
        }

        /** A float32 tensor of shape {@code [n]} holding 0, 1, 2, ... */
        Writer floats(String n, int count) {
            name(n).int32(OnnxTensorType.FLOAT.value()).int32(1).int64(count);
            ByteBuffer b = ByteBuffer.allocate(4 * count).order(ByteOrder.LITTLE_ENDIAN);
            for (int i = 0; i < count; i++) {
                b.putFloat(i);
            }
            return raw(b.array());
        }

        byte[] bytes() {
            return out.toByteArray();
        }
    }

    static Map<String, PvtFile.Entry> read(byte[] bytes) throws Exception {
        return PvtFile.read(new ByteArrayInputStream(bytes), "x.bin");
    }

    static String failure(byte[] bytes) {
        OrtException e = assertThrows(OrtException.class, () -> read(bytes));
        assertEquals(OrtErrorCode.ORT_INVALID_ARGUMENT, e.getCode());
        assertTrue(e.getMessage().contains("x.bin: "), e.getMessage());
        return e.getMessage();
    }

    static void assertMessage(String message, String... parts) {
        for (String p : parts) {
            assertTrue(message.contains(p), "'" + p + "' in: " + message);
        }
    }

    @Test
    void aGoodFileRoundTrips() throws Exception {
        byte[] good = new Writer().magic("PVT1").int32(2).floats("a", 3)
                .name("b").int32(OnnxTensorType.INT64.value()).int32(2).int64(1).int64(2).int64(7).int64(-8)
                .bytes();
        Map<String, PvtFile.Entry> m = read(good);
        assertEquals(java.util.List.of("a", "b"), java.util.List.copyOf(m.keySet()));
        assertArrayEquals(new float[] {0, 1, 2}, m.get("a").floats());
        assertArrayEquals(new long[] {1, 2}, m.get("b").shape());
        assertArrayEquals(new long[] {7, -8}, m.get("b").longs());
        // an empty tensor and a scalar
        Map<String, PvtFile.Entry> e = read(new Writer().magic("PVT1").int32(2)
                .name("empty").int32(OnnxTensorType.FLOAT.value()).int32(2).int64(0).int64(Long.MAX_VALUE)
                .name("scalar").int32(OnnxTensorType.INT64.value()).int32(0).int64(42).bytes());
        assertEquals(0, e.get("empty").data().length);
        assertArrayEquals(new long[] {42}, e.get("scalar").longs());
    }

    @Test
    void garbageAndTheWrongMagic() {
        assertMessage(failure(new byte[0]), "x.bin: empty, not a PVT1 file");
        assertMessage(failure(new byte[] {(byte) 0x9f, 0x3a, 0x00}), "not a PVT1 file (it starts with 9f 3a 00, not \"PVT1\")");
        assertMessage(failure("PK\u0003\u0004 a zip file".getBytes(StandardCharsets.ISO_8859_1)), "not a PVT1 file (it starts with 50 4b 03 04");
    }

    @Test
    void impossibleCountsNeverAllocate() {
        assertMessage(failure(new Writer().magic("PVT1").bytes()), "truncated: the file ends where the tensor count should be");
        assertMessage(failure(new Writer().magic("PVT1").int32(-7).bytes()), "negative tensor count -7");
        assertMessage(failure(new Writer().magic("PVT1").int32(Integer.MAX_VALUE).floats("a", 1).bytes()),
                "the header says 2147483647 tensors, but only 25 bytes follow");
        assertMessage(failure(new Writer().magic("PVT1").int32(1).int32(-3).raw(new byte[8]).bytes()), "entry 1 of 1: negative name length -3");
        assertMessage(failure(new Writer().magic("PVT1").int32(1).int32(Integer.MAX_VALUE).raw(new byte[12]).bytes()),
                "entry 1 of 1: truncated: the name needs 2147483647 bytes, 12 are left");
        assertMessage(failure(new Writer().magic("PVT1").int32(1).name("a").int32(1).int32(-1).bytes()), "entry 1 of 1 ('a'): negative rank -1");
        assertMessage(failure(new Writer().magic("PVT1").int32(1).name("a").int32(1).int32(1_000_000).bytes()),
                "('a'): truncated: rank 1000000 needs 8000000 bytes of dimensions, 0 are left");
        assertMessage(failure(new Writer().magic("PVT1").int32(1).name("a").int32(1).int32(2).int64(3).int64(-4).bytes()),
                "('a'): dimension 1 is negative (-4)");
        assertMessage(failure(new Writer().magic("PVT1").int32(1).name("a").int32(1).int32(2).int64(1L << 20).int64(1L << 20).bytes()),
                "('a'): shape [1048576, 1048576] of FLOAT is larger than a PVT1 file can hold");
    }

    @Test
    void typesNamesAndEndings() {
        assertMessage(failure(new Writer().magic("PVT1").int32(1).name("a").int32(99).int32(0).bytes()),
                "entry 1 of 1 ('a'): unknown element type code 99");
        assertMessage(failure(new Writer().magic("PVT1").int32(1).name("s").int32(OnnxTensorType.STRING.value()).int32(0).bytes()),
                "('s'): element type STRING has no fixed size");
        assertMessage(failure(new Writer().magic("PVT1").int32(1).int32(2).raw(new byte[] {(byte) 0xc3, 0x28}).int32(1).int32(0).raw(new byte[4]).bytes()),
                "entry 1 of 1: the name (2 bytes) is not UTF-8");
        assertMessage(failure(new Writer().magic("PVT1").int32(2).floats("a", 1).floats("a", 1).bytes()),
                "entry 2 of 2 ('a'): a second tensor with this name");
        assertMessage(failure(new Writer().magic("PVT1").int32(1).floats("a", 2).raw(new byte[] {1, 2, 3}).bytes()),
                "x.bin: 3 unexpected bytes after its last tensor");
    }

    @Test
    void anEntryMadeInJavaMustHoldItsShapesBytes() {
        OrtException e = assertThrows(OrtException.class,
                () -> new PvtFile.Entry("cld_rgb_nrm", OnnxTensorType.FLOAT, new long[] {1, 1024, 9}, new byte[8]));
        assertEquals("[ORT_INVALID_ARGUMENT] PVT1 entry 'cld_rgb_nrm': FLOAT [1, 1024, 9] needs 36864 bytes, the data has 8",
                e.getMessage());
        e = assertThrows(OrtException.class, () -> new PvtFile.Entry("a", OnnxTensorType.FLOAT, new long[] {-1}, new byte[0]));
        assertTrue(e.getMessage().contains("negative dimension"), e.getMessage());
        e = assertThrows(OrtException.class,
                () -> new PvtFile.Entry("a", OnnxTensorType.FLOAT, new long[] {1L << 40, 1L << 40}, new byte[0]));
        assertTrue(e.getMessage().contains("needs more than 2^63 bytes"), e.getMessage());
        assertArrayEquals(new float[] {1.5f}, new PvtFile.Entry("a", OnnxTensorType.FLOAT, new long[] {1},
                new byte[] {0, 0, (byte) 0xc0, 0x3f}).floats());
    }

    @Test
    void everyTruncationOfAGoodFileFailsCleanly() throws Exception {
        byte[] good = new Writer().magic("PVT1").int32(2).floats("points", 6).floats("b", 2).bytes();
        read(good);
        for (int n = 0; n < good.length; n++) {
            String m = failure(Arrays.copyOf(good, n));
            assertTrue(n < 4 || m.contains("truncated") || m.contains("tensors, but only"), n + ": " + m);
        }
        assertMessage(failure(Arrays.copyOf(good, good.length - 1)), "entry 2 of 2 ('b'): truncated: its data FLOAT [2] needs 8 bytes, 7 are left");
    }

    @Test
    void filesByPath(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("sample.bin");
        Files.write(f, new Writer().magic("PVT1").int32(1).floats("a", 4).bytes());
        assertEquals(4, PvtFile.read(f).get("a").floats().length);
        Files.write(f, new byte[] {'P', 'V', 'T', '1', 5, 0, 0});
        OrtException t = assertThrows(OrtException.class, () -> PvtFile.read(f));
        assertMessage(t.getMessage(), f + ": truncated: the file ends where the tensor count should be (3 bytes left)");
        OrtException missing = assertThrows(OrtException.class, () -> PvtFile.read(dir.resolve("none.bin")));
        assertEquals(OrtErrorCode.ORT_NO_SUCHFILE, missing.getCode());
        assertMessage(missing.getMessage(), dir.resolve("none.bin") + ": no such file");
        assertMessage(assertThrows(OrtException.class, () -> PvtFile.read(dir)).getMessage(), dir + ": a folder, not a PVT1 file");
    }
}
