package org.pvn3d.ort;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Bad models and bad inputs give one clear exception type, and the session stays usable. */
class ErrorsTest {
    static OrtEnvironment env;
    static OrtSession arith;

    @BeforeAll
    static void open() {
        env = OrtEnvironment.getEnvironment();
        arith = env.createSession(TestModels.model("arith.onnx"));
    }

    @AfterAll
    static void close() {
        arith.close();
    }

    /** After every failure the same session still computes the right answer. */
    @AfterEach
    void sessionStillWorks() {
        try (OnnxTensor x = OnnxTensor.createTensor(new float[] {1, 2, 3, 4}, 1, 4);
                OnnxTensor y = OnnxTensor.createTensor(new float[] {5, 6, 7, 8}, 1, 4);
                Result r = arith.run(Map.of("x", x, "y", y))) {
            assertArrayEquals(new float[] {6, 8, 10, 12}, r.tensor("sum").getFloatArray());
        }
    }

    @Test
    void aTensorTooLargeToAllocateIsAnOrtException() {
        // byte counts just under Long.MAX_VALUE: rounding them up to the alignment used to wrap around
        OrtException e = assertThrows(OrtException.class, () -> OnnxTensor.allocate(OnnxTensorType.INT8, Long.MAX_VALUE));
        assertTrue(e.getMessage().contains("out of host memory"), e.getMessage());
        assertThrows(OrtException.class, () -> OnnxTensor.allocate(OnnxTensorType.DOUBLE, Long.MAX_VALUE / 8));
        // more than the machine has is refused before asking for it: under overcommit (vm.overcommit_memory = 1)
        // the allocation would be granted and the zero fill would grow the JVM until the OOM killer ended it
        long machine = org.pvn3d.ort.internal.HostMemory.machineBytes();
        assertTrue(machine > (64L << 20) && machine < Long.MAX_VALUE, "the machine's memory is known: " + machine);
        OrtException tooLarge = assertThrows(OrtException.class, () -> OnnxTensor.allocate(OnnxTensorType.INT8, machine + 1));
        assertEquals(OrtErrorCode.ORT_FAIL, tooLarge.getCode());
        assertTrue(tooLarge.getMessage().contains("more than this machine's " + machine + " bytes"), tooLarge.getMessage());
    }

    @Test
    void aPreallocatedOutputOfAnotherElementTypeIsRefused() {
        try (OnnxTensor x = OnnxTensor.createTensor(new float[] {1, 2, 3, 4}, 1, 4);
                OnnxTensor half = OnnxTensor.allocate(OnnxTensorType.FLOAT16, 1, 4);
                OnnxTensor wide = OnnxTensor.allocate(OnnxTensorType.DOUBLE, 1, 4)) {
            for (OnnxTensor wrong : new OnnxTensor[] {half, wide}) {
                OrtException e = assertThrows(OrtException.class,
                        () -> arith.run(Map.of("x", x, "y", x), Map.of("sum", wrong), null));
                assertEquals(OrtErrorCode.ORT_INVALID_ARGUMENT, e.getCode());
                assertEquals("[ORT_INVALID_ARGUMENT] output 'sum' is FLOAT but the tensor given for it is " + wrong.getType(),
                        e.getMessage());
            }
        }
    }

    @Test
    void aReadOnlyTensorIsAnInputButNeverAnOutput() {
        try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
            java.lang.foreign.MemorySegment data = arena.allocateFrom(java.lang.foreign.ValueLayout.JAVA_FLOAT, 1, 2, 3, 4);
            try (OnnxTensor readOnly = OnnxTensor.fromSegment(data.asReadOnly(), OnnxTensorType.FLOAT, 1, 4);
                    OnnxTensor y = OnnxTensor.createTensor(new float[] {10, 20, 30, 40}, 1, 4)) {
                assertTrue(readOnly.isReadOnly());
                OrtException e = assertThrows(OrtException.class,
                        () -> arith.run(Map.of("x", y, "y", y), Map.of("sum", readOnly), null));
                assertEquals("[ORT_INVALID_ARGUMENT] output 'sum': the tensor's memory is read-only", e.getMessage());
                assertArrayEquals(new float[] {1, 2, 3, 4}, readOnly.getFloatArray(), "not written");
                try (Result r = arith.run(Map.of("x", readOnly, "y", y))) {
                    assertArrayEquals(new float[] {11, 22, 33, 44}, r.tensor("sum").getFloatArray());
                }
            }
        }
    }

    @Test
    void aResultReadOutOfRangeOrAfterTakeFailsClearly() {
        try (OnnxTensor x = OnnxTensor.createTensor(new float[] {1, 2, 3, 4}, 1, 4);
                Result r = arith.run(Map.of("x", x, "y", x))) {
            OrtException e = assertThrows(OrtException.class, () -> r.get(r.size()));
            assertTrue(e.getMessage().contains("no output #" + r.size() + " in this result"), e.getMessage());
            assertThrows(OrtException.class, () -> r.get(-1));
            int sum = r.names().indexOf("sum");
            r.take("sum").close();
            e = assertThrows(OrtException.class, () -> r.get(sum));
            assertTrue(e.getMessage().contains("output 'sum' was taken out of this result"), e.getMessage());
        }
    }

    @Test
    void aTensorOverASegmentWhoseArenaIsClosedIsRefused() {
        java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined();
        java.lang.foreign.MemorySegment gone = arena.allocate(64);
        arena.close();
        OrtException e = assertThrows(OrtException.class, () -> OnnxTensor.fromSegment(gone, OnnxTensorType.FLOAT, 16));
        assertEquals("[ORT_INVALID_ARGUMENT] the memory segment has been freed (its arena was closed)", e.getMessage());
    }

    @Test
    void aStringWithANulCharacterIsRefusedNotCutShort() {
        // C would read "session.intra_op.allow_spinning" and "-1" (no CUDA graph) while Java kept the whole string
        try (SessionOptions o = new SessionOptions(); RunOptions r = new RunOptions()) {
            OrtException e = assertThrows(OrtException.class, () -> o.addConfigEntry("session.intra_op.allow_spinning\0junk", "0"));
            assertEquals("[ORT_INVALID_ARGUMENT] \"session.intra_op.allow_spinning\\0junk\" holds a NUL character (at 31), which "
                    + "would end it there in C", e.getMessage());
            assertThrows(OrtException.class, () -> r.addRunConfigEntry(RunOptions.GPU_GRAPH_ID, "-1\0x"));
            assertThrows(OrtException.class, () -> r.setRunTag("tag\0x"));
        }
    }

    @Test
    void nullModelsAreNamedAsSuch() {
        NullPointerException e = assertThrows(NullPointerException.class, () -> env.createSession((java.nio.file.Path) null));
        assertEquals("model path is null", e.getMessage());
        e = assertThrows(NullPointerException.class, () -> env.createSession((byte[]) null));
        assertEquals("model bytes are null", e.getMessage());
    }

    @Test
    void aFileThatIsNotAModelFailsToLoad() {
        OrtException e = assertThrows(OrtException.class, () -> env.createSession(TestModels.model("not_a_model.onnx")));
        assertEquals(OrtErrorCode.ORT_INVALID_PROTOBUF, e.getCode());
        assertTrue(e.getMessage().contains("not_a_model.onnx"), e.getMessage());
    }

    @Test
    void aModelWithAnUnknownOperatorFailsToLoad() {
        OrtException e = assertThrows(OrtException.class, () -> env.createSession(TestModels.model("unknown_op.onnx")));
        assertTrue(e.getCode() == OrtErrorCode.ORT_FAIL || e.getCode() == OrtErrorCode.ORT_INVALID_GRAPH,
                e.getCode().toString());
        assertTrue(e.getMessage().contains("NoSuchOperator") || e.getMessage().contains("com.example.unknown"),
                e.getMessage());
    }

    @Test
    void aMissingFileIsReportedAsSuch() {
        OrtException e = assertThrows(OrtException.class, () -> env.createSession("/no/such/model.onnx"));
        assertEquals(OrtErrorCode.ORT_NO_SUCHFILE, e.getCode());
    }

    @Test
    void aWrongInputNameNamesTheValidOnes() {
        try (OnnxTensor x = OnnxTensor.createTensor(new float[4], 1, 4);
                OnnxTensor y = OnnxTensor.createTensor(new float[4], 1, 4)) {
            OrtException e = assertThrows(OrtException.class, () -> arith.run(Map.of("x", x, "why", y)));
            assertEquals(OrtErrorCode.ORT_INVALID_ARGUMENT, e.getCode());
            assertTrue(e.getMessage().contains("why") && e.getMessage().contains("[x, y]"), e.getMessage());
            OrtException out = assertThrows(OrtException.class, () -> arith.run(Map.of("x", x, "y", y), Set.of("nope")));
            assertTrue(out.getMessage().contains("nope"), out.getMessage());
        }
    }

    @Test
    void aWrongInputTypeIsRefusedByOrt() {
        try (OnnxTensor x = OnnxTensor.createTensor(new double[4], 1, 4);
                OnnxTensor y = OnnxTensor.createTensor(new float[4], 1, 4)) {
            OrtException e = assertThrows(OrtException.class, () -> arith.run(Map.of("x", x, "y", y)));
            assertEquals(OrtErrorCode.ORT_INVALID_ARGUMENT, e.getCode());
            assertTrue(e.getMessage().contains("double") && e.getMessage().contains("float"), e.getMessage());
        }
    }

    @Test
    void aWrongShapeOrRankIsRefusedByOrt() {
        try (OnnxTensor x = OnnxTensor.createTensor(new float[6], 2, 3);
                OnnxTensor y = OnnxTensor.createTensor(new float[6], 2, 3)) {
            OrtException e = assertThrows(OrtException.class, () -> arith.run(Map.of("x", x, "y", y)));
            assertEquals(OrtErrorCode.ORT_INVALID_ARGUMENT, e.getCode());
            assertTrue(e.getMessage().toLowerCase().contains("dimension"), e.getMessage());
        }
        try (OnnxTensor x = OnnxTensor.createTensor(new float[4], 4);
                OnnxTensor y = OnnxTensor.createTensor(new float[4], 4)) {
            OrtException e = assertThrows(OrtException.class, () -> arith.run(Map.of("x", x, "y", y)));
            assertEquals(OrtErrorCode.ORT_INVALID_ARGUMENT, e.getCode());
            assertTrue(e.getMessage().toLowerCase().contains("rank"), e.getMessage());
        }
    }

    @Test
    void aMissingInputIsRefused() {
        try (OnnxTensor x = OnnxTensor.createTensor(new float[4], 1, 4)) {
            OrtException e = assertThrows(OrtException.class, () -> arith.run(Map.of("x", x)));
            assertTrue(e.getMessage().contains("y"), e.getMessage());
        }
    }

    @Test
    void aPreallocatedOutputOfTheWrongShapeIsRefused() {
        try (OnnxTensor x = OnnxTensor.createTensor(new float[4], 1, 4);
                OnnxTensor y = OnnxTensor.createTensor(new float[4], 1, 4);
                OnnxTensor out = OnnxTensor.allocate(OnnxTensorType.FLOAT, 3, 3)) {
            assertThrows(OrtException.class, () -> arith.run(Map.of("x", x, "y", y), Map.of("sum", out), null));
        }
    }

    @Test
    void terminatedRunOptionsStopTheRun() {
        try (OnnxTensor x = OnnxTensor.createTensor(new float[4], 1, 4);
                OnnxTensor y = OnnxTensor.createTensor(new float[4], 1, 4);
                RunOptions options = new RunOptions().setRunTag("doomed").setTerminate()) {
            OrtException e = assertThrows(OrtException.class,
                    () -> arith.run(Map.of("x", x, "y", y), Set.of("sum"), options));
            assertTrue(e.getMessage().toLowerCase().contains("terminat"), e.getMessage());
            options.unsetTerminate();
            try (Result r = arith.run(Map.of("x", x, "y", y), Set.of("sum"), options)) {
                assertArrayEquals(new float[4], r.tensor("sum").getFloatArray());
            }
        }
    }

    @Test
    void aShapeWhoseSizeOverflowsALongIsAnInvalidArgument() {
        long huge = 1L << 40;
        long[][] shapes = {{huge, huge}, {Long.MAX_VALUE, 2}, {1L << 62}};
        for (long[] shape : shapes) {
            OrtException e = assertThrows(OrtException.class, () -> OnnxTensor.allocate(OnnxTensorType.FLOAT, shape));
            assertEquals(OrtErrorCode.ORT_INVALID_ARGUMENT, e.getCode());
            assertTrue(e.getMessage().contains(java.util.Arrays.toString(shape)), e.getMessage());
        }
        OrtException fromArray = assertThrows(OrtException.class, () -> OnnxTensor.createTensor(new float[4], huge, huge));
        assertEquals(OrtErrorCode.ORT_INVALID_ARGUMENT, fromArray.getCode());
        assertTrue(fromArray.getMessage().contains("[1099511627776, 1099511627776]"), fromArray.getMessage());
        OrtException strings = assertThrows(OrtException.class, () -> OnnxTensor.createStringTensor(new String[1], huge, huge));
        assertEquals(OrtErrorCode.ORT_INVALID_ARGUMENT, strings.getCode());
        OrtException info = assertThrows(OrtException.class,
                () -> new TensorInfo(OnnxTensorType.FLOAT, new long[] {huge, huge}, new String[] {"", ""}).getElementCount());
        assertEquals(OrtErrorCode.ORT_INVALID_ARGUMENT, info.getCode());
        assertEquals(0, new TensorInfo(OnnxTensorType.FLOAT, new long[] {huge, huge, 0}, new String[] {"", "", ""})
                .getElementCount(), "an empty dimension makes the whole shape empty");
    }
}
