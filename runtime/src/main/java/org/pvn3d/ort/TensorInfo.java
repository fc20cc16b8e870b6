package org.pvn3d.ort;

import java.util.Arrays;

/**
 * A tensor's element type and shape. Dimensions the model leaves open are {@code -1} in
 * {@link #getShape()} and carry their symbolic name (e.g. "batch") in {@link #getDimensionNames()}
 * ("" where the model gives none).
 */
public final class TensorInfo {
    private final OnnxTensorType type;
    private final long[] shape;
    private final String[] dimensionNames;

    public TensorInfo(OnnxTensorType type, long[] shape, String[] dimensionNames) {
        this.type = type;
        this.shape = shape.clone();
        this.dimensionNames = dimensionNames.clone();
    }

    /** No dimension names, for each rank up to 8 (shared: never handed out, only copies). */
    private static final String[][] NO_NAMES = new String[9][];

    static {
        for (int r = 0; r < NO_NAMES.length; r++) {
            NO_NAMES[r] = new String[r];
            java.util.Arrays.fill(NO_NAMES[r], "");
        }
    }

    private TensorInfo(OnnxTensorType type, long[] shape, String[] dimensionNames, boolean owned) {
        this.type = type;
        this.shape = shape;
        this.dimensionNames = dimensionNames;
    }

    /** The info of a value (a concrete shape, no dimension names), taking {@code shape} as it is. */
    static TensorInfo ofValue(OnnxTensorType type, long[] shape) {
        String[] names;
        if (shape.length < NO_NAMES.length) {
            names = NO_NAMES[shape.length];
        } else {
            names = new String[shape.length];
            java.util.Arrays.fill(names, "");
        }
        return new TensorInfo(type, shape, names, true);
    }

    public OnnxTensorType getType() {
        return type;
    }

    public long[] getShape() {
        return shape.clone();
    }

    public String[] getDimensionNames() {
        return dimensionNames.clone();
    }

    public int getRank() {
        return shape.length;
    }

    /**
     * Element count, or -1 if a dimension is open. A shape whose count does not fit in a {@code long} is
     * an {@link OrtException} ({@link OrtErrorCode#ORT_INVALID_ARGUMENT}) naming it.
     */
    public long getElementCount() {
        return elementCount(shape);
    }

    static long elementCount(long[] shape) {
        long n = 1;
        for (long d : shape) {
            if (d < 0) {
                return -1;
            }
            if (d != 0 && n > Long.MAX_VALUE / d) {
                // keep counting: a later zero dimension makes the whole shape empty
                return hasZero(shape) ? 0 : overflow(shape);
            }
            n *= d;
        }
        return n;
    }

    private static boolean hasZero(long[] shape) {
        for (long d : shape) {
            if (d == 0) {
                return true;
            }
        }
        return false;
    }

    private static long overflow(long[] shape) {
        throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "shape " + Arrays.toString(shape)
                + " holds more elements than a long can count");
    }

    @Override
    public String toString() {
        StringBuilder dims = new StringBuilder("[");
        for (int i = 0; i < shape.length; i++) {
            if (i > 0) {
                dims.append(',');
            }
            dims.append(shape[i] >= 0 || dimensionNames[i].isEmpty() ? Long.toString(shape[i]) : dimensionNames[i]);
        }
        return "TensorInfo(" + type + dims.append(']') + ")";
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TensorInfo t && t.type == type && Arrays.equals(t.shape, shape)
                && Arrays.equals(t.dimensionNames, dimensionNames);
    }

    @Override
    public int hashCode() {
        return type.hashCode() * 31 + Arrays.hashCode(shape);
    }
}
