package org.pvn3d.ort.jfr;

import java.util.List;
import java.util.Optional;

/**
 * The JDK Flight Recorder events the runtime emits, by name. Record them like any JFR event: with
 * {@code -XX:StartFlightRecording}, from JDK Mission Control, or from code with a
 * {@code jdk.jfr.Recording} that enables them ({@code recording.enable(OrtEvents.RUN)}); read a
 * recording with {@code jfr print --events 'org.pvn3d.ort.*' FILE} or {@code jdk.jfr.consumer}. Each
 * event's duration is the wall time of what it describes, on the thread that did it. An event that no
 * recording enables costs one check of a flag at its site (no allocation, no native call).
 *
 * <table>
 * <caption>The events and their fields</caption>
 * <tr><th>name</th><th>when</th><th>fields</th></tr>
 * <tr><td>{@value #SESSION_CREATED}</td><td>a session is created (or fails to be)</td>
 *     <td>{@code sessionId}, {@code model} (the file, or "N bytes in memory"), {@code modelBytes},
 *     {@code providers} (the execution providers asked for, preferred first, then ORT's CPU provider),
 *     {@code customOpDomains}, {@code inputs}, {@code outputs}, {@code profiling} (ORT's profiler on),
 *     {@code error} (null unless creation failed)</td></tr>
 * <tr><td>{@value #RUN}</td><td>each {@code OrtSession.run}, with tensors or an IO binding</td>
 *     <td>{@code sessionId}, {@code model}, {@code runTag} (the run options' tag, or ""),
 *     {@code provider} (the session's preferred provider), {@code ioBinding}, {@code inputCount},
 *     {@code inputBytes}, {@code outputCount}, {@code outputBytes} (tensors of known size; outputs
 *     ORT allocates on a device through an IO binding are not counted), {@code error}</td></tr>
 * <tr><td>{@value #CUSTOM_OP_COMPUTE}</td><td>each compute call of a custom operator defined in Java</td>
 *     <td>{@code operator}, {@code domain}, {@code node}, {@code provider}, {@code inputShapes} (e.g.
 *     {@code [1,1024,3] [1,256]}), {@code inputBytes}, {@code error}; the duration is host time (a
 *     CUDA kernel's launch, not its execution)</td></tr>
 * <tr><td>{@value #DEVICE_COPY}</td><td>a host/device copy through {@code org.pvn3d.ort.cuda}</td>
 *     <td>{@code direction} (HostToDevice, DeviceToHost, DeviceToDevice), {@code bytes},
 *     {@code waited} (the copy returned once complete; false: only enqueued), {@code stream} (its
 *     address, 0 for the legacy default stream)</td></tr>
 * <tr><td>{@value #ALLOCATOR_CALL}</td><td>each call ORT makes into a {@code JavaAllocator}</td>
 *     <td>{@code allocator}, {@code operation} (alloc, free), {@code bytes}, {@code address},
 *     {@code succeeded}</td></tr>
 * </table>
 *
 * <p>The PVN3D pipeline adds {@code org.pvn3d.ort.PipelineStage} (module {@code org.pvn3d.ort.pipeline}).
 */
public final class OrtEvents {
    /** A session was created. */
    public static final String SESSION_CREATED = "org.pvn3d.ort.SessionCreated";
    /** One run of a session. */
    public static final String RUN = "org.pvn3d.ort.Run";
    /** One compute call of a custom operator's kernel. */
    public static final String CUSTOM_OP_COMPUTE = "org.pvn3d.ort.CustomOpCompute";
    /** One copy between host and device memory. */
    public static final String DEVICE_COPY = "org.pvn3d.ort.DeviceCopy";
    /** One call ORT made into an allocator implemented in Java. */
    public static final String ALLOCATOR_CALL = "org.pvn3d.ort.AllocatorCall";

    /** Every event of the runtime. */
    public static final List<String> ALL = List.of(SESSION_CREATED, RUN, CUSTOM_OP_COMPUTE, DEVICE_COPY, ALLOCATOR_CALL);

    private static final boolean AVAILABLE = detect();

    private OrtEvents() {}

    /**
     * Whether the events can be recorded in this JVM: its runtime image has the {@code jdk.jfr} module
     * and this module reads it (on the module path, {@code --add-modules jdk.jfr} when no other module
     * requires it). When false every event site is a no-op.
     */
    public static boolean isAvailable() {
        return AVAILABLE;
    }

    private static boolean detect() {
        try {
            Optional<Module> jfr = ModuleLayer.boot().findModule("jdk.jfr");
            return jfr.isPresent() && OrtEvents.class.getModule().canRead(jfr.get());
        } catch (RuntimeException | LinkageError e) {
            return false;
        }
    }
}
