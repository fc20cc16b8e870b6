package org.pvn3d.ort.internal;

import static java.lang.foreign.ValueLayout.ADDRESS;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.pvn3d.ort.ffm.OrtApi;

/**
 * Process-wide native objects that live as long as the runtime: the CPU memory description used for
 * tensors over host memory, and ORT's default CPU allocator (owned by ORT, never released).
 */
public final class Memory {
    /** {@code OrtArenaAllocator} / {@code OrtMemTypeDefault}: plain host memory. */
    public static final MemorySegment CPU_MEMORY_INFO;
    /** ORT's default allocator ({@code GetAllocatorWithDefaultOptions}); ORT owns it. */
    public static final MemorySegment DEFAULT_ALLOCATOR;

    static {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            Api.checkStatus(OrtApi.CreateCpuMemoryInfo.invoke(Api.MemoryInfo.CreateCpuMemoryInfo, 1, 0, out));
            CPU_MEMORY_INFO = out.get(ADDRESS, 0);
            Api.checkStatus(OrtApi.GetAllocatorWithDefaultOptions.invoke(Api.Allocator.GetAllocatorWithDefaultOptions, out));
            DEFAULT_ALLOCATOR = out.get(ADDRESS, 0);
        }
    }

    private Memory() {}

    /** Frees memory that ORT allocated with the default allocator (e.g. input and output names). */
    public static void freeDefault(MemorySegment ptr) {
        if (ptr.address() != 0) {
            Api.checkStatus(OrtApi.AllocatorFree.invoke(Api.Allocator.AllocatorFree, DEFAULT_ALLOCATOR, ptr));
        }
    }

    /** Reads a NUL-terminated string ORT allocated with the default allocator, then frees it. */
    public static String takeString(MemorySegment ptr) {
        try {
            return ptr.reinterpret(Long.MAX_VALUE).getString(0);
        } finally {
            freeDefault(ptr);
        }
    }
}
