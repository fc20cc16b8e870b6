package org.pvn3d.ort.cuda;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * CUDA devices as the CUDA runtime ({@code libcudart}, found as {@link DeviceApi} describes) sees them:
 * how many there are, what they are, how much memory is free. Without a CUDA runtime library or a
 * driver {@link #count()} is 0 and everything else throws an {@code OrtException}.
 */
public final class CudaDevice {
    /** What the CUDA runtime says about one device. */
    public record Properties(int device, String name, int computeCapabilityMajor, int computeCapabilityMinor,
            long totalMemory, int multiprocessors) {}

    /** Free and total bytes of a device ({@code cudaMemGetInfo}). */
    public record MemoryInfo(long freeBytes, long totalBytes) {
        public long usedBytes() {
            return totalBytes - freeBytes;
        }
    }

    private CudaDevice() {}

    /** Whether a CUDA runtime library can be loaded in this process (a device may still be missing). */
    public static boolean hasRuntime() {
        return DeviceApi.available();
    }

    /** Number of CUDA devices (0 without a device, a driver, or a CUDA runtime library). */
    public static int count() {
        if (!DeviceApi.available()) {
            return 0;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_INT);
            int status = (int) DeviceApi.functions().DEVICE_COUNT.invokeExact(out);
            return status == 0 ? out.get(JAVA_INT, 0) : 0;
        } catch (Throwable t) {
            throw DeviceApi.rethrow(t);
        }
    }

    /** Whether at least one CUDA device can be used. */
    public static boolean isAvailable() {
        return count() > 0;
    }

    public static Properties properties(int device) {
        DeviceApi.Functions f = DeviceApi.functions();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment prop = arena.allocate(DeviceApi.PROP_BYTES, 16);
            DeviceApi.check((int) f.DEVICE_PROPERTIES.invokeExact(prop, device), "cudaGetDeviceProperties");
            MemorySegment value = arena.allocate(JAVA_INT);
            int[] attrs = {DeviceApi.ATTR_COMPUTE_CAPABILITY_MAJOR, DeviceApi.ATTR_COMPUTE_CAPABILITY_MINOR,
                DeviceApi.ATTR_MULTIPROCESSOR_COUNT};
            int[] values = new int[attrs.length];
            for (int i = 0; i < attrs.length; i++) {
                DeviceApi.check((int) f.DEVICE_ATTRIBUTE.invokeExact(value, attrs[i], device), "cudaDeviceGetAttribute");
                values[i] = value.get(JAVA_INT, 0);
            }
            return new Properties(device, prop.getString(0), values[0], values[1],
                    prop.get(JAVA_LONG, DeviceApi.PROP_TOTAL_GLOBAL_MEM_OFFSET), values[2]);
        } catch (Throwable t) {
            throw DeviceApi.rethrow(t);
        }
    }

    /** Makes {@code device} the calling thread's current device ({@code cudaSetDevice}). */
    public static void setCurrent(int device) {
        try {
            DeviceApi.check((int) DeviceApi.functions().SET_DEVICE.invokeExact(device));
        } catch (Throwable t) {
            throw DeviceApi.rethrow(t);
        }
    }

    /** The calling thread's current device. */
    public static int current() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_INT);
            DeviceApi.check((int) DeviceApi.functions().GET_DEVICE.invokeExact(out));
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
            DeviceApi.check((int) DeviceApi.functions().MEM_GET_INFO.invokeExact(free, total));
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
            DeviceApi.check((int) DeviceApi.functions().DEVICE_SYNCHRONIZE.invokeExact());
        } catch (Throwable t) {
            throw DeviceApi.rethrow(t);
        }
    }
}
