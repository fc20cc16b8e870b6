package org.pvn3d.ort.pipeline.pool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.pipeline.FolderEvaluationTestSamples;
import org.pvn3d.ort.pipeline.FrameToPose;
import org.pvn3d.ort.pipeline.NativePoseSolver;
import org.pvn3d.ort.pipeline.Pose;
import org.pvn3d.ort.pipeline.Pvn3dPipeline;
import org.pvn3d.ort.pipeline.Pvn3dSample;

/**
 * A pool of one-graph sessions ({@link FrameToPoseSession}) on the CPU provider gives, frame by frame, the
 * staged pipeline's voting pose, mask, inliers, refined pose and metrics (the same network, the same pose
 * kernel in the graph as {@link NativePoseSolver} calls, the same ICP on the host); a config the pool cannot
 * run is refused when the sessions open.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class FrameToPoseSessionTest {
    @Test
    void oneGraphSessionsGiveTheStagedPipelinesPoses(@TempDir Path dir) throws Exception {
        List<Pvn3dSample> all = FolderEvaluationTestSamples.writeAndRead(dir);
        // a one-graph session's buffers are fixed to its template's shapes: the frames of that size, twice
        int n = all.get(0).points();
        List<Pvn3dSample> samples = new ArrayList<>(all.stream().filter(s -> s.points() == n).toList());
        Pvn3dSample otherSize = all.stream().filter(s -> s.points() != n).findFirst().orElseThrow();
        assertTrue(samples.size() >= 2, "two frames of one size among " + all.size());
        samples.addAll(List.copyOf(samples));
        byte[] model = Pvn3dPipeline.tinyModelBytes();
        Map<String, Pvn3dPipeline.Result> staged = new HashMap<>();
        try (Pvn3dPipeline p = new Pvn3dPipeline(model, Pvn3dPipeline.Config.cpu().withPoseSolver(new NativePoseSolver()).withThreads(1))) {
            for (Pvn3dSample s : samples) {
                staged.put(s.source(), p.run(s));
            }
        }
        List<CompletableFuture<PoseResult>> futures = new ArrayList<>();
        Pvn3dPool.Stats stats;
        Pvn3dPool.SessionFactory graphs = FrameToPoseSession.factory(model, FrameToPose.Config.cpu(), samples.get(0),
                org.pvn3d.ort.pipeline.IcpRefinement.DEFAULT);
        try (Pvn3dPool pool = Pvn3dPool.builder(model).sessionsPerDevice(2).threadsPerSession(1).sessionFactory(graphs)
                .warmup(samples.get(0), 1).build()) {
            for (Pvn3dSample s : samples) {
                futures.add(pool.submit(s));
            }
            for (int i = 0; i < futures.size(); i++) {
                PoseResult r = futures.get(i).get();
                Pvn3dPipeline.Result d = staged.get(samples.get(i).source());
                String what = r.source() + " on " + r.session();
                assertEquals(d.votes().maskedCount(), r.masked(), what + ": mask");
                assertEquals(d.votes().n(), r.points(), what);
                assertEquals(d.voting().inliers(), r.inliers(), what + ": inliers");
                assertClose(d.voting().pose(), r.votingPose(), 1e-4, what + ": voting pose");
                assertEquals(d.refinement().status(), r.refinement(), what + ": refinement");
                assertClose(d.pose().pose(), r.pose(), 1e-4, what + ": final pose");
                assertEquals(d.metrics().add(), r.metrics().add(), 1e-4, what + ": ADD");
                assertEquals(d.metrics().adds(), r.metrics().adds(), 1e-4, what + ": ADD-S");
                assertTrue(r.timings().inference() > 0 && r.timings().clustering() == 0, "the pose head runs inside the graph: " + r.timings());
                assertTrue(r.latencyMs() >= r.serviceMs() && r.serviceMs() > 0, r.toString());
            }
            assertTrue(futures.stream().anyMatch(f -> f.join().refinement().refined()), "ICP ran on some frame");
            // a frame of another size fails alone, as bad input: its session stays open and serves the next frame
            java.util.concurrent.ExecutionException bad = assertThrows(java.util.concurrent.ExecutionException.class,
                    () -> pool.submit(otherSize).get());
            FrameFailedException failed = assertInstanceOf(FrameFailedException.class, bad.getCause());
            assertTrue(failed.getMessage().contains("this FrameToPose was made for FLOAT [1, " + n + ", 9]"), failed.getMessage());
            assertEquals(samples.get(0).source(), pool.submit(samples.get(0)).get().source());
            stats = pool.stats();
        }
        assertEquals(samples.size() + 1, stats.completed());
        assertEquals(1, stats.failed());
        assertTrue(stats.sessions().stream().allMatch(s -> s.reopens() == 0 && s.live()), "no session reopened: " + stats);
        for (Pvn3dPool.SessionStats s : stats.sessions()) {
            assertTrue(s.frames() > 0, "both sessions served frames: " + stats);
        }
    }

    @Test
    void aConfigThePoolCannotRunIsRefused() {
        byte[] model = Pvn3dPipeline.tinyModelBytes();
        Pvn3dSample sample = Pvn3dSample.resource(Pvn3dSample.RESOURCE);
        // a CUDA config in a CPU pool: every session fails to open, the pool says why
        OrtException e = assertThrows(OrtException.class, () -> Pvn3dPool.builder(model).maxRestarts(0)
                .sessionFactory(FrameToPoseSession.factory(model, FrameToPose.Config.cuda(0), sample, null)).build());
        assertTrue(e.getMessage().contains("the pool runs on cpu, the FrameToPose config on cuda"), e.getMessage());
        assertInstanceOf(IllegalArgumentException.class, e.getCause());
        IllegalArgumentException batch = assertThrows(IllegalArgumentException.class,
                () -> new FrameToPoseSession(model, FrameToPose.Config.cpu().withBatch(2), sample, null));
        assertTrue(batch.getMessage().contains("batch 1"), batch.getMessage());
    }

    static void assertClose(Pose want, Pose got, double tol, String what) {
        double max = 0;
        for (int i = 0; i < 9; i++) {
            max = Math.max(max, Math.abs(want.r()[i] - got.r()[i]));
        }
        for (int i = 0; i < 3; i++) {
            max = Math.max(max, Math.abs(want.t()[i] - got.t()[i]));
        }
        assertTrue(max <= tol, what + ": max |diff| " + max + " > " + tol);
    }
}
