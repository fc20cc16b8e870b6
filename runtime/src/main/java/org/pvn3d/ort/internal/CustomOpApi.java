package org.pvn3d.ort.internal;

import java.lang.foreign.MemorySegment;
import org.pvn3d.ort.ffm.OrtApi;

/**
 * The ORT C API functions the custom-operator bridge and the CUDA provider options call, resolved
 * once from the API-16 {@code OrtApi} table like {@link Api} (kept apart so that the lead's table
 * stays the session/tensor core). Every entry exists in API version 16, so every runtime from 1.16
 * on serves it.
 */
public final class CustomOpApi {
    private static final MemorySegment API = Api.API;

    // kernel creation: attributes and the node
    public static final MemorySegment KernelInfoGetAttribute_float = OrtApi.KernelInfoGetAttribute_float(API);
    public static final MemorySegment KernelInfoGetAttribute_int64 = OrtApi.KernelInfoGetAttribute_int64(API);
    public static final MemorySegment KernelInfoGetAttribute_string = OrtApi.KernelInfoGetAttribute_string(API);
    public static final MemorySegment KernelInfoGetAttributeArray_float = OrtApi.KernelInfoGetAttributeArray_float(API);
    public static final MemorySegment KernelInfoGetAttributeArray_int64 = OrtApi.KernelInfoGetAttributeArray_int64(API);
    public static final MemorySegment KernelInfo_GetNodeName = OrtApi.KernelInfo_GetNodeName(API);

    // kernel compute: inputs, outputs, stream, allocator
    public static final MemorySegment KernelContext_GetInputCount = OrtApi.KernelContext_GetInputCount(API);
    public static final MemorySegment KernelContext_GetOutputCount = OrtApi.KernelContext_GetOutputCount(API);
    public static final MemorySegment KernelContext_GetInput = OrtApi.KernelContext_GetInput(API);
    public static final MemorySegment KernelContext_GetOutput = OrtApi.KernelContext_GetOutput(API);
    public static final MemorySegment KernelContext_GetGPUComputeStream = OrtApi.KernelContext_GetGPUComputeStream(API);
    public static final MemorySegment KernelContext_GetAllocator = OrtApi.KernelContext_GetAllocator(API);
    public static final MemorySegment ReleaseAllocator = OrtApi.ReleaseAllocator(API);
    public static final MemorySegment GetTensorMemoryInfo = OrtApi.GetTensorMemoryInfo(API);
    public static final MemorySegment MemoryInfoGetName = OrtApi.MemoryInfoGetName(API);
    public static final MemorySegment MemoryInfoGetId = OrtApi.MemoryInfoGetId(API);

    // domains
    public static final MemorySegment CreateCustomOpDomain = OrtApi.CreateCustomOpDomain(API);
    public static final MemorySegment CustomOpDomain_Add = OrtApi.CustomOpDomain_Add(API);
    public static final MemorySegment ReleaseCustomOpDomain = OrtApi.ReleaseCustomOpDomain(API);

    // the CUDA execution provider (V2 options)
    public static final MemorySegment CreateCUDAProviderOptions = OrtApi.CreateCUDAProviderOptions(API);
    public static final MemorySegment UpdateCUDAProviderOptions = OrtApi.UpdateCUDAProviderOptions(API);
    /** Since 1.16 (in the API-16 table): sets pointer-valued options such as user_compute_stream. */
    public static final MemorySegment UpdateCUDAProviderOptionsWithValue = OrtApi.UpdateCUDAProviderOptionsWithValue(API);
    public static final MemorySegment GetCUDAProviderOptionsAsString = OrtApi.GetCUDAProviderOptionsAsString(API);
    public static final MemorySegment ReleaseCUDAProviderOptions = OrtApi.ReleaseCUDAProviderOptions(API);
    public static final MemorySegment SessionOptionsAppendExecutionProvider_CUDA_V2 =
            OrtApi.SessionOptionsAppendExecutionProvider_CUDA_V2(API);

    private CustomOpApi() {}
}
