package org.pvn3d.ort.internal;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.io.IOException;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;

/**
 * Host memory for tensor data, straight from the C library ({@code aligned_alloc}/{@code free}).
 *
 * <p>Why not an {@code Arena}: a tensor may be closed by any thread, which needs a shared arena, and
 * closing a shared arena makes the JVM hand-shake every thread (tens of microseconds) — more than a
 * whole run of a small model. The price is that a segment handed out by {@code OnnxTensor.data()}
 * does not know when its tensor was closed: it is valid until then, like ORT's own Java buffers.
 */
public final class HostMemory {
    /** Alignment of every block: a cache line, and enough for any SIMD load ORT's kernels make. */
    public static final long ALIGNMENT = 64;

    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle ALIGNED_ALLOC = LINKER.downcallHandle(
            LINKER.defaultLookup().find("aligned_alloc").orElseThrow(), FunctionDescriptor.of(ADDRESS, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle FREE = LINKER.downcallHandle(
            LINKER.defaultLookup().find("free").orElseThrow(), FunctionDescriptor.ofVoid(ADDRESS));

    private static final java.util.concurrent.atomic.AtomicLong OUTSTANDING = new java.util.concurrent.atomic.AtomicLong();

    private HostMemory() {}

    /**
     * The memory this process can have at most: the machine's physical memory ({@code sysconf}), or less where a
     * cgroup limits it (a container: {@code memory.max} of cgroup v2, {@code memory.limit_in_bytes} of v1, as the
     * process sees its cgroup root); {@code Long.MAX_VALUE} when neither can be read.
     *
     * <p>A host block larger than this can never be written whole. Where the kernel grants any allocation
     * ({@code vm.overcommit_memory = 1}, common on GPU hosts) asking for it succeeds, and writing it grows the
     * process until the OOM killer ends it, so it is refused up front: here, and for the CPU outputs of custom
     * operators ({@code KernelContext}).
     */
    public static long machineBytes() {
        return Machine.BYTES;
    }

    /** Whether {@code bytes} are more than {@link #machineBytes()}. */
    public static boolean exceedsMachine(long bytes) {
        return bytes > Machine.BYTES;
    }

    private static final class Machine {
        private static final int SC_PAGESIZE = 30;   // glibc's constants on Linux
        private static final int SC_PHYS_PAGES = 85;
        static final long BYTES = Math.min(physical(), cgroupLimit());

        private static long physical() {
            try {
                MethodHandle sysconf = LINKER.downcallHandle(LINKER.defaultLookup().find("sysconf").orElseThrow(),
                        FunctionDescriptor.of(JAVA_LONG, JAVA_INT));
                long pages = (long) sysconf.invokeExact(SC_PHYS_PAGES);
                long pageSize = (long) sysconf.invokeExact(SC_PAGESIZE);
                return pages > 0 && pageSize > 0 && pages <= Long.MAX_VALUE / pageSize ? pages * pageSize : Long.MAX_VALUE;
            } catch (Throwable t) {
                return Long.MAX_VALUE;
            }
        }

        private static long cgroupLimit() {
            long limit = Long.MAX_VALUE;
            for (String file : new String[] {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
                try {
                    String text = Files.readString(Path.of(file)).strip();
                    long value = Long.parseLong(text); // "max" (no limit) is not a number
                    if (value > 0) {
                        limit = Math.min(limit, value);
                    }
                } catch (IOException | NumberFormatException | SecurityException e) {
                    // no such cgroup file, or no limit
                }
            }
            return limit;
        }
    }

    /** Bytes allocated here and not yet freed (for leak checks). */
    public static long outstandingBytes() {
        return OUTSTANDING.get();
    }

    /** {@code bytes} of uninitialised memory (at least one byte is reserved), 64-byte aligned. */
    public static MemorySegment allocate(long bytes) {
        if (bytes < 0) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "negative host allocation size " + bytes);
        }
        if (bytes > Long.MAX_VALUE - ALIGNMENT) {  // the rounding below would wrap to a small size
            throw new OrtException(OrtErrorCode.ORT_FAIL, "out of host memory allocating " + bytes + " bytes");
        }
        if (exceedsMachine(bytes)) {  // granted under overcommit, then fatal to write (machineBytes)
            throw new OrtException(OrtErrorCode.ORT_FAIL, "out of host memory allocating " + bytes
                    + " bytes: more than this machine's " + machineBytes() + " bytes");
        }
        long rounded = Math.max(ALIGNMENT, (bytes + ALIGNMENT - 1) / ALIGNMENT * ALIGNMENT);
        MemorySegment block;
        try {
            block = (MemorySegment) ALIGNED_ALLOC.invokeExact(ALIGNMENT, rounded);
        } catch (Throwable t) {
            throw new OrtException(OrtErrorCode.ORT_FAIL, "aligned_alloc failed: " + t);
        }
        if (block.address() == 0) {
            throw new OrtException(OrtErrorCode.ORT_FAIL, "out of host memory allocating " + bytes + " bytes");
        }
        OUTSTANDING.addAndGet(bytes);
        return block.reinterpret(bytes);
    }

    /** Zero-filled {@code bytes}. */
    public static MemorySegment allocateZeroed(long bytes) {
        MemorySegment block = allocate(bytes);
        block.fill((byte) 0);
        return block;
    }

    /** Frees a block from {@link #allocate} (the segment it returned, whose size it counts). */
    public static void free(MemorySegment block) {
        OUTSTANDING.addAndGet(-block.byteSize());
        try {
            FREE.invokeExact(block);
        } catch (Throwable t) {
            throw new OrtException(OrtErrorCode.ORT_FAIL, "free failed: " + t);
        }
    }
}
