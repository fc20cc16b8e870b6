package org.pvn3d.ort.spark;

import java.io.Serializable;
import java.util.List;
import java.util.Locale;

/**
 * How the job runs on each executor; travels with the tasks.
 *
 * @param model       the ONNX model: null for the pipeline's shipped model (a class-path resource), a
 *                    {@code classpath:/...} resource, or a file path that every executor can read (on a
 *                    shared file system, or shipped with {@code --files}: then its file name is looked up
 *                    with {@code SparkFiles.get})
 * @param ep          where sessions run: {@link Ep#AUTO} uses the GPU Spark assigned to the task and the CPU
 *                    provider when it assigned none; {@link Ep#CUDA} the assigned GPU, else {@code device}
 * @param device      the CUDA device when Spark schedules no GPUs (local mode on a GPU machine)
 * @param threads     ORT intra-op threads per session; 0 takes the task's CPUs ({@code spark.task.cpus})
 * @param pose        the pose stage: {@code native} (CPU kernel), {@code cuda} (GPU kernel) or {@code java};
 *                    null for the fused kernel on the provider's side
 * @param batchSize   rows a task takes from its partition per session borrow
 * @param objectClass the object's class index in the segmentation output
 * @param refine      the refinement of the voting pose: {@code icp} (ICP against the masked points, where a
 *                    frame has model points: PVT1 frames with them, tensor frames with a ground truth) or
 *                    {@code none}
 */
public record Pvn3dSparkOptions(String model, Ep ep, int device, int threads, String pose, int batchSize, int objectClass,
        String refine) implements Serializable {
    /** Where the sessions run. */
    public enum Ep {
        AUTO, CPU, CUDA;

        public static Ep parse(String s) {
            try {
                return valueOf(s.toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--ep takes auto, cpu or cuda, not " + s);
            }
        }
    }

    public Pvn3dSparkOptions {
        if (ep == null || device < 0 || threads < 0 || batchSize < 1 || objectClass < 0) {
            throw new IllegalArgumentException("an ep, device >= 0, threads >= 0, batchSize >= 1 and objectClass >= 0");
        }
        if (pose != null && !List.of("native", "cuda", "java").contains(pose)) {
            throw new IllegalArgumentException("pose: native, cuda or java, not " + pose);
        }
        if (refine == null || !List.of("icp", "none").contains(refine)) {
            throw new IllegalArgumentException("refine: icp or none, not " + refine);
        }
    }

    /** With ICP refinement. */
    public Pvn3dSparkOptions(String model, Ep ep, int device, int threads, String pose, int batchSize, int objectClass) {
        this(model, ep, device, threads, pose, batchSize, objectClass, "icp");
    }

    /** The shipped model, GPU when Spark assigns one, the task's CPUs, batches of 16 rows, ICP refinement. */
    public static Pvn3dSparkOptions defaults() {
        return new Pvn3dSparkOptions(null, Ep.AUTO, 0, 0, null, 16, 1, "icp");
    }

    public Pvn3dSparkOptions withModel(String m) {
        return new Pvn3dSparkOptions(m, ep, device, threads, pose, batchSize, objectClass, refine);
    }

    public Pvn3dSparkOptions withEp(Ep e, int dev) {
        return new Pvn3dSparkOptions(model, e, dev, threads, pose, batchSize, objectClass, refine);
    }

    public Pvn3dSparkOptions withThreads(int t) {
        return new Pvn3dSparkOptions(model, ep, device, t, pose, batchSize, objectClass, refine);
    }

    public Pvn3dSparkOptions withPose(String p) {
        return new Pvn3dSparkOptions(model, ep, device, threads, p, batchSize, objectClass, refine);
    }

    public Pvn3dSparkOptions withBatchSize(int b) {
        return new Pvn3dSparkOptions(model, ep, device, threads, pose, b, objectClass, refine);
    }

    /** {@code icp} or {@code none}. */
    public Pvn3dSparkOptions withRefine(String r) {
        return new Pvn3dSparkOptions(model, ep, device, threads, pose, batchSize, objectClass, r);
    }
}
