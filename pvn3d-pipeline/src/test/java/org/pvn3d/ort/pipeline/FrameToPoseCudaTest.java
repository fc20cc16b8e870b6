package org.pvn3d.ort.pipeline;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.ops.Pvn3dOps;

/**
 * The one-graph path on the CUDA provider (skipped without a device): strict equals the CPU provider's
 * graph; a captured CUDA graph replays to the same pose as a normal run, also for other frames than the one
 * it was captured with; a batch of 8 gives each frame the pose it gets alone; two objects run in parallel
 * on their own streams; TF32 stays near strict.
 */
class FrameToPoseCudaTest {
    static Pvn3dSample sample;
    static Pvn3dSample moved;
    static FrameToPose.FramePose cpuPose;
    static FrameToPose.FramePose cpuMoved;

    @BeforeAll
    static void setUp() {
        Assumptions.assumeTrue(Pvn3dOps.nativeBuiltWithCuda() && Pvn3dOps.cudaDeviceCount() > 0,
                "no CUDA device (or a CPU-only libpvn3d_ops): these run on the GPU machine");
        sample = Pvn3dSample.resource(Pvn3dSample.RESOURCE);
        moved = FrameToPoseTest.shifted(sample, 0.03f);
        try (FrameToPose cpu = new FrameToPose(Pvn3dPipeline.tinyModelBytes(), FrameToPose.Config.cpu().withMask(true), sample)) {
            cpuPose = cpu.run(sample);
            cpuMoved = cpu.run(moved);
        }
    }

    static FrameToPose cuda(FrameToPose.Config c) {
        return new FrameToPose(Pvn3dPipeline.tinyModelBytes(), c, sample);
    }

    static void assertSamePose(FrameToPose.FramePose want, FrameToPose.FramePose got, double tol, String what) {
        assertEquals(want.inliers(), got.inliers(), what + ": inliers");
        FrameToPoseTest.assertClose(want.kps(), got.kps(), tol, what + ": keypoints");
        FrameToPoseTest.assertClose(FrameToPoseTest.toFloats(want.pose().t()), FrameToPoseTest.toFloats(got.pose().t()), tol, what + ": t");
        FrameToPoseTest.assertClose(FrameToPoseTest.toFloats(want.pose().r()), FrameToPoseTest.toFloats(got.pose().r()), 20 * tol,
                what + ": R");
    }

    @Test
    void strictOnCudaIsTheCpuGraph() {
        try (FrameToPose g = cuda(FrameToPose.Config.cuda(0).withMask(true))) {
            FrameToPose.FramePose p = g.run(sample);
            assertArrayEquals(cpuPose.mask(), p.mask(), "mask");
            assertSamePose(cpuPose, p, 1e-5, "CUDA strict vs CPU");
            assertSamePose(cpuMoved, g.run(moved), 1e-5, "CUDA strict vs CPU, second frame");
        }
    }

    @Test
    void aCapturedCudaGraphReplaysToTheSamePoses() {
        try (FrameToPose plain = cuda(FrameToPose.Config.cuda(0)); FrameToPose graph = cuda(FrameToPose.Config.cuda(0).withCudaGraph(true))) {
            List<FrameToPose.FramePose> replays = new ArrayList<>();
            for (int i = 0; i < 6; i++) { // ORT runs a few times before it captures, then replays
                replays.add(graph.run(i % 2 == 0 ? sample : moved));
            }
            FrameToPose.FramePose a = plain.run(sample);
            FrameToPose.FramePose b = plain.run(moved);
            for (int i = 0; i < replays.size(); i++) {
                assertSamePose(i % 2 == 0 ? a : b, replays.get(i), 1e-5, "run " + i + " with CUDA graphs vs without");
            }
        }
    }

    @Test
    void aBatchOfEightGivesEachFrameItsOwnPose() {
        List<Pvn3dSample> frames = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            frames.add(i % 2 == 0 ? sample : moved);
        }
        for (boolean graph : new boolean[] {false, true}) {
            try (FrameToPose g = cuda(FrameToPose.Config.cuda(0).withBatch(8).withCudaGraph(graph))) {
                for (int rep = 0; rep < 4; rep++) {
                    List<FrameToPose.FramePose> poses = g.run(frames);
                    for (int i = 0; i < 8; i++) {
                        assertSamePose(i % 2 == 0 ? cpuPose : cpuMoved, poses.get(i), 1e-5, "graph " + graph + ", frame " + i);
                    }
                }
                // a batch of 8 needs 8 frames: refused before the run, as every bad frame is (86ed2cc)
                assertEquals(OrtErrorCode.ORT_INVALID_ARGUMENT,
                        assertThrows(OrtException.class, () -> g.run(List.of(sample)), "graph " + graph).getCode());
            }
        }
    }

    @Test
    void concurrentBranchesOnTwoStreamsGiveTheCpuPoses() {
        // PointNet++ on its own thread and stream beside the CNN, the join after both: with and without CUDA
        // graphs, B1 and B8, every run gives the CPU graph's pose (frames alternate, so a join that read a
        // branch's cut before the branch wrote it would show as the other frame's pose)
        List<Pvn3dSample> frames = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            frames.add(i % 2 == 0 ? sample : moved);
        }
        for (boolean graph : new boolean[] {false, true}) {
            for (int batch : new int[] {1, 8}) {
                FrameToPose.Config c = FrameToPose.Config.cuda(0).withBatch(batch).withCudaGraph(graph).withConcurrentBranches(true);
                try (FrameToPose g = cuda(batch == 1 ? c.withMask(true) : c)) {
                    for (int rep = 0; rep < 8; rep++) {
                        List<Pvn3dSample> in = batch == 1 ? List.of(frames.get(rep % 2)) : frames;
                        List<FrameToPose.FramePose> poses = g.run(in);
                        for (int i = 0; i < batch; i++) {
                            boolean first = (batch == 1 ? rep : i) % 2 == 0;
                            assertSamePose(first ? cpuPose : cpuMoved, poses.get(i), 1e-5,
                                    "branches, graph " + graph + ", B" + batch + ", run " + rep + ", frame " + i);
                        }
                        if (batch == 1) {
                            assertArrayEquals((rep % 2 == 0 ? cpuPose : cpuMoved).mask(), poses.get(0).mask(), "mask, run " + rep);
                        }
                    }
                }
            }
        }
    }

    @Test
    void twoInFlightOnTheirOwnStreams() throws Exception {
        List<FrameToPose> runners = Collections.synchronizedList(new ArrayList<>());
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            List<Future<List<FrameToPose.FramePose>>> futures = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                FrameToPose r = cuda(FrameToPose.Config.cuda(0).withCudaGraph(t == 1));
                runners.add(r);
                futures.add(pool.submit(() -> {
                    List<FrameToPose.FramePose> out = new ArrayList<>();
                    for (int i = 0; i < 20; i++) {
                        out.add(r.run(i % 2 == 0 ? sample : moved));
                    }
                    return out;
                }));
            }
            for (Future<List<FrameToPose.FramePose>> f : futures) {
                List<FrameToPose.FramePose> out = f.get();
                for (int i = 0; i < out.size(); i++) {
                    assertSamePose(i % 2 == 0 ? cpuPose : cpuMoved, out.get(i), 1e-5, "in flight, run " + i);
                }
            }
        } finally {
            pool.shutdown();
            runners.forEach(FrameToPose::close);
        }
    }

    @Test
    void tf32StaysNearStrict() {
        try (FrameToPose g = cuda(FrameToPose.Config.cuda(0).withPrecision(FrameToPose.Precision.TF32))) {
            FrameToPose.FramePose p = g.run(sample);
            double dt = 0;
            for (int i = 0; i < 3; i++) {
                dt = Math.max(dt, Math.abs(p.pose().t(i) - cpuPose.pose().t(i)));
            }
            System.out.println("FrameToPoseCudaTest: tf32 vs strict: inliers " + p.inliers() + " vs " + cpuPose.inliers() + ", max |dt| "
                    + dt + " m");
            assertTrue(dt < 0.005, "tf32 moves t by " + dt + " m");
            assertTrue(Math.abs(p.inliers() - cpuPose.inliers()) <= 0.05 * cpuPose.inliers(), "inliers " + p.inliers());
        }
    }
}
