package org.pvn3d.ort.internal;

import org.pvn3d.ort.internal.jfr.JfrProbes;
import org.pvn3d.ort.jfr.OrtEvents;

/**
 * The runtime's profiling hooks: the JFR events of {@link OrtEvents} and the NVTX range around each
 * run. Each instrumented site calls {@code xBegin()} before the work and, only when that returned a
 * token, {@code xEnd(token, ...)} after it. With no recording enabling the event and NVTX off, the begin
 * is a check of two flags, returns null and allocates nothing; the site then runs as if uninstrumented.
 *
 * <p>No class of {@code jdk.jfr} is touched here: {@link JfrProbes} (and through it the event classes)
 * is loaded only when {@link OrtEvents#isAvailable()}, so the runtime also works on a JVM image
 * without the {@code jdk.jfr} module.
 */
public final class Probes {
    private static final boolean JFR = OrtEvents.isAvailable();
    /** The token of a run with an NVTX range and no JFR event. */
    private static final Object NVTX_ONLY = new Object();
    /** The NVTX range pushed around every run. */
    public static final String RUN_RANGE = "run";

    private Probes() {}

    /** Whether the token carries a JFR event, i.e. whether the end call will use its fields (compute them only then). */
    public static boolean recording(Object token) {
        return JFR && token != null && token != NVTX_ONLY && JfrProbes.isEvent(token);
    }

    // ---- sessions ----

    public static Object sessionBegin() {
        return JFR ? JfrProbes.sessionBegin() : null;
    }

    public static void sessionEnd(Object token, long sessionId, String model, long modelBytes, String providers, String domains,
            int inputs, int outputs, boolean profiling, String error) {
        JfrProbes.sessionEnd(token, sessionId, model, modelBytes, providers, domains, inputs, outputs, profiling, error);
    }

    // ---- runs ----

    /** Before a run: a token when the Run event is enabled or NVTX is on (then the range is pushed), else null. */
    public static Object runBegin() {
        Object event = JFR ? JfrProbes.runBegin() : null;
        if (NvtxLibrary.isEnabled()) {
            NvtxLibrary.push(RUN_RANGE);
            return event != null ? event : NVTX_ONLY;
        }
        return event;
    }

    /** Right after a run that {@link #runBegin()} gave a token for: stops the event's clock, pops the range. */
    public static void runStop(Object token) {
        if (token != NVTX_ONLY) {
            JfrProbes.stop(token);
        }
        if (NvtxLibrary.isEnabled()) {
            NvtxLibrary.pop();
        }
    }

    /** After {@link #runStop}: commits the Run event with its fields ({@code error}: why the run failed, else null). */
    public static void runEnd(Object token, long sessionId, String model, String provider, String runTag, boolean ioBinding,
            int inputCount, long inputBytes, int outputCount, long outputBytes, String error) {
        if (token != NVTX_ONLY) {
            JfrProbes.runEnd(token, sessionId, model, provider, runTag, ioBinding, inputCount, inputBytes, outputCount, outputBytes,
                    error);
        }
    }

    // ---- custom-operator compute calls ----

    public static Object computeBegin() {
        return JFR ? JfrProbes.computeBegin() : null;
    }

    /** Stops the compute event's clock (what the end call reads afterwards is not counted). */
    public static void computeStop(Object token) {
        JfrProbes.stop(token);
    }

    public static void computeEnd(Object token, String operator, String domain, String node, String provider, String inputShapes,
            long inputBytes, String error) {
        JfrProbes.computeEnd(token, operator, domain, node, provider, inputShapes, inputBytes, error);
    }

    // ---- host/device copies ----

    public static Object copyBegin() {
        return JFR ? JfrProbes.copyBegin() : null;
    }

    public static void copyEnd(Object token, String direction, long bytes, boolean waited, long stream) {
        JfrProbes.copyEnd(token, direction, bytes, waited, stream);
    }

    // ---- calls into allocators implemented in Java ----

    public static Object allocatorBegin() {
        return JFR ? JfrProbes.allocatorBegin() : null;
    }

    public static void allocatorEnd(Object token, String allocator, String operation, long bytes, long address, boolean succeeded) {
        JfrProbes.allocatorEnd(token, allocator, operation, bytes, address, succeeded);
    }
}
