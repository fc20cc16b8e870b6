package org.pvn3d.ort.customop;

import org.pvn3d.ort.OnnxTensorType;

/**
 * One input or output of a custom operator as ORT sees it: a name (for messages only; ORT matches
 * by position), an element type ({@link OnnxTensorType#UNDEFINED} = any type), whether it is
 * required, optional or variadic, and for inputs where the kernel wants the data.
 *
 * @param name         the name used in error messages, e.g. "xyz"
 * @param type         the element type ORT checks the graph against; UNDEFINED accepts any
 * @param kind         required, optional or variadic (variadic only for the last port)
 * @param minArity     for a variadic port: the least number of values (ignored otherwise)
 * @param homogeneous  for a variadic port: whether all values share one type (ignored otherwise)
 * @param memory       inputs only: {@link Memory#DEFAULT} is the provider's own memory (device
 *                     memory on CUDA); {@link Memory#CPU_INPUT} asks ORT for a host copy
 */
public record Port(String name, OnnxTensorType type, Kind kind, int minArity, boolean homogeneous, Memory memory) {
    /** ORT's {@code OrtCustomOpInputOutputCharacteristic}. */
    public enum Kind {
        REQUIRED(0), OPTIONAL(1), VARIADIC(2);

        private final int value;

        Kind(int value) {
            this.value = value;
        }

        public int value() {
            return value;
        }
    }

    /** ORT's {@code OrtMemType} for an input of a kernel on a non-CPU provider. */
    public enum Memory {
        DEFAULT(0), CPU_INPUT(-2);

        private final int value;

        Memory(int value) {
            this.value = value;
        }

        public int value() {
            return value;
        }
    }

    public Port {
        if (name == null || name.isEmpty()) {
            throw new IllegalArgumentException("a port needs a name");
        }
        if (type == null || type == OnnxTensorType.STRING) {
            throw new IllegalArgumentException("port " + name + ": unsupported element type " + type);
        }
        if (kind == null || memory == null) {
            throw new IllegalArgumentException("port " + name + ": kind and memory must be given");
        }
        if (kind == Kind.VARIADIC && minArity < 0) {
            throw new IllegalArgumentException("port " + name + ": negative minimum arity " + minArity);
        }
    }

    /** A required tensor of one element type in the provider's own memory. */
    public static Port of(String name, OnnxTensorType type) {
        return new Port(name, type, Kind.REQUIRED, 1, true, Memory.DEFAULT);
    }

    public static Port optional(String name, OnnxTensorType type) {
        return new Port(name, type, Kind.OPTIONAL, 1, true, Memory.DEFAULT);
    }

    public static Port variadic(String name, OnnxTensorType type, int minArity, boolean homogeneous) {
        return new Port(name, type, Kind.VARIADIC, minArity, homogeneous, Memory.DEFAULT);
    }

    /** The same port with its data delivered in host memory (for a non-CPU provider's kernel). */
    public Port onCpu() {
        return new Port(name, type, kind, minArity, homogeneous, Memory.CPU_INPUT);
    }
}
