package org.pvn3d.ort.profile;

import java.nio.file.Path;
import org.pvn3d.ort.internal.NvtxLibrary;

/**
 * NVTX ranges (NVIDIA Tools Extension) from Java, for Nsight Systems and Nsight Compute: every range
 * is a push/pop range in the NVTX domain {@value #DOMAIN}, the domain libpvn3d_ops's CUDA launchers
 * use too (one range per kernel launch, named after the operator, e.g. {@code PVN3D_BallQuery}). With
 * NVTX on, every {@code OrtSession.run} is a range named {@value #RUN}, and the PVN3D pipeline adds
 * one per stage ({@code stage:inference}, ...).
 *
 * <p>Off by default, and then nothing is looked up: {@link #enable()} (or {@code -Dpvn3d.nvtx=true})
 * loads the NVTX library ({@code libnvtx3interop.so.1} of CUDA 12/13, or {@code libnvToolsExt.so.1};
 * {@code -Dpvn3d.nvtx.path} or {@code PVN3D_NVTX_PATH} names another). Without one every call here is
 * a no-op; with one and no tool attached, NVTX returns at once. Nsight Compute filters on the ranges
 * with {@code ncu --nvtx --nvtx-include "pvn3d@PVN3D_BallQuery/"} (domain {@code @} range, the
 * trailing {@code /} meaning a push/pop range) or {@code "regex:pvn3d@.+/"} for all of them.
 *
 * <pre>{@code
 * Nvtx.enable();
 * try (Nvtx.Range r = Nvtx.range("preprocess")) {
 *     ...
 * }
 * }</pre>
 */
public final class Nvtx {
    /** The NVTX domain of this project's ranges. */
    public static final String DOMAIN = NvtxLibrary.DOMAIN;
    /** The range around each session run. */
    public static final String RUN = "run";

    private static final Range NONE = () -> {};

    private Nvtx() {}

    /**
     * Turns the ranges on, loading the NVTX library the first time. Returns false (and the ranges stay
     * no-ops) when no NVTX library was found; {@link #unavailableReason()} says what was tried.
     */
    public static boolean enable() {
        return NvtxLibrary.enable();
    }

    /** Turns the ranges off again (pop the ranges pushed before first). */
    public static void disable() {
        NvtxLibrary.disable();
    }

    /** Whether pushes and pops reach an NVTX library now. */
    public static boolean isEnabled() {
        return NvtxLibrary.isEnabled();
    }

    /** The NVTX library in use, or null. */
    public static Path library() {
        return NvtxLibrary.library();
    }

    /** Why {@link #enable()} found no NVTX library; null when it did or was never called. */
    public static String unavailableReason() {
        return NvtxLibrary.unavailableReason();
    }

    /** Pushes a range on this thread (nothing while disabled). Pair it with {@link #pop()} on the same thread. */
    public static void push(String name) {
        NvtxLibrary.push(name);
    }

    /** Pops this thread's innermost range (nothing while disabled). */
    public static void pop() {
        NvtxLibrary.pop();
    }

    /**
     * A range for a try-with-resources block: pushed now, popped by {@link Range#close()}. While NVTX is
     * off it is a shared no-op object (nothing is allocated).
     */
    public static Range range(String name) {
        if (!NvtxLibrary.isEnabled()) {
            return NONE;
        }
        NvtxLibrary.push(name);
        return NvtxLibrary::pop;
    }

    /** A pushed range; {@link #close()} pops it. */
    @FunctionalInterface
    public interface Range extends AutoCloseable {
        @Override
        void close();
    }
}
