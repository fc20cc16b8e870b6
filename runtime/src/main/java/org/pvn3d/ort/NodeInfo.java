package org.pvn3d.ort;

/**
 * A model input or output: its name, the kind of value, and for tensors the element type and shape
 * ({@code null} otherwise).
 */
public record NodeInfo(String name, OnnxValueType valueType, TensorInfo tensorInfo) {
    public boolean isTensor() {
        return valueType == OnnxValueType.TENSOR;
    }

    @Override
    public String toString() {
        return name + ": " + (tensorInfo != null ? tensorInfo : valueType);
    }
}
