package org.pvn3d.ort.pipeline.graph;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.pvn3d.ort.OnnxTensor;
import org.pvn3d.ort.OrtEnvironment;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.OrtSession;
import org.pvn3d.ort.Result;
import org.pvn3d.ort.SessionOptions;

/**
 * Graphs at the edge of what BranchSplit takes: outputs that are initializers or graph inputs, a tensor made
 * twice, bytes that are not protobuf. Each part must load in ORT and the parts together must give every output
 * of the graph, or the split is refused with ORT_INVALID_ARGUMENT.
 */
class BranchSplitEdgeGraphsTest {
    private static byte[] model(java.util.function.Consumer<Protobuf.Writer> graph) {
        return BranchSplitTest.model(graph);
    }

    private static void floatValueInfo(Protobuf.Writer g, int field, String name) {
        BranchSplitTest.floatInput(g, field, name);
    }

    private static void node(Protobuf.Writer g, String op, String in0, String in1, String out) {
        g.message(1, n -> n.string(1, in0).string(1, in1).string(2, out).string(3, op + "_" + out).string(4, op));
    }

    /** A graph output that is an initializer is the join's, and the join gives its values. */
    @Test
    void anInitializerThatIsAGraphOutputIsNotLost() {
        byte[] m = model(g -> {
            java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(8).order(java.nio.ByteOrder.LITTLE_ENDIAN).putFloat(5f).putFloat(6f);
            g.message(5, t -> t.varint(1, 2).varint(2, 1).string(8, "w").bytes(9, b.array()));
            node(g, "Add", "a", "w", "x");
            node(g, "Mul", "b", "w", "y");
            node(g, "Add", "x", "y", "z");
            floatValueInfo(g, 11, "a");
            floatValueInfo(g, 11, "b");
            floatValueInfo(g, 12, "z");
            floatValueInfo(g, 12, "w");
        });
        BranchSplit split = BranchSplit.of(m, Set.of("a"), Set.of("b"));
        BranchSplit.TensorType two = new BranchSplit.TensorType(1, new long[] {2});
        Set<String> outputs = new HashSet<>(split.first().outputs());
        outputs.addAll(split.second().outputs());
        BranchSplit.Part join = split.join(Map.of("x", two, "y", two));
        outputs.addAll(join.outputs());
        assertTrue(outputs.contains("w"), "the graph's output w is an output of no part: " + outputs);
        try (SessionOptions o = new SessionOptions(); OrtSession s = OrtEnvironment.getEnvironment().createSession(join.model(), o);
                OnnxTensor x = OnnxTensor.createTensor(new float[] {1, 2}, 2); OnnxTensor y = OnnxTensor.createTensor(new float[] {3, 4}, 2);
                Result r = s.run(Map.of("x", x, "y", y))) {
            assertArrayEquals(new float[] {5, 6}, r.tensor("w").getFloatArray());
            assertArrayEquals(new float[] {4, 6}, r.tensor("z").getFloatArray());
        }
    }

    /** A graph input that is also a graph output: the join takes it as an input and gives it back, and loads. */
    @Test
    void anInputPassedThroughAsAnOutputGivesALoadableJoin() {
        byte[] m = model(g -> {
            node(g, "Add", "a", "a", "x");
            node(g, "Mul", "b", "b", "y");
            node(g, "Add", "x", "y", "z");
            floatValueInfo(g, 11, "a");
            floatValueInfo(g, 11, "b");
            floatValueInfo(g, 12, "z");
            floatValueInfo(g, 12, "a");
        });
        BranchSplit split = BranchSplit.of(m, Set.of("a"), Set.of("b"));
        BranchSplit.TensorType two = new BranchSplit.TensorType(1, new long[] {2});
        BranchSplit.Part join = split.join(Map.of("x", two, "y", two));
        assertTrue(join.inputs().contains("a") && join.outputs().contains("a"), join.inputs() + " -> " + join.outputs());
        try (SessionOptions o = new SessionOptions(); OrtSession s = OrtEnvironment.getEnvironment().createSession(join.model(), o);
                OnnxTensor a = OnnxTensor.createTensor(new float[] {7, 8}, 2); OnnxTensor x = OnnxTensor.createTensor(new float[] {1, 2}, 2);
                OnnxTensor y = OnnxTensor.createTensor(new float[] {3, 4}, 2); Result r = s.run(Map.of("a", a, "x", x, "y", y))) {
            assertArrayEquals(new float[] {7, 8}, r.tensor("a").getFloatArray(), "the input given back");
            assertArrayEquals(new float[] {4, 6}, r.tensor("z").getFloatArray());
        }
    }

    /** A tensor made twice: ORT refuses the graph, so the split must too (its parts would load and compute something else). */
    @Test
    void aTensorMadeTwiceIsRefused() {
        byte[] m = model(g -> {
            node(g, "Add", "a", "a", "x");
            node(g, "Mul", "b", "b", "x"); // x again
            node(g, "Add", "x", "x", "z");
            floatValueInfo(g, 11, "a");
            floatValueInfo(g, 11, "b");
            floatValueInfo(g, 12, "z");
        });
        try (SessionOptions o = new SessionOptions()) {
            assertThrows(OrtException.class, () -> OrtEnvironment.getEnvironment().createSession(m, o).close(), "ORT refuses the graph");
        }
        OrtException refused = assertThrows(OrtException.class, () -> BranchSplit.of(m, Set.of("a"), Set.of("b")));
        assertEquals(OrtErrorCode.ORT_INVALID_ARGUMENT, refused.getCode());
        assertTrue(refused.getMessage().contains("tensor x is made twice"), refused.getMessage());
    }

    /** A model whose graph or a node in it is not protobuf: ORT_INVALID_ARGUMENT, as for a model that is not protobuf at all. */
    @Test
    void malformedGraphBytesAreAnOrtException() {
        byte[] badGraph = new Protobuf.Writer().varint(1, 8).message(8, o -> o.string(1, "").varint(2, 13))
                .bytes(7, new byte[] {0x0A, 0x05, 1}).toByteArray();
        byte[] badNode = model(g -> {
            g.bytes(1, new byte[] {0x0F}); // a node field holding wire type 7
            floatValueInfo(g, 11, "a");
            floatValueInfo(g, 11, "b");
        });
        for (byte[] m : new byte[][] {badGraph, badNode}) {
            RuntimeException e = assertThrows(RuntimeException.class, () -> BranchSplit.of(m, Set.of("a"), Set.of("b")));
            assertInstanceOf(OrtException.class, e, "got " + e);
            assertEquals(OrtErrorCode.ORT_INVALID_ARGUMENT, ((OrtException) e).getCode());
        }
    }
}
