package org.pvn3d.ort.pipeline.graph;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.pipeline.MeanShift;

/**
 * Appends PVN3D's pose stage to an exported PVN3D network, so that one ORT graph goes from the frame to
 * the pose and nothing but the pose has to leave the device:
 *
 * <pre>
 *   votes = xyz(cld_rgb_nrm)[B,1,N,3] - concat(pred_kp_of, pred_ctr_of)[B,K,N,3]   (keypoints, centre last)
 *   mask  = argmax(pred_rgbd_seg, axis 2) == objectClass                            bool [B,N]
 *   pose_R, pose_t, pose_kps, pose_inliers = PVN3D_PoseSolve(votes, mask, model_kps)
 * </pre>
 *
 * These are the Java reference's votes and mask ({@link org.pvn3d.ort.pipeline.Votes#fromPredictions}:
 * the same float subtraction, ties of the argmax to the lowest class) and the exporter's pose head
 * (exporter/pvn3d_export/pvn3d/pose.py), except that the model keypoints are a graph input,
 * {@value #MODEL_KPS} {@code [K,3]}, instead of a constant: one graph serves every object. The mask is
 * also a graph output ({@value #MASK}) for a refinement stage on the host.
 *
 * <p>The model is edited as protobuf bytes (new nodes, inputs and outputs appended to the graph message),
 * so the network's weights are copied as they are, whatever their size or precision.
 */
public final class PoseHeadGraph {
    /** The model keypoints input: float [K,3], the object's keypoints in its own frame (the centre last). */
    public static final String MODEL_KPS = "model_kps";
    public static final String R = "pose_R";
    public static final String T = "pose_t";
    public static final String KPS = "pose_kps";
    public static final String INLIERS = "pose_inliers";
    /** The object mask, bool [B,N]. */
    public static final String MASK = "pose_mask";
    /** The outputs the head adds: R [B,3,3], t [B,3], keypoints [B,K,3] (float), inliers int64 [B], mask bool [B,N]. */
    public static final List<String> OUTPUTS = List.of(R, T, KPS, INLIERS, MASK);

    static final String DOMAIN = "ai.onnx.contrib";
    private static final String PREFIX = "pose_head/";
    // ONNX enums (onnx.proto3)
    private static final int FLOAT = 1;
    private static final int BOOL = 9;
    private static final int INT64 = 7;
    private static final int ATTR_FLOAT = 1;
    private static final int ATTR_INT = 2;

    private PoseHeadGraph() {
    }

    /**
     * {@code model} (ONNX bytes of a PVN3D network: input {@code cld_rgb_nrm [B,N,C]} with xyz first,
     * float outputs {@code pred_rgbd_seg [B,N,classes]}, {@code pred_kp_of [B,K-1,N,3]}, {@code pred_ctr_of
     * [B,1,N,3]}) with the pose head appended, mean shift with {@code settings}. An
     * {@link OrtErrorCode#ORT_INVALID_ARGUMENT} error when the model is not such a network or already has a
     * pose head.
     */
    public static byte[] append(byte[] model, MeanShift settings, int objectClass) {
        if (objectClass < 0) {
            throw invalid("the object class must be >= 0, got " + objectClass);
        }
        List<Protobuf.Field> fields;
        try {
            fields = Protobuf.fields(model);
        } catch (IllegalArgumentException e) {
            throw invalid("the model is not an ONNX file (" + e.getMessage() + ")");
        }
        byte[] graph = null;
        long defaultOpset = -1;
        boolean contrib = false;
        for (Protobuf.Field f : fields) {
            if (f.number() == 7 && f.wireType() == Protobuf.LENGTH_DELIMITED) { // ModelProto.graph
                graph = f.bytes(model);
            } else if (f.number() == 8 && f.wireType() == Protobuf.LENGTH_DELIMITED) { // ModelProto.opset_import
                byte[] opset = f.bytes(model);
                String domain = Protobuf.string(opset, 1);
                long version = Protobuf.varintField(opset, 2, 0);
                if (domain == null || domain.isEmpty() || domain.equals("ai.onnx")) {
                    defaultOpset = version;
                } else if (domain.equals(DOMAIN)) {
                    contrib = true;
                }
            }
        }
        if (graph == null) {
            throw invalid("the model has no graph");
        }
        if (defaultOpset < 13) {
            throw invalid("the pose head needs ONNX opset 13 or later, the model imports " + (defaultOpset < 0 ? "none" : defaultOpset));
        }
        checkNetwork(graph, objectClass);
        Protobuf.Writer out = new Protobuf.Writer();
        for (Protobuf.Field f : fields) {
            if (f.number() == 7 && f.wireType() == Protobuf.LENGTH_DELIMITED) {
                byte[] g = graph;
                out.message(7, w -> {
                    w.raw(g, 0, g.length);
                    appendHead(w, settings, objectClass);
                });
            } else {
                out.raw(model, f.tagStart(), f.end());
            }
        }
        if (!contrib) {
            out.message(8, w -> w.string(1, DOMAIN).varint(2, 1));
        }
        return out.toByteArray();
    }

    /** Whether {@code model}'s graph already has the pose head's outputs (ORT_INVALID_ARGUMENT when it is not ONNX). */
    public static boolean hasPoseHead(byte[] model) {
        try {
            for (byte[] graph : Protobuf.messages(model, 7)) {
                for (byte[] output : Protobuf.messages(graph, 12)) {
                    if (R.equals(Protobuf.string(output, 1))) {
                        return true;
                    }
                }
            }
            return false;
        } catch (IllegalArgumentException e) {
            throw invalid("the model is not an ONNX file (" + e.getMessage() + ")");
        }
    }

    /**
     * Whether any initializer of the model's graph holds float16 (an fp16 model, e.g. from exporter/convert_fp16.py);
     * ORT_INVALID_ARGUMENT when it is not ONNX.
     */
    public static boolean holdsFloat16(byte[] model) {
        try {
            for (byte[] graph : Protobuf.messages(model, 7)) {
                for (byte[] init : Protobuf.messages(graph, 5)) { // GraphProto.initializer
                    if (Protobuf.varintField(init, 2, 0) == 10) { // TensorProto.data_type FLOAT16
                        return true;
                    }
                }
            }
            return false;
        } catch (IllegalArgumentException e) {
            throw invalid("the model is not an ONNX file (" + e.getMessage() + ")");
        }
    }

    private static void checkNetwork(byte[] graph, int objectClass) {
        Set<String> inputs = new HashSet<>();
        for (byte[] vi : Protobuf.messages(graph, 11)) {
            inputs.add(Protobuf.string(vi, 1));
        }
        if (!inputs.contains("cld_rgb_nrm")) {
            throw invalid("the model has no input cld_rgb_nrm (it has " + inputs + "): not a PVN3D network");
        }
        Set<String> outputs = new HashSet<>();
        for (byte[] vi : Protobuf.messages(graph, 12)) {
            String name = Protobuf.string(vi, 1);
            outputs.add(name);
            if (name != null && name.startsWith("pred_") && elementType(vi) != FLOAT) {
                throw invalid("output " + name + " holds element type " + elementType(vi) + ", the pose head needs float32");
            }
            long classes = "pred_rgbd_seg".equals(name) ? lastDim(vi) : -1;
            if (classes > 0 && objectClass >= classes) { // else the mask is empty and every pose invalid, silently
                throw invalid("object class " + objectClass + " is not one of the model's " + classes + " classes (0 to "
                        + (classes - 1) + ")");
            }
        }
        for (String need : List.of("pred_rgbd_seg", "pred_kp_of", "pred_ctr_of")) {
            if (!outputs.contains(need)) {
                throw invalid("the model has no output " + need + " (it has " + outputs + "): not a PVN3D network");
            }
        }
        for (String head : OUTPUTS) {
            if (outputs.contains(head) || inputs.contains(head)) {
                throw invalid("the model already has " + head + ": it has a pose head");
            }
        }
        if (inputs.contains(MODEL_KPS)) {
            throw invalid("the model already has an input " + MODEL_KPS);
        }
    }

    /** The last dimension of ValueInfoProto.type.tensor_type.shape when it is a number, else -1. */
    private static long lastDim(byte[] valueInfo) {
        for (byte[] type : Protobuf.messages(valueInfo, 2)) {
            for (byte[] tensor : Protobuf.messages(type, 1)) {
                for (byte[] shape : Protobuf.messages(tensor, 2)) {
                    List<byte[]> dims = Protobuf.messages(shape, 1);
                    return dims.isEmpty() ? -1 : Protobuf.varintField(dims.get(dims.size() - 1), 1, -1);
                }
            }
        }
        return -1;
    }

    /** ValueInfoProto.type.tensor_type.elem_type, or 0 when not given. */
    private static long elementType(byte[] valueInfo) {
        for (byte[] type : Protobuf.messages(valueInfo, 2)) {
            for (byte[] tensor : Protobuf.messages(type, 1)) {
                return Protobuf.varintField(tensor, 1, 0);
            }
        }
        return 0;
    }

    private static void appendHead(Protobuf.Writer g, MeanShift s, int objectClass) {
        String xyz = PREFIX + "xyz";
        String xyz4 = PREFIX + "xyz_b1n3";
        String offsets = PREFIX + "offsets";
        String votes = PREFIX + "votes";
        String classes = PREFIX + "argmax";
        // constants as initializers (GraphProto.initializer = 5)
        int64Initializer(g, PREFIX + "slice_starts", 0);
        int64Initializer(g, PREFIX + "slice_ends", 3);
        int64Initializer(g, PREFIX + "slice_axes", 2);
        int64Initializer(g, PREFIX + "unsqueeze_axes", 1);
        int64Scalar(g, PREFIX + "object_class", objectClass);
        // nodes (GraphProto.node = 1)
        node(g, "Slice", "", List.of("cld_rgb_nrm", PREFIX + "slice_starts", PREFIX + "slice_ends", PREFIX + "slice_axes"),
                List.of(xyz), null);
        node(g, "Unsqueeze", "", List.of(xyz, PREFIX + "unsqueeze_axes"), List.of(xyz4), null);
        node(g, "Concat", "", List.of("pred_kp_of", "pred_ctr_of"), List.of(offsets), w -> intAttribute(w, "axis", 1));
        node(g, "Sub", "", List.of(xyz4, offsets), List.of(votes), null);
        node(g, "ArgMax", "", List.of("pred_rgbd_seg"), List.of(classes), w -> {
            intAttribute(w, "axis", 2);
            intAttribute(w, "keepdims", 0);
        });
        node(g, "Equal", "", List.of(classes, PREFIX + "object_class"), List.of(MASK), null);
        node(g, "PVN3D_PoseSolve", DOMAIN, List.of(votes, MASK, MODEL_KPS), List.of(R, T, KPS, INLIERS), w -> {
            floatAttribute(w, "bandwidth", s.bandwidth());
            intAttribute(w, "max_iter", s.maxIter());
            intAttribute(w, "center_filter", s.centerFilter() ? 1 : 0);
        });
        // the model keypoints input (GraphProto.input = 11), the outputs (GraphProto.output = 12)
        valueInfo(g, 11, MODEL_KPS, FLOAT, "K", "3");
        valueInfo(g, 12, R, FLOAT, "B", "3", "3");
        valueInfo(g, 12, T, FLOAT, "B", "3");
        valueInfo(g, 12, KPS, FLOAT, "B", "K", "3");
        valueInfo(g, 12, INLIERS, INT64, "B");
        valueInfo(g, 12, MASK, BOOL, "B", "N");
    }

    private static void node(Protobuf.Writer g, String opType, String domain, List<String> inputs, List<String> outputs,
            java.util.function.Consumer<Protobuf.Writer> attributes) {
        g.message(1, n -> {
            inputs.forEach(i -> n.string(1, i));
            outputs.forEach(o -> n.string(2, o));
            n.string(3, PREFIX + opType);
            n.string(4, opType);
            if (attributes != null) {
                attributes.accept(n);
            }
            if (!domain.isEmpty()) {
                n.string(7, domain);
            }
        });
    }

    private static void intAttribute(Protobuf.Writer node, String name, long value) {
        node.message(5, a -> a.string(1, name).varint(3, value).varint(20, ATTR_INT));
    }

    private static void floatAttribute(Protobuf.Writer node, String name, float value) {
        node.message(5, a -> a.string(1, name).fixed32Float(2, value).varint(20, ATTR_FLOAT));
    }

    private static void int64Initializer(Protobuf.Writer g, String name, long value) {
        g.message(5, t -> t.varint(1, 1).varint(2, INT64).string(8, name).bytes(9, le(value)));
    }

    private static void int64Scalar(Protobuf.Writer g, String name, long value) {
        g.message(5, t -> t.varint(2, INT64).string(8, name).bytes(9, le(value)));
    }

    private static byte[] le(long v) {
        return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(v).array();
    }

    /** ValueInfoProto {name, type: {tensor_type: {elem_type, shape: dims}}}; a dim is a number or a name. */
    private static void valueInfo(Protobuf.Writer g, int field, String name, int elemType, String... dims) {
        g.message(field, vi -> vi.string(1, name).message(2, type -> type.message(1, tensor -> {
            tensor.varint(1, elemType);
            tensor.message(2, shape -> {
                for (String d : dims) {
                    shape.message(1, dim -> {
                        if (Character.isDigit(d.charAt(0))) {
                            dim.varint(1, Long.parseLong(d));
                        } else {
                            dim.string(2, d);
                        }
                    });
                }
            });
        })));
    }

    private static OrtException invalid(String message) {
        return new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "pose head: " + message);
    }
}
