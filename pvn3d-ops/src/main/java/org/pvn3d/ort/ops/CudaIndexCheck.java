package org.pvn3d.ort.ops;

/**
 * How the CUDA kernels of GatherPoints, GroupPoints and ThreeInterpolate report an index outside
 * its range. Whatever the choice, a bad index never reads out of bounds: the CUDA kernel writes 0
 * where it would have read, and records the first bad position in a flag (cuda-ops/common/index_check.h).
 * On the CPU provider a bad index always fails the run itself.
 */
public enum CudaIndexCheck {
    /**
     * The default. The flag lives in mapped pinned host memory that the kernel writes directly; the
     * compute call launches and returns without synchronising; the session reads the flag once the
     * run has finished (ORT synchronises its stream at the end of a run) and fails that run with the
     * same message the CPU kernel gives. {@link org.pvn3d.ort.customop.CustomOpDomain#checkDeferredErrors()}
     * reads it at any other time.
     */
    DEFERRED,
    /**
     * Synchronises ORT's compute stream after the launch and fails the run itself with the CPU
     * kernel's message. Exact, but it stalls the host on every such node: for debugging and tests.
     */
    SYNC,
    /** No flag at all (no extra stream work): bad indices read 0 silently. For benchmarks only. */
    OFF
}
