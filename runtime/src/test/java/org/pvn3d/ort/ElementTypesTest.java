package org.pvn3d.ort;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Every element type through an Identity model: what goes in comes out, bit for bit. */
class ElementTypesTest {
    static final long[] SHAPE = {2, 3};

    static OrtSession identity(String type) {
        return OrtEnvironment.getEnvironment().createSession(TestModels.model("identity_" + type + ".onnx"));
    }

    static OnnxTensor roundTrip(String type, OnnxTensor input, OnnxTensorType expected) {
        try (OrtSession s = identity(type); Result r = s.run(Map.of("input", input))) {
            assertEquals(expected, s.getInputInfo().get("input").tensorInfo().getType());
            assertArrayEquals(new String[] {"rows", "cols"}, s.getInputInfo().get("input").tensorInfo().getDimensionNames());
            OnnxTensor out = (OnnxTensor) r.take("output");
            assertEquals(expected, out.getType());
            assertArrayEquals(SHAPE, out.getShape());
            return out;
        }
    }

    @ParameterizedTest
    @EnumSource(value = OnnxTensorType.class, names = {"FLOAT", "DOUBLE", "INT8", "UINT8", "INT16", "UINT16",
            "INT32", "UINT32", "INT64", "UINT64", "BOOL", "FLOAT16", "BFLOAT16"})
    void numericTypesRoundTrip(OnnxTensorType type) {
        Object data = switch (type) {
            case FLOAT -> new float[] {1.5f, -2, Float.MAX_VALUE, Float.MIN_VALUE, Float.NaN, -0f};
            case DOUBLE -> new double[] {1.5, -2, Double.MAX_VALUE, Double.MIN_VALUE, Math.PI, -0.0};
            case INT8, UINT8, BOOL -> type == OnnxTensorType.BOOL ? new byte[] {0, 1, 1, 0, 1, 0}
                    : new byte[] {0, 1, -1, 127, -128, 42};
            case INT16, UINT16, FLOAT16, BFLOAT16 -> new short[] {0, 1, -1, Short.MAX_VALUE, Short.MIN_VALUE, 0x3c00};
            case INT32, UINT32 -> new int[] {0, 1, -1, Integer.MAX_VALUE, Integer.MIN_VALUE, 123456};
            case INT64, UINT64 -> new long[] {0, 1, -1, Long.MAX_VALUE, Long.MIN_VALUE, 1L << 40};
            default -> throw new AssertionError(type);
        };
        try (OnnxTensor in = OnnxTensor.createTensor(type, data, SHAPE);
                OnnxTensor out = roundTrip(type.name().toLowerCase(), in, type)) {
            switch (data) {
                case float[] f -> assertArrayEquals(f, out.getFloatArray());
                case double[] d -> assertArrayEquals(d, out.getDoubleArray());
                case byte[] b -> assertArrayEquals(b, out.getByteArray());
                case short[] s -> assertArrayEquals(s, out.getShortArray());
                case int[] i -> assertArrayEquals(i, out.getIntArray());
                case long[] l -> assertArrayEquals(l, out.getLongArray());
                default -> throw new AssertionError();
            }
        }
    }

    @Test
    void typedConveniencesRoundTrip() {
        try (OnnxTensor in = OnnxTensor.createTensor(new boolean[] {true, false, true, true, false, false}, SHAPE);
                OnnxTensor out = roundTrip("bool", in, OnnxTensorType.BOOL)) {
            assertArrayEquals(new boolean[] {true, false, true, true, false, false}, out.getBooleanArray());
        }
        float[] halves = {0.5f, -2f, 65504f, 1f / 1024, 3.140625f, 0f};
        try (OnnxTensor in = OnnxTensor.createFloat16Tensor(halves, SHAPE);
                OnnxTensor out = roundTrip("float16", in, OnnxTensorType.FLOAT16)) {
            assertArrayEquals(halves, out.getFloat16AsFloatArray());
        }
        float[] bf = {0.5f, -2f, 3.0e38f, 1f / 1024, 3.140625f, 0f};
        try (OnnxTensor in = OnnxTensor.createBFloat16Tensor(bf, SHAPE);
                OnnxTensor out = roundTrip("bfloat16", in, OnnxTensorType.BFLOAT16)) {
            float[] back = out.getFloat16AsFloatArray();
            for (int i = 0; i < bf.length; i++) {
                assertEquals(bf[i], back[i], Math.abs(bf[i]) / 128, "bfloat16 keeps 8 bits of mantissa");
            }
        }
        try (OnnxTensor in = OnnxTensor.createTensor(new int[] {1, 2, 3, 4, 5, 6}, SHAPE);
                OnnxTensor out = roundTrip("int32", in, OnnxTensorType.INT32)) {
            assertArrayEquals(new int[] {1, 2, 3, 4, 5, 6}, out.getIntArray());
        }
    }

    @Test
    void stringsRoundTripAsUtf8() {
        String[] text = {"", "plain", "héllo wörld", "日本語", "tab\tnew\nline", "x".repeat(1000)};
        try (OnnxTensor in = OnnxTensor.createStringTensor(text, SHAPE);
                OnnxTensor out = roundTrip("string", in, OnnxTensorType.STRING)) {
            assertArrayEquals(text, out.getStringArray());
            assertThrows(OrtException.class, out::data);
        }
    }

    @Test
    void segmentsAreUsedWithoutACopy() {
        try (Arena arena = Arena.ofConfined(); OrtSession s = identity("float")) {
            MemorySegment seg = arena.allocate(ValueLayout.JAVA_FLOAT, 6);
            try (OnnxTensor in = OnnxTensor.fromSegment(seg, OnnxTensorType.FLOAT, SHAPE)) {
                assertEquals(seg.address(), in.data().address());
                seg.setAtIndex(ValueLayout.JAVA_FLOAT, 4, 42f); // written after the tensor was made
                try (Result r = s.run(Map.of("input", in))) {
                    assertArrayEquals(new float[] {0, 0, 0, 0, 42, 0}, r.tensor("output").getFloatArray());
                }
            }
        }
    }

    @Test
    void aTensorWhoseSegmentWasFreedIsRefusedNotRead() {
        Arena arena = Arena.ofConfined();
        MemorySegment seg = arena.allocate(ValueLayout.JAVA_FLOAT, 6);
        try (OrtSession s = identity("float"); OnnxTensor in = OnnxTensor.fromSegment(seg, OnnxTensorType.FLOAT, SHAPE)) {
            arena.close();
            OrtException e = assertThrows(OrtException.class, () -> s.run(Map.of("input", in)));
            assertEquals(OrtErrorCode.ORT_INVALID_ARGUMENT, e.getCode());
            assertThrows(OrtException.class, in::getFloatArray);
        }
    }

    @Test
    void badArraysAndShapesAreRejected() {
        assertThrows(OrtException.class, () -> OnnxTensor.createTensor(new float[5], 2, 3));
        assertThrows(OrtException.class, () -> OnnxTensor.createTensor(new float[6], 2, -3));
        assertThrows(OrtException.class, () -> OnnxTensor.createTensor(OnnxTensorType.INT64, new int[6], 2, 3));
        assertThrows(OrtException.class, () -> OnnxTensor.fromSegment(MemorySegment.ofArray(new float[6]),
                OnnxTensorType.FLOAT, 2, 3));
        try (Arena arena = Arena.ofConfined()) {
            assertThrows(OrtException.class, () -> OnnxTensor.fromSegment(arena.allocate(8), OnnxTensorType.FLOAT, 2, 3));
        }
        try (OnnxTensor t = OnnxTensor.createTensor(new float[6], 2, 3)) {
            OrtException e = assertThrows(OrtException.class, t::getLongArray);
            assertEquals(OrtErrorCode.ORT_INVALID_ARGUMENT, e.getCode());
        }
    }

    @Test
    void float16ConversionsAreExactWhereRepresentable() {
        for (float f : new float[] {0f, 1f, -1f, 0.5f, 65504f, 6.1035156e-5f}) {
            assertEquals(f, Float16.halfToFloat(Float16.floatToHalf(f)));
            assertEquals(f, Float16.bfloat16ToFloat(Float16.floatToBfloat16(f)), Math.abs(f) / 128);
        }
        assertEquals((short) 0x3f80, Float16.floatToBfloat16(1f));
        assertEquals((short) 0x3c00, Float16.floatToHalf(1f));
        assertEquals(true, Float.isNaN(Float16.bfloat16ToFloat(Float16.floatToBfloat16(Float.NaN))));
    }
}
