package org.pvn3d.ort.customop;

import java.net.URISyntaxException;
import java.nio.file.Path;
import org.pvn3d.ort.OnnxTensorType;

/**
 * The Java operator of the runtime's test models ({@code customop/java_scale.onnx} and
 * {@code java_scale_bias.onnx}): {@code JavaScale(x, bias?) -> y} with a required float attribute {@code factor},
 * in the domain {@code test.java}. One declaration for every test that registers it; each test brings its own
 * kernel.
 */
public final class JavaScaleOp {
    /** The models' custom domain. */
    public static final String DOMAIN = "test.java";

    private JavaScaleOp() {}

    /** The operator as the models use it, computed by {@code factory}'s kernels. */
    public static CustomOp withKernel(KernelFactory factory) {
        return CustomOp.builder("JavaScale")
                .input(Port.of("x", OnnxTensorType.FLOAT))
                .input(Port.optional("bias", OnnxTensorType.FLOAT))
                .output(Port.of("y", OnnxTensorType.FLOAT))
                .attribute("factor", AttributeSpec.Type.FLOAT, true, "multiplier")
                .kernel(factory)
                .build();
    }

    /** {@link #withKernel} alone in a domain of its own (the caller closes it). */
    public static CustomOpDomain domain(KernelFactory factory) {
        return CustomOpDomain.of(DOMAIN, withKernel(factory));
    }

    /** A test model under {@code customop/} in the test resources, by file name. */
    public static Path model(String name) {
        try {
            return Path.of(JavaScaleOp.class.getResource("/customop/" + name).toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }
}
