package org.pvn3d.ort.pipeline.pool;

import java.util.Objects;
import org.pvn3d.ort.pipeline.FrameToPose;
import org.pvn3d.ort.pipeline.IcpRefinement;
import org.pvn3d.ort.pipeline.IcpRefiner;
import org.pvn3d.ort.pipeline.Pose;
import org.pvn3d.ort.pipeline.PoseMetrics;
import org.pvn3d.ort.pipeline.Pvn3dPipeline;
import org.pvn3d.ort.pipeline.Pvn3dSample;

/**
 * A pool session whose frames go through {@link FrameToPose}: the network and the pose head in one ORT
 * graph (on CUDA: fixed device buffers on a stream of its own, the config's precision mode, CUDA graphs
 * when it asks for them). The voting pose comes out of the graph with the object mask; the refinement
 * (ICP on the host) and the metrics against a ground truth are the ones a {@link Pvn3dPipeline} applies.
 *
 * <p>Stage times: {@code inference} is the graph's whole run (upload, network, votes, mean shift, Kabsch,
 * download), then {@code refinement} and {@code metrics}; the stages inside the graph read 0.
 *
 * <p>The pool opens and runs each session on one worker thread, so a CUDA graph is captured once, on that
 * thread, when the session opens ({@link FrameToPose} keeps one per calling thread).
 */
public final class FrameToPoseSession implements Pvn3dPool.PoolSession {
    private final FrameToPose runner;
    private final IcpRefiner icp;
    private final double loadMs;

    /**
     * Opens {@code model} (an fp16 conversion for {@link FrameToPose.Precision#FP16}) with {@code config}
     * (batch 1; the object mask is always downloaded), shaped after {@code template}; {@code refinement}
     * null: the voting pose is final.
     */
    public FrameToPoseSession(byte[] model, FrameToPose.Config config, Pvn3dSample template, IcpRefinement refinement) {
        if (config.batch() != 1) {
            throw new IllegalArgumentException("a pool session runs one frame at a time: batch 1, not " + config.batch());
        }
        long t0 = System.nanoTime();
        this.runner = new FrameToPose(model, config.withMask(true), template);
        this.loadMs = (System.nanoTime() - t0) / 1e6;
        this.icp = refinement == null ? null : new IcpRefiner(refinement);
    }

    /**
     * Sessions of {@code model} for a pool: each slot's on its own device (the slot's device replaces the
     * config's on CUDA) with the slot's share of the cores where {@code config} leaves the threads to ORT
     * (0). The pool's provider must be the config's.
     */
    public static Pvn3dPool.SessionFactory factory(byte[] model, FrameToPose.Config config, Pvn3dSample template,
            IcpRefinement refinement) {
        Objects.requireNonNull(model, "model");
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(template, "template");
        return slot -> {
            if (slot.config().provider() != config.provider()) {
                throw new IllegalArgumentException("the pool runs on " + slot.config().provider().label() + ", the FrameToPose config on "
                        + config.provider().label() + ": build the pool with provider(" + config.provider() + ")");
            }
            FrameToPose.Config c = config.provider() == Pvn3dPipeline.Provider.CUDA ? config.withDevice(slot.device()) : config;
            if (c.threads() == 0) {
                c = c.withThreads(slot.config().threads());
            }
            return new FrameToPoseSession(model, c, template, refinement);
        };
    }

    /** The settings this session runs with (device and threads as the pool gave them). */
    public FrameToPose.Config config() {
        return runner.config();
    }

    @Override
    public PoseResult.Frame run(Pvn3dSample sample) {
        long t0 = System.nanoTime();
        FrameToPose.FramePose fp = runner.run(sample);
        long t1 = System.nanoTime();
        int masked = 0;
        for (boolean m : fp.mask()) {
            masked += m ? 1 : 0;
        }
        IcpRefiner.Result refined = icp == null ? IcpRefiner.Result.notRun(fp.pose(), IcpRefiner.Status.DISABLED)
                : icp.refine(fp.pose(), sample, fp.mask());
        Pose pose = refined.refined() ? refined.pose() : fp.pose();
        long t2 = System.nanoTime();
        PoseMetrics.Result metrics = null;
        if (sample.hasGroundTruth()) {
            metrics = PoseMetrics.evaluate(pose, sample.groundTruth(), sample.modelPoints(), sample.diameter());
        }
        long t3 = System.nanoTime();
        double runMs = (t1 - t0) / 1e6;
        Pvn3dPipeline.Timings timings = new Pvn3dPipeline.Timings(loadMs, 0, runMs, 0, 0, 0, 0, (t2 - t1) / 1e6, (t3 - t2) / 1e6,
                new Pvn3dPipeline.Latency(1, runMs, runMs, runMs, runMs));
        return new PoseResult.Frame(pose, fp.kps(), fp.inliers(), sample.points(), masked, metrics, timings, fp.pose(),
                refined.status());
    }

    @Override
    public void close() {
        runner.close();
    }
}
