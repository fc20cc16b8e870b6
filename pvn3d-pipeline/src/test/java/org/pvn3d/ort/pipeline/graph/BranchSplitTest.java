package org.pvn3d.ort.pipeline.graph;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.pvn3d.ort.OnnxTensor;
import org.pvn3d.ort.OrtEnvironment;
import org.pvn3d.ort.OrtSession;
import org.pvn3d.ort.Result;
import org.pvn3d.ort.SessionOptions;
import org.pvn3d.ort.customop.CustomOpDomain;
import org.pvn3d.ort.ops.Pvn3dOps;
import org.pvn3d.ort.pipeline.MeanShift;
import org.pvn3d.ort.pipeline.Pvn3dPipeline;
import org.pvn3d.ort.pipeline.Pvn3dSample;

/**
 * The cut of the shipped network (with the pose head) into PointNet++, the CNN and the join: what goes
 * where, and that the three parts run one after the other on the CPU give the one graph's outputs.
 */
class BranchSplitTest {
    static final byte[] MODEL = PoseHeadGraph.append(Pvn3dPipeline.tinyModelBytes(), MeanShift.PVN3D, 1);
    static final Set<String> POINTS = Set.of("cld_rgb_nrm");
    static final Set<String> IMAGE = Set.of("rgb", "choose");

    @Test
    void pointNetAndTheCnnAreTheBranchesAndEveryNodeLandsOnce() {
        BranchSplit split = BranchSplit.of(MODEL, POINTS, IMAGE);
        assertEquals(List.of("cld_rgb_nrm"), split.first().inputs());
        assertEquals(List.of("rgb", "choose"), split.second().inputs());
        // PointNet++'s features and the cloud's xyz for the votes come from the first branch; the CNN's
        // embedding at the chosen pixels from the second; the first SA level's indices stay its outputs
        assertTrue(split.first().cuts().size() >= 1 && split.second().cuts().size() >= 1, split.first().cuts() + " " + split.second().cuts());
        assertTrue(split.first().outputs().containsAll(List.of("sa1_fps_idx", "sa1_ball_idx0", "sa1_ball_idx1")), split.first().outputs().toString());
        assertTrue(split.second().cuts().stream().allMatch(c -> !c.startsWith("/pointnet2/")), split.second().cuts().toString());
        assertTrue(split.joinInputs().contains(PoseHeadGraph.MODEL_KPS));
        assertFalse(split.joinInputs().contains("rgb"), "the join reads no image: " + split.joinInputs());
        // every node of the graph is in exactly one part, except constants, which go wherever they are read
        List<String> all = nodeNames(MODEL);
        Set<String> seen = new HashSet<>();
        List<String> pointNodes = nodeNames(split.first().model());
        List<String> imageNodes = nodeNames(split.second().model());
        List<String> joinNodes = nodeNames(split.join(declared(split)).model());
        for (List<String> part : List.of(pointNodes, imageNodes, joinNodes)) {
            for (String name : part) {
                assertTrue(all.contains(name), name);
                if (!seen.add(name)) {
                    assertTrue(name.contains("Constant"), "only constants are in two parts: " + name);
                }
            }
        }
        assertEquals(new HashSet<>(all), seen, "no node is lost");
        assertTrue(pointNodes.stream().anyMatch(x -> x.contains("FurthestPointSample")), "FPS is in the point branch");
        assertTrue(imageNodes.stream().noneMatch(x -> x.startsWith("/pointnet2/")));
        assertTrue(joinNodes.stream().anyMatch(x -> x.contains("PoseSolve")), "the pose solve is in the join");
    }

    @Test
    void thePartsInTurnComputeWhatTheGraphComputes() {
        Pvn3dSample sample = Pvn3dSample.resource(Pvn3dSample.RESOURCE);
        BranchSplit split = BranchSplit.of(MODEL, POINTS, IMAGE);
        Map<String, OnnxTensor> feeds = new LinkedHashMap<>();
        for (String name : List.of("rgb", "cld_rgb_nrm", "choose", PoseHeadGraph.MODEL_KPS)) {
            feeds.put(name, sample.entry(name).toTensor());
        }
        feeds.put(PoseHeadGraph.MODEL_KPS, OnnxTensor.createTensor(sample.modelKps(), sample.modelKps().length / 3, 3));
        Set<String> outs = Set.of("pred_rgbd_seg", "pred_kp_of", "pred_ctr_of", PoseHeadGraph.R, PoseHeadGraph.T, PoseHeadGraph.KPS,
                PoseHeadGraph.INLIERS);
        try (Runner whole = new Runner(MODEL); Runner points = new Runner(split.first().model());
                Runner image = new Runner(split.second().model());
                Result want = whole.session.run(feeds, outs);
                Result p = points.session.run(pick(feeds, split.first().inputs()), Set.copyOf(split.first().cuts()));
                Result i = image.session.run(pick(feeds, split.second().inputs()), Set.copyOf(split.second().cuts()))) {
            Map<String, BranchSplit.TensorType> types = new LinkedHashMap<>();
            Map<String, org.pvn3d.ort.OnnxTensorLike> joinFeeds = new LinkedHashMap<>();
            for (Result r : List.of(p, i)) {
                for (String name : r.names()) {
                    OnnxTensor t = r.tensor(name);
                    types.put(name, new BranchSplit.TensorType(t.getType().value(), t.getShape()));
                    joinFeeds.put(name, t);
                }
            }
            for (String name : split.joinInputs()) {
                if (feeds.containsKey(name)) {
                    joinFeeds.put(name, feeds.get(name));
                }
            }
            try (Runner join = new Runner(split.join(types).model()); Result got = join.session.run(joinFeeds, outs)) {
                for (String name : List.of("pred_rgbd_seg", "pred_kp_of", "pred_ctr_of", PoseHeadGraph.R, PoseHeadGraph.T, PoseHeadGraph.KPS)) {
                    assertArrayEquals(want.tensor(name).getFloatArray(), got.tensor(name).getFloatArray(), 1e-6f, name);
                }
                assertArrayEquals(want.tensor(PoseHeadGraph.INLIERS).getLongArray(), got.tensor(PoseHeadGraph.INLIERS).getLongArray());
            }
        } finally {
            feeds.values().forEach(OnnxTensor::close);
        }
    }

    @Test
    void aSmallGraphSplitsAsWritten() {
        // a, b: inputs; k: a Constant both branches read; x = a + k (also a graph output), y = b * k, z = x + y
        byte[] model = model(g -> {
            g.message(1, n -> n.string(2, "k").string(3, "const_k").string(4, "Constant")
                    .message(5, a -> a.string(1, "value").message(5, t -> t.varint(1, 2).varint(2, 1).bytes(9, floats(0.5f, 2f)))
                            .varint(20, 4)));
            g.message(1, n -> n.string(1, "a").string(1, "k").string(2, "x").string(3, "add_x").string(4, "Add"));
            g.message(1, n -> n.string(1, "b").string(1, "k").string(2, "y").string(3, "mul_y").string(4, "Mul"));
            g.message(1, n -> n.string(1, "x").string(1, "y").string(2, "z").string(3, "add_z").string(4, "Add"));
            floatInput(g, 11, "a");
            floatInput(g, 11, "b");
            floatInput(g, 12, "z");
            floatInput(g, 12, "x");
        });
        BranchSplit split = BranchSplit.of(model, Set.of("a"), Set.of("b"));
        assertEquals(List.of("a"), split.first().inputs());
        assertEquals(List.of("x"), split.first().outputs(), "x is a cut and a graph output: once");
        assertEquals(List.of("x"), split.first().cuts());
        assertEquals(List.of("y"), split.second().cuts());
        assertEquals(List.of("x", "y"), split.joinInputs());
        assertEquals(List.of("const_k", "add_x"), nodeNames(split.first().model()), "the constant goes with each reader");
        assertEquals(List.of("const_k", "mul_y"), nodeNames(split.second().model()));
        BranchSplit.TensorType two = new BranchSplit.TensorType(1, new long[] {2});
        BranchSplit.Part join = split.join(Map.of("x", two, "y", two));
        assertEquals(List.of("add_z"), nodeNames(join.model()));
        assertEquals(List.of("z"), join.outputs());
        try (OnnxTensor a = OnnxTensor.createTensor(new float[] {1, 2}, 2); OnnxTensor b = OnnxTensor.createTensor(new float[] {3, 4}, 2);
                Runner first = new Runner(split.first().model()); Runner second = new Runner(split.second().model());
                Runner last = new Runner(join.model());
                Result x = first.session.run(Map.of("a", a)); Result y = second.session.run(Map.of("b", b));
                Result z = last.session.run(Map.of("x", x.tensor("x"), "y", y.tensor("y")))) {
            assertArrayEquals(new float[] {1.5f, 4f}, x.tensor("x").getFloatArray());
            assertArrayEquals(new float[] {1.5f + 1.5f, 4f + 8f}, z.tensor("z").getFloatArray());
        }
    }

    /** A model of opset 13 whose graph {@code graph} writes (graph name "small"). */
    static byte[] model(java.util.function.Consumer<Protobuf.Writer> graph) {
        return new Protobuf.Writer().varint(1, 8).message(8, o -> o.string(1, "").varint(2, 13))
                .message(7, g -> {
                    graph.accept(g);
                    g.string(2, "small");
                }).toByteArray();
    }

    /** A float [2] value info {@code name} in GraphProto field {@code field} (11 input, 12 output). */
    static void floatInput(Protobuf.Writer g, int field, String name) {
        g.message(field, vi -> vi.string(1, name).message(2, t -> t.message(1, tt -> tt.varint(1, 1)
                .message(2, sh -> sh.message(1, d -> d.varint(1, 2))))));
    }

    private static byte[] floats(float... v) {
        java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(4 * v.length).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        for (float f : v) {
            b.putFloat(f);
        }
        return b.array();
    }

    @Test
    void refusesWhatCannotBeSplit() {
        PoseHeadGraphTest.assertInvalid(() -> BranchSplit.of(MODEL, Set.of("points"), IMAGE), "not an input of the graph");
        PoseHeadGraphTest.assertInvalid(() -> BranchSplit.of(MODEL, POINTS, Set.of("cld_rgb_nrm")), "also the first branch's");
        PoseHeadGraphTest.assertInvalid(() -> BranchSplit.of(MODEL, POINTS, Set.of(PoseHeadGraph.MODEL_KPS)), "computes nothing");
        PoseHeadGraphTest.assertInvalid(() -> BranchSplit.of(new byte[] {1, 2, 3, (byte) 0xFF}, POINTS, IMAGE), "not an ONNX file");
        // a node holding a subgraph (an If): its reads of outer tensors are not listed, so no split
        byte[] withIf = ifNode();
        PoseHeadGraphTest.assertInvalid(() -> BranchSplit.of(withIf, POINTS, IMAGE), "subgraph");
    }

    /** The model with one more node, an If whose branch is an empty graph (never run; only its shape matters). */
    private static byte[] ifNode() {
        List<Protobuf.Field> fields = Protobuf.fields(MODEL);
        Protobuf.Writer out = new Protobuf.Writer();
        for (Protobuf.Field f : fields) {
            if (f.number() == 7) {
                byte[] g = f.bytes(MODEL);
                out.message(7, w -> {
                    w.raw(g, 0, g.length);
                    w.message(1, n -> n.string(1, "cld_rgb_nrm").string(2, "if_out").string(3, "if").string(4, "If")
                            .message(5, a -> a.string(1, "then_branch").message(6, sub -> sub.string(2, "empty")).varint(20, 5)));
                });
            } else {
                out.raw(MODEL, f.tagStart(), f.end());
            }
        }
        return out.toByteArray();
    }

    private static Map<String, BranchSplit.TensorType> declared(BranchSplit split) {
        Map<String, BranchSplit.TensorType> m = new LinkedHashMap<>();
        for (String c : split.first().cuts()) {
            m.put(c, new BranchSplit.TensorType(1, new long[] {1}));
        }
        for (String c : split.second().cuts()) {
            m.put(c, new BranchSplit.TensorType(1, new long[] {1}));
        }
        return m;
    }

    private static Map<String, OnnxTensor> pick(Map<String, OnnxTensor> feeds, List<String> names) {
        Map<String, OnnxTensor> m = new LinkedHashMap<>();
        names.forEach(n -> m.put(n, feeds.get(n)));
        return m;
    }

    private static List<String> nodeNames(byte[] model) {
        List<String> out = new ArrayList<>();
        for (byte[] g : Protobuf.messages(model, 7)) {
            for (byte[] node : Protobuf.messages(g, 1)) {
                out.add(Protobuf.string(node, 3));
            }
        }
        return out;
    }

    /** A CPU session with the PVN3D operators. */
    private static final class Runner implements AutoCloseable {
        final SessionOptions options = new SessionOptions();
        final CustomOpDomain domain = Pvn3dOps.register(options);
        final OrtSession session;

        Runner(byte[] model) {
            session = OrtEnvironment.getEnvironment().createSession(model, options);
        }

        @Override
        public void close() {
            session.close();
            domain.close();
            options.close();
        }
    }
}
