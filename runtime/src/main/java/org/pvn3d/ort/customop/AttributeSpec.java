package org.pvn3d.ort.customop;

/**
 * An attribute a custom operator reads when ORT creates its kernel. ORT itself does not check
 * custom-operator attributes (their schemas allow any), so the bridge checks that each
 * {@linkplain #required() required} one is present before the kernel factory runs, and
 * {@link KernelInfo} reads them with messages that name the operator and node.
 */
public record AttributeSpec(String name, Type type, boolean required, String description) {
    /** The attribute kinds ORT's kernel-info API can read. */
    public enum Type {
        INT, FLOAT, STRING, INTS, FLOATS;

        String onnxName() {
            return switch (this) {
                case INT -> "int";
                case FLOAT -> "float";
                case STRING -> "string";
                case INTS -> "ints";
                case FLOATS -> "floats";
            };
        }
    }

    public AttributeSpec {
        if (name == null || name.isEmpty() || type == null) {
            throw new IllegalArgumentException("an attribute needs a name and a type");
        }
        description = description == null ? "" : description;
    }

    @Override
    public String toString() {
        return name + " (" + type.onnxName() + (required ? ", required" : ", optional")
                + (description.isEmpty() ? "" : ", " + description) + ")";
    }
}
