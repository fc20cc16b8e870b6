package org.pvn3d.ort.customop;

import static java.lang.foreign.ValueLayout.ADDRESS;

import java.lang.System.Logger.Level;
import java.lang.foreign.Arena;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.concurrent.ConcurrentHashMap;
import org.pvn3d.ort.OnnxTensorType;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.ffm.OrtCustomOp;
import org.pvn3d.ort.internal.Api;
import org.pvn3d.ort.internal.ComputeStatuses;
import org.pvn3d.ort.internal.Probes;
import org.pvn3d.ort.internal.RefCount;

/**
 * The upcall stubs every {@code OrtCustomOp} struct points at, and the dispatch from ORT's pointers
 * to Java objects: the op struct's address finds its {@link OpBinding}, the kernel pointer (a small
 * id, never dereferenced by ORT) finds its {@link KernelHolder} in an array.
 *
 * <p>The compute entry, called for every node on every run, allocates nothing: its stub takes and
 * returns the pointers as {@code long}s (no {@link MemorySegment} per argument), the kernel is an array
 * index (no boxed key), and the {@link KernelContext} is the kernel's own, reused (see
 * {@link KernelHolder}).
 *
 * <p>Why one process-wide set of stubs rather than stubs per operator: a stub is generated code, so
 * creating ~16 per operator per domain would make registering a domain slow and grow code memory
 * with every domain; the stubs here are created once (in the global arena, a fixed cost) and a
 * dispatch is one map lookup.
 *
 * <p>No Java exception crosses an upcall: the status-returning entry points turn any
 * {@link Throwable} into an {@code OrtStatus}; the others log it and return a neutral value.
 */
final class Upcalls {
    private static final System.Logger LOG = System.getLogger("org.pvn3d.ort.customop");

    private static final ConcurrentHashMap<Long, OpBinding> OPS = new ConcurrentHashMap<>();
    /** Live kernels by id (index 0 unused); written under the lock, the array published by the volatile write. */
    private static volatile KernelHolder[] kernels = new KernelHolder[64];
    private static final Object KERNELS_LOCK = new Object();
    private static int nextKernel = 1; // under the lock: where the search for a free id starts

    static final MemorySegment CREATE_KERNEL_V2;
    static final MemorySegment KERNEL_COMPUTE_V2;
    static final MemorySegment KERNEL_DESTROY;
    static final MemorySegment GET_NAME;
    static final MemorySegment GET_EXECUTION_PROVIDER_TYPE;
    static final MemorySegment GET_INPUT_TYPE;
    static final MemorySegment GET_INPUT_TYPE_COUNT;
    static final MemorySegment GET_OUTPUT_TYPE;
    static final MemorySegment GET_OUTPUT_TYPE_COUNT;
    static final MemorySegment GET_INPUT_CHARACTERISTIC;
    static final MemorySegment GET_OUTPUT_CHARACTERISTIC;
    static final MemorySegment GET_INPUT_MEMORY_TYPE;
    static final MemorySegment GET_VARIADIC_INPUT_MIN_ARITY;
    static final MemorySegment GET_VARIADIC_INPUT_HOMOGENEITY;
    static final MemorySegment GET_VARIADIC_OUTPUT_MIN_ARITY;
    static final MemorySegment GET_VARIADIC_OUTPUT_HOMOGENEITY;

    static {
        Arena global = Arena.global();
        CREATE_KERNEL_V2 = OrtCustomOp.CreateKernelV2.allocate(Upcalls::createKernel, global);
        try {
            KERNEL_COMPUTE_V2 = Linker.nativeLinker().upcallStub(
                    MethodHandles.lookup().findStatic(Upcalls.class, "compute",
                            MethodType.methodType(long.class, long.class, long.class)),
                    Api.Direct.COMPUTE_UPCALL, global);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
        KERNEL_DESTROY = OrtCustomOp.KernelDestroy.allocate(Upcalls::destroy, global);
        GET_NAME = OrtCustomOp.GetName.allocate(Upcalls::name, global);
        GET_EXECUTION_PROVIDER_TYPE = OrtCustomOp.GetExecutionProviderType.allocate(Upcalls::provider, global);
        GET_INPUT_TYPE = OrtCustomOp.GetInputType.allocate((op, i) -> portInt(op, i, true, 0), global);
        GET_INPUT_TYPE_COUNT = OrtCustomOp.GetInputTypeCount.allocate(op -> portCount(op, true), global);
        GET_OUTPUT_TYPE = OrtCustomOp.GetOutputType.allocate((op, i) -> portInt(op, i, false, 0), global);
        GET_OUTPUT_TYPE_COUNT = OrtCustomOp.GetOutputTypeCount.allocate(op -> portCount(op, false), global);
        GET_INPUT_CHARACTERISTIC = OrtCustomOp.GetInputCharacteristic.allocate((op, i) -> portInt(op, i, true, 1), global);
        GET_OUTPUT_CHARACTERISTIC = OrtCustomOp.GetOutputCharacteristic.allocate((op, i) -> portInt(op, i, false, 1), global);
        GET_INPUT_MEMORY_TYPE = OrtCustomOp.GetInputMemoryType.allocate((op, i) -> portInt(op, i, true, 2), global);
        GET_VARIADIC_INPUT_MIN_ARITY = OrtCustomOp.GetVariadicInputMinArity.allocate(op -> variadic(op, true, true), global);
        GET_VARIADIC_INPUT_HOMOGENEITY = OrtCustomOp.GetVariadicInputHomogeneity.allocate(op -> variadic(op, true, false), global);
        GET_VARIADIC_OUTPUT_MIN_ARITY = OrtCustomOp.GetVariadicOutputMinArity.allocate(op -> variadic(op, false, true), global);
        GET_VARIADIC_OUTPUT_HOMOGENEITY = OrtCustomOp.GetVariadicOutputHomogeneity.allocate(op -> variadic(op, false, false), global);
    }

    private Upcalls() {}

    static void bind(OpBinding binding) {
        OPS.put(binding.struct.address(), binding);
    }

    static void unbind(OpBinding binding) {
        OPS.remove(binding.struct.address(), binding);
    }

    // ---- kernels ----

    private static MemorySegment createKernel(MemorySegment opPtr, MemorySegment api, MemorySegment info,
            MemorySegment kernelOut) {
        OpBinding binding = null;
        try {
            binding = OPS.get(opPtr.address());
            if (binding == null) {
                return status(OrtErrorCode.ORT_FAIL, "custom operator struct 0x" + Long.toHexString(opPtr.address())
                        + " is not registered (its domain was released while a session still used it)");
            }
            KernelInfo kernelInfo = new KernelInfo(binding.op, info);
            CustomKernel kernel;
            try {
                for (AttributeSpec a : binding.op.attributes()) {
                    if (a.required() && !kernelInfo.hasAttribute(a.name())) {
                        throw kernelInfo.invalidAttribute(a.name(), "(" + a.type().onnxName() + ") is required but missing");
                    }
                }
                kernel = binding.op.factory().create(kernelInfo);
            } finally {
                kernelInfo.invalidate();
            }
            if (kernel == null) {
                return status(OrtErrorCode.ORT_FAIL, kernelInfo.where() + ": the kernel factory returned null");
            }
            KernelHolder holder = register(binding, kernel, kernelInfo.nodeName());
            binding.domain.kernelCreated(holder);
            kernelOut.reinterpret(ADDRESS.byteSize()).set(ADDRESS, 0, MemorySegment.ofAddress(holder.id));
            return MemorySegment.NULL;
        } catch (Throwable t) {
            return failure(binding == null ? "custom operator" : binding.op.name(), t);
        }
    }

    private static long compute(long kernelPtr, long context) {
        Object probe;
        try {
            probe = Probes.computeBegin();
        } catch (Throwable t) {
            probe = null; // nothing may cross the upcall
        }
        return probe == null ? computeUnprobed(kernelPtr, context) : computeProbed(probe, kernelPtr, context);
    }

    /** {@link #computeUnprobed} with the JFR CustomOpCompute event (never throws, like every upcall). */
    private static long computeProbed(Object probe, long kernelPtr, long context) {
        long status = computeUnprobed(kernelPtr, context);
        try {
            Probes.computeStop(probe);
            KernelHolder holder = kernel(kernelPtr);
            if (holder != null) {
                CustomOp op = holder.binding.op;
                KernelContext.Inputs in = KernelContext.describeInputs(MemorySegment.ofAddress(context));
                Probes.computeEnd(probe, op.name(), holder.binding.domain.name, holder.nodeName, op.executionProvider(),
                        in.shapes(), in.bytes(), status == 0 ? null : Api.statusMessage(MemorySegment.ofAddress(status)));
            }
        } catch (Throwable t) {
            log("recording the compute event", t);
        }
        return status;
    }

    private static long computeUnprobed(long kernelPtr, long context) {
        KernelHolder holder = null;
        try {
            holder = kernel(kernelPtr);
            if (holder == null) {
                return status(OrtErrorCode.ORT_FAIL, "no live custom kernel #" + kernelPtr).address();
            }
            int[] callback = RefCount.callbackBegin(); // a close() in compute must not wait for this run
            KernelContext ctx = holder.takeContext();
            ctx.begin(context);
            try {
                holder.kernel.compute(ctx);
            } finally {
                ctx.end();
                holder.giveContext(ctx);
                RefCount.callbackEnd(callback);
            }
            return 0;
        } catch (Throwable t) {
            // ORT up to 1.22.0 never frees it: ComputeStatuses does
            return ComputeStatuses.handOver(failure(holder == null ? "custom operator" : holder.where(), t).address());
        }
    }

    private static void destroy(MemorySegment kernelPtr) {
        try {
            KernelHolder holder = unregister(kernelPtr.address());
            if (holder == null) {
                LOG.log(Level.WARNING, "KernelDestroy for unknown custom kernel #{0}", kernelPtr.address());
                return;
            }
            try {
                holder.kernel.close();
            } finally {
                holder.binding.domain.kernelDestroyed(holder);
            }
        } catch (Throwable t) {
            log("KernelDestroy", t);
        }
    }

    // ---- the kernel table ----

    private static KernelHolder kernel(long id) {
        KernelHolder[] table = kernels;
        return id > 0 && id < table.length ? table[(int) id] : null;
    }

    /** A new kernel under a free id (ids of destroyed kernels are taken again only after the others). */
    private static KernelHolder register(OpBinding binding, CustomKernel kernel, String nodeName) {
        synchronized (KERNELS_LOCK) {
            KernelHolder[] table = kernels;
            int id = -1;
            for (int k = 0; k < table.length - 1 && id < 0; k++) {
                int i = 1 + (nextKernel - 1 + k) % (table.length - 1);
                if (table[i] == null) {
                    id = i;
                }
            }
            if (id < 0) {
                id = table.length;
                table = java.util.Arrays.copyOf(table, table.length * 2);
            }
            KernelHolder holder = new KernelHolder(id, binding, kernel, nodeName);
            table[id] = holder;
            nextKernel = id + 1 < table.length ? id + 1 : 1;
            kernels = table; // publishes the entry (and a grown table)
            return holder;
        }
    }

    private static KernelHolder unregister(long id) {
        synchronized (KERNELS_LOCK) {
            KernelHolder[] table = kernels;
            if (id <= 0 || id >= table.length) {
                return null;
            }
            KernelHolder holder = table[(int) id];
            table[(int) id] = null;
            kernels = table;
            return holder;
        }
    }

    // ---- descriptions ----

    private static MemorySegment name(MemorySegment opPtr) {
        try {
            OpBinding b = OPS.get(opPtr.address());
            return b == null ? MemorySegment.NULL : b.cName;
        } catch (Throwable t) {
            log("GetName", t);
            return MemorySegment.NULL;
        }
    }

    private static MemorySegment provider(MemorySegment opPtr) {
        try {
            OpBinding b = OPS.get(opPtr.address());
            return b == null ? MemorySegment.NULL : b.cProvider;
        } catch (Throwable t) {
            log("GetExecutionProviderType", t);
            return MemorySegment.NULL;
        }
    }

    private static long portCount(MemorySegment opPtr, boolean input) {
        try {
            OpBinding b = OPS.get(opPtr.address());
            return b == null ? 0 : input ? b.op.inputs().size() : b.op.outputs().size();
        } catch (Throwable t) {
            log(input ? "GetInputTypeCount" : "GetOutputTypeCount", t);
            return 0;
        }
    }

    /** what: 0 element type, 1 characteristic, 2 memory type. */
    private static int portInt(MemorySegment opPtr, long index, boolean input, int what) {
        try {
            OpBinding b = OPS.get(opPtr.address());
            Port p = b == null ? null : input ? b.input(index) : b.output(index);
            if (p == null) {
                return what == 0 ? OnnxTensorType.UNDEFINED.value() : 0;
            }
            return switch (what) {
                case 0 -> p.type().value();
                case 1 -> p.kind().value();
                default -> p.memory().value();
            };
        } catch (Throwable t) {
            log("port query", t);
            return 0;
        }
    }

    private static int variadic(MemorySegment opPtr, boolean input, boolean arity) {
        try {
            OpBinding b = OPS.get(opPtr.address());
            if (b == null) {
                return arity ? 1 : 1;
            }
            var ports = input ? b.op.inputs() : b.op.outputs();
            Port last = ports.isEmpty() ? null : ports.getLast();
            if (last == null || last.kind() != Port.Kind.VARIADIC) {
                return 1;
            }
            return arity ? last.minArity() : last.homogeneous() ? 1 : 0;
        } catch (Throwable t) {
            log("variadic query", t);
            return 1;
        }
    }

    // ---- errors ----

    private static MemorySegment failure(String where, Throwable t) {
        try {
            OrtErrorCode code = t instanceof OrtException oe ? oe.getCode() : OrtErrorCode.ORT_RUNTIME_EXCEPTION;
            if (code == OrtErrorCode.ORT_JAVA_UNKNOWN || code == OrtErrorCode.ORT_OK) {
                code = OrtErrorCode.ORT_FAIL;
            }
            String message = rawMessage(t);
            if (!(t instanceof OrtException)) {
                message = where + ": " + t.getClass().getName() + (message == null ? "" : ": " + message);
                LOG.log(Level.DEBUG, "custom kernel failed", t);
            } else if (!message.startsWith(where) && !message.contains(where.split(" ")[0])) {
                message = where + ": " + message;
            }
            return status(code, message);
        } catch (Throwable again) {
            log("building an error status", again);
            try {
                return status(OrtErrorCode.ORT_FAIL, "custom operator failed (and its message could not be built)");
            } catch (Throwable last) {
                return MemorySegment.NULL;
            }
        }
    }

    /** The message without OrtException's "[CODE] " prefix. */
    static String rawMessage(Throwable t) {
        String m = t.getMessage();
        if (t instanceof OrtException oe && m != null) {
            String prefix = "[" + oe.getCode() + "] ";
            if (m.startsWith(prefix)) {
                return m.substring(prefix.length());
            }
        }
        return m;
    }

    private static MemorySegment status(OrtErrorCode code, String message) {
        return Api.createStatus(code, message);
    }

    private static void log(String where, Throwable t) {
        try {
            LOG.log(Level.ERROR, "custom operator callback " + where + " failed", t);
        } catch (Throwable ignored) {
            // logging itself failed: nothing left to do, and nothing may propagate into ORT
        }
    }
}
