package org.pvn3d.ort.pipeline;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The nodes of an ONNX model's main graph, read straight from its protobuf (ModelProto.graph = 7,
 * GraphProto.node = 1; NodeProto.name = 3, op_type = 4, domain = 7), so that tests can compare what a
 * run reports against the model itself without an ONNX library. Used by this module's tests and, through
 * its test jar, by the benchmarks' tests.
 */
public final class OnnxGraphNodes {
    private OnnxGraphNodes() {}

    /** One node: its name, operator type and domain ("" for the default ONNX domain). */
    public record Node(String name, String opType, String domain) {}

    /** Every node of the model's graph, in the file's order. */
    public static List<Node> of(byte[] model) {
        List<Node> out = new ArrayList<>();
        for (byte[] graph : fields(model, 7)) {
            for (byte[] node : fields(graph, 1)) {
                out.add(new Node(string(node, 3), string(node, 4), string(node, 7)));
            }
        }
        return out;
    }

    private static String string(byte[] msg, int number) {
        List<byte[]> f = fields(msg, number);
        return f.isEmpty() ? "" : new String(f.get(0), StandardCharsets.UTF_8);
    }

    /** The length-delimited fields numbered {@code number} of a protobuf message. */
    private static List<byte[]> fields(byte[] msg, int number) {
        List<byte[]> out = new ArrayList<>();
        int[] pos = {0};
        while (pos[0] < msg.length) {
            long key = varint(msg, pos);
            int wire = (int) (key & 7);
            switch (wire) {
                case 0 -> varint(msg, pos);
                case 1 -> pos[0] += 8;
                case 5 -> pos[0] += 4;
                case 2 -> {
                    int len = (int) varint(msg, pos);
                    if (key >>> 3 == number) {
                        out.add(Arrays.copyOfRange(msg, pos[0], pos[0] + len));
                    }
                    pos[0] += len;
                }
                default -> throw new IllegalStateException("wire type " + wire);
            }
        }
        return out;
    }

    private static long varint(byte[] b, int[] pos) {
        long v = 0;
        for (int shift = 0; ; shift += 7) {
            int x = b[pos[0]++] & 0xFF;
            v |= (long) (x & 0x7F) << shift;
            if ((x & 0x80) == 0) {
                return v;
            }
        }
    }
}
