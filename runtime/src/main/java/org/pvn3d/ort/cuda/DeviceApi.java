package org.pvn3d.ort.cuda;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import org.pvn3d.ort.internal.OpsLibrary;

/**
 * libpvn3d_ops's device API (cuda-ops/device/device.h), bound once. Every function returns a
 * {@code pvn3d_status}; {@link #check} turns a failure into an {@code OrtException} with the library's
 * message (call it right after the failing call, on the same thread).
 */
final class DeviceApi {
    static final MethodHandle DEVICE_COUNT = bind("pvn3d_cuda_device_count", ADDRESS);
    static final MethodHandle DEVICE_PROPERTIES = bind("pvn3d_cuda_get_device_properties",
            JAVA_INT, ADDRESS, JAVA_LONG, ADDRESS, ADDRESS, ADDRESS, ADDRESS);
    static final MethodHandle SET_DEVICE = bind("pvn3d_cuda_set_device", JAVA_INT);
    static final MethodHandle GET_DEVICE = bind("pvn3d_cuda_get_device", ADDRESS);
    static final MethodHandle MEM_GET_INFO = bind("pvn3d_cuda_mem_get_info", ADDRESS, ADDRESS);
    static final MethodHandle DEVICE_SYNCHRONIZE = bind("pvn3d_cuda_device_synchronize");
    static final MethodHandle MALLOC = bind("pvn3d_cuda_malloc", ADDRESS, JAVA_LONG);
    static final MethodHandle FREE = bind("pvn3d_cuda_free", ADDRESS);
    static final MethodHandle MALLOC_HOST = bind("pvn3d_cuda_malloc_host", ADDRESS, JAVA_LONG, JAVA_INT);
    static final MethodHandle FREE_HOST = bind("pvn3d_cuda_free_host", ADDRESS);
    static final MethodHandle HOST_DEVICE_POINTER = bind("pvn3d_cuda_host_device_pointer", ADDRESS, ADDRESS);
    static final MethodHandle MEMSET_ASYNC = bind("pvn3d_cuda_memset_async", ADDRESS, JAVA_INT, JAVA_LONG, ADDRESS);
    static final MethodHandle H2D_ASYNC = bind("pvn3d_cuda_memcpy_h2d_async", ADDRESS, ADDRESS, JAVA_LONG, ADDRESS);
    static final MethodHandle D2H_ASYNC = bind("pvn3d_cuda_memcpy_d2h_async", ADDRESS, ADDRESS, JAVA_LONG, ADDRESS);
    static final MethodHandle D2D_ASYNC = bind("pvn3d_cuda_memcpy_d2d_async", ADDRESS, ADDRESS, JAVA_LONG, ADDRESS);
    static final MethodHandle STREAM_SYNCHRONIZE = bind("pvn3d_cuda_stream_synchronize", ADDRESS);
    static final MethodHandle EVENT_CREATE = bind("pvn3d_cuda_event_create", ADDRESS);
    static final MethodHandle EVENT_DESTROY = bind("pvn3d_cuda_event_destroy", ADDRESS);
    static final MethodHandle EVENT_RECORD = bind("pvn3d_cuda_event_record", ADDRESS, ADDRESS);
    static final MethodHandle EVENT_SYNCHRONIZE = bind("pvn3d_cuda_event_synchronize", ADDRESS);
    static final MethodHandle EVENT_ELAPSED = bind("pvn3d_cuda_event_elapsed_ms", ADDRESS, ADDRESS, ADDRESS);

    private DeviceApi() {}

    private static MethodHandle bind(String symbol, java.lang.foreign.MemoryLayout... args) {
        return OpsLibrary.bind(symbol, FunctionDescriptor.of(JAVA_INT, args));
    }

    static void check(int status) {
        OpsLibrary.check(status);
    }

    static RuntimeException rethrow(Throwable t) {
        return OpsLibrary.rethrow(t);
    }

    /** The stream's handle, or NULL (the legacy default stream) for {@code null}. */
    static MemorySegment streamOf(CudaStream stream) {
        return stream == null ? MemorySegment.NULL : stream.handle();
    }
}
