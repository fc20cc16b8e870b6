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
 */
public final class KernelTensor {
    private final String name;
    private final MemorySegment value;
    private final OnnxTensorType type;
    private final long[] shape;
    private final MemorySegment data;
    private final boolean onHost;

    KernelTensor(String name, MemorySegment value, OnnxTensorType type, long[] shape, MemorySegment rawData, boolean onHost) {
        this.name = name;
        this.value = value;
        this.type = type;
        this.shape = shape;
        this.onHost = onHost;
        this.data = onHost ? rawData.reinterpret(elementCount() * type.byteSize()) : rawData;
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

    /** The data: sized host memory, or (device memory) an address-only segment. */
    public MemorySegment data() {
        return data;
    }

    /** The {@code OrtValue*}, for the context's own ORT calls (an allocator for this tensor's memory). */
    MemorySegment ortValue() {
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
