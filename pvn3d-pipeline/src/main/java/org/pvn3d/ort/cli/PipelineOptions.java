package org.pvn3d.ort.cli;

import java.nio.file.Path;
import org.pvn3d.ort.OrtSession;
import org.pvn3d.ort.pipeline.IcpRefinement;
import org.pvn3d.ort.pipeline.PoseSolver;
import org.pvn3d.ort.pipeline.Pvn3dPipeline;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;

/** What the main job and {@code eval} share: how the PVN3D pipeline runs. */
final class PipelineOptions {
    @Option(names = "--warmup", paramLabel = "N", description = "Untimed runs before the timed ones: of the network for each "
            + "sample (the main job: of the stages after it too); pool-bench: frames per session before the clock starts "
            + "(default: ${DEFAULT-VALUE}).")
    int warmup;

    @Option(names = "--no-io-binding", description = "On CUDA: host tensors through a plain run (ORT copies in and out "
            + "each run) instead of device-resident inputs and outputs with IO binding.")
    boolean noIoBinding;

    @Option(names = "--pose", paramLabel = "native|cuda|java", description = "The pose stage: libpvn3d_ops's fused mean shift "
            + "and Kabsch on the CPU's cores (native: the default with --ep cpu), the same on the GPU (cuda: the default "
            + "with --ep cuda), or the Java reference (java: slow on large clouds).")
    String pose;

    @Option(names = "--refine", paramLabel = "icp|none", description = "Refine the voting pose: icp (the default) runs "
            + "trimmed point-to-point ICP of the object's model points against the points the segmentation kept, on the host, "
            + "where the sample has model points; none keeps the voting pose.")
    String refine = "icp";

    /** One untimed run before the timed ones. */
    PipelineOptions() {
        this(1);
    }

    /** {@code warmup} untimed runs by default (a command that warms several sessions up may want more). */
    PipelineOptions(int warmup) {
        this.warmup = warmup;
    }

    void check(CommandSpec spec) {
        CommonOptions.within(spec, "--warmup", warmup, 0, CommonOptions.MAX_RUNS);
        if (pose != null && !pose.equals("native") && !pose.equals("cuda") && !pose.equals("java")) {
            throw CommonOptions.usage(spec, "--pose takes native, cuda or java, not " + pose);
        }
        if (!refine.equals("icp") && !refine.equals("none")) {
            throw CommonOptions.usage(spec, "--refine takes icp or none, not " + refine);
        }
    }

    /** The refinement of these options: ICP with the default settings, or null for none. */
    IcpRefinement refinement() {
        return refine.equals("icp") ? IcpRefinement.DEFAULT : null;
    }

    /** The pose stage: as asked, else the fused kernel on the provider's side. */
    String poseSolver(boolean cuda) {
        return pose != null ? pose : cuda ? "cuda" : "native";
    }

    boolean deviceResident(CommonOptions common) {
        return common.cuda() && !noIoBinding;
    }

    /** The pipeline for these options: the tiny shipped model, or {@code model}; ORT's profiler writes into {@code profileDir} (null: off). */
    Pvn3dPipeline open(CommonOptions common, Path model, int repeat, Path profileDir) {
        Pvn3dPipeline.Config c = Pvn3dPipeline.Config.cpu()
                .withProvider(common.cuda() ? Pvn3dPipeline.Provider.CUDA : Pvn3dPipeline.Provider.CPU, common.device)
                .withThreads(common.threads).withWarmup(warmup).withRepeat(repeat).withIoBinding(!noIoBinding)
                .withProfiling(profileDir).withRefinement(refinement())
                .withPoseSolver(PoseSolver.named(poseSolver(common.cuda()), common.device));
        return model == null ? Pvn3dPipeline.tiny(c) : new Pvn3dPipeline(OrtSession.readModel(model), c);
    }
}
