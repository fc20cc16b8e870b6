package org.pvn3d.ort;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.pvn3d.ort.internal.Handles;
import org.pvn3d.ort.internal.Lease;
import org.pvn3d.ort.internal.Probes;

/**
 * An allocator implemented in Java ({@code OrtAllocator} whose {@code Alloc}, {@code Free} and
 * {@code Info} are upcalls), registered with {@link OrtEnvironment#registerAllocator(JavaAllocator)} so
 * that sessions created with {@code session.use_env_allocators = 1} allocate through it. Its blocks come
 * from a {@link Backing}: host memory ({@link #cpu()}: 64-byte aligned {@code aligned_alloc}) or, for
 * example, CUDA device memory ({@code org.pvn3d.ort.cuda.CudaJavaAllocator}: one {@code cudaMalloc} per
 * block). Its {@link #counters()} show what ORT asked for. Upcalls are thread-safe and never throw.
 *
 * <p><b>Failures.</b> ORT's C API gives an allocator no way to fail: ORT uses whatever {@code Alloc}
 * returns, and a null pointer crashes it (1.16) where the block is first written. So a block is always
 * handed out when memory exists: when the backing fails (returns 0 or throws) for memory the host can
 * reach, the block comes from the C library instead (counted in {@link Counters#failedAllocations()}, and
 * freed there). Only with no host memory left at all, or when a device backing fails (a
 * {@code cudaMalloc} out of device memory), does ORT get the null pointer.
 *
 * <p><b>Lifetime.</b> The backing memory of every block is freed when ORT frees it, also after
 * {@link #close()}. A registered allocator keeps serving the sessions that took it after close (ORT cannot
 * be refused a block; unregister it first so that new sessions do not take it). ORT keeps a raw pointer to the allocator
 * struct in every session that took it from the environment and in every tensor it allocated, and
 * Java cannot see when the last of those is gone; so once an allocator has been registered, its
 * struct and upcall stubs (a few hundred bytes) are kept for the life of the process, so that no
 * native code can ever call a freed stub. An allocator never registered frees them on close.
 */
public final class JavaAllocator implements AutoCloseable {
    /** Keeps the native parts of every allocator that was ever registered (see the class comment). */
    private static final List<Object> EVER_REGISTERED = new CopyOnWriteArrayList<>();
    private static final long ALIGNMENT = 64;
    private static final MethodHandle ALIGNED_ALLOC;
    private static final MethodHandle FREE;

    static {
        Linker linker = Linker.nativeLinker();
        var libc = linker.defaultLookup();
        ALIGNED_ALLOC = linker.downcallHandle(libc.find("aligned_alloc").orElseThrow(),
                FunctionDescriptor.of(ADDRESS, JAVA_LONG, JAVA_LONG));
        FREE = linker.downcallHandle(libc.find("free").orElseThrow(), FunctionDescriptor.ofVoid(ADDRESS));
    }

    /**
     * Where the blocks come from. Both methods may be called from any thread, at the same time; a
     * failure is an exception (the upcall turns it into a null pointer for ORT).
     */
    public interface Backing {
        /**
         * A new block of {@code bytes} (at least 1), aligned to 64 bytes (ORT's CPU kernels store to it with
         * instructions that need that); returns its address (0 or an exception when there is none). A block
         * that is not aligned is given back through {@link #free} and counted as failed.
         */
        long allocate(long bytes);

        /** Frees a block {@link #allocate} returned. */
        void free(long address);
    }

    /** Host memory: 64-byte aligned blocks from the C library. */
    private static final Backing HOST = new Backing() {
        @Override
        public long allocate(long bytes) {
            long rounded = (bytes + ALIGNMENT - 1) / ALIGNMENT * ALIGNMENT;
            try {
                long address = ((MemorySegment) ALIGNED_ALLOC.invokeExact(ALIGNMENT, rounded)).address();
                if (address == 0) {
                    throw new OrtException(OrtErrorCode.ORT_FAIL, "out of host memory allocating " + bytes + " bytes");
                }
                return address;
            } catch (RuntimeException | Error e) {
                throw e;
            } catch (Throwable t) {
                throw new OrtException(OrtErrorCode.ORT_FAIL, "aligned_alloc failed: " + t, t);
            }
        }

        @Override
        public void free(long address) {
            try {
                FREE.invokeExact(MemorySegment.ofAddress(address));
            } catch (RuntimeException | Error e) {
                throw e;
            } catch (Throwable t) {
                throw new OrtException(OrtErrorCode.ORT_FAIL, "free failed: " + t, t);
            }
        }
    };

    /**
     * What ORT asked of this allocator so far; {@code failedAllocations} counts the backing's failures,
     * served from the C library where the memory is host memory (see Failures in the class comment).
     */
    public record Counters(long allocations, long frees, long bytesLive, long peakBytes, long bytesRequested,
            long failedAllocations) {}

    private final String description;
    private final Backing backing;
    private final Arena nativeParts = Arena.ofShared();
    private final OrtMemoryInfo info;
    private final MemorySegment infoHandle; // what the Info upcall returns: info is kept as long as the struct
    private final MemorySegment struct;
    private final Map<Long, Long> sizes = new ConcurrentHashMap<>();
    private final boolean hostFallback; // a failed backing may be replaced by HOST: the memory is host memory
    private final java.util.Set<Long> fromHost = ConcurrentHashMap.newKeySet(); // blocks HOST gave instead
    private final AtomicLong allocations = new AtomicLong();
    private final AtomicLong frees = new AtomicLong();
    private final AtomicLong live = new AtomicLong();
    private final AtomicLong peak = new AtomicLong();
    private final AtomicLong requested = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final Marker marker;
    private volatile boolean closed;
    private volatile boolean registered;

    private JavaAllocator(String description, OrtMemoryInfo info, Backing backing) {
        this.description = description;
        this.backing = backing;
        this.info = info;
        this.hostFallback = backing != HOST && info.isHostAccessible();
        try (Lease l = Handles.acquire(info)) {
            this.infoHandle = l.handle();
        }
        this.struct = nativeParts.allocate(org.pvn3d.ort.ffm.OrtAllocator.layout());
        // version 16: ORT reads no member beyond Info (Reserve and GetStats come with versions 18 and 23)
        org.pvn3d.ort.ffm.OrtAllocator.version(struct, OrtRuntime.API_VERSION);
        org.pvn3d.ort.ffm.OrtAllocator.Alloc(struct, org.pvn3d.ort.ffm.OrtAllocator.Alloc.allocate(this::allocUpcall, nativeParts));
        org.pvn3d.ort.ffm.OrtAllocator.Free(struct, org.pvn3d.ort.ffm.OrtAllocator.Free.allocate(this::freeUpcall, nativeParts));
        org.pvn3d.ort.ffm.OrtAllocator.Info(struct, org.pvn3d.ort.ffm.OrtAllocator.Info.allocate(this::infoUpcall, nativeParts));
        this.marker = new Marker(struct);
    }

    /** Host memory, described as {@code Cpu} / device allocator / default memory: what the CPU provider uses. */
    public static JavaAllocator cpu() {
        return new JavaAllocator("host", OrtMemoryInfo.cpu(OrtMemoryInfo.AllocatorType.DEVICE), HOST);
    }

    /**
     * An allocator whose blocks come from {@code backing}, for the memory {@code info} describes (which
     * the allocator owns from now on: do not close it). {@code description} names it in messages.
     */
    public static JavaAllocator create(String description, OrtMemoryInfo info, Backing backing) {
        return new JavaAllocator(description, info, backing);
    }

    /** The memory description ORT sees (owned by this allocator: do not close it). */
    public OrtMemoryInfo getMemoryInfo() {
        return info;
    }

    public Counters counters() {
        return new Counters(allocations.get(), frees.get(), live.get(), peak.get(), requested.get(), failed.get());
    }

    /** Blocks handed out and not freed yet. */
    public int liveBlocks() {
        return sizes.size();
    }

    public boolean isClosed() {
        return closed;
    }

    /** The native {@code OrtAllocator*} (for registration). */
    MemorySegment struct() {
        if (closed) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "JavaAllocator is closed");
        }
        return struct;
    }

    void markRegistered() {
        if (!registered) {
            registered = true;
            EVER_REGISTERED.add(this);
        }
    }

    // ---- upcalls: each catches everything (an exception crossing an upcall would end the JVM) ----

    private MemorySegment allocUpcall(MemorySegment self, long size) {
        Object probe = probeBegin();
        if (probe == null) {
            return allocate(size);
        }
        MemorySegment block = allocate(size);
        try {
            Probes.allocatorEnd(probe, description, "alloc", size, block.address(), block.address() != 0);
        } catch (Throwable t) {
            // the event is lost; the allocation stands
        }
        return block;
    }

    private MemorySegment allocate(long size) {
        try {
            long address = fromBacking(Math.max(size, 1));
            if (address == 0 && hostFallback) {
                address = fromHost(Math.max(size, 1));
            }
            if (address == 0) {
                return MemorySegment.NULL; // no memory left at all (see Failures in the class comment)
            }
            sizes.put(address, size);
            allocations.incrementAndGet();
            requested.addAndGet(size);
            long now = live.addAndGet(size);
            peak.accumulateAndGet(now, Math::max);
            return MemorySegment.ofAddress(address);
        } catch (Throwable t) {
            failed.incrementAndGet();
            return MemorySegment.NULL;
        }
    }

    /**
     * A block from the backing, or 0 (counted as failed) when it returns none, throws, or returns a block not
     * aligned to 64 bytes (given back: ORT's kernels would fault on it, ending the JVM).
     */
    private long fromBacking(long bytes) {
        try {
            long address = backing.allocate(bytes);
            if (address != 0 && address % ALIGNMENT == 0) {
                return address;
            }
            if (address != 0) {
                backing.free(address);
            }
        } catch (Throwable t) {
            // counted below; nothing can be reported from an upcall
        }
        failed.incrementAndGet();
        return 0;
    }

    /** A block from the C library instead of a failed backing, or 0. */
    private long fromHost(long bytes) {
        try {
            long address = HOST.allocate(bytes);
            fromHost.add(address);
            return address;
        } catch (Throwable t) {
            return 0;
        }
    }

    private void freeUpcall(MemorySegment self, MemorySegment p) {
        Object probe = probeBegin();
        long freed = free(p);
        if (probe != null) {
            try {
                Probes.allocatorEnd(probe, description, "free", Math.max(freed, 0), p.address(), freed >= 0);
            } catch (Throwable t) {
                // the event is lost; the free stands
            }
        }
    }

    /** The JFR AllocatorCall event's start, or null (never throws: this runs inside an upcall). */
    private static Object probeBegin() {
        try {
            return Probes.allocatorBegin();
        } catch (Throwable t) {
            return null;
        }
    }

    /** Frees a block this allocator handed out; returns its size, or -1 when it was not ours (or failed). */
    private long free(MemorySegment p) {
        try {
            if (p.address() == 0) {
                return -1;
            }
            Long size = sizes.remove(p.address());
            if (size == null) {
                return -1; // not ours: never free what we did not hand out
            }
            if (fromHost.remove(p.address())) {
                HOST.free(p.address());
            } else {
                backing.free(p.address());
            }
            frees.incrementAndGet();
            live.addAndGet(-size);
            return size;
        } catch (Throwable t) {
            // nothing can be reported from here; the counters show the block as still live
            return -1;
        }
    }

    private MemorySegment infoUpcall(MemorySegment self) {
        try {
            return infoHandle;
        } catch (Throwable t) {
            return MemorySegment.NULL;
        }
    }

    /**
     * Closes this allocator: blocks already handed out are still freed when ORT frees them. The memory
     * description and upcalls are released now unless the allocator was ever registered; a registered one
     * keeps serving the sessions that took it (see Lifetime in the class comment), so unregister it from
     * the environment first ({@link OrtEnvironment#unregisterAllocator(JavaAllocator)}). Idempotent.
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        marker.close();
        if (!registered && sizes.isEmpty()) {
            info.close();
            nativeParts.close();
        }
    }

    @Override
    public String toString() {
        return "JavaAllocator(" + description + ", " + counters() + (closed ? ", closed)" : ")");
    }

    /** Counts open Java allocators in {@link NativeObject#liveCounts()} (kind "JavaAllocator"). */
    private static final class Marker extends NativeObject {
        Marker(MemorySegment struct) {
            super("JavaAllocator", struct);
        }

        @Override
        protected void releaseNative(MemorySegment handle) {}
    }
}
