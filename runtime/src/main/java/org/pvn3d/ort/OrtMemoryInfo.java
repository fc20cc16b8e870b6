package org.pvn3d.ort;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.pvn3d.ort.ffm.OrtApi;
import org.pvn3d.ort.internal.Api;
import org.pvn3d.ort.internal.Handles;
import org.pvn3d.ort.internal.Lease;
import org.pvn3d.ort.internal.CString;

/**
 * A description of where memory lives ({@code OrtMemoryInfo}): the allocator's name ({@value #CPU},
 * {@value #CUDA}, {@value #CUDA_PINNED}), the device id, the allocator type and the memory type. ORT
 * copies what it needs from a memory description (into a tensor, a binding, an allocator), so one may
 * be closed as soon as the call that took it returns.
 *
 * <p>Every {@code OrtMemoryInfo} in Java is owned by whoever created it (also those returned by
 * {@link OnnxTensorLike#getMemoryInfo()} and {@link OrtAllocator#getMemoryInfo()}, which are copies).
 */
public final class OrtMemoryInfo extends NativeObject {
    /** ORT's name for host memory. */
    public static final String CPU = "Cpu";
    /** ORT's name for CUDA device memory. */
    public static final String CUDA = "Cuda";
    /** ORT's name for page-locked host memory that the CUDA provider uses for copies. */
    public static final String CUDA_PINNED = "CudaPinned";

    /** {@code OrtAllocatorType}. */
    public enum AllocatorType {
        INVALID(-1), DEVICE(0), ARENA(1);

        private final int value;

        AllocatorType(int value) {
            this.value = value;
        }

        public int value() {
            return value;
        }

        static AllocatorType of(int v) {
            for (AllocatorType t : values()) {
                if (t.value == v) {
                    return t;
                }
            }
            return INVALID;
        }
    }

    /** {@code OrtMemType}. */
    public enum MemType {
        /** Host memory a non-CPU provider reads as input. */
        CPU_INPUT(-2),
        /** Host-accessible memory a non-CPU provider writes (e.g. CUDA pinned). */
        CPU_OUTPUT(-1),
        /** The provider's default memory (device memory for CUDA). */
        DEFAULT(0);

        private final int value;

        MemType(int value) {
            this.value = value;
        }

        public int value() {
            return value;
        }

        static MemType of(int v) {
            for (MemType t : values()) {
                if (t.value == v) {
                    return t;
                }
            }
            throw new OrtException(OrtErrorCode.ORT_FAIL, "unknown OrtMemType " + v);
        }
    }

    /** {@code OrtMemoryInfoDeviceType}: which kind of device the memory is on. */
    public enum DeviceType {
        CPU, GPU, FPGA;

        static DeviceType of(int v) {
            return v >= 0 && v < values().length ? values()[v] : CPU;
        }
    }

    private final String name;
    private final int deviceId;
    private final AllocatorType allocatorType;
    private final MemType memType;
    private final DeviceType deviceType;

    private OrtMemoryInfo(MemorySegment handle, Desc d) {
        super("OrtMemoryInfo", handle);
        this.name = d.name;
        this.deviceId = d.id;
        this.allocatorType = d.allocatorType;
        this.memType = d.memType;
        this.deviceType = d.deviceType;
    }

    private record Desc(String name, int id, AllocatorType allocatorType, MemType memType, DeviceType deviceType) {}

    /** Reads a memory description's fields (ORT-owned or ours). */
    private static Desc describe(MemorySegment handle) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment ptr = arena.allocate(ADDRESS);
            MemorySegment i = arena.allocate(JAVA_INT);
            Api.checkStatus(OrtApi.MemoryInfoGetName.invoke(Api.MemoryInfo.MemoryInfoGetName, handle, ptr));
            String n = ptr.get(ADDRESS, 0).reinterpret(Long.MAX_VALUE).getString(0);
            Api.checkStatus(OrtApi.MemoryInfoGetId.invoke(Api.MemoryInfo.MemoryInfoGetId, handle, i));
            int id = i.get(JAVA_INT, 0);
            Api.checkStatus(OrtApi.MemoryInfoGetType.invoke(Api.MemoryInfo.MemoryInfoGetType, handle, i));
            AllocatorType at = AllocatorType.of(i.get(JAVA_INT, 0));
            Api.checkStatus(OrtApi.MemoryInfoGetMemType.invoke(Api.MemoryInfo.MemoryInfoGetMemType, handle, i));
            MemType mt = MemType.of(i.get(JAVA_INT, 0));
            OrtApi.MemoryInfoGetDeviceType.invoke(Api.MemoryInfo.MemoryInfoGetDeviceType, handle, i);
            return new Desc(n, id, at, mt, DeviceType.of(i.get(JAVA_INT, 0)));
        }
    }

    private static OrtMemoryInfo own(MemorySegment created) {
        Desc d;
        try {
            d = describe(created);
        } catch (RuntimeException e) {
            OrtApi.ReleaseMemoryInfo.invoke(Api.MemoryInfo.ReleaseMemoryInfo, created);
            throw e;
        }
        return new OrtMemoryInfo(created, d);
    }

    /** A memory description ({@code CreateMemoryInfo}); ORT checks the name. */
    public static OrtMemoryInfo create(String name, AllocatorType allocatorType, int deviceId, MemType memType) {
        org.pvn3d.ort.internal.OrtLibrary.require();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            Api.checkStatus(OrtApi.CreateMemoryInfo.invoke(Api.MemoryInfo.CreateMemoryInfo, CString.of(arena, name),
                    allocatorType.value(), deviceId, memType.value(), out),
                    "CreateMemoryInfo(" + name + ", " + allocatorType + ", " + deviceId + ", " + memType + ")");
            return own(out.get(ADDRESS, 0));
        }
    }

    /** Host memory as ORT's CPU provider allocates it ({@code Cpu}, arena, default memory type). */
    public static OrtMemoryInfo cpu() {
        return cpu(AllocatorType.ARENA);
    }

    /** Host memory with the given allocator type ({@code CreateCpuMemoryInfo}). */
    public static OrtMemoryInfo cpu(AllocatorType allocatorType) {
        org.pvn3d.ort.internal.OrtLibrary.require();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            Api.checkStatus(OrtApi.CreateCpuMemoryInfo.invoke(Api.MemoryInfo.CreateCpuMemoryInfo, allocatorType.value(),
                    MemType.DEFAULT.value(), out), "CreateCpuMemoryInfo");
            return own(out.get(ADDRESS, 0));
        }
    }

    /** Device memory on CUDA device {@code deviceId} ({@code Cuda}, device allocator, default memory type). */
    public static OrtMemoryInfo cuda(int deviceId) {
        return create(CUDA, AllocatorType.DEVICE, deviceId, MemType.DEFAULT);
    }

    /** Page-locked host memory of the CUDA provider ({@code CudaPinned}, memory type CPU output). */
    public static OrtMemoryInfo cudaPinned(int deviceId) {
        return create(CUDA_PINNED, AllocatorType.DEVICE, deviceId, MemType.CPU_OUTPUT);
    }

    /** A copy of a memory description that ORT owns (e.g. a tensor's or an allocator's). */
    static OrtMemoryInfo copyOf(MemorySegment borrowed) {
        Desc d = describe(borrowed);
        return create(d.name, d.allocatorType, d.id, d.memType);
    }

    /** Whether an ORT-owned memory description is of host-accessible memory. */
    static boolean isHostAccessible(MemorySegment borrowed) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment i = arena.allocate(JAVA_INT);
            OrtApi.MemoryInfoGetDeviceType.invoke(Api.MemoryInfo.MemoryInfoGetDeviceType, borrowed, i);
            return i.get(JAVA_INT, 0) == 0;
        }
    }

    public String getName() {
        return name;
    }

    public int getDeviceId() {
        return deviceId;
    }

    public AllocatorType getAllocatorType() {
        return allocatorType;
    }

    public MemType getMemoryType() {
        return memType;
    }

    public DeviceType getDeviceType() {
        return deviceType;
    }

    /** Whether the host can read this memory directly (CPU and CUDA-pinned memory). */
    public boolean isHostAccessible() {
        return deviceType == DeviceType.CPU;
    }

    /** Whether ORT considers both descriptions the same ({@code CompareMemoryInfo}). */
    public boolean sameAs(OrtMemoryInfo other) {
        try (Lease a = Handles.acquire(this); Lease b = Handles.acquire(other); Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_INT);
            Api.checkStatus(OrtApi.CompareMemoryInfo.invoke(Api.MemoryInfo.CompareMemoryInfo, a.handle(), b.handle(), out));
            return out.get(JAVA_INT, 0) == 0;
        }
    }

    @Override
    protected void releaseNative(MemorySegment handle) {
        OrtApi.ReleaseMemoryInfo.invoke(Api.MemoryInfo.ReleaseMemoryInfo, handle);
    }

    @Override
    public String toString() {
        return "OrtMemoryInfo(" + name + ", device " + deviceId + ", " + allocatorType + ", " + memType + ", "
                + deviceType + (isClosed() ? ", closed)" : ")");
    }
}
