package org.pvn3d.ort.pipeline.graph;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;

/**
 * Cuts a model into two independent branches and the part that joins them, so that the branches can run
 * at the same time (two sessions on two CUDA streams) and the join after both.
 *
 * <p>PVN3D has two such branches: PointNet++ reads only the point cloud, the CNN and its pixel pick read
 * only the image and {@code choose}; they meet in the dense fusion. On one ORT stream they run one after
 * the other, and PointNet++'s furthest point sampling, a serial chain on one thread block per cloud,
 * leaves most of the GPU idle while the CNN waits behind it. ORT cannot run them side by side itself
 * while it captures CUDA graphs (its CUDA provider then puts every node on one stream).
 *
 * <p>A node belongs to a branch when everything it reads comes from that branch's graph inputs (and
 * constants); nodes that read no graph input (constants) go to every part that uses them; every other
 * node belongs to the join. A tensor one part makes and another reads becomes an output of the first and
 * an input of the second (a <em>cut</em>). The join's cut inputs need their element types and shapes,
 * which the graph may not say (our custom operators have no shape inference): the caller runs both
 * branches once and passes what came out to {@link #join(Map)}. Every output of the original graph is an
 * output of the part that computes it, so the three parts together compute what the model did, node for
 * node, in the same order within each part.
 *
 * <p>The model is edited as protobuf bytes; nodes, initializers and value infos are copied as they are.
 * Graphs with control flow (nodes holding subgraphs, whose reads of outer tensors are not listed as
 * inputs) or sparse initializers are refused.
 */
public final class BranchSplit {
    // ModelProto.graph; GraphProto: node, initializer, input, output, value_info, sparse_initializer
    private static final int MODEL_GRAPH = 7;
    private static final int NODE = 1;
    private static final int INITIALIZER = 5;
    private static final int INPUT = 11;
    private static final int OUTPUT = 12;
    private static final int VALUE_INFO = 13;
    private static final int QUANTIZATION_ANNOTATION = 14;
    private static final int SPARSE_INITIALIZER = 15;
    // NodeProto: input, output, attribute; AttributeProto: g, graphs
    private static final int NODE_INPUT = 1;
    private static final int NODE_OUTPUT = 2;
    private static final int NODE_ATTRIBUTE = 5;
    private static final int ATTRIBUTE_GRAPH = 6;
    private static final int ATTRIBUTE_GRAPHS = 11;

    private static final int FIRST = 0;
    private static final int SECOND = 1;
    private static final int JOIN = 2;
    private static final int FREE = 3; // reads no graph input

    /** The element type (ONNX TensorProto.DataType, which ORT's element types equal) and shape of a cut tensor. */
    public record TensorType(int elementType, long[] shape) {
        public TensorType {
            shape = shape.clone();
        }

        @Override
        public long[] shape() {
            return shape.clone();
        }
    }

    /** One part: its ONNX bytes, its graph inputs and outputs (in order), and which of its outputs are cuts. */
    public record Part(byte[] model, List<String> inputs, List<String> outputs, List<String> cuts) {
    }

    private final byte[] model;
    private final List<Protobuf.Field> modelFields;
    private final byte[] graph;
    private final List<Protobuf.Field> graphFields;
    private final List<Node> nodes = new ArrayList<>();
    private final Map<String, Protobuf.Field> initializers = new HashMap<>();
    private final Map<String, Protobuf.Field> graphInputs = new HashMap<>();
    private final List<String> graphInputOrder = new ArrayList<>();
    private final List<String> graphOutputs = new ArrayList<>();
    private final Map<String, Protobuf.Field> valueInfos = new HashMap<>();
    /** The nodes of each part (FIRST, SECOND, JOIN), constants included, in the graph's order. */
    private final List<List<Node>> parts = new ArrayList<>();
    private final Part first;
    private final Part second;
    private final List<String> joinInputs;
    private final List<String> joinOutputs;

    private record Node(int index, Protobuf.Field field, List<String> inputs, List<String> outputs) {
    }

    private BranchSplit(byte[] model, Set<String> firstInputs, Set<String> secondInputs) {
        this.model = model;
        try {
            this.modelFields = Protobuf.fields(model);
        } catch (IllegalArgumentException e) {
            throw invalid("the model is not an ONNX file (" + e.getMessage() + ")");
        }
        byte[] g = null;
        for (Protobuf.Field f : modelFields) {
            if (f.number() == MODEL_GRAPH && f.wireType() == Protobuf.LENGTH_DELIMITED) {
                g = f.bytes(model);
            }
        }
        if (g == null) {
            throw invalid("the model has no graph");
        }
        this.graph = g;
        try {
            this.graphFields = Protobuf.fields(graph);
            read();
        } catch (IllegalArgumentException e) { // a malformed field of the graph or of a node in it
            throw invalid("the model is not an ONNX file (" + e.getMessage() + ")");
        }
        for (String name : firstInputs) {
            if (!graphInputs.containsKey(name)) {
                throw invalid("the first branch's input " + name + " is not an input of the graph " + graphInputOrder);
            }
        }
        for (String name : secondInputs) {
            if (!graphInputs.containsKey(name) || firstInputs.contains(name)) {
                throw invalid("the second branch's input " + name + " is not an input of the graph " + graphInputOrder
                        + " or is also the first branch's");
            }
        }
        int[] kind = classify(firstInputs, secondInputs);
        for (int p = FIRST; p <= JOIN; p++) {
            parts.add(withConstants(kind, p));
        }
        if (parts.get(FIRST).stream().noneMatch(n -> kind[n.index()] == FIRST)
                || parts.get(SECOND).stream().noneMatch(n -> kind[n.index()] == SECOND)) {
            throw invalid("one of the branches computes nothing: nothing to run side by side");
        }
        Set<String> joinReads = reads(parts.get(JOIN));
        this.first = branch(FIRST, joinReads);
        this.second = branch(SECOND, joinReads);
        Set<String> joinMakes = makes(parts.get(JOIN));
        // the join gives every graph output no branch gives: what its nodes make, a graph input passed through
        // (which it must then take as an input) and an initializer that is itself an output
        this.joinOutputs = new ArrayList<>();
        for (String name : graphOutputs) {
            boolean fromBranch = first.outputs().contains(name) || second.outputs().contains(name);
            if (joinMakes.contains(name) || (!fromBranch && (graphInputs.containsKey(name) || initializers.containsKey(name)))) {
                joinOutputs.add(name);
            }
        }
        this.joinInputs = new ArrayList<>();
        for (String name : graphInputOrder) {
            if (joinReads.contains(name) || joinOutputs.contains(name)) {
                joinInputs.add(name);
            }
        }
        joinInputs.addAll(first.cuts());
        joinInputs.addAll(second.cuts());
    }

    /**
     * Splits {@code model}: the first branch computes from the graph inputs {@code firstInputs}, the second
     * from {@code secondInputs} (disjoint). An {@link OrtErrorCode#ORT_INVALID_ARGUMENT} error when the
     * model is not ONNX, names no such inputs, holds control flow or sparse initializers, or one branch
     * computes nothing.
     */
    public static BranchSplit of(byte[] model, Set<String> firstInputs, Set<String> secondInputs) {
        return new BranchSplit(model, firstInputs, secondInputs);
    }

    /** The first branch. */
    public Part first() {
        return first;
    }

    /** The second branch. */
    public Part second() {
        return second;
    }

    /** The join's inputs: graph inputs it reads (graph order), then the first branch's cuts, then the second's. */
    public List<String> joinInputs() {
        return Collections.unmodifiableList(joinInputs);
    }

    /**
     * The join, its cut inputs declared with {@code cuts} (every cut of both branches, e.g. as one run of
     * the branches made them); graph inputs keep their declarations.
     */
    public Part join(Map<String, TensorType> cuts) {
        Protobuf.Writer inputs = new Protobuf.Writer();
        for (String name : joinInputs) {
            if (graphInputs.containsKey(name)) {
                Protobuf.Field f = graphInputs.get(name);
                inputs.raw(graph, f.tagStart(), f.end());
            } else {
                TensorType t = cuts.get(name);
                if (t == null) {
                    throw invalid("no element type and shape given for the cut " + name);
                }
                inputs.bytes(INPUT, tensorValueInfo(name, t));
            }
        }
        List<String> cutNames = new ArrayList<>(first.cuts());
        cutNames.addAll(second.cuts());
        byte[] m = build(parts.get(JOIN), inputs.toByteArray(), joinOutputs, Set.copyOf(cutNames));
        return new Part(m, List.copyOf(joinInputs), List.copyOf(joinOutputs), List.of());
    }

    private void read() {
        int index = 0;
        for (Protobuf.Field f : graphFields) {
            if (f.wireType() != Protobuf.LENGTH_DELIMITED) {
                continue;
            }
            switch (f.number()) {
                case NODE -> {
                    byte[] n = f.bytes(graph);
                    List<String> in = new ArrayList<>();
                    List<String> out = new ArrayList<>();
                    for (Protobuf.Field nf : Protobuf.fields(n)) {
                        if (nf.number() == NODE_INPUT && nf.wireType() == Protobuf.LENGTH_DELIMITED) {
                            in.add(nf.string(n));
                        } else if (nf.number() == NODE_OUTPUT && nf.wireType() == Protobuf.LENGTH_DELIMITED) {
                            out.add(nf.string(n));
                        } else if (nf.number() == NODE_ATTRIBUTE && nf.wireType() == Protobuf.LENGTH_DELIMITED) {
                            for (Protobuf.Field af : Protobuf.fields(nf.bytes(n))) {
                                if (af.number() == ATTRIBUTE_GRAPH || af.number() == ATTRIBUTE_GRAPHS) {
                                    throw invalid("node " + Protobuf.string(n, 3) + " holds a subgraph: graphs with control flow"
                                            + " are not split");
                                }
                            }
                        }
                    }
                    nodes.add(new Node(index++, f, in, out));
                }
                case INITIALIZER -> initializers.put(Protobuf.string(f.bytes(graph), 8), f);
                case INPUT -> {
                    String name = Protobuf.string(f.bytes(graph), 1);
                    graphInputs.put(name, f);
                    graphInputOrder.add(name);
                }
                case OUTPUT -> graphOutputs.add(Protobuf.string(f.bytes(graph), 1));
                case VALUE_INFO -> valueInfos.put(Protobuf.string(f.bytes(graph), 1), f);
                case SPARSE_INITIALIZER -> throw invalid("the graph holds sparse initializers: not split");
                default -> {
                }
            }
        }
        // an input that is also an initializer (older exports list weights as inputs) is a constant
        for (String name : initializers.keySet()) {
            if (graphInputs.remove(name) != null) {
                graphInputOrder.remove(name);
            }
        }
    }

    /** Each node's part; checks that the nodes come in an order where every tensor is made before it is read. */
    private int[] classify(Set<String> firstInputs, Set<String> secondInputs) {
        // what each tensor depends on: bit 0 the first branch's inputs, bit 1 the second's, bit 2 any other input
        Map<String, Integer> deps = new HashMap<>();
        for (String name : graphInputOrder) {
            deps.put(name, firstInputs.contains(name) ? 1 : secondInputs.contains(name) ? 2 : 4);
        }
        initializers.keySet().forEach(name -> deps.put(name, 0));
        int[] kind = new int[nodes.size()];
        for (Node n : nodes) {
            int d = 0;
            for (String in : n.inputs()) {
                if (in.isEmpty()) {
                    continue; // an optional input left out
                }
                Integer x = deps.get(in);
                if (x == null) {
                    throw invalid("node " + n.index() + " reads " + in + " before any node makes it: the graph is not in"
                            + " topological order");
                }
                d |= x;
            }
            kind[n.index()] = switch (d) {
                case 0 -> FREE;
                case 1 -> FIRST;
                case 2 -> SECOND;
                default -> JOIN;
            };
            for (String out : n.outputs()) {
                if (!out.isEmpty() && deps.put(out, d) != null) {
                    // ORT refuses such a graph; the parts would each load, computing something else
                    throw invalid("tensor " + out + " is made twice (again by node " + n.index() + "): not a valid graph");
                }
            }
        }
        return kind;
    }

    /** The nodes of {@code part} and the constant nodes they (or the part's graph outputs) need, in graph order. */
    private List<Node> withConstants(int[] kind, int part) {
        Set<String> needed = new HashSet<>();
        boolean[] take = new boolean[nodes.size()];
        for (Node n : nodes) {
            if (kind[n.index()] == part) {
                take[n.index()] = true;
                needed.addAll(n.inputs());
            }
        }
        if (part == JOIN) {
            needed.addAll(graphOutputs); // a graph output made by constants alone is the join's
        }
        for (int i = nodes.size() - 1; i >= 0; i--) {
            Node n = nodes.get(i);
            if (kind[i] == FREE && n.outputs().stream().anyMatch(needed::contains)) {
                take[i] = true;
                needed.addAll(n.inputs());
            }
        }
        List<Node> out = new ArrayList<>();
        for (Node n : nodes) {
            if (take[n.index()]) {
                out.add(n);
            }
        }
        return out;
    }

    private Part branch(int part, Set<String> joinReads) {
        List<Node> own = parts.get(part);
        Set<String> reads = reads(own);
        Set<String> makes = makes(own);
        Set<String> joinMakes = makes(parts.get(JOIN));
        Protobuf.Writer inputs = new Protobuf.Writer();
        List<String> inputNames = new ArrayList<>();
        for (String name : graphInputOrder) {
            if (reads.contains(name)) {
                Protobuf.Field f = graphInputs.get(name);
                inputs.raw(graph, f.tagStart(), f.end());
                inputNames.add(name);
            }
        }
        List<String> cuts = new ArrayList<>();
        for (Node n : own) {
            for (String out : n.outputs()) {
                // a constant's output is made again in the join when the join needs it
                if (!out.isEmpty() && joinReads.contains(out) && !joinMakes.contains(out) && !cuts.contains(out)) {
                    cuts.add(out);
                }
            }
        }
        List<String> outputs = new ArrayList<>(cuts);
        for (String name : graphOutputs) {
            if (makes.contains(name) && !outputs.contains(name) && !joinMakes.contains(name)) {
                outputs.add(name);
            }
        }
        byte[] m = build(own, inputs.toByteArray(), outputs, Set.of());
        return new Part(m, List.copyOf(inputNames), List.copyOf(outputs), List.copyOf(cuts));
    }

    /**
     * A model with the original's fields, its graph holding {@code own} nodes, the initializers they read,
     * {@code inputs} (encoded GraphProto.input fields), {@code outputs} (declared as in the original graph
     * or by its value info where there is one; by name alone otherwise: ORT infers the rest) and the value
     * infos of the tensors it holds, except those of {@code declaredInputs}.
     */
    private byte[] build(List<Node> own, byte[] inputs, List<String> outputs, Set<String> declaredInputs) {
        Set<String> tensors = new HashSet<>(reads(own));
        tensors.addAll(makes(own));
        tensors.addAll(outputs); // an output that is an initializer is copied with the part
        Set<Integer> nodeIndices = new HashSet<>();
        own.forEach(n -> nodeIndices.add(n.index()));
        Map<String, Protobuf.Field> declaredOutputs = new HashMap<>();
        for (Protobuf.Field f : graphFields) {
            if (f.number() == OUTPUT && f.wireType() == Protobuf.LENGTH_DELIMITED) {
                declaredOutputs.put(Protobuf.string(f.bytes(graph), 1), f);
            }
        }
        Protobuf.Writer g = new Protobuf.Writer();
        int nodeIndex = 0;
        boolean inputsWritten = false;
        for (Protobuf.Field f : graphFields) {
            boolean delimited = f.wireType() == Protobuf.LENGTH_DELIMITED;
            if (delimited && f.number() == NODE) {
                if (nodeIndices.contains(nodeIndex)) {
                    g.raw(graph, f.tagStart(), f.end());
                }
                nodeIndex++;
            } else if (delimited && f.number() == INITIALIZER) {
                if (tensors.contains(Protobuf.string(f.bytes(graph), 8))) {
                    g.raw(graph, f.tagStart(), f.end());
                }
            } else if (delimited && (f.number() == INPUT || f.number() == OUTPUT)) {
                if (!inputsWritten) {
                    g.raw(inputs, 0, inputs.length);
                    for (String name : outputs) {
                        Protobuf.Field declared = declaredOutputs.get(name);
                        if (declared == null) {
                            declared = valueInfos.get(name);
                        }
                        if (declared != null) {
                            byte[] vi = declared.bytes(graph);
                            g.bytes(OUTPUT, vi);
                        } else {
                            g.message(OUTPUT, vi -> vi.string(1, name));
                        }
                    }
                    inputsWritten = true;
                }
            } else if (delimited && f.number() == VALUE_INFO) {
                String name = Protobuf.string(f.bytes(graph), 1);
                if (tensors.contains(name) && !declaredInputs.contains(name) && !outputs.contains(name)) {
                    g.raw(graph, f.tagStart(), f.end());
                }
            } else if (delimited && f.number() == QUANTIZATION_ANNOTATION) {
                continue;
            } else {
                g.raw(graph, f.tagStart(), f.end());
            }
        }
        if (!inputsWritten) {
            throw invalid("the graph declares no inputs or outputs");
        }
        byte[] newGraph = g.toByteArray();
        Protobuf.Writer out = new Protobuf.Writer();
        for (Protobuf.Field f : modelFields) {
            if (f.number() == MODEL_GRAPH && f.wireType() == Protobuf.LENGTH_DELIMITED) {
                out.bytes(MODEL_GRAPH, newGraph);
            } else {
                out.raw(model, f.tagStart(), f.end());
            }
        }
        return out.toByteArray();
    }

    private static Set<String> reads(List<Node> own) {
        Set<String> s = new LinkedHashSet<>();
        own.forEach(n -> n.inputs().stream().filter(x -> !x.isEmpty()).forEach(s::add));
        return s;
    }

    private static Set<String> makes(List<Node> own) {
        Set<String> s = new LinkedHashSet<>();
        own.forEach(n -> n.outputs().stream().filter(x -> !x.isEmpty()).forEach(s::add));
        return s;
    }

    /** ValueInfoProto {name, type: {tensor_type: {elem_type, shape}}}. */
    private static byte[] tensorValueInfo(String name, TensorType t) {
        Protobuf.Writer vi = new Protobuf.Writer();
        vi.string(1, name).message(2, type -> type.message(1, tensor -> {
            tensor.varint(1, t.elementType());
            tensor.message(2, shape -> {
                for (long d : t.shape()) {
                    shape.message(1, dim -> dim.varint(1, d));
                }
            });
        }));
        return vi.toByteArray();
    }

    private static OrtException invalid(String message) {
        return new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "branch split: " + message);
    }
}
