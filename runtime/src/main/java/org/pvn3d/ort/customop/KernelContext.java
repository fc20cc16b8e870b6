package org.pvn3d.ort.customop;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.List;
import org.pvn3d.ort.OnnxTensorType;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.ffm.OrtApi;
import org.pvn3d.ort.internal.Api;
import org.pvn3d.ort.internal.HostMemory;

/**
 * One compute call of a kernel: its inputs, its outputs (allocated by shape), the CUDA stream ORT
 * runs the node on, and ORT's allocator for scratch memory. Valid only during {@link
 * CustomKernel#compute}; the bridge ends it when compute returns.
 *
 * <p>The {@code input(index, type, rank)} and {@code requireDim} checks throw
 * {@link OrtException}s whose messages name the operator, the input and the offending value, as
 * spec/ops.md asks; thrown from compute they fail the run, not the session.
 *
 * <p><b>No allocation per call.</b> The bridge keeps contexts per kernel and reuses them call after
 * call (one per compute in flight on the kernel): the out-parameters of ORT's calls are native words
 * made once, each port has one {@link KernelTensor} view that is refilled, the stream segment is kept
 * while the stream stays, and every ORT call goes through {@link Api.Direct}. An input costs three
 * calls into ORT on ORT 1.24 and later (the value, its type and shape by reference, its data) and seven
 * before (the type and shape read through an info object made and released), an output two (ORT
 * allocates it with the shape given; its type is the one the operator declares). Pass output shapes
 * as separate arguments ({@code output(0, b, c, m)}, up to four dimensions without an array); the
 * strings of the checks are only built when a check fails.
 */
public final class KernelContext implements AutoCloseable {
    private static final int PTR = 0;
    private static final int LONG = 8;
    private static final int INT = 16;
    private static final int DIMS = 24;

    private final CustomOp op;
    private final String nodeName;
    private final String where;
    private KernelTensor[] inputs;
    private KernelTensor[] outputs;
    private MemorySegment scratch;
    private long base;
    private int dimCapacity;
    private long context; // the OrtKernelContext* of the call in progress; 0 between calls
    private Thread thread; // the thread running that call (contexts are pooled: see live)
    private long streamAddress;
    private MemorySegment stream = MemorySegment.NULL;

    KernelContext(CustomOp op, String nodeName) {
        this.op = op;
        this.nodeName = nodeName;
        this.where = op.name() + (nodeName.isEmpty() ? "" : " (node '" + nodeName + "')");
        this.inputs = new KernelTensor[op.inputs().size()];
        this.outputs = new KernelTensor[op.outputs().size()];
        growDims(8);
    }

    private void growDims(int rank) {
        dimCapacity = Math.max(rank, 2 * dimCapacity);
        scratch = Arena.ofAuto().allocate(DIMS + 8L * dimCapacity, 8);
        base = scratch.address();
    }

    /** Starts a call on ORT's {@code OrtKernelContext*}, on the calling thread. */
    void begin(long kernelContext) {
        thread = Thread.currentThread();
        context = kernelContext;
    }

    /** Ends the call: the context refuses use until the next one begins. */
    void end() {
        context = 0;
        thread = null;
    }

    /** Throws unless a compute call is running on this thread (a KernelTensor's data kept past its call). */
    void requireLive() {
        live();
    }

    /**
     * ORT's context of the call in progress, for the thread running it only: contexts are pooled, so one
     * kept from an earlier call may be the object another thread's call is using now, whose inputs it would
     * read and whose outputs it would allocate.
     */
    private long live() {
        long c = context;
        if (c == 0 || thread != Thread.currentThread()) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, where + (c == 0
                    ? ": the KernelContext is only valid while compute runs"
                    : ": the KernelContext is only valid on the thread running its compute call"));
        }
        return c;
    }

    public CustomOp op() {
        return op;
    }

    public String nodeName() {
        return nodeName;
    }

    /** "OpName" plus the node's name, for messages. */
    public String where() {
        return where;
    }

    public int inputCount() {
        check(Api.Direct.kernelContextGetInputCount(live(), base + LONG), "input count");
        return Math.toIntExact(scratch.get(JAVA_LONG, LONG));
    }

    public int outputCount() {
        check(Api.Direct.kernelContextGetOutputCount(live(), base + LONG), "output count");
        return Math.toIntExact(scratch.get(JAVA_LONG, LONG));
    }

    /** Input {@code index}, or null when an optional input is absent. */
    public KernelTensor inputOrNull(int index) {
        check(Api.Direct.kernelContextGetInput(live(), index, base + PTR), "input", index);
        long value = scratch.get(JAVA_LONG, PTR);
        if (value == 0) {
            return null;
        }
        KernelTensor t = inputView(index);
        read(t, value);
        return t;
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

    /**
     * Like {@link #requireDim(KernelTensor, int, long, String)}, where the meaning is "{@code meaning}
     * {@code of}" (e.g. "the batch size B of " and "xyz"), put together only when the check fails.
     */
    public void requireDim(KernelTensor t, int axis, long expected, String meaning, String of) {
        if (t.dim(axis) != expected) {
            requireDim(t, axis, expected, meaning + of);
        }
    }

    /** Output {@code index}, a scalar, allocated by ORT in the provider's memory. */
    public KernelTensor output(int index) {
        return allocateOutput(index, 0);
    }

    /** Output {@code index} of shape [d0], allocated by ORT in the provider's memory. */
    public KernelTensor output(int index, long d0) {
        setDim(0, d0);
        return allocateOutput(index, 1);
    }

    /** Output {@code index} of shape [d0, d1], allocated by ORT in the provider's memory. */
    public KernelTensor output(int index, long d0, long d1) {
        setDim(0, d0);
        setDim(1, d1);
        return allocateOutput(index, 2);
    }

    /** Output {@code index} of shape [d0, d1, d2], allocated by ORT in the provider's memory. */
    public KernelTensor output(int index, long d0, long d1, long d2) {
        setDim(0, d0);
        setDim(1, d1);
        setDim(2, d2);
        return allocateOutput(index, 3);
    }

    /** Output {@code index} of shape [d0, d1, d2, d3], allocated by ORT in the provider's memory. */
    public KernelTensor output(int index, long d0, long d1, long d2, long d3) {
        setDim(0, d0);
        setDim(1, d1);
        setDim(2, d2);
        setDim(3, d3);
        return allocateOutput(index, 4);
    }

    /** Output {@code index}, allocated by ORT with {@code shape} in the provider's memory. */
    public KernelTensor output(int index, long... shape) {
        if (shape.length > dimCapacity) {
            growDims(shape.length);
        }
        for (int i = 0; i < shape.length; i++) {
            setDim(i, shape[i]);
        }
        return allocateOutput(index, shape.length);
    }

    /**
     * Whether the output's bytes are more than the machine has. Under overcommit ORT's CPU allocator would be
     * granted them and the kernel's writes would grow the process until the OOM killer ends it
     * ({@link HostMemory#machineBytes}); a device allocation fails by itself.
     */
    private boolean outputExceedsMachine(int index, int rank) {
        for (int i = 0; i < rank; i++) {
            if (scratch.get(JAVA_LONG, DIMS + 8L * i) == 0) {
                return false; // an empty output, whatever the other dimensions
            }
        }
        long limit = HostMemory.machineBytes();
        Port port = port(op.outputs(), index); // not outputView: ORT has not accepted the index yet
        long bytes = elementBytes(port == null ? OnnxTensorType.UNDEFINED : port.type());
        for (int i = 0; i < rank; i++) {
            long d = scratch.get(JAVA_LONG, DIMS + 8L * i);
            if (d > limit / bytes) {
                return true;
            }
            bytes *= d; // <= limit: no overflow
        }
        return false;
    }

    /** Host bytes an element takes at least: a string is a C++ std::string (32 bytes), an undecided type 1. */
    private static long elementBytes(OnnxTensorType type) {
        return type == OnnxTensorType.STRING ? 32 : Math.max(1, type.byteSize());
    }

    private void setDim(int i, long d) {
        scratch.set(JAVA_LONG, DIMS + 8L * i, d);
    }

    private KernelTensor allocateOutput(int index, int rank) {
        long c = live();
        for (int i = 0; i < rank; i++) {
            if (scratch.get(JAVA_LONG, DIMS + 8L * i) < 0) {
                throw invalid("output " + portName(op.outputs(), index, "output") + " cannot have shape "
                        + Arrays.toString(scratch.asSlice(DIMS, 8L * rank).toArray(JAVA_LONG)));
            }
        }
        if (op.runsOnCpu() && outputExceedsMachine(index, rank)) { // outputs in host memory
            throw new OrtException(OrtErrorCode.ORT_FAIL, where + ": output " + portName(op.outputs(), index, "output")
                    + " of shape " + Arrays.toString(scratch.asSlice(DIMS, 8L * rank).toArray(JAVA_LONG))
                    + " is larger than this machine's memory (" + HostMemory.machineBytes() + " bytes)");
        }
        long status = Api.Direct.kernelContextGetOutput(c, index, base + DIMS, rank, base + PTR);
        if (status != 0) { // e.g. too large for memory: say which output and what shape asked for it
            throw Api.toException(MemorySegment.ofAddress(status), where + ": output " + portName(op.outputs(), index, "output")
                    + " of shape " + Arrays.toString(scratch.asSlice(DIMS, 8L * rank).toArray(JAVA_LONG)));
        }
        long value = scratch.get(JAVA_LONG, PTR);
        if (value == 0) {
            throw new OrtException(OrtErrorCode.ORT_FAIL, where + ": ORT gave no value for output " + index);
        }
        KernelTensor t = outputView(index);
        if (t.declaredType() == OnnxTensorType.UNDEFINED) {
            read(t, value); // the graph decides the type: ask
            return t;
        }
        long[] shape = t.shapeFor(rank);
        for (int i = 0; i < rank; i++) {
            shape[i] = scratch.get(JAVA_LONG, DIMS + 8L * i);
        }
        check(Api.Direct.getTensorMutableData(value, base + PTR), t.name());
        t.set(value, t.declaredType(), scratch.get(JAVA_LONG, PTR));
        return t;
    }

    /**
     * The CUDA stream ({@code cudaStream_t}) ORT runs this node on, as an address-only segment (the
     * NULL segment on the CPU provider). Launch on it and do not synchronise it: ORT orders the
     * following nodes after it.
     */
    public MemorySegment gpuStream() {
        check(Api.Direct.kernelContextGetGpuComputeStream(live(), base + PTR), "compute stream");
        long s = scratch.get(JAVA_LONG, PTR);
        if (s != streamAddress) {
            stream = s == 0 ? MemorySegment.NULL : MemorySegment.ofAddress(s);
            streamAddress = s;
        }
        return stream;
    }

    /**
     * ORT's allocator for the memory {@code like} lives in (for a CUDA kernel's input: the session's
     * CUDA arena on that device). The caller closes it (after freeing its blocks).
     */
    public KernelAllocator allocator(KernelTensor like) {
        MemorySegment c = MemorySegment.ofAddress(live());
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            Api.checkStatus(OrtApi.GetTensorMemoryInfo.invoke(Api.Value.GetTensorMemoryInfo,
                    MemorySegment.ofAddress(like.ortValue()), out));
            MemorySegment memoryInfo = out.get(ADDRESS, 0);
            Api.checkStatus(OrtApi.KernelContext_GetAllocator.invoke(Api.Kernel.KernelContext_GetAllocator, c,
                    memoryInfo, out), where + ": allocator");
            return new KernelAllocator(out.get(ADDRESS, 0));
        }
    }

    /** An {@link OrtErrorCode#ORT_INVALID_ARGUMENT} exception whose message starts with the operator. */
    public OrtException invalid(String problem) {
        return new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, where + ": " + problem);
    }

    /** Ends this call early (the bridge ends it anyway when compute returns). */
    @Override
    public void close() {
        end();
    }

    /**
     * Reads {@code value}'s type, shape and data into {@code t}, with no allocation at a steady shape: two
     * calls where the runtime has {@code GetTensorElementTypeAndShapeDataReference} (ORT 1.24 on), which
     * points at the tensor's own dimensions, else six (API 16 allocates, reads and frees a type-and-shape
     * info for every read).
     */
    private void read(KernelTensor t, long value) {
        if (Api.Direct.SHAPE_REFERENCE) {
            check(Api.Direct.getTensorElementTypeAndShapeDataReference(value, base + INT, base + PTR, base + LONG),
                    t.name());
            OnnxTensorType type = OnnxTensorType.of(scratch.get(JAVA_INT, INT));
            int rank = Math.toIntExact(scratch.get(JAVA_LONG, LONG));
            long dims = scratch.get(JAVA_LONG, PTR);
            long[] shape = t.shapeFor(rank);
            for (int i = 0; i < rank; i++) {
                shape[i] = Api.Direct.longAt(dims + 8L * i);
            }
            check(Api.Direct.getTensorMutableData(value, base + PTR), t.name());
            t.set(value, type, scratch.get(JAVA_LONG, PTR));
            return;
        }
        check(Api.Direct.getTensorTypeAndShape(value, base + PTR), t.name());
        long info = scratch.get(JAVA_LONG, PTR);
        OnnxTensorType type;
        try {
            check(Api.Direct.getTensorElementType(info, base + INT), t.name());
            type = OnnxTensorType.of(scratch.get(JAVA_INT, INT));
            check(Api.Direct.getDimensionsCount(info, base + LONG), t.name());
            int rank = Math.toIntExact(scratch.get(JAVA_LONG, LONG));
            if (rank > dimCapacity) {
                growDims(rank);
            }
            check(Api.Direct.getDimensions(info, base + DIMS, rank), t.name());
            long[] shape = t.shapeFor(rank);
            for (int i = 0; i < rank; i++) {
                shape[i] = scratch.get(JAVA_LONG, DIMS + 8L * i);
            }
        } finally {
            Api.Direct.releaseTensorTypeAndShapeInfo(info);
        }
        check(Api.Direct.getTensorMutableData(value, base + PTR), t.name());
        t.set(value, type, scratch.get(JAVA_LONG, PTR));
    }

    private void check(long status, String what) {
        if (status != 0) {
            throw Api.toException(MemorySegment.ofAddress(status), where + ": " + what);
        }
    }

    private void check(long status, String what, int index) {
        if (status != 0) {
            throw Api.toException(MemorySegment.ofAddress(status), where + ": " + what + " " + index);
        }
    }

    private KernelTensor inputView(int index) {
        if (index >= inputs.length) {
            inputs = Arrays.copyOf(inputs, index + 1);
        }
        KernelTensor t = inputs[index];
        if (t == null) {
            Port p = port(op.inputs(), index);
            t = new KernelTensor(this, portName(op.inputs(), index, "input"), inputOnHost(p),
                    p == null ? OnnxTensorType.UNDEFINED : p.type());
            inputs[index] = t;
        }
        return t;
    }

    private KernelTensor outputView(int index) {
        if (index >= outputs.length) {
            outputs = Arrays.copyOf(outputs, index + 1);
        }
        KernelTensor t = outputs[index];
        if (t == null) {
            Port p = port(op.outputs(), index);
            // a declared type holds for a plain port, and for every value of a homogeneous variadic one
            boolean typed = p != null && (p.kind() != Port.Kind.VARIADIC || p.homogeneous());
            t = new KernelTensor(this, portName(op.outputs(), index, "output"), op.runsOnCpu(),
                    typed ? p.type() : OnnxTensorType.UNDEFINED);
            outputs[index] = t;
        }
        return t;
    }

    /** The port of {@code index}: its own, or the last (variadic) one, or null. */
    private static Port port(List<Port> ports, int index) {
        return index < 0 ? null : index < ports.size() ? ports.get(index) : ports.isEmpty() ? null : ports.getLast();
    }

    private boolean inputOnHost(Port p) {
        if (op.runsOnCpu()) {
            return true;
        }
        return p != null && p.memory() == Port.Memory.CPU_INPUT;
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

    private static String portName(List<Port> ports, int index, String what) {
        if (index < 0) {
            return what + " #" + index;
        }
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
