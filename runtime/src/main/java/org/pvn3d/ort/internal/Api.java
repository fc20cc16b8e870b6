package org.pvn3d.ort.internal;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.AddressLayout;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.ffm.OrtApi;

/**
 * The one table of ORT's C API functions this library calls, read from the {@code OrtApi} struct (API
 * version 16) of the loaded runtime into constants, so that the JIT sees fixed function pointers. The
 * functions are grouped by what they work on; each group is resolved once, when it is first used. Every
 * entry is part of API version 16, so every runtime from 1.16 on serves it.
 *
 * <p>Call sites use the generated per-function classes: {@code OrtApi.Run.invoke(Api.Session.Run, ...)},
 * and pass the returned {@code OrtStatus*} to {@link #checkStatus}, the one place that turns a status
 * into an {@link OrtException}.
 *
 * <p>The calls made on every run and in every custom-operator compute are in {@link Direct} a second
 * time, as handles over raw addresses.
 */
public final class Api {
    /** The {@code OrtApi*} of the loaded runtime (loading it if this is the first use). */
    static final MemorySegment API = OrtLibrary.get().api();

    private Api() {}

    /** Creating and reading {@code OrtStatus} (see {@link Api#checkStatus}). */
    public static final class Status {
        public static final MemorySegment CreateStatus = OrtApi.CreateStatus(API);
        public static final MemorySegment GetErrorCode = OrtApi.GetErrorCode(API);
        public static final MemorySegment GetErrorMessage = OrtApi.GetErrorMessage(API);
        public static final MemorySegment ReleaseStatus = OrtApi.ReleaseStatus(API);

        private Status() {}
    }

    /** The environment, its providers, and the allocators it shares between sessions. */
    public static final class Env {
        public static final MemorySegment CreateEnvWithCustomLogger = OrtApi.CreateEnvWithCustomLogger(API);
        public static final MemorySegment ReleaseEnv = OrtApi.ReleaseEnv(API);
        public static final MemorySegment GetAvailableProviders = OrtApi.GetAvailableProviders(API);
        public static final MemorySegment ReleaseAvailableProviders = OrtApi.ReleaseAvailableProviders(API);
        public static final MemorySegment CreateAndRegisterAllocator = OrtApi.CreateAndRegisterAllocator(API);
        public static final MemorySegment CreateAndRegisterAllocatorV2 = OrtApi.CreateAndRegisterAllocatorV2(API);
        public static final MemorySegment RegisterAllocator = OrtApi.RegisterAllocator(API);
        public static final MemorySegment UnregisterAllocator = OrtApi.UnregisterAllocator(API);

        private Env() {}
    }

    /** Session options, including what they add to sessions: custom-operator domains and libraries. */
    public static final class Options {
        public static final MemorySegment CreateSessionOptions = OrtApi.CreateSessionOptions(API);
        public static final MemorySegment ReleaseSessionOptions = OrtApi.ReleaseSessionOptions(API);
        public static final MemorySegment SetSessionGraphOptimizationLevel = OrtApi.SetSessionGraphOptimizationLevel(API);
        public static final MemorySegment SetIntraOpNumThreads = OrtApi.SetIntraOpNumThreads(API);
        public static final MemorySegment SetInterOpNumThreads = OrtApi.SetInterOpNumThreads(API);
        public static final MemorySegment SetSessionExecutionMode = OrtApi.SetSessionExecutionMode(API);
        public static final MemorySegment EnableMemPattern = OrtApi.EnableMemPattern(API);
        public static final MemorySegment DisableMemPattern = OrtApi.DisableMemPattern(API);
        public static final MemorySegment EnableCpuMemArena = OrtApi.EnableCpuMemArena(API);
        public static final MemorySegment DisableCpuMemArena = OrtApi.DisableCpuMemArena(API);
        public static final MemorySegment EnableProfiling = OrtApi.EnableProfiling(API);
        public static final MemorySegment DisableProfiling = OrtApi.DisableProfiling(API);
        public static final MemorySegment AddFreeDimensionOverride = OrtApi.AddFreeDimensionOverride(API);
        public static final MemorySegment AddFreeDimensionOverrideByName = OrtApi.AddFreeDimensionOverrideByName(API);
        public static final MemorySegment AddSessionConfigEntry = OrtApi.AddSessionConfigEntry(API);
        public static final MemorySegment SetSessionLogId = OrtApi.SetSessionLogId(API);
        public static final MemorySegment SetSessionLogSeverityLevel = OrtApi.SetSessionLogSeverityLevel(API);
        public static final MemorySegment SetSessionLogVerbosityLevel = OrtApi.SetSessionLogVerbosityLevel(API);
        public static final MemorySegment SetOptimizedModelFilePath = OrtApi.SetOptimizedModelFilePath(API);
        public static final MemorySegment AddCustomOpDomain = OrtApi.AddCustomOpDomain(API);
        public static final MemorySegment RegisterCustomOpsLibrary_V2 = OrtApi.RegisterCustomOpsLibrary_V2(API);
        public static final MemorySegment RegisterCustomOpsUsingFunction = OrtApi.RegisterCustomOpsUsingFunction(API);

        private Options() {}
    }

    /** Sessions: creation, model inputs and outputs, runs, profiling. */
    public static final class Session {
        public static final MemorySegment CreateSession = OrtApi.CreateSession(API);
        public static final MemorySegment CreateSessionFromArray = OrtApi.CreateSessionFromArray(API);
        public static final MemorySegment ReleaseSession = OrtApi.ReleaseSession(API);
        public static final MemorySegment Run = OrtApi.Run(API);
        public static final MemorySegment SessionGetInputCount = OrtApi.SessionGetInputCount(API);
        public static final MemorySegment SessionGetOutputCount = OrtApi.SessionGetOutputCount(API);
        public static final MemorySegment SessionGetInputName = OrtApi.SessionGetInputName(API);
        public static final MemorySegment SessionGetOutputName = OrtApi.SessionGetOutputName(API);
        public static final MemorySegment SessionGetInputTypeInfo = OrtApi.SessionGetInputTypeInfo(API);
        public static final MemorySegment SessionGetOutputTypeInfo = OrtApi.SessionGetOutputTypeInfo(API);
        public static final MemorySegment SessionEndProfiling = OrtApi.SessionEndProfiling(API);

        private Session() {}
    }

    /** Per-run options. */
    public static final class RunOptions {
        public static final MemorySegment CreateRunOptions = OrtApi.CreateRunOptions(API);
        public static final MemorySegment ReleaseRunOptions = OrtApi.ReleaseRunOptions(API);
        public static final MemorySegment RunOptionsSetRunTag = OrtApi.RunOptionsSetRunTag(API);
        public static final MemorySegment RunOptionsSetRunLogSeverityLevel = OrtApi.RunOptionsSetRunLogSeverityLevel(API);
        public static final MemorySegment RunOptionsSetRunLogVerbosityLevel = OrtApi.RunOptionsSetRunLogVerbosityLevel(API);
        public static final MemorySegment RunOptionsSetTerminate = OrtApi.RunOptionsSetTerminate(API);
        public static final MemorySegment RunOptionsUnsetTerminate = OrtApi.RunOptionsUnsetTerminate(API);
        public static final MemorySegment AddRunConfigEntry = OrtApi.AddRunConfigEntry(API);

        private RunOptions() {}
    }

    /** Type descriptions: {@code OrtTypeInfo} and {@code OrtTensorTypeAndShapeInfo}. */
    public static final class TypeInfo {
        public static final MemorySegment GetOnnxTypeFromTypeInfo = OrtApi.GetOnnxTypeFromTypeInfo(API);
        public static final MemorySegment CastTypeInfoToTensorInfo = OrtApi.CastTypeInfoToTensorInfo(API);
        public static final MemorySegment ReleaseTypeInfo = OrtApi.ReleaseTypeInfo(API);
        public static final MemorySegment GetTensorElementType = OrtApi.GetTensorElementType(API);
        public static final MemorySegment GetDimensionsCount = OrtApi.GetDimensionsCount(API);
        public static final MemorySegment GetDimensions = OrtApi.GetDimensions(API);
        public static final MemorySegment GetSymbolicDimensions = OrtApi.GetSymbolicDimensions(API);
        public static final MemorySegment ReleaseTensorTypeAndShapeInfo = OrtApi.ReleaseTensorTypeAndShapeInfo(API);

        private TypeInfo() {}
    }

    /** Values ({@code OrtValue}): tensors over memory or allocated by ORT, their data, strings. */
    public static final class Value {
        public static final MemorySegment CreateTensorWithDataAsOrtValue = OrtApi.CreateTensorWithDataAsOrtValue(API);
        public static final MemorySegment CreateTensorAsOrtValue = OrtApi.CreateTensorAsOrtValue(API);
        public static final MemorySegment GetTensorMutableData = OrtApi.GetTensorMutableData(API);
        public static final MemorySegment GetTensorTypeAndShape = OrtApi.GetTensorTypeAndShape(API);
        public static final MemorySegment GetTensorMemoryInfo = OrtApi.GetTensorMemoryInfo(API);
        public static final MemorySegment GetValueType = OrtApi.GetValueType(API);
        public static final MemorySegment ReleaseValue = OrtApi.ReleaseValue(API);
        public static final MemorySegment FillStringTensor = OrtApi.FillStringTensor(API);
        public static final MemorySegment GetStringTensorDataLength = OrtApi.GetStringTensorDataLength(API);
        public static final MemorySegment GetStringTensorContent = OrtApi.GetStringTensorContent(API);

        private Value() {}
    }

    /** Memory descriptions ({@code OrtMemoryInfo}). */
    public static final class MemoryInfo {
        public static final MemorySegment CreateMemoryInfo = OrtApi.CreateMemoryInfo(API);
        public static final MemorySegment CreateCpuMemoryInfo = OrtApi.CreateCpuMemoryInfo(API);
        public static final MemorySegment ReleaseMemoryInfo = OrtApi.ReleaseMemoryInfo(API);
        public static final MemorySegment CompareMemoryInfo = OrtApi.CompareMemoryInfo(API);
        public static final MemorySegment MemoryInfoGetName = OrtApi.MemoryInfoGetName(API);
        public static final MemorySegment MemoryInfoGetId = OrtApi.MemoryInfoGetId(API);
        public static final MemorySegment MemoryInfoGetMemType = OrtApi.MemoryInfoGetMemType(API);
        public static final MemorySegment MemoryInfoGetType = OrtApi.MemoryInfoGetType(API);
        public static final MemorySegment MemoryInfoGetDeviceType = OrtApi.MemoryInfoGetDeviceType(API);

        private MemoryInfo() {}
    }

    /** Allocators: ORT's default one, a session's, and arena settings. */
    public static final class Allocator {
        public static final MemorySegment GetAllocatorWithDefaultOptions = OrtApi.GetAllocatorWithDefaultOptions(API);
        public static final MemorySegment CreateAllocator = OrtApi.CreateAllocator(API);
        public static final MemorySegment ReleaseAllocator = OrtApi.ReleaseAllocator(API);
        public static final MemorySegment AllocatorAlloc = OrtApi.AllocatorAlloc(API);
        public static final MemorySegment AllocatorFree = OrtApi.AllocatorFree(API);
        public static final MemorySegment AllocatorGetInfo = OrtApi.AllocatorGetInfo(API);
        public static final MemorySegment CreateArenaCfgV2 = OrtApi.CreateArenaCfgV2(API);
        public static final MemorySegment ReleaseArenaCfg = OrtApi.ReleaseArenaCfg(API);

        private Allocator() {}
    }

    /** IO binding, and runs with one. */
    public static final class IoBinding {
        public static final MemorySegment CreateIoBinding = OrtApi.CreateIoBinding(API);
        public static final MemorySegment ReleaseIoBinding = OrtApi.ReleaseIoBinding(API);
        public static final MemorySegment BindInput = OrtApi.BindInput(API);
        public static final MemorySegment BindOutput = OrtApi.BindOutput(API);
        public static final MemorySegment BindOutputToDevice = OrtApi.BindOutputToDevice(API);
        public static final MemorySegment GetBoundOutputNames = OrtApi.GetBoundOutputNames(API);
        public static final MemorySegment GetBoundOutputValues = OrtApi.GetBoundOutputValues(API);
        public static final MemorySegment ClearBoundInputs = OrtApi.ClearBoundInputs(API);
        public static final MemorySegment ClearBoundOutputs = OrtApi.ClearBoundOutputs(API);
        public static final MemorySegment SynchronizeBoundInputs = OrtApi.SynchronizeBoundInputs(API);
        public static final MemorySegment SynchronizeBoundOutputs = OrtApi.SynchronizeBoundOutputs(API);
        public static final MemorySegment RunWithBinding = OrtApi.RunWithBinding(API);

        private IoBinding() {}
    }

    /** Custom-operator domains. */
    public static final class CustomOpDomain {
        public static final MemorySegment CreateCustomOpDomain = OrtApi.CreateCustomOpDomain(API);
        public static final MemorySegment CustomOpDomain_Add = OrtApi.CustomOpDomain_Add(API);
        public static final MemorySegment ReleaseCustomOpDomain = OrtApi.ReleaseCustomOpDomain(API);

        private CustomOpDomain() {}
    }

    /** What a custom kernel asks ORT: attributes when it is created, inputs, outputs, stream, allocator when it runs. */
    public static final class Kernel {
        public static final MemorySegment KernelInfoGetAttribute_float = OrtApi.KernelInfoGetAttribute_float(API);
        public static final MemorySegment KernelInfoGetAttribute_int64 = OrtApi.KernelInfoGetAttribute_int64(API);
        public static final MemorySegment KernelInfoGetAttribute_string = OrtApi.KernelInfoGetAttribute_string(API);
        public static final MemorySegment KernelInfoGetAttributeArray_float = OrtApi.KernelInfoGetAttributeArray_float(API);
        public static final MemorySegment KernelInfoGetAttributeArray_int64 = OrtApi.KernelInfoGetAttributeArray_int64(API);
        public static final MemorySegment KernelInfo_GetNodeName = OrtApi.KernelInfo_GetNodeName(API);
        public static final MemorySegment KernelContext_GetInputCount = OrtApi.KernelContext_GetInputCount(API);
        public static final MemorySegment KernelContext_GetOutputCount = OrtApi.KernelContext_GetOutputCount(API);
        public static final MemorySegment KernelContext_GetInput = OrtApi.KernelContext_GetInput(API);
        public static final MemorySegment KernelContext_GetOutput = OrtApi.KernelContext_GetOutput(API);
        public static final MemorySegment KernelContext_GetGPUComputeStream = OrtApi.KernelContext_GetGPUComputeStream(API);
        public static final MemorySegment KernelContext_GetAllocator = OrtApi.KernelContext_GetAllocator(API);

        private Kernel() {}
    }

    /** The CUDA execution provider's options ({@code OrtCUDAProviderOptionsV2}) and adding the provider. */
    public static final class Cuda {
        public static final MemorySegment CreateCUDAProviderOptions = OrtApi.CreateCUDAProviderOptions(API);
        public static final MemorySegment UpdateCUDAProviderOptions = OrtApi.UpdateCUDAProviderOptions(API);
        /** Since 1.16 (in the API-16 table): sets pointer-valued options such as user_compute_stream. */
        public static final MemorySegment UpdateCUDAProviderOptionsWithValue = OrtApi.UpdateCUDAProviderOptionsWithValue(API);
        public static final MemorySegment GetCUDAProviderOptionsAsString = OrtApi.GetCUDAProviderOptionsAsString(API);
        public static final MemorySegment ReleaseCUDAProviderOptions = OrtApi.ReleaseCUDAProviderOptions(API);
        public static final MemorySegment SessionOptionsAppendExecutionProvider_CUDA_V2 =
                OrtApi.SessionOptionsAppendExecutionProvider_CUDA_V2(API);

        private Cuda() {}
    }

    /**
     * The calls of the per-run and per-node paths (a session run, a bound run, reading a run's outputs,
     * a custom kernel's compute) as handles whose every pointer, argument and result, is a raw
     * {@code long} address: a call then creates no {@link MemorySegment}, whatever the JIT inlines, so
     * those paths allocate nothing. They are made from the generated descriptors (each pointer layout
     * replaced by a {@code long}, which the C calling conventions pass alike) and the function pointers
     * of the table above. The getters that only read ORT's structures and never call back into Java
     * are {@linkplain Linker.Option#critical critical}: no thread-state transition around the call.
     * A call that may reach a Java allocator or a custom kernel (a run, allocating a kernel's output,
     * releasing a value) is an ordinary downcall.
     */
    public static final class Direct {
        // The descriptors with every pointer as a long, written out here rather than derived from the
        // generated ones at run time: asking a generated class for its descriptor initialises it, which
        // makes its own handles (milliseconds each on the first inference). ApiDirectTest checks each
        // against addressesAsLongs(the generated descriptor). Equal shapes share the linker's stubs.
        /** {@code KernelComputeV2}'s, for the compute upcall stub: (kernel, context) to status. */
        public static final FunctionDescriptor COMPUTE_UPCALL = FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG);
        static final FunctionDescriptor J_JJ = FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG);
        static final FunctionDescriptor J_JJJ = FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG);
        static final FunctionDescriptor J_JJJJJ = FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG,
                JAVA_LONG, JAVA_LONG);
        static final FunctionDescriptor J_JJJJJJJJ = FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG,
                JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG);
        static final FunctionDescriptor J_JJJJ = FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG,
                JAVA_LONG);
        static final FunctionDescriptor V_J = FunctionDescriptor.ofVoid(JAVA_LONG);
        static final FunctionDescriptor V_JJ = FunctionDescriptor.ofVoid(JAVA_LONG, JAVA_LONG);

        /** Each function's raw descriptor and its generated one (for ApiDirectTest). */
        static java.util.Map<String, FunctionDescriptor[]> descriptors() {
            java.util.Map<String, FunctionDescriptor[]> m = new java.util.LinkedHashMap<>();
            m.put("Run", new FunctionDescriptor[] {J_JJJJJJJJ, OrtApi.Run.descriptor()});
            m.put("RunWithBinding", new FunctionDescriptor[] {J_JJJ, OrtApi.RunWithBinding.descriptor()});
            m.put("BindOutputToDevice", new FunctionDescriptor[] {J_JJJ, OrtApi.BindOutputToDevice.descriptor()});
            m.put("ReleaseValue", new FunctionDescriptor[] {V_J, OrtApi.ReleaseValue.descriptor()});
            m.put("GetValueType", new FunctionDescriptor[] {J_JJ, OrtApi.GetValueType.descriptor()});
            m.put("GetTensorMutableData", new FunctionDescriptor[] {J_JJ, OrtApi.GetTensorMutableData.descriptor()});
            m.put("GetTensorTypeAndShape", new FunctionDescriptor[] {J_JJ, OrtApi.GetTensorTypeAndShape.descriptor()});
            m.put("GetTensorMemoryInfo", new FunctionDescriptor[] {J_JJ, OrtApi.GetTensorMemoryInfo.descriptor()});
            m.put("GetTensorElementType", new FunctionDescriptor[] {J_JJ, OrtApi.GetTensorElementType.descriptor()});
            m.put("GetDimensionsCount", new FunctionDescriptor[] {J_JJ, OrtApi.GetDimensionsCount.descriptor()});
            m.put("GetDimensions", new FunctionDescriptor[] {J_JJJ, OrtApi.GetDimensions.descriptor()});
            m.put("ReleaseTensorTypeAndShapeInfo", new FunctionDescriptor[] {V_J, OrtApi.ReleaseTensorTypeAndShapeInfo.descriptor()});
            m.put("MemoryInfoGetDeviceType", new FunctionDescriptor[] {V_JJ, OrtApi.MemoryInfoGetDeviceType.descriptor()});
            m.put("KernelContext_GetInputCount", new FunctionDescriptor[] {J_JJ, OrtApi.KernelContext_GetInputCount.descriptor()});
            m.put("KernelContext_GetOutputCount", new FunctionDescriptor[] {J_JJ, OrtApi.KernelContext_GetOutputCount.descriptor()});
            m.put("KernelContext_GetInput", new FunctionDescriptor[] {J_JJJ, OrtApi.KernelContext_GetInput.descriptor()});
            m.put("KernelContext_GetOutput", new FunctionDescriptor[] {J_JJJJJ, OrtApi.KernelContext_GetOutput.descriptor()});
            m.put("KernelContext_GetGPUComputeStream", new FunctionDescriptor[] {J_JJ, OrtApi.KernelContext_GetGPUComputeStream.descriptor()});
            m.put("KernelComputeV2 (upcall)", new FunctionDescriptor[] {COMPUTE_UPCALL,
                    org.pvn3d.ort.ffm.OrtCustomOp.KernelComputeV2.descriptor()});
            return m;
        }

        // one holder class per handle: a handle is made (a native stub generated) on its first call, not
        // all of them on the first run, which would add tens of milliseconds to the first inference
        private static final class RUN {
            static final MethodHandle MH = handle(Session.Run, J_JJJJJJJJ, false);
        }

        private static final class RUN_WITH_BINDING {
            static final MethodHandle MH = handle(IoBinding.RunWithBinding, J_JJJ, false);
        }

        private static final class BIND_OUTPUT_TO_DEVICE {
            static final MethodHandle MH = handle(IoBinding.BindOutputToDevice, J_JJJ, false);
        }

        private static final class RELEASE_VALUE {
            static final MethodHandle MH = handle(Value.ReleaseValue, V_J, false);
        }

        private static final class GET_VALUE_TYPE {
            static final MethodHandle MH = handle(Value.GetValueType, J_JJ, true);
        }

        private static final class GET_TENSOR_MUTABLE_DATA {
            static final MethodHandle MH = handle(Value.GetTensorMutableData, J_JJ, true);
        }

        private static final class GET_TENSOR_TYPE_AND_SHAPE {
            static final MethodHandle MH = handle(Value.GetTensorTypeAndShape, J_JJ, true);
        }

        private static final class GET_TENSOR_MEMORY_INFO {
            static final MethodHandle MH = handle(Value.GetTensorMemoryInfo, J_JJ, true);
        }

        private static final class GET_TENSOR_ELEMENT_TYPE {
            static final MethodHandle MH = handle(TypeInfo.GetTensorElementType, J_JJ, true);
        }

        private static final class GET_DIMENSIONS_COUNT {
            static final MethodHandle MH = handle(TypeInfo.GetDimensionsCount, J_JJ, true);
        }

        private static final class GET_DIMENSIONS {
            static final MethodHandle MH = handle(TypeInfo.GetDimensions, J_JJJ, true);
        }

        private static final class RELEASE_TENSOR_TYPE_AND_SHAPE_INFO {
            static final MethodHandle MH = handle(TypeInfo.ReleaseTensorTypeAndShapeInfo, V_J, true);
        }

        private static final class MEMORY_INFO_GET_DEVICE_TYPE {
            static final MethodHandle MH = handle(MemoryInfo.MemoryInfoGetDeviceType, V_JJ, true);
        }

        private static final class KERNEL_CONTEXT_GET_INPUT_COUNT {
            static final MethodHandle MH = handle(Kernel.KernelContext_GetInputCount, J_JJ, true);
        }

        private static final class KERNEL_CONTEXT_GET_OUTPUT_COUNT {
            static final MethodHandle MH = handle(Kernel.KernelContext_GetOutputCount, J_JJ, true);
        }

        private static final class KERNEL_CONTEXT_GET_INPUT {
            static final MethodHandle MH = handle(Kernel.KernelContext_GetInput, J_JJJ, true);
        }

        private static final class KERNEL_CONTEXT_GET_OUTPUT {
            static final MethodHandle MH = handle(Kernel.KernelContext_GetOutput, J_JJJJJ, false);
        }

        private static final class KERNEL_CONTEXT_GET_GPU_COMPUTE_STREAM {
            static final MethodHandle MH = handle(Kernel.KernelContext_GetGPUComputeStream, J_JJ, true);
        }

        private static final class GET_TENSOR_ELEMENT_TYPE_AND_SHAPE_DATA_REFERENCE {
            // (value, ONNXTensorElementDataType* type, const int64_t** dims, size_t* count) -> status
            static final MethodHandle MH = handle(OrtLibrary.get().tensorShapeReference(), J_JJJJ, true);
        }

        /**
         * Whether the runtime has {@code GetTensorElementTypeAndShapeDataReference} (ORT 1.24 on, see
         * {@link OrtLibrary#tensorShapeReference()}): a constant, so the JIT keeps one of the two ways
         * of reading a shape.
         */
        public static final boolean SHAPE_REFERENCE = OrtLibrary.get().tensorShapeReference().address() != 0;

        /** All of memory, to read the dimensions a shape reference points at without a segment per read. */
        private static final MemorySegment EVERYTHING = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);

        private Direct() {}

        /**
         * {@code GetTensorElementTypeAndShapeDataReference}: the element type (an int) into {@code typeOut},
         * the address of the tensor's own int64 dimensions into {@code dimsOut} and their count into
         * {@code countOut}, valid while the value lives. Only when {@link #SHAPE_REFERENCE}.
         */
        public static long getTensorElementTypeAndShapeDataReference(long value, long typeOut, long dimsOut,
                long countOut) {
            try {
                return (long) GET_TENSOR_ELEMENT_TYPE_AND_SHAPE_DATA_REFERENCE.MH.invokeExact(value, typeOut, dimsOut,
                        countOut);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        /** The int64 at native address {@code address} (a dimension a shape reference points at). */
        public static long longAt(long address) {
            return EVERYTHING.get(JAVA_LONG, address);
        }

        /** {@code descriptor} with every pointer, argument or result, as a {@code long}. */
        public static FunctionDescriptor addressesAsLongs(FunctionDescriptor descriptor) {
            // plain loops: this runs on the first inference, where a first use of streams or lambdas
            // would cost milliseconds of class loading
            java.util.List<MemoryLayout> in = descriptor.argumentLayouts();
            MemoryLayout[] args = new MemoryLayout[in.size()];
            for (int i = 0; i < args.length; i++) {
                args[i] = in.get(i) instanceof AddressLayout ? JAVA_LONG : in.get(i);
            }
            if (descriptor.returnLayout().isEmpty()) {
                return FunctionDescriptor.ofVoid(args);
            }
            MemoryLayout r = descriptor.returnLayout().get();
            return FunctionDescriptor.of(r instanceof AddressLayout ? JAVA_LONG : r, args);
        }

        private static MethodHandle handle(MemorySegment function, FunctionDescriptor raw, boolean critical) {
            return critical ? Linker.nativeLinker().downcallHandle(function, raw, Linker.Option.critical(false))
                    : Linker.nativeLinker().downcallHandle(function, raw);
        }

        private static RuntimeException rethrow(Throwable t) {
            if (t instanceof RuntimeException r) {
                return r;
            }
            if (t instanceof Error e) {
                throw e;
            }
            return new IllegalStateException(t);
        }

        public static long run(long session, long runOptions, long inNames, long inValues, long nIn, long outNames,
                long nOut, long outValues) {
            try {
                return (long) RUN.MH.invokeExact(session, runOptions, inNames, inValues, nIn, outNames, nOut, outValues);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        public static long runWithBinding(long session, long runOptions, long binding) {
            try {
                return (long) RUN_WITH_BINDING.MH.invokeExact(session, runOptions, binding);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        public static long bindOutputToDevice(long binding, long name, long memoryInfo) {
            try {
                return (long) BIND_OUTPUT_TO_DEVICE.MH.invokeExact(binding, name, memoryInfo);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        public static void releaseValue(long value) {
            try {
                RELEASE_VALUE.MH.invokeExact(value);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        public static long getValueType(long value, long typeOut) {
            try {
                return (long) GET_VALUE_TYPE.MH.invokeExact(value, typeOut);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        public static long getTensorMutableData(long value, long dataOut) {
            try {
                return (long) GET_TENSOR_MUTABLE_DATA.MH.invokeExact(value, dataOut);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        public static long getTensorTypeAndShape(long value, long infoOut) {
            try {
                return (long) GET_TENSOR_TYPE_AND_SHAPE.MH.invokeExact(value, infoOut);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        public static long getTensorMemoryInfo(long value, long infoOut) {
            try {
                return (long) GET_TENSOR_MEMORY_INFO.MH.invokeExact(value, infoOut);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        public static long getTensorElementType(long info, long typeOut) {
            try {
                return (long) GET_TENSOR_ELEMENT_TYPE.MH.invokeExact(info, typeOut);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        public static long getDimensionsCount(long info, long countOut) {
            try {
                return (long) GET_DIMENSIONS_COUNT.MH.invokeExact(info, countOut);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        public static long getDimensions(long info, long dimsOut, long rank) {
            try {
                return (long) GET_DIMENSIONS.MH.invokeExact(info, dimsOut, rank);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        public static void releaseTensorTypeAndShapeInfo(long info) {
            try {
                RELEASE_TENSOR_TYPE_AND_SHAPE_INFO.MH.invokeExact(info);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        public static void memoryInfoGetDeviceType(long memoryInfo, long typeOut) {
            try {
                MEMORY_INFO_GET_DEVICE_TYPE.MH.invokeExact(memoryInfo, typeOut);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        public static long kernelContextGetInputCount(long context, long countOut) {
            try {
                return (long) KERNEL_CONTEXT_GET_INPUT_COUNT.MH.invokeExact(context, countOut);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        public static long kernelContextGetOutputCount(long context, long countOut) {
            try {
                return (long) KERNEL_CONTEXT_GET_OUTPUT_COUNT.MH.invokeExact(context, countOut);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        public static long kernelContextGetInput(long context, long index, long valueOut) {
            try {
                return (long) KERNEL_CONTEXT_GET_INPUT.MH.invokeExact(context, index, valueOut);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        public static long kernelContextGetOutput(long context, long index, long dims, long rank, long valueOut) {
            try {
                return (long) KERNEL_CONTEXT_GET_OUTPUT.MH.invokeExact(context, index, dims, rank, valueOut);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        public static long kernelContextGetGpuComputeStream(long context, long streamOut) {
            try {
                return (long) KERNEL_CONTEXT_GET_GPU_COMPUTE_STREAM.MH.invokeExact(context, streamOut);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }
    }

    /** Like {@link #checkStatus(MemorySegment)}, for a status as a raw address ({@link Direct}). */
    public static void checkStatus(long status) {
        if (status != 0) {
            throw toException(MemorySegment.ofAddress(status), null);
        }
    }

    /** Like {@link #checkStatus(MemorySegment, String)}, for a status as a raw address ({@link Direct}). */
    public static void checkStatus(long status, String context) {
        if (status != 0) {
            throw toException(MemorySegment.ofAddress(status), context);
        }
    }

    /**
     * Throws an {@link OrtException} with ORT's code and message when {@code status} is not null,
     * releasing the status first.
     */
    public static void checkStatus(MemorySegment status) {
        if (status.address() != 0) {
            throw toException(status, null);
        }
    }

    /** Like {@link #checkStatus(MemorySegment)}, with what was being done put in front of ORT's message. */
    public static void checkStatus(MemorySegment status, String context) {
        if (status.address() != 0) {
            throw toException(status, context);
        }
    }

    /**
     * The exception for a non-null {@code status} (its code, and its message after {@code context} when
     * that is not null), releasing the status. For callers that report the failure in their own words.
     */
    public static OrtException toException(MemorySegment status, String context) {
        int code = OrtApi.GetErrorCode.invoke(Status.GetErrorCode, status);
        String message = OrtApi.GetErrorMessage.invoke(Status.GetErrorMessage, status).reinterpret(Long.MAX_VALUE).getString(0);
        OrtApi.ReleaseStatus.invoke(Status.ReleaseStatus, status);
        return new OrtException(OrtErrorCode.of(code), context == null ? message : context + ": " + message);
    }

    /** The message of a status without releasing it (for a status that is handed on to ORT). */
    public static String statusMessage(MemorySegment status) {
        return OrtApi.GetErrorMessage.invoke(Status.GetErrorMessage, status).reinterpret(Long.MAX_VALUE).getString(0);
    }

    /** Releases a status this library created and ORT did not take over (ComputeStatuses). */
    public static void releaseStatus(long status) {
        OrtApi.ReleaseStatus.invoke(Status.ReleaseStatus, MemorySegment.ofAddress(status));
    }

    /** Creates an {@code OrtStatus*} (for returning from an upcall); ORT releases it, except where noted. */
    public static MemorySegment createStatus(OrtErrorCode code, String message) {
        try (Arena arena = Arena.ofConfined()) {
            return OrtApi.CreateStatus.invoke(Status.CreateStatus, code.value(), arena.allocateFrom(message == null ? "" : message.replace("\0", "\\0")));
        }
    }
}
