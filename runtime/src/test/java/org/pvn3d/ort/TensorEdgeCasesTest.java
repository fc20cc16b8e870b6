package org.pvn3d.ort;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tensors and options at the edges on the CPU provider: NUL in strings, unaligned memory, more elements than a
 * Java array holds, zero-sized and rank-0 tensors, the terminate flag, long and NUL-holding option strings,
 * results after close, IO binding of the rarer element types.
 */
class TensorEdgeCasesTest {
    static OrtSession identity(String type) {
        return OrtEnvironment.getEnvironment().createSession(TestModels.model("identity_" + type + ".onnx"));
    }

    /** ORT takes each element as a C string: "a\0b" came back as "a", silently. */
    @Test
    void aStringWithNulIsRefused() {
        OrtException e = assertThrows(OrtException.class, () -> OnnxTensor.createStringTensor(new String[] {"c", "a\0b"}, 1, 2));
        assertEquals(OrtErrorCode.ORT_INVALID_ARGUMENT, e.getCode());
        assertTrue(e.getMessage().contains("element 1 holds a NUL character (at 1)"), e.getMessage());
        try (OrtSession s = identity("string"); OnnxTensor in = OnnxTensor.createStringTensor(new String[] {"a", "b"}, 1, 2);
                Result r = s.run(Map.of("input", in))) {
            assertArrayEquals(new String[] {"a", "b"}, r.tensor("output").getStringArray());
        }
    }

    /** Memory not aligned to the element size is refused where the tensor is made (a read threw IllegalArgumentException). */
    @Test
    void unalignedMemoryIsRefused() {
        try (Arena arena = Arena.ofConfined(); OrtMemoryInfo cpu = OrtMemoryInfo.cpu()) {
            MemorySegment seg = arena.allocate(4L * 6 + 1, 8).asSlice(1);
            for (OrtException e : new OrtException[] {
                    assertThrows(OrtException.class, () -> OnnxTensor.fromSegment(seg, OnnxTensorType.FLOAT, 2, 3)),
                    assertThrows(OrtException.class, () -> OnnxTensor.createTensor(cpu, seg, OnnxTensorType.FLOAT, 2, 3))}) {
                assertEquals(OrtErrorCode.ORT_INVALID_ARGUMENT, e.getCode());
                assertTrue(e.getMessage().contains("is not aligned to the 4-byte elements"), e.getMessage());
            }
            try (OnnxTensor bytes = OnnxTensor.fromSegment(seg, OnnxTensorType.INT8, 5)) { // 1-byte elements: any address
                assertEquals(5, bytes.getByteArray().length);
            }
        }
    }

    @Test
    void zeroSizedAndScalarTensors() {
        try (OrtSession s = identity("float")) {
            try (OnnxTensor in = OnnxTensor.createTensor(new float[0], 0, 3); Result r = s.run(Map.of("input", in))) {
                assertArrayEquals(new long[] {0, 3}, r.tensor("output").getShape());
                assertEquals(0, r.tensor("output").getFloatArray().length);
            }
            try (OnnxTensor in = OnnxTensor.createTensor(new float[0], 5, 0); Result r = s.run(Map.of("input", in))) {
                assertArrayEquals(new long[] {5, 0}, r.tensor("output").getShape());
            }
            // a rank-0 tensor where rank 2 is declared: a clear error, the session stays usable
            try (OnnxTensor in = OnnxTensor.createTensor(new float[] {7})) {
                OrtException e = assertThrows(OrtException.class, () -> s.run(Map.of("input", in)));
                assertTrue(e.getMessage().length() > 10);
            }
            try (OnnxTensor in = OnnxTensor.createTensor(new float[] {1, 2}, 1, 2); Result r = s.run(Map.of("input", in))) {
                assertArrayEquals(new float[] {1, 2}, r.tensor("output").getFloatArray());
            }
        }
    }

    /** More elements than a Java array holds: the getters say to read through data() (they threw IllegalStateException). */
    @Test
    void aTensorLargerThanAJavaArrayIsRefusedByTheGetters(@TempDir Path dir) throws Exception {
        long n = (1L << 31) + 8;
        // a sparse file mapped: 2 GB of address space, no memory used unless read
        try (FileChannel ch = FileChannel.open(dir.resolve("big"), StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                StandardOpenOption.WRITE, StandardOpenOption.SPARSE); Arena arena = Arena.ofConfined()) {
            MemorySegment big = ch.map(FileChannel.MapMode.READ_WRITE, 0, n, arena);
            try (OnnxTensor t = OnnxTensor.fromSegment(big, OnnxTensorType.INT8, n)) {
                OrtException e = assertThrows(OrtException.class, t::getByteArray);
                assertEquals(OrtErrorCode.ORT_INVALID_ARGUMENT, e.getCode());
                assertTrue(e.getMessage().contains(n + " elements, more than a Java array holds"), e.getMessage());
                assertEquals(n, t.data().byteSize());
            }
        }
    }

    @Test
    void terminateFlagFailsRunAndUnsetRecovers() {
        try (OrtSession s = identity("float"); RunOptions ro = new RunOptions();
                OnnxTensor in = OnnxTensor.createTensor(new float[] {1, 2}, 1, 2)) {
            ro.setTerminate();
            assertThrows(OrtException.class, () -> s.run(Map.of("input", in), Set.of("output"), ro));
            ro.unsetTerminate();
            try (Result r = s.run(Map.of("input", in), Set.of("output"), ro)) {
                assertArrayEquals(new float[] {1, 2}, r.tensor("output").getFloatArray());
            }
        }
    }

    @Test
    void runOptionsStrings() {
        try (RunOptions ro = new RunOptions()) {
            assertThrows(OrtException.class, () -> ro.setRunTag("a\0b"));
            assertThrows(OrtException.class, () -> ro.addRunConfigEntry("k\0", "v"));
            ro.setRunTag("t".repeat(1 << 20));
            ro.addRunConfigEntry("k".repeat(128), "v".repeat(2048));
            assertEquals(1 << 20, ro.getRunTag().length());
        }
        try (SessionOptions so = new SessionOptions()) {
            assertThrows(OrtException.class, () -> so.addConfigEntry("a\0", "b"));
            so.addConfigEntry("x", "1").addConfigEntry("y", "2").addConfigEntry("x", "3");
            assertEquals(Map.of("x", "3", "y", "2"), so.getConfigEntries());
            assertEquals("x", so.getConfigEntries().keySet().iterator().next());
            so.close();
            assertThrows(OrtException.class, () -> so.addConfigEntry("z", "1"));
            so.getConfigEntries();
        }
    }

    @Test
    void resultAfterClose() {
        try (OrtSession s = identity("float"); OnnxTensor in = OnnxTensor.createTensor(new float[] {1, 2}, 1, 2)) {
            Result r = s.run(Map.of("input", in));
            OnnxTensor out = r.tensor("output");
            r.close();
            r.close();
            assertThrows(OrtException.class, out::getFloatArray);
            assertThrows(OrtException.class, out::data);
            assertThrows(OrtException.class, out::getMemoryInfo);
        }
    }

    @Test
    void ioBindingOddTypes() {
        try (OrtSession s = identity("string"); OrtIoBinding b = s.createIoBinding();
                OnnxTensor in = OnnxTensor.createStringTensor(new String[] {"x", "", "日本"}, 1, 3)) {
            b.bindInput("input", in);
            try (OrtMemoryInfo cpu = OrtMemoryInfo.cpu()) {
                b.bindOutput("output", cpu);
            }
            s.run(b);
            try (Result r = b.getOutputs()) {
                assertArrayEquals(new String[] {"x", "", "日本"}, r.tensor("output").getStringArray());
            }
        }
        for (String type : new String[] {"bool", "float16", "bfloat16", "uint64"}) {
            try (OrtSession s = identity(type); OrtIoBinding b = s.createIoBinding()) {
                OnnxTensorType t = s.getInputInfo().get("input").tensorInfo().getType();
                Object data = switch (t) {
                    case BOOL -> new byte[] {1, 0};
                    case FLOAT16, BFLOAT16 -> new short[] {0x3c00, (short) 0xffff};
                    default -> new long[] {-1, 5};
                };
                try (OnnxTensor in = OnnxTensor.createTensor(t, data, 1, 2); OnnxTensor out = OnnxTensor.allocate(t, 1, 2)) {
                    b.bindInput("input", in);
                    b.bindOutput("output", out);
                    s.run(b);
                    switch (data) {
                        case byte[] x -> assertArrayEquals(x, out.getByteArray());
                        case short[] x -> assertArrayEquals(x, out.getShortArray());
                        case long[] x -> assertArrayEquals(x, out.getLongArray());
                        default -> throw new AssertionError();
                    }
                    try (OnnxTensor wrong = OnnxTensor.allocate(t, 2, 2)) {
                        b.bindOutput("output", wrong);
                        assertThrows(OrtException.class, () -> s.run(b));
                    }
                }
            }
        }
    }
}
