package org.pvn3d.ort.internal;

/**
 * The error statuses our custom kernels' compute upcalls hand to ORT, on the versions where ORT never
 * frees them. Up to 1.22.0 ORT turns the returned {@code OrtStatus} into its own status by copying the
 * code and message and leaves ours allocated, so every failing compute leaked its message (a hostile
 * test: 100 B to 2.7 KB a failure). Measured with 20000 failing runs and 2 KB messages
 * (NativeMemoryTest with the release turned off): the C heap grew 50 MB on 1.16.3 and 42 MB on 1.22.0,
 * and stayed flat on 1.23.2 and 1.24.1, which free it themselves (ORT's "OrtStatus leaks" fix, June
 * 2025). Freeing it twice would crash, and 1.22.1 and 1.22.2 could not be tried, so from 1.22.1 on it
 * is left to ORT.
 *
 * <p>When it is safe to free: ORT copies a returned status on the thread that ran the compute, before
 * that call's frame returns, so a status is done with once that thread has moved on. Each thread holds
 * the last status it returned ({@link #handOver}) and frees it when
 * <ul>
 *   <li>it returns another one (so at most one per thread stays allocated, for ORT's pool threads), or</li>
 *   <li>a run it called has come back failed ({@link #afterFailedRun}): with the sequential executor the
 *       kernels run on the calling thread, so a thread per request (a virtual thread, say) frees the
 *       status of its own failed run before it ends instead of taking it along (a hostile test saw the
 *       per-thread slot alone leak 1.9 KB a request that way).</li>
 * </ul>
 * A kernel that runs a nested session on its thread is no exception: the statuses it holds are from
 * computes that have returned, never from the compute it is in. Only failures pay for the thread-local
 * lookup.
 */
public final class ComputeStatuses {
    private static final boolean FREE_OURSELVES = !OrtLibrary.get().isAtLeast("1.22.1");
    private static final ThreadLocal<long[]> HELD = ThreadLocal.withInitial(() -> new long[1]);

    private ComputeStatuses() {}

    /** Called with the status a compute upcall is about to return (0 for none); returns it. */
    public static long handOver(long status) {
        if (status != 0 && FREE_OURSELVES) {
            long[] slot = HELD.get();
            long previous = slot[0];
            slot[0] = status;
            free(previous);
        }
        return status;
    }

    /** Called on the thread of a run whose native call returned a failure: frees what this thread held. */
    public static void afterFailedRun() {
        if (FREE_OURSELVES) {
            long[] slot = HELD.get();
            long held = slot[0];
            slot[0] = 0;
            free(held);
        }
    }

    private static void free(long status) {
        if (status != 0) {
            Api.releaseStatus(status);
        }
    }
}
