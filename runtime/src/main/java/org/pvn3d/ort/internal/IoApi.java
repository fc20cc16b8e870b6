package org.pvn3d.ort.internal;

import java.lang.foreign.MemorySegment;
import org.pvn3d.ort.ffm.OrtApi;

/**
 * ORT's C API functions for memory descriptions, device tensors, IO binding and allocators,
 * resolved once from the loaded runtime's {@code OrtApi} table (the same pattern as {@link Api};
 * errors go through {@link Api#check}).
 */
public final class IoApi {
    private static final MemorySegment API = Api.API;

    // memory descriptions
    public static final MemorySegment CreateMemoryInfo = OrtApi.CreateMemoryInfo(API);
    public static final MemorySegment CreateCpuMemoryInfo = OrtApi.CreateCpuMemoryInfo(API);
    public static final MemorySegment ReleaseMemoryInfo = OrtApi.ReleaseMemoryInfo(API);
    public static final MemorySegment CompareMemoryInfo = OrtApi.CompareMemoryInfo(API);
    public static final MemorySegment MemoryInfoGetName = OrtApi.MemoryInfoGetName(API);
    public static final MemorySegment MemoryInfoGetId = OrtApi.MemoryInfoGetId(API);
    public static final MemorySegment MemoryInfoGetMemType = OrtApi.MemoryInfoGetMemType(API);
    public static final MemorySegment MemoryInfoGetType = OrtApi.MemoryInfoGetType(API);
    public static final MemorySegment MemoryInfoGetDeviceType = OrtApi.MemoryInfoGetDeviceType(API);
    public static final MemorySegment GetTensorMemoryInfo = OrtApi.GetTensorMemoryInfo(API);

    // tensors
    public static final MemorySegment CreateTensorWithDataAsOrtValue = OrtApi.CreateTensorWithDataAsOrtValue(API);
    public static final MemorySegment CreateTensorAsOrtValue = OrtApi.CreateTensorAsOrtValue(API);
    public static final MemorySegment GetTensorMutableData = OrtApi.GetTensorMutableData(API);
    public static final MemorySegment ReleaseValue = OrtApi.ReleaseValue(API);

    // IO binding
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

    // allocators
    public static final MemorySegment CreateAllocator = OrtApi.CreateAllocator(API);
    public static final MemorySegment ReleaseAllocator = OrtApi.ReleaseAllocator(API);
    public static final MemorySegment AllocatorAlloc = OrtApi.AllocatorAlloc(API);
    public static final MemorySegment AllocatorFree = OrtApi.AllocatorFree(API);
    public static final MemorySegment AllocatorGetInfo = OrtApi.AllocatorGetInfo(API);
    public static final MemorySegment CreateArenaCfgV2 = OrtApi.CreateArenaCfgV2(API);
    public static final MemorySegment ReleaseArenaCfg = OrtApi.ReleaseArenaCfg(API);
    public static final MemorySegment CreateAndRegisterAllocator = OrtApi.CreateAndRegisterAllocator(API);
    public static final MemorySegment CreateAndRegisterAllocatorV2 = OrtApi.CreateAndRegisterAllocatorV2(API);
    public static final MemorySegment RegisterAllocator = OrtApi.RegisterAllocator(API);
    public static final MemorySegment UnregisterAllocator = OrtApi.UnregisterAllocator(API);

    private IoApi() {}
}
