package org.pvn3d.ort.customop;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.pvn3d.ort.OnnxTensorType;

/**
 * The describing half of a custom operator: its name, the execution provider its kernel runs on,
 * its inputs and outputs, the attributes it reads, and the factory of its kernels. Immutable; put
 * it in a {@link CustomOpDomain} to use it. The same name may appear twice in one domain with
 * different providers (a CPU and a CUDA kernel): ORT then picks by the node's assigned provider, and
 * both must declare the same number of inputs and outputs.
 *
 * <pre>{@code
 * CustomOp op = CustomOp.builder("MyScale")
 *         .executionProvider(CustomOp.CPU)
 *         .input(Port.of("x", OnnxTensorType.FLOAT))
 *         .output(Port.of("y", OnnxTensorType.FLOAT))
 *         .attribute("factor", AttributeSpec.Type.FLOAT, true, "multiplier")
 *         .kernel(info -> new ScaleKernel(info.getFloat("factor")))
 *         .build();
 * }</pre>
 */
public final class CustomOp {
    /** ORT's name of the CPU execution provider. */
    public static final String CPU = "CPUExecutionProvider";
    /** ORT's name of the CUDA execution provider. */
    public static final String CUDA = "CUDAExecutionProvider";

    private final String name;
    private final String executionProvider;
    private final List<Port> inputs;
    private final List<Port> outputs;
    private final List<AttributeSpec> attributes;
    private final KernelFactory factory;

    private CustomOp(Builder b) {
        this.name = b.name;
        this.executionProvider = b.executionProvider;
        this.inputs = List.copyOf(b.inputs);
        this.outputs = List.copyOf(b.outputs);
        this.attributes = List.copyOf(b.attributes);
        this.factory = Objects.requireNonNull(b.factory, "operator " + b.name + " has no kernel factory");
        checkVariadicLast(inputs, "input");
        checkVariadicLast(outputs, "output");
        if (outputs.isEmpty()) {
            throw new IllegalArgumentException("operator " + name + " declares no output");
        }
    }

    private void checkVariadicLast(List<Port> ports, String what) {
        for (int i = 0; i < ports.size() - 1; i++) {
            if (ports.get(i).kind() == Port.Kind.VARIADIC) {
                throw new IllegalArgumentException("operator " + name + ": only the last " + what
                        + " may be variadic (ORT's rule), but " + ports.get(i).name() + " is #" + i);
            }
        }
    }

    public static Builder builder(String name) {
        return new Builder(name);
    }

    /** The operator type as graph nodes name it, e.g. "PVN3D_GatherPoints". */
    public String name() {
        return name;
    }

    /** The provider its kernel runs on ({@link #CPU}, {@link #CUDA}, or another ORT provider name). */
    public String executionProvider() {
        return executionProvider;
    }

    public List<Port> inputs() {
        return inputs;
    }

    public List<Port> outputs() {
        return outputs;
    }

    public List<AttributeSpec> attributes() {
        return attributes;
    }

    public KernelFactory factory() {
        return factory;
    }

    /** True when the kernel's data (of {@link Port.Memory#DEFAULT} ports) lives in host memory. */
    public boolean runsOnCpu() {
        return CPU.equals(executionProvider);
    }

    @Override
    public String toString() {
        return name + "[" + executionProvider + "](" + inputs.stream().map(Port::name).toList() + " -> "
                + outputs.stream().map(Port::name).toList() + ", attributes " + attributes + ")";
    }

    /** Collects an operator's description; {@link #build()} checks it. */
    public static final class Builder {
        private final String name;
        private String executionProvider = CPU;
        private final List<Port> inputs = new ArrayList<>();
        private final List<Port> outputs = new ArrayList<>();
        private final List<AttributeSpec> attributes = new ArrayList<>();
        private KernelFactory factory;

        private Builder(String name) {
            if (name == null || name.isEmpty()) {
                throw new IllegalArgumentException("an operator needs a name");
            }
            this.name = name;
        }

        /** The provider the kernel runs on; default {@link CustomOp#CPU}. */
        public Builder executionProvider(String provider) {
            this.executionProvider = Objects.requireNonNull(provider, "the execution provider is null");
            return this;
        }

        public Builder input(Port port) {
            inputs.add(Objects.requireNonNull(port, "input port is null"));
            return this;
        }

        public Builder input(String name, OnnxTensorType type) {
            return input(Port.of(name, type));
        }

        public Builder output(Port port) {
            Objects.requireNonNull(port, "output port is null");
            if (port.memory() != Port.Memory.DEFAULT) {
                throw new IllegalArgumentException("output " + port.name() + ": only inputs choose their memory");
            }
            outputs.add(port);
            return this;
        }

        public Builder output(String name, OnnxTensorType type) {
            return output(Port.of(name, type));
        }

        public Builder attribute(String name, AttributeSpec.Type type, boolean required, String description) {
            attributes.add(new AttributeSpec(name, type, required, description));
            return this;
        }

        public Builder kernel(KernelFactory factory) {
            this.factory = factory;
            return this;
        }

        public CustomOp build() {
            return new CustomOp(this);
        }
    }
}
