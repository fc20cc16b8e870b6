package org.pvn3d.ort.internal;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * NVTX (NVIDIA Tools Extension) through FFM: push/pop ranges in the {@value #DOMAIN} domain, which
 * Nsight Systems and Nsight Compute show and filter on. Off until {@link #enable()} (or
 * {@code -Dpvn3d.nvtx=true}); nothing is looked up before. Enabling looks for the NVTX library:
 * {@code -Dpvn3d.nvtx.path} / {@code PVN3D_NVTX_PATH} (the file or its folder), else
 * {@code libnvtx3interop.so.1} (CUDA 12.x/13's NVTX v3 as exported C symbols), {@code libnvToolsExt.so.1}
 * (NVTX v2, CUDA 11 and earlier) through the dynamic linker, else the CUDA toolkit's folders. Without
 * one every call is a no-op; with one and no tool attached, NVTX's own calls return at once.
 *
 * <p>Ranges use registered strings and one attributes struct per name, made once (global arena), so a
 * push is one downcall and allocates nothing. Push and pop must pair on one thread.
 */
public final class NvtxLibrary {
    /** The NVTX domain of every range this project pushes, from Java and from libpvn3d_ops. */
    public static final String DOMAIN = "pvn3d";
    static final String PATH_PROPERTY = "pvn3d.nvtx.path";
    static final String PATH_ENV = "PVN3D_NVTX_PATH";
    static final String ENABLE_PROPERTY = "pvn3d.nvtx";

    private static final List<String> SONAMES = List.of("libnvtx3interop.so.1", "libnvtx3interop.so", "libnvToolsExt.so.1",
            "libnvToolsExt.so");
    private static final List<Path> TOOLKIT_DIRS = List.of(Path.of("/usr/local/cuda/lib64"), Path.of("/usr/local/cuda/lib"),
            Path.of("/usr/local/cuda/targets/x86_64-linux/lib"), Path.of("/usr/lib/x86_64-linux-gnu"));

    // nvtxEventAttributes_t (version 3): uint16 version, uint16 size, uint32 category, int32 colorType,
    // uint32 color, int32 payloadType, int32 reserved0, 8-byte payload union, int32 messageType, 4 bytes
    // of padding, 8-byte message union: 48 bytes.
    private static final short NVTX_VERSION = 3;
    private static final short ATTRIBUTES_SIZE = 48;
    private static final int COLOR_ARGB = 1;
    private static final int MESSAGE_ASCII = 1;
    private static final int MESSAGE_REGISTERED = 3;
    // names registered with NVTX (and their structs, for the process's life); a range name beyond them (one
    // per frame, say) is passed as a plain message each time instead of growing memory without end
    static final int MAX_REGISTERED_NAMES = 4096;

    private static volatile boolean enabled;
    private static volatile Functions functions;
    private static volatile String unavailable;
    private static final ConcurrentHashMap<String, MemorySegment> ATTRIBUTES = new ConcurrentHashMap<>();

    static {
        if (Boolean.getBoolean(ENABLE_PROPERTY)) {
            enable();
        }
    }

    private NvtxLibrary() {}

    /** The bound functions and the {@value #DOMAIN} domain handle. */
    record Functions(Path library, MethodHandle push, MethodHandle pop, MethodHandle registerString,
            MemorySegment domain) {}

    /**
     * Turns the ranges on: loads the NVTX library (once) and creates the domain. Returns whether ranges
     * will reach NVTX; false (every call a no-op) when no library was found, {@link #unavailableReason()}
     * says what was tried.
     */
    public static synchronized boolean enable() {
        if (functions == null && unavailable == null) {
            try {
                functions = load(explicitCandidates(), SONAMES, TOOLKIT_DIRS);
            } catch (RuntimeException | LinkageError e) {
                unavailable = e.getMessage();
            }
        }
        enabled = functions != null;
        return enabled;
    }

    /** Turns the ranges off (push and pop become no-ops); ranges pushed before should be popped first. */
    public static void disable() {
        enabled = false;
    }

    /** Whether pushes and pops reach NVTX now. */
    public static boolean isEnabled() {
        return enabled;
    }

    /** The NVTX library in use, or null. */
    public static Path library() {
        Functions f = functions;
        return f == null ? null : f.library();
    }

    /** Why {@link #enable()} found no NVTX library (null when it did, or was not called). */
    public static String unavailableReason() {
        return unavailable;
    }

    /** Pushes a range named {@code name} on this thread (a no-op while disabled). */
    public static void push(String name) {
        Functions f = functions;
        if (!enabled || f == null) {
            return;
        }
        MemorySegment attributes = ATTRIBUTES.get(name);
        if (attributes == null && ATTRIBUTES.size() < MAX_REGISTERED_NAMES) {
            attributes = ATTRIBUTES.computeIfAbsent(name, n -> attributes(f, n));
        }
        if (attributes == null) {
            // past the registered names (kept for the process: NVTX has no unregister), a name for this push only
            try (Arena once = Arena.ofConfined()) {
                pushOnce(f, once, name);
            }
            return;
        }
        try {
            int ignored = (int) f.push().invokeExact(f.domain(), attributes);
        } catch (Throwable t) {
            throw new IllegalStateException("nvtxDomainRangePushEx failed", t);
        }
    }

    /** A push whose name is an ASCII message in {@code arena} (the tool reads it during the call). */
    private static void pushOnce(Functions f, Arena arena, String name) {
        MemorySegment a = attributes(arena, name, MESSAGE_ASCII, arena.allocateFrom(name.replace('\0', ' ')).address());
        try {
            int ignored = (int) f.push().invokeExact(f.domain(), a);
        } catch (Throwable t) {
            throw new IllegalStateException("nvtxDomainRangePushEx failed", t);
        }
    }

    /** How many range names are registered with NVTX (at most {@link #MAX_REGISTERED_NAMES}). */
    static int registeredNames() {
        return ATTRIBUTES.size();
    }

    /** Pops this thread's innermost range (a no-op while disabled). */
    public static void pop() {
        Functions f = functions;
        if (!enabled || f == null) {
            return;
        }
        try {
            int ignored = (int) f.pop().invokeExact(f.domain());
        } catch (Throwable t) {
            throw new IllegalStateException("nvtxDomainRangePop failed", t);
        }
    }

    /** The attributes struct for {@code name}: a registered string and a colour derived from the name. */
    private static MemorySegment attributes(Functions f, String name) {
        Arena global = Arena.global();
        MemorySegment handle;
        try {
            handle = (MemorySegment) f.registerString().invokeExact(f.domain(), global.allocateFrom(name));
        } catch (Throwable t) {
            throw new IllegalStateException("nvtxDomainRegisterStringA failed", t);
        }
        return attributes(global, name, MESSAGE_REGISTERED, handle.address());
    }

    /** An {@code nvtxEventAttributes_t} for {@code name}: its colour, and the message of {@code messageType}. */
    private static MemorySegment attributes(Arena arena, String name, int messageType, long message) {
        MemorySegment a = arena.allocate(ATTRIBUTES_SIZE, 8);
        a.set(JAVA_SHORT, 0, NVTX_VERSION);
        a.set(JAVA_SHORT, 2, ATTRIBUTES_SIZE);
        a.set(JAVA_INT, 8, COLOR_ARGB);
        a.set(JAVA_INT, 12, colour(name));
        a.set(JAVA_INT, 32, messageType);
        a.set(JAVA_LONG, 40, message);
        return a;
    }

    /** An opaque, fairly saturated ARGB colour that stays the same for a name. */
    static int colour(String name) {
        int h = name.hashCode() * 0x9E3779B1;
        int r = 64 + ((h >>> 16) & 0x7F);
        int g = 64 + ((h >>> 8) & 0x7F);
        int b = 64 + (h & 0x7F);
        return 0xFF000000 | (r << 16) | (g << 8) | b;
    }

    /** Looks for an NVTX library among these files, then names for the dynamic linker, then folders; binds it. */
    static Functions load(List<Path> files, List<String> sonames, List<Path> dirs) {
        List<String> tried = new ArrayList<>();
        for (Path candidate : files) {
            tried.add(candidate.toString());
            if (Files.isRegularFile(candidate)) {
                return bind(candidate, SymbolLookup.libraryLookup(candidate, Arena.global()));
            }
        }
        for (String soname : sonames) {
            tried.add(soname);
            try {
                return bind(Path.of(soname), SymbolLookup.libraryLookup(soname, Arena.global()));
            } catch (IllegalArgumentException notFound) {
                // next
            }
        }
        for (Path dir : dirs) {
            for (String soname : sonames.isEmpty() ? SONAMES : sonames) {
                Path p = dir.resolve(soname);
                if (Files.isRegularFile(p)) {
                    return bind(p, SymbolLookup.libraryLookup(p, Arena.global()));
                }
            }
        }
        tried.add(dirs.toString());
        throw new IllegalStateException("no NVTX library (tried " + String.join(", ", tried) + "; set " + PATH_PROPERTY
                + " or " + PATH_ENV + ")");
    }

    private static List<Path> explicitCandidates() {
        NativeFiles.Setting configured = NativeFiles.setting(PATH_PROPERTY, PATH_ENV);
        if (!configured.isSet()) {
            return List.of();
        }
        Path p = Path.of(configured.value());
        if (!Files.isDirectory(p)) {
            return List.of(p);
        }
        return SONAMES.stream().map(p::resolve).toList();
    }

    private static Functions bind(Path library, SymbolLookup lookup) {
        Linker linker = Linker.nativeLinker();
        MethodHandle create = linker.downcallHandle(find(lookup, "nvtxDomainCreateA", library), FunctionDescriptor.of(ADDRESS, ADDRESS));
        MethodHandle push = linker.downcallHandle(find(lookup, "nvtxDomainRangePushEx", library),
                FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
        MethodHandle pop = linker.downcallHandle(find(lookup, "nvtxDomainRangePop", library), FunctionDescriptor.of(JAVA_INT, ADDRESS));
        MethodHandle register = linker.downcallHandle(find(lookup, "nvtxDomainRegisterStringA", library),
                FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
        MemorySegment domain;
        try {
            domain = (MemorySegment) create.invokeExact(Arena.global().allocateFrom(DOMAIN));
        } catch (Throwable t) {
            throw new IllegalStateException("nvtxDomainCreateA failed in " + library, t);
        }
        return new Functions(library, push, pop, register, domain);
    }

    private static MemorySegment find(SymbolLookup lookup, String name, Path library) {
        return lookup.find(name).orElseThrow(() -> new IllegalStateException(library + " has no " + name));
    }
}
