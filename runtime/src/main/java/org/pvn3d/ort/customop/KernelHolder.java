package org.pvn3d.ort.customop;

/** A live kernel: what {@code KernelComputeV2} and {@code KernelDestroy} find by ORT's kernel pointer. */
final class KernelHolder {
    final long id;
    final OpBinding binding;
    final CustomKernel kernel;
    final String nodeName;

    KernelHolder(long id, OpBinding binding, CustomKernel kernel, String nodeName) {
        this.id = id;
        this.binding = binding;
        this.kernel = kernel;
        this.nodeName = nodeName;
    }

    String where() {
        return binding.op.name() + (nodeName.isEmpty() ? "" : " (node '" + nodeName + "')");
    }
}
