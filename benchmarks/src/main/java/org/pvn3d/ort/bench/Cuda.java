package org.pvn3d.ort.bench;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_cuda_device_count;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_cuda_event_create;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_cuda_event_destroy;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_cuda_event_elapsed_ms;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_cuda_event_record;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_cuda_event_synchronize;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_cuda_free;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_cuda_get_device_properties;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_cuda_malloc;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_cuda_memcpy_d2h_async;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_cuda_memcpy_h2d_async;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_cuda_stream_create;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_cuda_stream_destroy;
import static org.pvn3d.ort.ffm.ops.Pvn3dOpsCApi.pvn3d_cuda_stream_synchronize;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.pvn3d.ort.ops.OpsLibrary;

/**
 * The few calls of libpvn3d_ops's device API (cuda-ops/device/device.h) the benchmarks need: device
 * memory, copies, a stream of their own and timing events, through the generated bindings.
 * {@link #require()} (or {@link #deviceCount()}, {@link #describeDevice()}) loads the library; call
 * one of them before the others.
 */
final class Cuda {
    private Cuda() {}

    static int deviceCount() {
        OpsLibrary.load();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment n = a.allocate(JAVA_INT);
            OpsLibrary.check(pvn3d_cuda_device_count(n));
            return n.get(JAVA_INT, 0);
        }
    }

    /** "name (cc X.Y, N SMs)" of device 0. */
    static String describeDevice() {
        OpsLibrary.load();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment name = a.allocate(256);
            MemorySegment major = a.allocate(JAVA_INT);
            MemorySegment minor = a.allocate(JAVA_INT);
            MemorySegment sms = a.allocate(JAVA_INT);
            OpsLibrary.check(pvn3d_cuda_get_device_properties(0, name, 256L, major, minor, MemorySegment.NULL, sms));
            return name.getString(0) + " (cc " + major.get(JAVA_INT, 0) + "." + minor.get(JAVA_INT, 0) + ", "
                    + sms.get(JAVA_INT, 0) + " SMs)";
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
            OpsLibrary.check(pvn3d_cuda_malloc(p, Math.max(bytes, 1L)));
            return p.get(ADDRESS, 0);
        }
    }

    static void free(MemorySegment p) {
        if (p == null) {
            return;
        }
        OpsLibrary.check(pvn3d_cuda_free(p));
    }

    /** Device memory holding a copy of {@code host} (synchronous). */
    static MemorySegment upload(MemorySegment host, MemorySegment stream) {
        MemorySegment d = malloc(host.byteSize());
        h2d(d, host, stream);
        streamSynchronize(stream);
        return d;
    }

    static void h2d(MemorySegment device, MemorySegment host, MemorySegment stream) {
        OpsLibrary.check(pvn3d_cuda_memcpy_h2d_async(device, host, host.byteSize(), stream));
    }

    static void d2h(MemorySegment host, MemorySegment device, MemorySegment stream) {
        OpsLibrary.check(pvn3d_cuda_memcpy_d2h_async(host, device, host.byteSize(), stream));
    }

    static MemorySegment streamCreate() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment p = a.allocate(ADDRESS);
            OpsLibrary.check(pvn3d_cuda_stream_create(p, 1));
            return p.get(ADDRESS, 0);
        }
    }

    static void streamDestroy(MemorySegment s) {
        OpsLibrary.check(pvn3d_cuda_stream_destroy(s));
    }

    static void streamSynchronize(MemorySegment s) {
        OpsLibrary.check(pvn3d_cuda_stream_synchronize(s));
    }

    static MemorySegment eventCreate() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment p = a.allocate(ADDRESS);
            OpsLibrary.check(pvn3d_cuda_event_create(p));
            return p.get(ADDRESS, 0);
        }
    }

    static void eventDestroy(MemorySegment e) {
        OpsLibrary.check(pvn3d_cuda_event_destroy(e));
    }

    static void eventRecord(MemorySegment e, MemorySegment stream) {
        OpsLibrary.check(pvn3d_cuda_event_record(e, stream));
    }

    static void eventSynchronize(MemorySegment e) {
        OpsLibrary.check(pvn3d_cuda_event_synchronize(e));
    }

    /** Milliseconds between two completed events, in {@code scratch} (a 4-byte native segment). */
    static float elapsedMs(MemorySegment scratch, MemorySegment start, MemorySegment end) {
        OpsLibrary.check(pvn3d_cuda_event_elapsed_ms(scratch, start, end));
        return scratch.get(JAVA_FLOAT, 0);
    }
}
