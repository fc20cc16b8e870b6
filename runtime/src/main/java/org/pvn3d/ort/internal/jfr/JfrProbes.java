package org.pvn3d.ort.internal.jfr;

/**
 * Begins and commits the runtime's JFR events for {@code org.pvn3d.ort.internal.Probes}, which calls
 * here only when the {@code jdk.jfr} module is there (this class and the events are never loaded
 * otherwise). A begin method returns null unless some recording enables the event: a disabled event
 * costs one check of its enabled flag (read through a shared instance, so nothing is allocated).
 */
public final class JfrProbes {
    private static final SessionCreatedEvent SESSION = new SessionCreatedEvent();
    private static final RunEvent RUN = new RunEvent();
    private static final CustomOpComputeEvent COMPUTE = new CustomOpComputeEvent();
    private static final DeviceCopyEvent COPY = new DeviceCopyEvent();
    private static final AllocatorCallEvent ALLOC = new AllocatorCallEvent();

    private JfrProbes() {}

    public static Object sessionBegin() {
        if (!SESSION.isEnabled()) {
            return null;
        }
        SessionCreatedEvent e = new SessionCreatedEvent();
        e.begin();
        return e;
    }

    public static void sessionEnd(Object token, long sessionId, String model, long modelBytes, String providers, String domains,
            int inputs, int outputs, boolean profiling, String error) {
        if (token instanceof SessionCreatedEvent e) {
            e.end();
            if (e.shouldCommit()) {
                e.sessionId = sessionId;
                e.model = model;
                e.modelBytes = modelBytes;
                e.providers = providers;
                e.customOpDomains = domains;
                e.inputs = inputs;
                e.outputs = outputs;
                e.profiling = profiling;
                e.error = error;
                e.commit();
            }
        }
    }

    public static Object runBegin() {
        if (!RUN.isEnabled()) {
            return null;
        }
        RunEvent e = new RunEvent();
        e.begin();
        return e;
    }

    public static boolean isEvent(Object token) {
        return token instanceof jdk.jfr.Event;
    }

    /** Stops the event's clock (what the end call computes afterwards is not part of its duration). */
    public static void stop(Object token) {
        if (token instanceof jdk.jfr.Event e) {
            e.end();
        }
    }

    public static void runEnd(Object token, long sessionId, String model, String provider, String runTag, boolean ioBinding,
            int inputCount, long inputBytes, int outputCount, long outputBytes, String error) {
        if (token instanceof RunEvent e) {
            if (e.shouldCommit()) {
                e.sessionId = sessionId;
                e.model = model;
                e.provider = provider;
                e.runTag = runTag;
                e.ioBinding = ioBinding;
                e.inputCount = inputCount;
                e.inputBytes = inputBytes;
                e.outputCount = outputCount;
                e.outputBytes = outputBytes;
                e.error = error;
                e.commit();
            }
        }
    }

    public static Object computeBegin() {
        if (!COMPUTE.isEnabled()) {
            return null;
        }
        CustomOpComputeEvent e = new CustomOpComputeEvent();
        e.begin();
        return e;
    }

    public static void computeEnd(Object token, String operator, String domain, String node, String provider, String inputShapes,
            long inputBytes, String error) {
        if (token instanceof CustomOpComputeEvent e && e.shouldCommit()) {
            e.operator = operator;
            e.domain = domain;
            e.node = node;
            e.provider = provider;
            e.inputShapes = inputShapes;
            e.inputBytes = inputBytes;
            e.error = error;
            e.commit();
        }
    }

    public static Object copyBegin() {
        if (!COPY.isEnabled()) {
            return null;
        }
        DeviceCopyEvent e = new DeviceCopyEvent();
        e.begin();
        return e;
    }

    public static void copyEnd(Object token, String direction, long bytes, boolean waited, long stream) {
        if (token instanceof DeviceCopyEvent e) {
            e.end();
            if (e.shouldCommit()) {
                e.direction = direction;
                e.bytes = bytes;
                e.waited = waited;
                e.stream = stream;
                e.commit();
            }
        }
    }

    public static Object allocatorBegin() {
        if (!ALLOC.isEnabled()) {
            return null;
        }
        AllocatorCallEvent e = new AllocatorCallEvent();
        e.begin();
        return e;
    }

    public static void allocatorEnd(Object token, String allocator, String operation, long bytes, long address, boolean succeeded) {
        if (token instanceof AllocatorCallEvent e) {
            e.end();
            if (e.shouldCommit()) {
                e.allocator = allocator;
                e.operation = operation;
                e.bytes = bytes;
                e.address = address;
                e.succeeded = succeeded;
                e.commit();
            }
        }
    }
}
