package org.pvn3d.ort.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.pvn3d.ort.NativeObject;
import org.pvn3d.ort.OnnxTensorType;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;

/**
 * FrameToPose under misuse on the CPU provider, with and without the branches apart: interrupts, bytes that are
 * not ONNX, a close() racing a run, bad frames. Every failure is an OrtException with ORT's code, nothing leaks,
 * and the object stays usable.
 */
class FrameToPoseMisuseTest {
    static final Pvn3dSample SAMPLE = Pvn3dSample.resource(Pvn3dSample.RESOURCE);

    /** An interrupted caller with the branches apart leaves no OrtValue open (the point branch's results). */
    @Test
    void anInterruptedBranchedRunLeaksNothing() {
        try (FrameToPose f = new FrameToPose(Pvn3dPipeline.tinyModelBytes(), FrameToPose.Config.cpu().withConcurrentBranches(true), SAMPLE)) {
            f.run(SAMPLE);
            long before = NativeObject.liveCount("OrtValue");
            Thread.currentThread().interrupt();
            try {
                f.run(SAMPLE);
            } catch (RuntimeException expected) {
                // whatever it throws, it must not leak
            } finally {
                Thread.interrupted();
            }
            f.run(SAMPLE); // queues behind the abandoned point task on the single point thread: that task is done after this
            assertEquals(before, NativeObject.liveCount("OrtValue"), "OrtValues left open by the interrupted run");
        }
    }

    /**
     * An interrupted caller gets its frame's pose with the branches apart, as without them (an ORT run cannot be
     * stopped halfway), and keeps its interrupt flag.
     */
    @Test
    void anInterruptedBranchedRunEndsAsAPlainOne() {
        try (FrameToPose plain = new FrameToPose(Pvn3dPipeline.tinyModelBytes(), FrameToPose.Config.cpu(), SAMPLE);
                FrameToPose f = new FrameToPose(Pvn3dPipeline.tinyModelBytes(), FrameToPose.Config.cpu().withConcurrentBranches(true), SAMPLE)) {
            FrameToPose.FramePose want = plain.run(SAMPLE);
            for (FrameToPose each : List.of(plain, f)) {
                Thread.currentThread().interrupt();
                FrameToPose.FramePose got;
                try {
                    got = each.run(SAMPLE);
                    assertTrue(Thread.currentThread().isInterrupted(), "the interrupt flag is kept");
                } finally {
                    Thread.interrupted();
                }
                assertEquals(want.inliers(), got.inliers());
                assertEquals(want.pose().t(0), got.pose().t(0), 1e-6);
            }
        }
    }

    /** Bytes that are not ONNX: ORT_INVALID_ARGUMENT from the constructor, with the branches apart or not. */
    @Test
    void bytesThatAreNotOnnxAreAnOrtException() {
        for (boolean branches : new boolean[] {false, true}) {
            RuntimeException e = assertThrows(RuntimeException.class, () -> new FrameToPose(new byte[] {1, 2, 3, (byte) 0xFF},
                    FrameToPose.Config.cpu().withConcurrentBranches(branches), SAMPLE));
            assertInstanceOf(OrtException.class, e, "branches " + branches + ": " + e);
            assertEquals(OrtErrorCode.ORT_INVALID_ARGUMENT, ((OrtException) e).getCode());
        }
    }

    /** A run that close() overtakes says the FrameToPose is closed, not which of its sessions it met closed. */
    @Test
    void aRunRacingCloseSaysTheFrameToPoseIsClosed() throws Exception {
        List<String> wrong = new ArrayList<>();
        ExecutorService ex = Executors.newSingleThreadExecutor();
        try {
            for (int rep = 0; rep < 40 && wrong.isEmpty(); rep++) {
                FrameToPose f = new FrameToPose(Pvn3dPipeline.tinyModelBytes(),
                        FrameToPose.Config.cpu().withConcurrentBranches(rep % 2 == 0), SAMPLE);
                f.run(SAMPLE);
                CountDownLatch started = new CountDownLatch(1);
                Future<?> run = ex.submit(() -> {
                    started.countDown();
                    return f.run(SAMPLE);
                });
                started.await();
                Thread.sleep(rep % 7);
                f.close();
                try {
                    run.get();
                } catch (ExecutionException e) {
                    Throwable c = e.getCause();
                    if (!(c instanceof OrtException o) || o.getCode() != OrtErrorCode.ORT_INVALID_ARGUMENT
                            || !o.getMessage().endsWith("FrameToPose is closed")) {
                        wrong.add("rep " + rep + ": " + c);
                    }
                }
            }
        } finally {
            ex.shutdown();
        }
        assertTrue(wrong.isEmpty(), "a run cut short by close() should say the FrameToPose is closed: " + wrong);
    }

    /** Every bad frame (a wrong shape, NaN model keypoints, a NaN cloud) is an OrtException with ORT_INVALID_ARGUMENT. */
    @Test
    void everyBadFrameIsAnOrtExceptionWithItsCode() {
        try (FrameToPose f = new FrameToPose(Pvn3dPipeline.tinyModelBytes(), FrameToPose.Config.cpu(), SAMPLE)) {
            long[] shape = SAMPLE.entry("cld_rgb_nrm").shape();
            Pvn3dSample fewer = SAMPLE.with("cld_rgb_nrm", OnnxTensorType.FLOAT, new long[] {1, shape[1] - 1, shape[2]},
                    java.util.Arrays.copyOf(SAMPLE.cloud(), (int) ((shape[1] - 1) * shape[2])));
            float[] kps = SAMPLE.modelKps();
            kps[0] = Float.NaN;
            Pvn3dSample nanKps = SAMPLE.with("model_kps", OnnxTensorType.FLOAT, SAMPLE.entry("model_kps").shape(), kps);
            float[] cloud = SAMPLE.cloud();
            cloud[2] = Float.NaN;
            Pvn3dSample nanCloud = SAMPLE.with("cld_rgb_nrm", OnnxTensorType.FLOAT, shape, cloud);
            List<String> notOrt = new ArrayList<>();
            for (Pvn3dSample bad : List.of(fewer, nanKps, nanCloud)) {
                RuntimeException e = assertThrows(RuntimeException.class, () -> f.run(bad));
                if (!(e instanceof OrtException o) || o.getCode() != OrtErrorCode.ORT_INVALID_ARGUMENT) {
                    notOrt.add(e.toString());
                }
            }
            if (!notOrt.isEmpty()) {
                fail("bad frames not refused with OrtException(ORT_INVALID_ARGUMENT): " + notOrt);
            }
        }
    }
}
