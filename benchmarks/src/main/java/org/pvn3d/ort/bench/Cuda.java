package org.pvn3d.ort.bench;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import org.pvn3d.ort.ops.OpsLibrary;

/**
 * The few calls of libpvn3d_ops's device API (cuda-ops/device/device.h) the benchmarks need: device
 * memory, copies, a stream of their own and timing events. Bound once through {@link OpsLibrary}.
 */
final class Cuda {
    private static final FunctionDescriptor STATUS_PTR = FunctionDescriptor.of(JAVA_INT, ADDRESS);
    private static final MethodHandle DEVICE_COUNT = OpsLibrary.bind("pvn3d_cuda_device_count", STATUS_PTR);
    private static final MethodHandle PROPERTIES = OpsLibrary.bind("pvn3d_cuda_get_device_properties",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_LONG, ADDRESS, ADDRESS, ADDRESS, ADDRESS));
    private static final MethodHandle MALLOC = OpsLibrary.bind("pvn3d_cuda_malloc",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG));
    private static final MethodHandle FREE = OpsLibrary.bind("pvn3d_cuda_free", STATUS_PTR);
    private static final MethodHandle H2D = OpsLibrary.bind("pvn3d_cuda_memcpy_h2d_async",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS));
    private static final MethodHandle D2H = OpsLibrary.bind("pvn3d_cuda_memcpy_d2h_async",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS));
    private static final MethodHandle STREAM_CREATE = OpsLibrary.bind("pvn3d_cuda_stream_create",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
    private static final MethodHandle STREAM_DESTROY = OpsLibrary.bind("pvn3d_cuda_stream_destroy", STATUS_PTR);
    private static final MethodHandle STREAM_SYNC = OpsLibrary.bind("pvn3d_cuda_stream_synchronize", STATUS_PTR);
    private static final MethodHandle EVENT_CREATE = OpsLibrary.bind("pvn3d_cuda_event_create", STATUS_PTR);
    private static final MethodHandle EVENT_DESTROY = OpsLibrary.bind("pvn3d_cuda_event_destroy", STATUS_PTR);
    private static final MethodHandle EVENT_RECORD = OpsLibrary.bind("pvn3d_cuda_event_record",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    private static final MethodHandle EVENT_SYNC = OpsLibrary.bind("pvn3d_cuda_event_synchronize", STATUS_PTR);
    private static final MethodHandle EVENT_ELAPSED = OpsLibrary.bind("pvn3d_cuda_event_elapsed_ms",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));

    private Cuda() {}

    static int deviceCount() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment n = a.allocate(JAVA_INT);
            OpsLibrary.check((int) DEVICE_COUNT.invokeExact(n));
            return n.get(JAVA_INT, 0);
        } catch (Throwable t) {
            throw OpsLibrary.rethrow(t);
        }
    }

    /** "name (cc X.Y, N SMs)" of device 0. */
    static String describeDevice() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment name = a.allocate(256);
            MemorySegment major = a.allocate(JAVA_INT);
            MemorySegment minor = a.allocate(JAVA_INT);
            MemorySegment sms = a.allocate(JAVA_INT);
            OpsLibrary.check((int) PROPERTIES.invokeExact(0, name, 256L, major, minor, MemorySegment.NULL, sms));
            return name.getString(0) + " (cc " + major.get(JAVA_INT, 0) + "." + minor.get(JAVA_INT, 0) + ", "
                    + sms.get(JAVA_INT, 0) + " SMs)";
        } catch (Throwable t) {
            throw OpsLibrary.rethrow(t);
        }
    }

    /** Fails with a clear message where there is no CUDA device or libpvn3d_ops has no CUDA kernels. */
    static void require() {
        if (!OpsLibrary.builtWithCuda()) {
            throw new IllegalStateException(OpsLibrary.load() + " was built without CUDA: run the CUDA benchmarks "
                    + "with a CUDA build of libpvn3d_ops (-Dpvn3d.ops.path), or leave them out (-p device=cpu)");
        }
        if (deviceCount() == 0) {
            throw new IllegalStateException("no CUDA device: leave the CUDA benchmarks out (-p device=cpu)");
        }
    }

    static MemorySegment malloc(long bytes) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment p = a.allocate(ADDRESS);
            OpsLibrary.check((int) MALLOC.invokeExact(p, Math.max(bytes, 1L)));
            return p.get(ADDRESS, 0);
        } catch (Throwable t) {
            throw OpsLibrary.rethrow(t);
        }
    }

    static void free(MemorySegment p) {
        if (p == null) {
            return;
        }
        try {
            OpsLibrary.check((int) FREE.invokeExact(p));
        } catch (Throwable t) {
            throw OpsLibrary.rethrow(t);
        }
    }

    /** Device memory holding a copy of {@code host} (synchronous). */
    static MemorySegment upload(MemorySegment host, MemorySegment stream) {
        MemorySegment d = malloc(host.byteSize());
        h2d(d, host, stream);
        streamSynchronize(stream);
        return d;
    }

    static void h2d(MemorySegment device, MemorySegment host, MemorySegment stream) {
        try {
            OpsLibrary.check((int) H2D.invokeExact(device, host, host.byteSize(), stream));
        } catch (Throwable t) {
            throw OpsLibrary.rethrow(t);
        }
    }

    static void d2h(MemorySegment host, MemorySegment device, MemorySegment stream) {
        try {
            OpsLibrary.check((int) D2H.invokeExact(host, device, host.byteSize(), stream));
        } catch (Throwable t) {
            throw OpsLibrary.rethrow(t);
        }
    }

    static MemorySegment streamCreate() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment p = a.allocate(ADDRESS);
            OpsLibrary.check((int) STREAM_CREATE.invokeExact(p, 1));
            return p.get(ADDRESS, 0);
        } catch (Throwable t) {
            throw OpsLibrary.rethrow(t);
        }
    }

    static void streamDestroy(MemorySegment s) {
        try {
            OpsLibrary.check((int) STREAM_DESTROY.invokeExact(s));
        } catch (Throwable t) {
            throw OpsLibrary.rethrow(t);
        }
    }

    static void streamSynchronize(MemorySegment s) {
        try {
            OpsLibrary.check((int) STREAM_SYNC.invokeExact(s));
        } catch (Throwable t) {
            throw OpsLibrary.rethrow(t);
        }
    }

    static MemorySegment eventCreate() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment p = a.allocate(ADDRESS);
            OpsLibrary.check((int) EVENT_CREATE.invokeExact(p));
            return p.get(ADDRESS, 0);
        } catch (Throwable t) {
            throw OpsLibrary.rethrow(t);
        }
    }

    static void eventDestroy(MemorySegment e) {
        try {
            OpsLibrary.check((int) EVENT_DESTROY.invokeExact(e));
        } catch (Throwable t) {
            throw OpsLibrary.rethrow(t);
        }
    }

    static void eventRecord(MemorySegment e, MemorySegment stream) {
        try {
            OpsLibrary.check((int) EVENT_RECORD.invokeExact(e, stream));
        } catch (Throwable t) {
            throw OpsLibrary.rethrow(t);
        }
    }

    static void eventSynchronize(MemorySegment e) {
        try {
            OpsLibrary.check((int) EVENT_SYNC.invokeExact(e));
        } catch (Throwable t) {
            throw OpsLibrary.rethrow(t);
        }
    }

    /** Milliseconds between two completed events, in {@code scratch} (a 4-byte native segment). */
    static float elapsedMs(MemorySegment scratch, MemorySegment start, MemorySegment end) {
        try {
            OpsLibrary.check((int) EVENT_ELAPSED.invokeExact(scratch, start, end));
            return scratch.get(JAVA_FLOAT, 0);
        } catch (Throwable t) {
            throw OpsLibrary.rethrow(t);
        }
    }
}
