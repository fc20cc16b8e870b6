package org.pvn3d.ort.providers;

import static java.lang.foreign.ValueLayout.ADDRESS;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import org.pvn3d.ort.ExecutionProvider;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.OrtRuntime;
import org.pvn3d.ort.SessionOptions;
import org.pvn3d.ort.cuda.CudaStream;
import org.pvn3d.ort.ffm.OrtApi;
import org.pvn3d.ort.internal.Api;
import org.pvn3d.ort.internal.Memory;
import org.pvn3d.ort.internal.CString;

/**
 * Settings of ORT's CUDA execution provider ({@code OrtCUDAProviderOptionsV2}), added to session
 * options with {@link SessionOptions#addExecutionProvider}. Plain Java state: the native options are
 * built, applied and released when they are added, so this object owns nothing native and needs no
 * closing (unlike ORT's own Java class, whose native options outlive the call for no benefit).
 *
 * <p><b>Why the native options are built in one go.</b> On ORT 1.16 {@code UpdateCUDAProviderOptions}
 * rebuilds every option from the keys it is given (others go back to their defaults), so the
 * string options are applied in a single call, and the pointer-valued {@code user_compute_stream}
 * after them.
 *
 * <p><b>user_compute_stream.</b> It is a {@code cudaStream_t}, which ORT 1.16's string parser does
 * not accept (its CUDA provider knows only {@code has_user_compute_stream}; the string key
 * {@code user_compute_stream} came with a later release). It is set with
 * {@code UpdateCUDAProviderOptionsWithValue(options, "user_compute_stream", stream)}, which is part
 * of the API-16 function table ("since 1.16" in onnxruntime_c_api.h) and so is served by every
 * runtime this library loads; it also sets {@code has_user_compute_stream}. The stream stays the
 * caller's: it must outlive every session created with these options.
 */
public final class OrtCUDAProviderOptions extends ExecutionProvider {
    /** How the CUDA arena grows ({@code arena_extend_strategy}). */
    public enum ArenaExtendStrategy {
        NEXT_POWER_OF_TWO("kNextPowerOfTwo"), SAME_AS_REQUESTED("kSameAsRequested");

        private final String value;

        ArenaExtendStrategy(String value) {
            this.value = value;
        }
    }

    /** How cuDNN convolution algorithms are chosen ({@code cudnn_conv_algo_search}). */
    public enum CudnnConvAlgoSearch {
        EXHAUSTIVE, HEURISTIC, DEFAULT
    }

    /** ORT's name of the provider. */
    public static final String NAME = "CUDAExecutionProvider";

    private final Map<String, String> options = new LinkedHashMap<>();
    private MemorySegment userComputeStream = MemorySegment.NULL;

    /** Defaults for everything (device 0). */
    public OrtCUDAProviderOptions() {}

    public OrtCUDAProviderOptions(int deviceId) {
        setDeviceId(deviceId);
    }

    public OrtCUDAProviderOptions setDeviceId(int deviceId) {
        if (deviceId < 0) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "CUDA device id must be >= 0, got " + deviceId);
        }
        options.put("device_id", Integer.toString(deviceId));
        return this;
    }

    /** Upper bound of the CUDA arena in bytes ({@code gpu_mem_limit}). */
    public OrtCUDAProviderOptions setGpuMemLimit(long bytes) {
        if (bytes <= 0) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "gpu_mem_limit must be > 0 bytes, got " + bytes);
        }
        options.put("gpu_mem_limit", Long.toString(bytes));
        return this;
    }

    public OrtCUDAProviderOptions setArenaExtendStrategy(ArenaExtendStrategy strategy) {
        options.put("arena_extend_strategy", strategy.value);
        return this;
    }

    public OrtCUDAProviderOptions setCudnnConvAlgoSearch(CudnnConvAlgoSearch search) {
        options.put("cudnn_conv_algo_search", search.name());
        return this;
    }

    /** Whether ORT copies between host and device on the default stream ({@code do_copy_in_default_stream}). */
    public OrtCUDAProviderOptions setDoCopyInDefaultStream(boolean enable) {
        options.put("do_copy_in_default_stream", enable ? "1" : "0");
        return this;
    }

    /**
     * Whether convolutions and matrix products may use TF32 ({@code use_tf32}, ORT 1.18 and later,
     * where it defaults to on). TF32 keeps 10 mantissa bits: a ResNet trunk then drifts ~1e-2 from an
     * fp32 reference, so parity checks turn it off. Runtimes before 1.18 know no such option (and
     * would refuse the key), so there this does nothing.
     */
    public OrtCUDAProviderOptions setUseTf32(boolean enable) {
        if (OrtRuntime.get().isAtLeast("1.18")) {
            options.put("use_tf32", enable ? "1" : "0");
        }
        return this;
    }

    /**
     * Runs the sessions on {@code stream} (a {@code cudaStream_t}, e.g. from the device API) instead
     * of a stream ORT creates. The caller keeps the stream alive while any such session exists.
     */
    public OrtCUDAProviderOptions setUserComputeStream(MemorySegment stream) {
        if (stream == null || stream.address() == 0) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT,
                    "user_compute_stream must be a non-NULL cudaStream_t (ORT treats NULL as no stream)");
        }
        userComputeStream = MemorySegment.ofAddress(stream.address());
        return this;
    }

    /**
     * Runs the sessions on {@code stream}, a stream Java created; the caller keeps it open while any
     * such session exists.
     */
    public OrtCUDAProviderOptions setUserComputeStream(CudaStream stream) {
        return setUserComputeStream(MemorySegment.ofAddress(stream.address()));
    }

    /**
     * Any other string option ORT's CUDA provider knows (e.g. "enable_cuda_graph" = "1",
     * "cudnn_conv_use_max_workspace" = "1"); ORT checks keys and values when the provider is added.
     */
    public OrtCUDAProviderOptions add(String key, String value) {
        if ("user_compute_stream".equals(key)) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT,
                    "user_compute_stream is a pointer: use setUserComputeStream(MemorySegment)");
        }
        options.put(key, value);
        return this;
    }

    /** The string options set so far, in the order set. */
    public Map<String, String> getOptions() {
        return Collections.unmodifiableMap(options);
    }

    /** True with {@code enable_cuda_graph} = "1": ORT captures the first runs as a CUDA graph and then replays it. */
    @Override
    public boolean capturesGraphs() {
        return "1".equals(options.get("enable_cuda_graph"));
    }

    /** The user compute stream, or the NULL segment when ORT creates its own. */
    public MemorySegment getUserComputeStream() {
        return userComputeStream;
    }

    /** {@value #NAME}. */
    @Override
    public String getName() {
        return NAME;
    }

    /**
     * Adds the CUDA provider with these settings to native session options
     * ({@code SessionOptionsAppendExecutionProvider_CUDA_V2}). Needs ORT's CUDA provider library and
     * a usable CUDA installation; fails with an {@link OrtException} saying what ORT reported.
     */
    @Override
    protected void appendTo(MemorySegment sessionOptions) {
        OrtRuntime.get().ensureCudaProvider();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment cuda = create(arena);
            try {
                Api.checkStatus(OrtApi.SessionOptionsAppendExecutionProvider_CUDA_V2.invoke(
                        Api.Cuda.SessionOptionsAppendExecutionProvider_CUDA_V2, sessionOptions, cuda),
                        "cannot add the CUDA execution provider");
            } finally {
                OrtApi.ReleaseCUDAProviderOptions.invoke(Api.Cuda.ReleaseCUDAProviderOptions, cuda);
            }
        }
    }

    /** ORT's own rendering of these settings ({@code GetCUDAProviderOptionsAsString}). */
    public String toNativeString() {
        OrtRuntime.get().ensureCudaProvider();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment cuda = create(arena);
            try {
                MemorySegment out = arena.allocate(ADDRESS);
                Api.checkStatus(OrtApi.GetCUDAProviderOptionsAsString.invoke(Api.Cuda.GetCUDAProviderOptionsAsString, cuda,
                        Memory.DEFAULT_ALLOCATOR, out));
                return Memory.takeString(out.get(ADDRESS, 0));
            } finally {
                OrtApi.ReleaseCUDAProviderOptions.invoke(Api.Cuda.ReleaseCUDAProviderOptions, cuda);
            }
        }
    }

    private MemorySegment create(Arena arena) {
        MemorySegment out = arena.allocate(ADDRESS);
        Api.checkStatus(OrtApi.CreateCUDAProviderOptions.invoke(Api.Cuda.CreateCUDAProviderOptions, out),
                "the CUDA execution provider is not available in " + OrtRuntime.get());
        MemorySegment cuda = out.get(ADDRESS, 0);
        try {
            if (!options.isEmpty()) {
                int n = options.size();
                MemorySegment keys = arena.allocate(ADDRESS, n);
                MemorySegment values = arena.allocate(ADDRESS, n);
                int i = 0;
                for (Map.Entry<String, String> e : options.entrySet()) {
                    keys.setAtIndex(ADDRESS, i, CString.of(arena, e.getKey()));
                    values.setAtIndex(ADDRESS, i, CString.of(arena, e.getValue()));
                    i++;
                }
                Api.checkStatus(OrtApi.UpdateCUDAProviderOptions.invoke(Api.Cuda.UpdateCUDAProviderOptions, cuda, keys,
                        values, n), "CUDA provider options " + options);
            }
            if (userComputeStream.address() != 0) {
                Api.checkStatus(OrtApi.UpdateCUDAProviderOptionsWithValue.invoke(Api.Cuda.UpdateCUDAProviderOptionsWithValue,
                        cuda, CString.of(arena, "user_compute_stream"), userComputeStream), "user_compute_stream");
            }
            return cuda;
        } catch (RuntimeException e) {
            OrtApi.ReleaseCUDAProviderOptions.invoke(Api.Cuda.ReleaseCUDAProviderOptions, cuda);
            throw e;
        }
    }

    @Override
    public String toString() {
        return "OrtCUDAProviderOptions" + options
                + (userComputeStream.address() == 0 ? "" : " user_compute_stream=0x" + Long.toHexString(userComputeStream.address()));
    }
}
