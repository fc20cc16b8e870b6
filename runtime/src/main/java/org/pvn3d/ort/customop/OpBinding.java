package org.pvn3d.ort.customop;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.pvn3d.ort.ffm.OrtCustomOp;
import org.pvn3d.ort.internal.CString;

/**
 * One {@link CustomOp} as ORT sees it: an {@code OrtCustomOp} struct in its domain's arena whose
 * function pointers are the shared {@link Upcalls} stubs, plus the C strings those callbacks return
 * (ORT keeps the pointers, so they live as long as the struct).
 */
final class OpBinding {
    /** The struct version: API 16, the first with {@code CreateKernelV2}/{@code KernelComputeV2}. */
    static final int ORT_CUSTOM_OP_VERSION = 16;

    final CustomOp op;
    final DomainState domain;
    final MemorySegment struct;
    final MemorySegment cName;
    final MemorySegment cProvider;

    OpBinding(CustomOp op, DomainState domain, Arena arena) {
        this.op = op;
        this.domain = domain;
        this.cName = CString.of(arena, op.name());
        this.cProvider = CString.of(arena, op.executionProvider());
        this.struct = arena.allocate(OrtCustomOp.layout());
        // zeroed by the arena: the V1 CreateKernel/KernelCompute stay NULL, so ORT must take the V2
        // paths (it does for version >= 16 when CreateKernelV2/KernelComputeV2 are set)
        OrtCustomOp.version(struct, ORT_CUSTOM_OP_VERSION);
        OrtCustomOp.CreateKernelV2(struct, Upcalls.CREATE_KERNEL_V2);
        OrtCustomOp.KernelComputeV2(struct, Upcalls.KERNEL_COMPUTE_V2);
        OrtCustomOp.KernelDestroy(struct, Upcalls.KERNEL_DESTROY);
        OrtCustomOp.GetName(struct, Upcalls.GET_NAME);
        OrtCustomOp.GetExecutionProviderType(struct, Upcalls.GET_EXECUTION_PROVIDER_TYPE);
        OrtCustomOp.GetInputType(struct, Upcalls.GET_INPUT_TYPE);
        OrtCustomOp.GetInputTypeCount(struct, Upcalls.GET_INPUT_TYPE_COUNT);
        OrtCustomOp.GetOutputType(struct, Upcalls.GET_OUTPUT_TYPE);
        OrtCustomOp.GetOutputTypeCount(struct, Upcalls.GET_OUTPUT_TYPE_COUNT);
        OrtCustomOp.GetInputCharacteristic(struct, Upcalls.GET_INPUT_CHARACTERISTIC);
        OrtCustomOp.GetOutputCharacteristic(struct, Upcalls.GET_OUTPUT_CHARACTERISTIC);
        OrtCustomOp.GetInputMemoryType(struct, Upcalls.GET_INPUT_MEMORY_TYPE);
        OrtCustomOp.GetVariadicInputMinArity(struct, Upcalls.GET_VARIADIC_INPUT_MIN_ARITY);
        OrtCustomOp.GetVariadicInputHomogeneity(struct, Upcalls.GET_VARIADIC_INPUT_HOMOGENEITY);
        OrtCustomOp.GetVariadicOutputMinArity(struct, Upcalls.GET_VARIADIC_OUTPUT_MIN_ARITY);
        OrtCustomOp.GetVariadicOutputHomogeneity(struct, Upcalls.GET_VARIADIC_OUTPUT_HOMOGENEITY);
    }

    Port input(long index) {
        return port(op.inputs(), index);
    }

    Port output(long index) {
        return port(op.outputs(), index);
    }

    private static Port port(java.util.List<Port> ports, long index) {
        if (index >= 0 && index < ports.size()) {
            return ports.get((int) index);
        }
        return null;
    }
}
