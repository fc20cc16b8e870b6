package org.pvn3d.ort.customop;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import org.pvn3d.ort.OnnxTensorType;

/**
 * One input or output of a kernel during one compute call: its element type, shape and data
 * pointer. A view over ORT's {@code OrtValue}, valid only inside {@link CustomKernel#compute}.
 *
 * <p>{@link #data()} is sized to the tensor's bytes when the data is in host memory; for device
 * memory it is a zero-length segment that only carries the address (to pass to a CUDA launcher),
 * so Java cannot read device memory by mistake.
 *
 * <p>The bridge keeps one view per port of each kernel and refills it on every call, so a compute
 * allocates nothing: the shape array is reused while the rank stays, and the data segment while the
 * address and size stay (ORT's memory planner hands a node the same buffers run after run). Read
 * dimensions with {@link #dim} and {@link #rank}; {@link #shape()} makes a copy.
 *
 * <p>{@link #data()} refuses once its compute call has returned, or on another thread, as the {@link
 * KernelContext} does: the memory is then ORT's again (an output is the caller's result). A segment taken
 * from it during the call must not be kept either.
 */
public final class KernelTensor {
    private static final long[] SCALAR = new long[0];

    private final KernelContext owner;
    private final String name;
    private final boolean onHost;
    private final OnnxTensorType declared;
    private long value;
    private OnnxTensorType type = OnnxTensorType.UNDEFINED;
    private long[] shape = SCALAR;
    private MemorySegment data = MemorySegment.NULL;
    private long dataAddress;
    private long dataBytes = -1;

    /** A view for {@code owner}'s port {@code name}, whose data is host memory when {@code onHost}. */
    KernelTensor(KernelContext owner, String name, boolean onHost, OnnxTensorType declared) {
        this.owner = owner;
        this.name = name;
        this.onHost = onHost;
        this.declared = declared;
    }

    /** The shape array to fill for a tensor of {@code rank} dimensions (this view's own, reused). */
    long[] shapeFor(int rank) {
        if (shape.length != rank) {
            shape = rank == 0 ? SCALAR : new long[rank];
        }
        return shape;
    }

    /** Points the view at {@code value} of {@code type} (the shape already filled) with data at {@code address}. */
    void set(long value, OnnxTensorType type, long address) {
        this.value = value;
        this.type = type;
        long bytes = onHost ? elementCount() * type.byteSize() : 0;
        if (address != dataAddress || bytes != dataBytes) {
            data = address == 0 ? MemorySegment.NULL : onHost ? MemorySegment.ofAddress(address).reinterpret(bytes)
                    : MemorySegment.ofAddress(address);
            dataAddress = address;
            dataBytes = bytes;
        }
    }

    /** The element type the operator declares for this port ({@code UNDEFINED}: any). */
    OnnxTensorType declaredType() {
        return declared;
    }

    /** The port's name (for messages). */
    public String name() {
        return name;
    }

    public OnnxTensorType type() {
        return type;
    }

    /** A copy of the shape. */
    public long[] shape() {
        return shape.clone();
    }

    public int rank() {
        return shape.length;
    }

    public long dim(int axis) {
        return shape[axis];
    }

    public long elementCount() {
        long n = 1;
        for (long d : shape) {
            n *= d;
        }
        return n;
    }

    /** True when {@link #data()} is host memory Java may read or write. */
    public boolean isOnHost() {
        return onHost;
    }

    /**
     * The data: sized host memory, or (device memory) an address-only segment. Only while the compute call
     * that gave this view runs, on its thread ({@code ORT_INVALID_ARGUMENT} otherwise).
     */
    public MemorySegment data() {
        owner.requireLive();
        return data;
    }

    /** The {@code OrtValue*}, for the context's own ORT calls (an allocator for this tensor's memory). */
    long ortValue() {
        owner.requireLive();
        return value;
    }

    /** The shape as "[2, 300, 3]". */
    public String shapeString() {
        return Arrays.toString(shape);
    }

    @Override
    public String toString() {
        return name + ":" + type + shapeString() + (onHost ? "" : "@device");
    }
}
