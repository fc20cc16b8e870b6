package org.pvn3d.ort.internal;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;
import org.pvn3d.ort.OnnxTensor;
import org.pvn3d.ort.OnnxTensorType;

/**
 * The one-call shape read of ORT 1.24 and later ({@code GetTensorElementTypeAndShapeDataReference}, taken
 * from the API table by offset because the bindings are API 16's) against API 16's five calls. On an older
 * runtime (CI's 1.16.3) only its absence is checked; the GPU machine's ORT 1.24.1 runs the comparison.
 */
class ShapeReferenceTest {
    @Test
    void usedExactlyWhenTheRuntimeHasIt() {
        OrtLibrary ort = OrtLibrary.get();
        boolean expected = ort.isAtLeast("1.24")
                && !"false".equalsIgnoreCase(System.getProperty(OrtLibrary.SHAPE_REFERENCE_PROPERTY));
        assertEquals(expected, ort.tensorShapeReference().address() != 0, "runtime " + ort.version());
        assertEquals(expected, Api.Direct.SHAPE_REFERENCE);
    }

    @Test
    void givesTheTypeAndShapeOfApi16sFiveCalls() {
        assumeTrue(Api.Direct.SHAPE_REFERENCE, "runtime " + OrtLibrary.get().version() + " predates C API 24");
        long[][] shapes = {{}, {0}, {7}, {2, 3}, {1, 0, 4}, {2, 3, 4, 5, 6}, {1, 1, 1, 1, 1, 1, 1, 3}};
        OnnxTensorType[] types = {OnnxTensorType.FLOAT, OnnxTensorType.INT64, OnnxTensorType.INT32,
                OnnxTensorType.UINT8};
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(64, 8);
            long o = out.address();
            for (OnnxTensorType type : types) {
                for (long[] shape : shapes) {
                    long n = 1;
                    for (long d : shape) {
                        n *= d;
                    }
                    try (OnnxTensor t = OnnxTensor.createTensor(type, array(type, (int) n), shape);
                            Lease lease = Handles.acquire(t)) {
                        long value = lease.handle().address();
                        // API 24: type at +0, dimension pointer at +8, count at +16
                        assertEquals(0, Api.Direct.getTensorElementTypeAndShapeDataReference(value, o, o + 8, o + 16));
                        int refType = out.get(JAVA_INT, 0);
                        long count = out.get(JAVA_LONG, 16);
                        long dims = out.get(JAVA_LONG, 8);
                        long[] refShape = new long[(int) count];
                        for (int i = 0; i < refShape.length; i++) {
                            refShape[i] = Api.Direct.longAt(dims + 8L * i);
                        }
                        // API 16: info at +24, type at +32, count at +40, dimensions from +48 (rank <= 8 here)
                        MemorySegment dimsOut = arena.allocate(8L * Math.max(1, shape.length), 8);
                        assertEquals(0, Api.Direct.getTensorTypeAndShape(value, o + 24));
                        long info = out.get(JAVA_LONG, 24);
                        try {
                            assertEquals(0, Api.Direct.getTensorElementType(info, o + 32));
                            assertEquals(0, Api.Direct.getDimensionsCount(info, o + 40));
                            assertEquals(0, Api.Direct.getDimensions(info, dimsOut.address(), shape.length));
                        } finally {
                            Api.Direct.releaseTensorTypeAndShapeInfo(info);
                        }
                        String what = type + " " + java.util.Arrays.toString(shape);
                        assertEquals(out.get(JAVA_INT, 32), refType, what);
                        assertEquals(type, OnnxTensorType.of(refType), what);
                        assertEquals(out.get(JAVA_LONG, 40), count, what);
                        assertArrayEquals(shape, refShape, what);
                        assertArrayEquals(dimsOut.asSlice(0, 8L * shape.length).toArray(JAVA_LONG), refShape, what);
                        // and the tensor wrapper built on it reads the same
                        assertArrayEquals(shape, t.getInfo().getShape(), what);
                    }
                }
            }
        }
    }

    private static Object array(OnnxTensorType type, int n) {
        return switch (type) {
            case FLOAT -> new float[n];
            case INT64 -> new long[n];
            case INT32 -> new int[n];
            default -> new byte[n];
        };
    }
}
