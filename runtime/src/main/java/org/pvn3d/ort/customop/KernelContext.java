package org.pvn3d.ort.customop;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import org.pvn3d.ort.OnnxTensorType;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.ffm.OrtApi;
import org.pvn3d.ort.internal.Api;

/**
 * One compute call of a kernel: its inputs, its outputs (allocated by shape), the CUDA stream ORT
 * runs the node on, and ORT's allocator for scratch memory. Valid only during {@link
 * CustomKernel#compute}; the bridge closes it when compute returns.
 *
 * <p>The {@code input(index, type, rank)} and {@code requireDim} checks throw
 * {@link OrtException}s whose messages name the operator, the input and the offending value, as
 * spec/ops.md asks; thrown from compute they fail the run, not the session.
 */
public final class KernelContext implements AutoCloseable {
    private final CustomOp op;
    private final String nodeName;
    private final MemorySegment context;
    private final Arena arena = Arena.ofConfined();
    private final MemorySegment ptrOut = arena.allocate(ADDRESS);
    private final MemorySegment longOut = arena.allocate(JAVA_LONG);

    KernelContext(CustomOp op, String nodeName, MemorySegment context) {
        this.op = op;
        this.nodeName = nodeName;
        this.context = context;
    }

    public CustomOp op() {
        return op;
    }

    public String nodeName() {
        return nodeName;
    }

    /** "OpName" plus the node's name, for messages. */
    public String where() {
        return op.name() + (nodeName.isEmpty() ? "" : " (node '" + nodeName + "')");
    }

    public int inputCount() {
        Api.checkStatus(OrtApi.KernelContext_GetInputCount.invoke(Api.Kernel.KernelContext_GetInputCount, context, longOut));
        return Math.toIntExact(longOut.get(JAVA_LONG, 0));
    }

    public int outputCount() {
        Api.checkStatus(OrtApi.KernelContext_GetOutputCount.invoke(Api.Kernel.KernelContext_GetOutputCount, context, longOut));
        return Math.toIntExact(longOut.get(JAVA_LONG, 0));
    }

    /** Input {@code index}, or null when an optional input is absent. */
    public KernelTensor inputOrNull(int index) {
        Api.checkStatus(OrtApi.KernelContext_GetInput.invoke(Api.Kernel.KernelContext_GetInput, context, index, ptrOut));
        MemorySegment value = ptrOut.get(ADDRESS, 0);
        if (value.address() == 0) {
            return null;
        }
        return view(portName(op.inputs(), index, "input"), value, inputOnHost(index));
    }

    /** Input {@code index}; an absent input is an error naming it. */
    public KernelTensor input(int index) {
        KernelTensor t = inputOrNull(index);
        if (t == null) {
            throw invalid("input " + portName(op.inputs(), index, "input") + " is missing");
        }
        return t;
    }

    /**
     * Input {@code index}, checked to hold {@code type} elements in {@code rank} dimensions (rank -1:
     * any rank). ORT checks element types against the graph when the session is created; this
     * check is what remains for graphs whose inputs are untyped or unshaped.
     */
    public KernelTensor input(int index, OnnxTensorType type, int rank) {
        KernelTensor t = input(index);
        if (type != OnnxTensorType.UNDEFINED && t.type() != type) {
            throw invalid("input " + t.name() + " must hold " + typeName(type) + " elements, got " + typeName(t.type()));
        }
        if (rank >= 0 && t.rank() != rank) {
            throw invalid("input " + t.name() + " must have rank " + rank + ", got rank " + t.rank() + " (shape "
                    + t.shapeString() + ")");
        }
        return t;
    }

    /** Checks {@code t.dim(axis) == expected}; {@code meaning} says where the expectation comes from. */
    public void requireDim(KernelTensor t, int axis, long expected, String meaning) {
        if (t.dim(axis) != expected) {
            throw invalid("input " + t.name() + " must have " + expected + " in dimension " + axis + " (" + meaning
                    + "), got " + t.dim(axis) + " (shape " + t.shapeString() + ")");
        }
    }

    /** Output {@code index}, allocated by ORT with {@code shape} in the provider's memory. */
    public KernelTensor output(int index, long... shape) {
        for (long d : shape) {
            if (d < 0) {
                throw invalid("output " + portName(op.outputs(), index, "output") + " cannot have shape " + Arrays.toString(shape));
            }
        }
        MemorySegment dims = arena.allocate(JAVA_LONG, Math.max(1, shape.length));
        MemorySegment.copy(shape, 0, dims, JAVA_LONG, 0, shape.length);
        Api.checkStatus(OrtApi.KernelContext_GetOutput.invoke(Api.Kernel.KernelContext_GetOutput, context, index, dims,
                shape.length, ptrOut), where() + ": output " + index);
        MemorySegment value = ptrOut.get(ADDRESS, 0);
        if (value.address() == 0) {
            throw new OrtException(OrtErrorCode.ORT_FAIL, where() + ": ORT gave no value for output " + index);
        }
        return view(portName(op.outputs(), index, "output"), value, op.runsOnCpu());
    }

    /**
     * The CUDA stream ({@code cudaStream_t}) ORT runs this node on, as an address-only segment (the
     * NULL segment on the CPU provider). Launch on it and do not synchronise it: ORT orders the
     * following nodes after it.
     */
    public MemorySegment gpuStream() {
        Api.checkStatus(OrtApi.KernelContext_GetGPUComputeStream.invoke(Api.Kernel.KernelContext_GetGPUComputeStream,
                context, ptrOut), where() + ": compute stream");
        return ptrOut.get(ADDRESS, 0);
    }

    /**
     * ORT's allocator for the memory {@code like} lives in (for a CUDA kernel's input: the session's
     * CUDA arena on that device). The caller closes it (after freeing its blocks).
     */
    public KernelAllocator allocator(KernelTensor like) {
        Api.checkStatus(OrtApi.GetTensorMemoryInfo.invoke(Api.Value.GetTensorMemoryInfo, like.ortValue(), ptrOut));
        MemorySegment memoryInfo = ptrOut.get(ADDRESS, 0);
        Api.checkStatus(OrtApi.KernelContext_GetAllocator.invoke(Api.Kernel.KernelContext_GetAllocator, context, memoryInfo,
                ptrOut), where() + ": allocator");
        return new KernelAllocator(ptrOut.get(ADDRESS, 0));
    }

    /** An {@link OrtErrorCode#ORT_INVALID_ARGUMENT} exception whose message starts with the operator. */
    public OrtException invalid(String problem) {
        return new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, where() + ": " + problem);
    }

    @Override
    public void close() {
        arena.close();
    }

    private boolean inputOnHost(int index) {
        if (op.runsOnCpu()) {
            return true;
        }
        Port p = index < op.inputs().size() ? op.inputs().get(index) : op.inputs().isEmpty() ? null : op.inputs().getLast();
        return p != null && p.memory() == Port.Memory.CPU_INPUT;
    }

    private KernelTensor view(String name, MemorySegment value, boolean onHost) {
        Api.checkStatus(OrtApi.GetTensorTypeAndShape.invoke(Api.Value.GetTensorTypeAndShape, value, ptrOut), where() + ": " + name);
        MemorySegment info = ptrOut.get(ADDRESS, 0);
        OnnxTensorType type;
        long[] shape;
        try {
            MemorySegment intOut = arena.allocate(JAVA_INT);
            Api.checkStatus(OrtApi.GetTensorElementType.invoke(Api.TypeInfo.GetTensorElementType, info, intOut));
            type = OnnxTensorType.of(intOut.get(JAVA_INT, 0));
            Api.checkStatus(OrtApi.GetDimensionsCount.invoke(Api.TypeInfo.GetDimensionsCount, info, longOut));
            int rank = Math.toIntExact(longOut.get(JAVA_LONG, 0));
            MemorySegment dims = arena.allocate(JAVA_LONG, Math.max(1, rank));
            Api.checkStatus(OrtApi.GetDimensions.invoke(Api.TypeInfo.GetDimensions, info, dims, rank));
            shape = dims.asSlice(0, rank * 8L).toArray(JAVA_LONG);
        } finally {
            OrtApi.ReleaseTensorTypeAndShapeInfo.invoke(Api.TypeInfo.ReleaseTensorTypeAndShapeInfo, info);
        }
        Api.checkStatus(OrtApi.GetTensorMutableData.invoke(Api.Value.GetTensorMutableData, value, ptrOut), where() + ": " + name);
        return new KernelTensor(name, value, type, shape, ptrOut.get(ADDRESS, 0), onHost);
    }

    /** The inputs' shapes ("[1,1024,3] [1,256]"; "-" for an absent optional input) and their bytes in all. */
    record Inputs(String shapes, long bytes) {}

    /**
     * Reads the shapes of a compute call's inputs (for the JFR CustomOpCompute event, only when a
     * recording wants it); {@code context} must still be the live {@code OrtKernelContext*}.
     */
    static Inputs describeInputs(MemorySegment context) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(ADDRESS);
            MemorySegment n = a.allocate(JAVA_LONG);
            MemorySegment type = a.allocate(JAVA_INT);
            Api.checkStatus(OrtApi.KernelContext_GetInputCount.invoke(Api.Kernel.KernelContext_GetInputCount, context, n));
            long count = n.get(JAVA_LONG, 0);
            StringBuilder shapes = new StringBuilder();
            long bytes = 0;
            for (long i = 0; i < count; i++) {
                if (i > 0) {
                    shapes.append(' ');
                }
                Api.checkStatus(OrtApi.KernelContext_GetInput.invoke(Api.Kernel.KernelContext_GetInput, context, i, out));
                MemorySegment value = out.get(ADDRESS, 0);
                if (value.address() == 0) {
                    shapes.append('-');
                    continue;
                }
                Api.checkStatus(OrtApi.GetTensorTypeAndShape.invoke(Api.Value.GetTensorTypeAndShape, value, out));
                MemorySegment info = out.get(ADDRESS, 0);
                try {
                    Api.checkStatus(OrtApi.GetTensorElementType.invoke(Api.TypeInfo.GetTensorElementType, info, type));
                    Api.checkStatus(OrtApi.GetDimensionsCount.invoke(Api.TypeInfo.GetDimensionsCount, info, n));
                    int rank = (int) n.get(JAVA_LONG, 0);
                    MemorySegment dims = a.allocate(JAVA_LONG, Math.max(1, rank));
                    Api.checkStatus(OrtApi.GetDimensions.invoke(Api.TypeInfo.GetDimensions, info, dims, rank));
                    long elements = 1;
                    shapes.append('[');
                    for (int d = 0; d < rank; d++) {
                        long dim = dims.getAtIndex(JAVA_LONG, d);
                        shapes.append(d == 0 ? "" : ",").append(dim);
                        elements *= Math.max(0, dim);
                    }
                    shapes.append(']');
                    OnnxTensorType t = OnnxTensorType.of(type.get(JAVA_INT, 0));
                    bytes += t == OnnxTensorType.STRING ? 0 : elements * t.byteSize();
                } finally {
                    OrtApi.ReleaseTensorTypeAndShapeInfo.invoke(Api.TypeInfo.ReleaseTensorTypeAndShapeInfo, info);
                }
            }
            return new Inputs(shapes.toString(), bytes);
        }
    }

    private static String portName(java.util.List<Port> ports, int index, String what) {
        if (index < ports.size()) {
            return ports.get(index).name();
        }
        if (!ports.isEmpty() && ports.getLast().kind() == Port.Kind.VARIADIC) {
            return ports.getLast().name() + "[" + (index - ports.size() + 1) + "]";
        }
        return what + " #" + index;
    }

    static String typeName(OnnxTensorType type) {
        return type.name().toLowerCase(java.util.Locale.ROOT);
    }
}
