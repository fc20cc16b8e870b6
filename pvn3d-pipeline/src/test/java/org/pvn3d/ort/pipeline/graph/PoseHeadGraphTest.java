package org.pvn3d.ort.pipeline.graph;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.pipeline.MeanShift;
import org.pvn3d.ort.pipeline.Pvn3dPipeline;

/** The protobuf edit itself: what the head adds, and what it refuses. */
class PoseHeadGraphTest {
    static final byte[] TINY = Pvn3dPipeline.tinyModelBytes();

    @Test
    void appendsTheHeadsNodesInputsAndOutputsAndKeepsTheNetwork() {
        byte[] with = PoseHeadGraph.append(TINY, MeanShift.PVN3D, 1);
        assertTrue(PoseHeadGraph.hasPoseHead(with));
        assertFalse(PoseHeadGraph.hasPoseHead(TINY));
        byte[] g0 = Protobuf.messages(TINY, 7).get(0);
        byte[] g1 = Protobuf.messages(with, 7).get(0);
        assertEquals(Protobuf.messages(g0, 1).size() + 7, Protobuf.messages(g1, 1).size(), "7 nodes more");
        assertEquals(Protobuf.messages(g0, 5).size() + 5, Protobuf.messages(g1, 5).size(), "5 constants more");
        List<String> outputs = names(g1, 12);
        assertTrue(outputs.containsAll(PoseHeadGraph.OUTPUTS), outputs.toString());
        assertTrue(outputs.containsAll(names(g0, 12)), "the network's outputs stay");
        assertTrue(names(g1, 11).contains(PoseHeadGraph.MODEL_KPS));
        // the last node is the fused pose solve in the custom domain, with PVN3D's attributes
        List<byte[]> nodes = Protobuf.messages(g1, 1);
        byte[] solve = nodes.get(nodes.size() - 1);
        assertEquals("PVN3D_PoseSolve", Protobuf.string(solve, 4));
        assertEquals("ai.onnx.contrib", Protobuf.string(solve, 7));
        List<String> attrs = new ArrayList<>();
        for (byte[] a : Protobuf.messages(solve, 5)) {
            attrs.add(Protobuf.string(a, 1));
        }
        assertEquals(List.of("bandwidth", "max_iter", "center_filter"), attrs);
        assertFalse(PoseHeadGraph.holdsFloat16(with));
    }

    @Test
    void refusesWhatIsNotAPvn3dNetworkOrHasAHeadAlready() {
        byte[] with = PoseHeadGraph.append(TINY, MeanShift.PVN3D, 1);
        assertInvalid(() -> PoseHeadGraph.append(with, MeanShift.PVN3D, 1), "already has pose_R");
        assertInvalid(() -> PoseHeadGraph.append(new byte[] {1, 2, 3, (byte) 0xFF}, MeanShift.PVN3D, 1), "not an ONNX file");
        assertInvalid(() -> PoseHeadGraph.append(Pvn3dPipeline.resourceBytes("/models/pointnet2_default.onnx"), MeanShift.PVN3D, 1),
                "not a PVN3D network");
        assertInvalid(() -> PoseHeadGraph.append(TINY, MeanShift.PVN3D, -1), "object class");
    }

    static void assertInvalid(org.junit.jupiter.api.function.Executable call, String message) {
        OrtException e = assertThrows(OrtException.class, call);
        assertEquals(OrtErrorCode.ORT_INVALID_ARGUMENT, e.getCode());
        assertTrue(e.getMessage().contains(message), e.getMessage());
    }

    static List<String> names(byte[] graph, int field) {
        List<String> out = new ArrayList<>();
        for (byte[] vi : Protobuf.messages(graph, field)) {
            out.add(Protobuf.string(vi, 1));
        }
        return out;
    }
}
