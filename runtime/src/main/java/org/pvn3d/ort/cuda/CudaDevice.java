package org.pvn3d.ort.cuda;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.pvn3d.ort.internal.OpsLibrary;

/**
 * CUDA devices as libpvn3d_ops sees them: how many there are, what they are, how much memory is
 * free. Works in a library built without CUDA too ({@link #count()} is then 0, everything else throws
 * an {@code OrtException} with code {@code ORT_NOT_IMPLEMENTED}).
 */
public final class CudaDevice {
    /** What {@code cudaGetDeviceProperties} says about one device. */
    public record Properties(int device, String name, int computeCapabilityMajor, int computeCapabilityMinor,
            long totalMemory, int multiprocessors) {}

    /** Free and total bytes of a device ({@code cudaMemGetInfo}). */
    public record MemoryInfo(long freeBytes, long totalBytes) {
        public long usedBytes() {
            return totalBytes - freeBytes;
        }
    }

    private CudaDevice() {}

    /** Whether libpvn3d_ops was built with CUDA. */
    public static boolean builtWithCuda() {
        return OpsLibrary.builtWithCuda();
    }

    /** Number of CUDA devices (0 without a device, a driver, or a CUDA build of libpvn3d_ops). */
    public static int count() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_INT);
            int status = (int) DeviceApi.DEVICE_COUNT.invokeExact(out);
            return status == OpsLibrary.OK ? out.get(JAVA_INT, 0) : 0;
        } catch (Throwable t) {
            throw DeviceApi.rethrow(t);
        }
    }

    /** Whether at least one CUDA device can be used. */
    public static boolean isAvailable() {
        return builtWithCuda() && count() > 0;
    }

    public static Properties properties(int device) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment name = arena.allocate(256);
            MemorySegment major = arena.allocate(JAVA_INT);
            MemorySegment minor = arena.allocate(JAVA_INT);
            MemorySegment total = arena.allocate(JAVA_LONG);
            MemorySegment sms = arena.allocate(JAVA_INT);
            DeviceApi.check((int) DeviceApi.DEVICE_PROPERTIES.invokeExact(device, name, 256L, major, minor, total, sms));
            return new Properties(device, name.getString(0), major.get(JAVA_INT, 0), minor.get(JAVA_INT, 0),
                    total.get(JAVA_LONG, 0), sms.get(JAVA_INT, 0));
        } catch (Throwable t) {
            throw DeviceApi.rethrow(t);
        }
    }

    /** Makes {@code device} the calling thread's current device ({@code cudaSetDevice}). */
    public static void setCurrent(int device) {
        try {
            DeviceApi.check((int) DeviceApi.SET_DEVICE.invokeExact(device));
        } catch (Throwable t) {
            throw DeviceApi.rethrow(t);
        }
    }

    /** The calling thread's current device. */
    public static int current() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_INT);
            DeviceApi.check((int) DeviceApi.GET_DEVICE.invokeExact(out));
            return out.get(JAVA_INT, 0);
        } catch (Throwable t) {
            throw DeviceApi.rethrow(t);
        }
    }

    /** Free and total memory of the calling thread's current device. */
    public static MemoryInfo memoryInfo() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment free = arena.allocate(JAVA_LONG);
            MemorySegment total = arena.allocate(JAVA_LONG);
            DeviceApi.check((int) DeviceApi.MEM_GET_INFO.invokeExact(free, total));
            return new MemoryInfo(free.get(JAVA_LONG, 0), total.get(JAVA_LONG, 0));
        } catch (Throwable t) {
            throw DeviceApi.rethrow(t);
        }
    }

    /** Free and total memory of {@code device} (makes it the calling thread's current device). */
    public static MemoryInfo memoryInfo(int device) {
        setCurrent(device);
        return memoryInfo();
    }

    /** Waits for all work on the current device. */
    public static void synchronize() {
        try {
            DeviceApi.check((int) DeviceApi.DEVICE_SYNCHRONIZE.invokeExact());
        } catch (Throwable t) {
            throw DeviceApi.rethrow(t);
        }
    }
}
