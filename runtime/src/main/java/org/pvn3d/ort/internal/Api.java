package org.pvn3d.ort.internal;

import java.lang.foreign.MemorySegment;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.OrtRuntime;
import org.pvn3d.ort.ffm.OrtApi;

/**
 * ORT's C API functions this library calls, resolved once from the {@code OrtApi} table of the
 * loaded runtime into constants (so the JIT sees fixed function pointers), and {@link #check}, the
 * one place that turns an {@code OrtStatus*} into an {@link OrtException}.
 *
 * <p>Call sites use the generated per-function classes: {@code OrtApi.Run.invoke(Api.Run, ...)}.
 */
public final class Api {
    /** The {@code OrtApi*} of the loaded runtime (loading it if this is the first use). */
    public static final MemorySegment API = OrtRuntime.get().api();

    public static final MemorySegment CreateStatus = OrtApi.CreateStatus(API);
    public static final MemorySegment GetErrorCode = OrtApi.GetErrorCode(API);
    public static final MemorySegment GetErrorMessage = OrtApi.GetErrorMessage(API);
    public static final MemorySegment ReleaseStatus = OrtApi.ReleaseStatus(API);
    public static final MemorySegment CreateEnv = OrtApi.CreateEnv(API);
    public static final MemorySegment CreateEnvWithCustomLogger = OrtApi.CreateEnvWithCustomLogger(API);
    public static final MemorySegment ReleaseEnv = OrtApi.ReleaseEnv(API);
    public static final MemorySegment GetAvailableProviders = OrtApi.GetAvailableProviders(API);
    public static final MemorySegment ReleaseAvailableProviders = OrtApi.ReleaseAvailableProviders(API);
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
    public static final MemorySegment CastTypeInfoToTensorInfo = OrtApi.CastTypeInfoToTensorInfo(API);
    public static final MemorySegment GetOnnxTypeFromTypeInfo = OrtApi.GetOnnxTypeFromTypeInfo(API);
    public static final MemorySegment ReleaseTypeInfo = OrtApi.ReleaseTypeInfo(API);
    public static final MemorySegment GetTensorElementType = OrtApi.GetTensorElementType(API);
    public static final MemorySegment GetDimensionsCount = OrtApi.GetDimensionsCount(API);
    public static final MemorySegment GetDimensions = OrtApi.GetDimensions(API);
    public static final MemorySegment GetSymbolicDimensions = OrtApi.GetSymbolicDimensions(API);
    public static final MemorySegment GetTensorShapeElementCount = OrtApi.GetTensorShapeElementCount(API);
    public static final MemorySegment ReleaseTensorTypeAndShapeInfo = OrtApi.ReleaseTensorTypeAndShapeInfo(API);
    public static final MemorySegment GetTensorTypeAndShape = OrtApi.GetTensorTypeAndShape(API);
    public static final MemorySegment GetTypeInfo = OrtApi.GetTypeInfo(API);
    public static final MemorySegment GetAllocatorWithDefaultOptions = OrtApi.GetAllocatorWithDefaultOptions(API);
    public static final MemorySegment AllocatorFree = OrtApi.AllocatorFree(API);
    public static final MemorySegment AllocatorAlloc = OrtApi.AllocatorAlloc(API);
    public static final MemorySegment CreateCpuMemoryInfo = OrtApi.CreateCpuMemoryInfo(API);
    public static final MemorySegment CreateMemoryInfo = OrtApi.CreateMemoryInfo(API);
    public static final MemorySegment ReleaseMemoryInfo = OrtApi.ReleaseMemoryInfo(API);
    public static final MemorySegment CreateTensorWithDataAsOrtValue = OrtApi.CreateTensorWithDataAsOrtValue(API);
    public static final MemorySegment CreateTensorAsOrtValue = OrtApi.CreateTensorAsOrtValue(API);
    public static final MemorySegment GetTensorMutableData = OrtApi.GetTensorMutableData(API);
    public static final MemorySegment IsTensor = OrtApi.IsTensor(API);
    public static final MemorySegment ReleaseValue = OrtApi.ReleaseValue(API);
    public static final MemorySegment GetValueType = OrtApi.GetValueType(API);
    public static final MemorySegment FillStringTensor = OrtApi.FillStringTensor(API);
    public static final MemorySegment GetStringTensorDataLength = OrtApi.GetStringTensorDataLength(API);
    public static final MemorySegment GetStringTensorContent = OrtApi.GetStringTensorContent(API);
    public static final MemorySegment GetStringTensorElementLength = OrtApi.GetStringTensorElementLength(API);
    public static final MemorySegment GetStringTensorElement = OrtApi.GetStringTensorElement(API);
    public static final MemorySegment CreateRunOptions = OrtApi.CreateRunOptions(API);
    public static final MemorySegment ReleaseRunOptions = OrtApi.ReleaseRunOptions(API);
    public static final MemorySegment RunOptionsSetRunTag = OrtApi.RunOptionsSetRunTag(API);
    public static final MemorySegment RunOptionsSetRunLogSeverityLevel = OrtApi.RunOptionsSetRunLogSeverityLevel(API);
    public static final MemorySegment RunOptionsSetRunLogVerbosityLevel = OrtApi.RunOptionsSetRunLogVerbosityLevel(API);
    public static final MemorySegment RunOptionsSetTerminate = OrtApi.RunOptionsSetTerminate(API);
    public static final MemorySegment RunOptionsUnsetTerminate = OrtApi.RunOptionsUnsetTerminate(API);
    public static final MemorySegment AddRunConfigEntry = OrtApi.AddRunConfigEntry(API);

    private Api() {}

    /**
     * Throws an {@link OrtException} with ORT's code and message when {@code status} is not null,
     * releasing the status first.
     */
    public static void check(MemorySegment status) {
        if (status.address() != 0) {
            throw toException(status, null);
        }
    }

    /** Like {@link #check(MemorySegment)}, with what was being done put in front of ORT's message. */
    public static void check(MemorySegment status, String context) {
        if (status.address() != 0) {
            throw toException(status, context);
        }
    }

    private static OrtException toException(MemorySegment status, String context) {
        int code = OrtApi.GetErrorCode.invoke(GetErrorCode, status);
        String message = OrtApi.GetErrorMessage.invoke(GetErrorMessage, status).reinterpret(Long.MAX_VALUE).getString(0);
        OrtApi.ReleaseStatus.invoke(ReleaseStatus, status);
        return new OrtException(OrtErrorCode.of(code), context == null ? message : context + ": " + message);
    }

    /** Creates an {@code OrtStatus*} (for returning from an upcall); ORT releases it. */
    public static MemorySegment createStatus(OrtErrorCode code, String message, java.lang.foreign.Arena arena) {
        return OrtApi.CreateStatus.invoke(CreateStatus, code.value(), arena.allocateFrom(message == null ? "" : message));
    }
}
