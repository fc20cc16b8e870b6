package org.pvn3d.ort.spark;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Deque;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.SparkFiles;
import org.apache.spark.TaskContext;
import org.apache.spark.resource.ResourceInformation;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.OrtSession;
import org.pvn3d.ort.pipeline.IcpRefinement;
import org.pvn3d.ort.pipeline.PoseSolver;
import org.pvn3d.ort.pipeline.Pvn3dPipeline;

/**
 * The executor's pipelines, one JVM-wide cache keyed by model and device (and the settings a session
 * is opened with). A task borrows a pipeline for a batch of rows and gives it back; a pipeline is used
 * by one task thread at a time, and a new one is opened only when every cached one is borrowed, so an
 * executor ends up with one session per task slot that ran at the same time (per model and device),
 * each created lazily inside a task. {@link #closeAll()} closes them: the executor plugin
 * ({@link Pvn3dSparkPlugin}) calls it when the executor shuts down, and a JVM shutdown hook does when
 * the plugin is not configured. {@link #opened()} and {@link #closed()} count sessions for tests and logs.
 */
public final class SessionCache {
    private SessionCache() {}

    /** What a session is opened with. {@code device} is 0 on the CPU provider; {@code refine} is icp or none. */
    public record Key(String model, Pvn3dPipeline.Provider provider, int device, int threads, String pose, int objectClass,
            String refine) {
        /** {@code cpu} or {@code cuda:N}. */
        public String deviceName() {
            return provider == Pvn3dPipeline.Provider.CPU ? "cpu" : "cuda:" + device;
        }
    }

    /** A borrowed pipeline; {@link #close()} gives it back (or closes it when the cache was closed meanwhile). */
    public static final class Lease implements AutoCloseable {
        private final Key key;
        private final Pvn3dPipeline pipeline;
        private final int generation;
        private boolean done;

        private Lease(Key key, Pvn3dPipeline pipeline, int generation) {
            this.key = key;
            this.pipeline = pipeline;
            this.generation = generation;
        }

        public Pvn3dPipeline pipeline() {
            return pipeline;
        }

        public Key key() {
            return key;
        }

        /** Closes the session instead of giving it back (it failed: the next borrow opens a fresh one). */
        public void discard() {
            if (!done) {
                done = true;
                closePipeline(pipeline);
            }
        }

        @Override
        public void close() {
            if (done) {
                return;
            }
            done = true;
            if (generation != GENERATION.get()) {
                closePipeline(pipeline);
            } else {
                Deque<Pvn3dPipeline> idle = IDLE.computeIfAbsent(key, k -> new ConcurrentLinkedDeque<>());
                idle.push(pipeline);
                // closeAll may have run between the check and the push: it must not miss this one
                if (generation != GENERATION.get() && idle.remove(pipeline)) {
                    closePipeline(pipeline);
                }
            }
        }
    }

    private static final Map<Key, Deque<Pvn3dPipeline>> IDLE = new ConcurrentHashMap<>();
    /** The model version (modelVersion) each open pipeline was made from. */
    private static final Map<Pvn3dPipeline, String> VERSIONS = new ConcurrentHashMap<>();
    private static final AtomicInteger OPENED = new AtomicInteger();
    private static final AtomicInteger CLOSED = new AtomicInteger();
    private static final AtomicInteger GENERATION = new AtomicInteger();
    private static final AtomicBoolean HOOK = new AtomicBoolean();

    /** The key for this task: the GPU Spark assigned it (resource {@code gpu}), else as the options say. */
    public static Key key(Pvn3dSparkOptions o) {
        TaskContext task = TaskContext.get();
        ResourceInformation gpu = task == null ? null : task.resourcesJMap().get("gpu");
        Integer assigned = gpu == null || gpu.addresses().length == 0 ? null : Integer.valueOf(gpu.addresses()[0].trim());
        Pvn3dPipeline.Provider provider;
        int device;
        switch (o.ep()) {
            case CPU -> {
                provider = Pvn3dPipeline.Provider.CPU;
                device = 0;
            }
            case CUDA -> {
                provider = Pvn3dPipeline.Provider.CUDA;
                device = assigned != null ? assigned : o.device();
            }
            default -> {
                provider = assigned != null ? Pvn3dPipeline.Provider.CUDA : Pvn3dPipeline.Provider.CPU;
                device = assigned != null ? assigned : 0;
            }
        }
        int threads = o.threads() > 0 ? o.threads() : task != null ? Math.max(1, task.cpus()) : 0;
        String model = o.model() == null ? CLASSPATH + Pvn3dPipeline.MODEL_RESOURCE : o.model();
        String pose = o.pose() != null ? o.pose() : provider == Pvn3dPipeline.Provider.CUDA ? "cuda" : "native";
        return new Key(model, provider, device, threads, pose, o.objectClass(), o.refine());
    }

    /**
     * A cached pipeline for {@code key}, or a new one when all are borrowed. A model file that changed since a
     * cached pipeline read it (another size, time or file: a retrained model written over the old one) is read
     * again: the stale pipelines are closed as they come up.
     */
    public static Lease borrow(Key key) {
        int generation = GENERATION.get();
        String version = modelVersion(key.model());
        Deque<Pvn3dPipeline> idle = IDLE.get(key);
        Pvn3dPipeline p;
        while ((p = idle == null ? null : idle.poll()) != null && !version.equals(VERSIONS.get(p))) {
            closePipeline(p);
        }
        if (p == null) {
            p = open(key, version);
        }
        return new Lease(key, p, generation);
    }

    private static Pvn3dPipeline open(Key key, String version) {
        if (HOOK.compareAndSet(false, true)) {
            Runtime.getRuntime().addShutdownHook(new Thread(SessionCache::closeAll, "pvn3d-session-cache-shutdown"));
        }
        PoseSolver solver = PoseSolver.named(key.pose(), key.device());
        Pvn3dPipeline.Config config = new Pvn3dPipeline.Config(key.provider(), key.device(), key.threads(), solver, key.objectClass(), 0, 1,
                true, null, key.refine().equals("icp") ? IcpRefinement.DEFAULT : null);
        Pvn3dPipeline p = new Pvn3dPipeline(modelBytes(key.model()), config);
        VERSIONS.put(p, version);
        OPENED.incrementAndGet();
        return p;
    }

    /** The model's bytes on this executor: a class-path resource, a local file, or a file shipped with the job. */
    static byte[] modelBytes(String model) {
        if (model.startsWith(CLASSPATH)) {
            String name = model.substring(CLASSPATH.length());
            if (Pvn3dPipeline.class.getResource(name) == null) {
                throw new OrtException(OrtErrorCode.ORT_NO_SUCHFILE, "no class-path resource " + name + " on this executor");
            }
            return Pvn3dPipeline.resourceBytes(name);
        }
        return OrtSession.readModel(modelFile(model));
    }

    private static final String CLASSPATH = "classpath:";

    /** Where a model file is on this executor: the path itself, or the copy shipped with the job. */
    private static Path modelFile(String model) {
        Path path = Path.of(model);
        if (!Files.isRegularFile(path)) {
            Path shipped = Path.of(SparkFiles.get(path.getFileName().toString()));
            if (!Files.isRegularFile(shipped)) {
                throw new OrtException(OrtErrorCode.ORT_NO_SUCHFILE, "the model " + model + " is neither a file on this executor nor shipped "
                        + "with the job (spark-submit --files " + model + ", or a shared file system)");
            }
            path = shipped;
        }
        return path;
    }

    /** What identifies the model's content cheaply: a class-path resource never changes; a file by size, time and file key. */
    private static String modelVersion(String model) {
        if (model.startsWith(CLASSPATH)) {
            return CLASSPATH;
        }
        Path path = modelFile(model);
        try {
            BasicFileAttributes a = Files.readAttributes(path, BasicFileAttributes.class);
            return a.size() + "/" + a.lastModifiedTime().toInstant() + "/" + a.fileKey();
        } catch (IOException e) {
            throw new OrtException(OrtErrorCode.ORT_NO_SUCHFILE, "cannot read the model " + path + ": " + e.getMessage());
        }
    }

    private static void closePipeline(Pvn3dPipeline p) {
        VERSIONS.remove(p);
        try {
            p.close();
        } finally {
            CLOSED.incrementAndGet();
        }
    }

    /** Closes every idle session; borrowed ones are closed when they are given back. The cache stays usable. */
    public static void closeAll() {
        GENERATION.incrementAndGet();
        for (Deque<Pvn3dPipeline> idle : IDLE.values()) {
            for (Pvn3dPipeline p; (p = idle.poll()) != null; ) {
                closePipeline(p);
            }
        }
    }

    /** Sessions this JVM opened so far. */
    public static int opened() {
        return OPENED.get();
    }

    /** Sessions this JVM closed so far. */
    public static int closed() {
        return CLOSED.get();
    }

    /** Sessions waiting in the cache now. */
    public static int idle() {
        return IDLE.values().stream().mapToInt(Deque::size).sum();
    }
}
