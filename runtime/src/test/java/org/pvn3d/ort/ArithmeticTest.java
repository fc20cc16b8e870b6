package org.pvn3d.ort;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** arith.onnx: sum = x + y, prod = x * y, affine = 2x + 1, with a symbolic batch dimension. */
class ArithmeticTest {
    static OrtEnvironment env;
    static OrtSession session;

    @BeforeAll
    static void open() {
        env = OrtEnvironment.getEnvironment();
        session = env.createSession(TestModels.model("arith.onnx"));
    }

    @AfterAll
    static void close() {
        session.close();
    }

    @Test
    void metadataHasNamesTypesAndSymbolicDimensions() {
        assertEquals(List.of("x", "y"), session.getInputNames());
        assertEquals(List.of("sum", "prod", "affine"), session.getOutputNames());
        assertEquals(2, session.getNumInputs());
        assertEquals(3, session.getNumOutputs());
        TensorInfo x = session.getInputInfo().get("x").tensorInfo();
        assertEquals(OnnxTensorType.FLOAT, x.getType());
        assertArrayEquals(new long[] {-1, 4}, x.getShape());
        assertArrayEquals(new String[] {"batch", ""}, x.getDimensionNames());
        assertEquals(-1, x.getElementCount());
        assertEquals(OnnxValueType.TENSOR, session.getOutputInfo().get("affine").valueType());
    }

    @Test
    void computesKnownResultsForEveryBatchSize() {
        for (int batch : new int[] {1, 3, 7, 0}) {
            float[] x = new float[batch * 4];
            float[] y = new float[batch * 4];
            for (int i = 0; i < x.length; i++) {
                x[i] = i * 0.5f - 3;
                y[i] = 10 - i;
            }
            try (OnnxTensor tx = OnnxTensor.createTensor(x, batch, 4);
                    OnnxTensor ty = OnnxTensor.createTensor(y, batch, 4);
                    Result r = session.run(Map.of("x", tx, "y", ty))) {
                assertEquals(3, r.size());
                float[] sum = r.tensor("sum").getFloatArray();
                float[] prod = r.tensor("prod").getFloatArray();
                float[] affine = r.tensor("affine").getFloatArray();
                assertArrayEquals(new long[] {batch, 4}, r.tensor("sum").getShape());
                for (int i = 0; i < x.length; i++) {
                    assertEquals(x[i] + y[i], sum[i], 0f);
                    assertEquals(x[i] * y[i], prod[i], 0f);
                    assertEquals(x[i] * 2 + 1, affine[i], 0f);
                }
            }
        }
    }

    @Test
    void returnsOnlyTheRequestedOutputsInTheRequestedOrder() {
        try (OnnxTensor tx = OnnxTensor.createTensor(new float[] {1, 2, 3, 4}, 1, 4);
                OnnxTensor ty = OnnxTensor.createTensor(new float[] {4, 3, 2, 1}, 1, 4);
                Result r = session.run(Map.of("x", tx, "y", ty),
                        new LinkedHashSet<>(List.of("affine", "sum")))) {
            assertEquals(List.of("affine", "sum"), r.names());
            assertArrayEquals(new float[] {3, 5, 7, 9}, ((OnnxTensor) r.get(0)).getFloatArray());
            assertArrayEquals(new float[] {5, 5, 5, 5}, ((OnnxTensor) r.get(1)).getFloatArray());
        }
    }

    @Test
    void writesIntoPreallocatedOutputs() {
        try (OnnxTensor tx = OnnxTensor.createTensor(new float[] {1, 2, 3, 4, 5, 6, 7, 8}, 2, 4);
                OnnxTensor ty = OnnxTensor.createTensor(new float[] {1, 1, 1, 1, 2, 2, 2, 2}, 2, 4);
                OnnxTensor prod = OnnxTensor.allocate(OnnxTensorType.FLOAT, 2, 4)) {
            long address = prod.data().address();
            session.run(Map.of("x", tx, "y", ty), Map.of("prod", prod), null);
            assertEquals(address, prod.data().address(), "ORT wrote into our buffer");
            assertArrayEquals(new float[] {1, 2, 3, 4, 10, 12, 14, 16}, prod.getFloatArray());
        }
    }

    @Test
    void resultsOutliveTheirSession() {
        OnnxTensor sum;
        try (OrtSession s = env.createSession(TestModels.model("arith.onnx"));
                OnnxTensor tx = OnnxTensor.createTensor(new float[] {1, 2, 3, 4}, 1, 4);
                OnnxTensor ty = OnnxTensor.createTensor(new float[] {1, 2, 3, 4}, 1, 4)) {
            Result r = s.run(Map.of("x", tx, "y", ty));
            sum = (OnnxTensor) r.take("sum");
            r.close();
        }
        try (sum) {
            assertArrayEquals(new float[] {2, 4, 6, 8}, sum.getFloatArray());
        }
    }

    @Test
    void loadsFromBytesAsFromAPath() throws Exception {
        byte[] bytes = Files.readAllBytes(TestModels.model("arith.onnx"));
        try (OrtSession s = env.createSession(bytes);
                OnnxTensor tx = OnnxTensor.createTensor(new float[] {2, 2, 2, 2}, 1, 4);
                OnnxTensor ty = OnnxTensor.createTensor(new float[] {3, 3, 3, 3}, 1, 4);
                Result r = s.run(Map.of("x", tx, "y", ty))) {
            assertArrayEquals(new float[] {6, 6, 6, 6}, r.tensor("prod").getFloatArray());
            assertNull(s.getInputInfo().get("z"));
            assertTrue(s.getOutputInfo().containsKey("prod"));
        }
    }

    @Test
    void matmulChainMatchesNumpy() throws Exception {
        float[] input = TestModels.jsonMatrix(TestModels.model("matmul_chain_expected.json"), "input");
        float[] expected = TestModels.jsonMatrix(TestModels.model("matmul_chain_expected.json"), "output");
        int batch = input.length / 64;
        assertEquals(3, batch);
        try (OrtSession s = env.createSession(TestModels.model("matmul_chain.onnx"));
                OnnxTensor x = OnnxTensor.createTensor(input, batch, 64);
                Result r = s.run(Map.of("x", x))) {
            float[] y = r.tensor("y").getFloatArray();
            assertEquals(expected.length, y.length);
            for (int i = 0; i < y.length; i++) {
                assertEquals(expected[i], y[i], 1e-5f + 1e-5f * Math.abs(expected[i]), "element " + i);
            }
        }
    }
}
