package org.pvn3d.ort.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.pvn3d.ort.OnnxTensorType;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;

/** PVT1 input at the edges: a stream that never ends, empty tensors with huge other dimensions. */
class PvtFileEdgeCasesTest {
    /** A character device reports size 0, so the size check passes: refused as what it is, not read until the heap runs out. */
    @Test
    void aDeviceThatNeverEndsIsRefusedNotReadUntilOutOfMemory() {
        OrtException e = assertThrows(OrtException.class, () -> PvtFile.read(Path.of("/dev/zero")));
        assertEquals(OrtErrorCode.ORT_INVALID_ARGUMENT, e.getCode());
        assertTrue(e.getMessage().endsWith("not a regular file (a device or a pipe); read a stream with read(InputStream, String)"),
                e.getMessage());
    }

    static byte[] file(long[] shape) {
        ByteBuffer b = ByteBuffer.allocate(64 + 8 * shape.length).order(ByteOrder.LITTLE_ENDIAN);
        b.put("PVT1".getBytes()).putInt(1).putInt(1).put((byte) 'x').putInt(1).putInt(shape.length);
        for (long d : shape) {
            b.putLong(d);
        }
        byte[] out = new byte[b.position()];
        b.flip().get(out);
        return out;
    }

    /** An empty tensor whose other dimensions are huge holds no bytes, whatever the order of its dimensions. */
    @Test
    void anEmptyTensorIsReadWhateverTheOrderOfItsDims() throws Exception {
        for (long[] shape : new long[][] {{0, 1L << 40}, {1L << 40, 0}, {1L << 40, 1L << 40, 0}}) {
            Map<String, PvtFile.Entry> m = PvtFile.read(new ByteArrayInputStream(file(shape)), "a");
            assertArrayEquals(shape, m.get("x").shape());
            assertEquals(0, m.get("x").data().length);
        }
    }
}
