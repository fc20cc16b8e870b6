package org.pvn3d.ort.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;
import java.util.zip.Inflater;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.pvn3d.ort.OnnxTensorType;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.io.PvtFile;

/**
 * Samples whose object data, image or shapes are wrong: each is refused with ORT_INVALID_ARGUMENT naming the
 * entry (they used to surface as Java exceptions, wrong metrics or a wrong picture), a model on one line is not
 * "refined", and the pose picture never draws what lies outside it.
 */
class SampleDataMisuseTest {
    static Pvn3dPipeline icp;
    static Pvn3dPipeline none;
    static Pvn3dSample shipped;

    @BeforeAll
    static void open() {
        icp = Pvn3dPipeline.tiny(Pvn3dPipeline.Config.cpu());
        none = Pvn3dPipeline.tiny(Pvn3dPipeline.Config.cpu().withRefinement(null));
        shipped = Pvn3dSample.resource(Pvn3dSample.RESOURCE);
    }

    @AfterAll
    static void close() {
        icp.close();
        none.close();
    }

    static PvtFile.Entry floats(String name, long[] shape, float[] v) {
        ByteBuffer b = ByteBuffer.allocate(4 * v.length).order(ByteOrder.LITTLE_ENDIAN);
        b.asFloatBuffer().put(v);
        return new PvtFile.Entry(name, OnnxTensorType.FLOAT, shape, b.array());
    }

    static void assertInvalidArgument(Runnable r) {
        try {
            r.run();
            fail("no exception");
        } catch (OrtException e) {
            assertEquals(OrtErrorCode.ORT_INVALID_ARGUMENT, e.getCode(), e.getMessage());
        } catch (RuntimeException e) {
            fail("expected an OrtException(ORT_INVALID_ARGUMENT), got " + e, e);
        }
    }

    // ---- a uint8 'image' with a dimension beyond int and zero elements ----

    @Test
    void uint8ImageWithHugeZeroProductShapeIsAnOrtException() {
        Map<String, PvtFile.Entry> e = new LinkedHashMap<>();
        e.put("image", new PvtFile.Entry("image", OnnxTensorType.UINT8, new long[] {0, 1L << 40, 3}, new byte[0]));
        e.put("cld_rgb_nrm", shipped.entry("cld_rgb_nrm"));
        e.put("model_kps", shipped.entry("model_kps"));
        assertInvalidArgument(() -> new Pvn3dSample("x.bin", e));
    }

    // ---- a rank-0 cloud holding NaN ----

    @Test
    void scalarCloudHoldingNaNIsAnOrtException() {
        Map<String, PvtFile.Entry> e = new LinkedHashMap<>();
        e.put("cld_rgb_nrm", floats("cld_rgb_nrm", new long[0], new float[] {Float.NaN}));
        e.put("model_kps", shipped.entry("model_kps"));
        Pvn3dSample s = new Pvn3dSample("x.bin", e);
        assertInvalidArgument(s::checkCloud);
    }

    // ---- bad object data in a sample reach the pipeline's caller as IllegalArgumentException ----

    @Test
    void nanModelPointIsAnOrtExceptionFromTheIcpPipeline() {
        float[] mp = shipped.modelPoints();
        mp[4] = Float.NaN;
        Pvn3dSample s = shipped.with("model_points", OnnxTensorType.FLOAT, shipped.entry("model_points").shape(), mp);
        assertInvalidArgument(() -> icp.run(s));
    }

    @Test
    void zeroDiameterIsAnOrtExceptionFromTheIcpPipeline() {
        Pvn3dSample s = shipped.with("model_diameter", OnnxTensorType.FLOAT, new long[] {1}, new float[] {0f});
        assertInvalidArgument(() -> icp.run(s));
    }

    @Test
    void twoModelPointsIsAnOrtExceptionFromTheIcpPipeline() {
        float[] mp = Arrays.copyOf(shipped.modelPoints(), 6);
        Pvn3dSample s = shipped.with("model_points", OnnxTensorType.FLOAT, new long[] {2, 3}, mp);
        assertInvalidArgument(() -> icp.run(s));
    }

    @Test
    void noModelKeypointsIsAnOrtException() {
        Pvn3dSample s = shipped.with("model_kps", OnnxTensorType.FLOAT, new long[] {0, 3}, new float[0]);
        assertInvalidArgument(() -> icp.run(s));
    }

    // ---- the same data with --refine none give silent wrong metrics ----

    @Test
    void nanModelPointWithoutRefinementGivesNoInfiniteAddS() {
        float[] mp = shipped.modelPoints();
        mp[4] = Float.NaN;
        Pvn3dSample s = shipped.with("model_points", OnnxTensorType.FLOAT, shipped.entry("model_points").shape(), mp);
        Pvn3dPipeline.Result r;
        try {
            r = none.run(s);
        } catch (OrtException e) {
            return; // refused: fine
        }
        // the pose itself is good (the voting pose of the shipped sample); only the model data are bad
        fail("accepted; metrics ADD " + r.metrics().add() + " ADD-S " + r.metrics().adds()
                + " (a NaN model point: counted as 'gave no pose' by eval)");
    }

    @Test
    void zeroDiameterWithoutRefinementIsRefused() {
        Pvn3dSample s = shipped.with("model_diameter", OnnxTensorType.FLOAT, new long[] {1}, new float[] {0f});
        Pvn3dPipeline.Result r;
        try {
            r = none.run(s);
        } catch (OrtException e) {
            return;
        }
        fail("accepted a zero diameter: ADD " + r.metrics().add() + " judged against threshold " + r.metrics().threshold()
                + ": addCorrect=" + r.metrics().addCorrect() + " (the ICP path refuses the same sample)");
    }

    // ---- degenerate model points: ICP 'converges' to an arbitrary rotation ----

    @Test
    void icpOnAModelOfOneRepeatedPointDoesNotClaimARefinedPose() {
        Random rng = new Random(1);
        float[] cube = new float[3 * 300];
        for (int i = 0; i < cube.length; i++) {
            cube[i] = (float) (0.05 * (rng.nextDouble() - 0.5));
        }
        Pose truth = new Pose(Pose.axisAngle(0, 0, 1, 0.3), new double[] {0.01, -0.02, 0.5});
        double[] obs = truth.apply(cube);
        float[] observed = new float[obs.length];
        for (int i = 0; i < obs.length; i++) {
            observed[i] = (float) obs[i];
        }
        float[] degenerate = new float[3 * 300]; // 300 copies of the origin: one point
        float[] line = new float[3 * 300]; // and 300 points on one line
        for (int i = 0; i < 300; i++) {
            line[3 * i] = 0.001f * i;
            line[3 * i + 1] = 0.0005f * i;
        }
        for (float[] model : new float[][] {degenerate, line}) {
            IcpRefiner.Result r = new IcpRefiner().refine(truth, observed, model, 0.19);
            assertEquals(IcpRefiner.Status.DEGENERATE_MODEL, r.status());
            assertEquals(truth, r.pose(), "the voting pose is kept");
        }
        assertEquals(IcpRefiner.Status.CONVERGED, new IcpRefiner().refine(truth, observed, cube, 0.19).status(), "a solid model refines");
    }

    // ---- the pose picture ----

    @Test
    void aKeypointFourBillionPixelsOutsideIsNotDrawnInside() throws Exception {
        float[] k = shipped.entry("cam_K").floats();
        double fx = k[0];
        double cx = k[2];
        double fy = k[4];
        double cy = k[5];
        double z = 0.5;
        double u = 4294967296.0 + 10; // 2^32 + 10 pixels to the right
        float[] kp = {(float) ((u - cx) * z / fx), (float) ((20 - cy) * z / fy), (float) z};
        // the float rounding of x moves u by a few pixels at most: still 4e9 pixels outside the image
        byte[] without = PoseOverlay.render(shipped, null, null, 1);
        byte[] with = PoseOverlay.render(shipped, kp, null, 1);
        int w = (int) shipped.entry("image").shape()[1];
        // where the overlay puts it: u exactly as PoseOverlay.project computes it from the float point, scale 1
        double uu = k[0] * (double) kp[0] / kp[2] + k[1] * (double) kp[1] / kp[2] + k[2];
        double vv = k[4] * (double) kp[1] / kp[2] + k[5];
        int px = (int) Math.round(uu);
        int py = (int) Math.round(vv);
        int[] at = pixel(with, px, py, w);
        assertTrue(Arrays.equals(without, with), "a point projected at u = " + uu + " (" + (uu - w) + " pixels right of the "
                + w + "-pixel image) changed the picture: pixel (" + px + ", " + py + ") is " + at[0] + "," + at[1] + "," + at[2]
                + " (255,150,0 = a keypoint disc), without the point " + Arrays.toString(Arrays.copyOf(pixel(without, px, py, w), 3)));
    }

    @Test
    void aZeroHeightImageIsRefusedNotWrittenAsAnInvalidPng() {
        Pvn3dSample s = shipped.with("image", OnnxTensorType.FLOAT, new long[] {0, 64, 3}, new float[0]);
        byte[] png;
        try {
            png = PoseOverlay.render(s, null, null, 4);
        } catch (OrtException e) {
            return;
        }
        int height = ByteBuffer.wrap(png, 20, 4).getInt();
        fail("rendered a PNG of height " + height + " (the PNG spec forbids 0)");
    }

    @Test
    void anImageTooLargeForTheScaleIsAClearOrtException() {
        Pvn3dSample s = shipped.with("image", OnnxTensorType.FLOAT, new long[] {1500, 1500, 3}, new float[1500 * 1500 * 3]);
        try {
            PoseOverlay.render(s, null, null, 32);
            fail("rendered");
        } catch (OrtException e) {
            // fine
        } catch (RuntimeException e) {
            fail("expected an OrtException naming the picture size, got " + e, e);
        }
    }

    /** A scale whose square overflows a long's product with the image size is refused too (it rendered a 68-byte PNG). */
    @Test
    void aHugeScaleIsAClearOrtException() {
        for (int scale : new int[] {Integer.MAX_VALUE, 1 << 20}) {
            assertInvalidArgument(() -> PoseOverlay.render(shipped, null, null, scale));
        }
    }

    @Test
    void aOneChannelImageIsAClearOrtException() {
        Pvn3dSample s = shipped.with("image", OnnxTensorType.FLOAT, new long[] {64, 64, 1}, new float[64 * 64]);
        assertInvalidArgument(() -> PoseOverlay.render(s, null, null, 4));
    }

    // ---- a sample without model_diameter: the exact O(n^2) diameter only when the refinement runs ----

    @Test
    void withoutADiameterTheEarlyExitsComputeNone() {
        Random rng = new Random(2);
        float[] mp = new float[3 * 100_000];
        for (int i = 0; i < mp.length; i++) {
            mp[i] = (float) (0.1 * rng.nextGaussian());
        }
        Map<String, PvtFile.Entry> e = new LinkedHashMap<>(shipped.entries());
        e.remove("model_diameter");
        e.put("model_points", floats("model_points", new long[] {100_000, 3}, mp));
        Pvn3dSample s = new Pvn3dSample("x.bin", e);
        boolean[] mask = new boolean[s.points()];
        // nothing to fit: no diameter is computed (100k points took 7 s), so none is reported
        IcpRefiner.Result r = new IcpRefiner().refine(Pose.invalid(), s, mask);
        assertEquals(IcpRefiner.Status.TOO_FEW_POINTS, r.status());
        assertTrue(Double.isNaN(r.trimDistance()), "trim " + r.trimDistance());
    }

    /** The first pixel's colour of a PNG this class writes (filter none). */
    static int[] pixel(byte[] png, int x, int y, int width) throws Exception {
        int len = ByteBuffer.wrap(png, 33, 4).getInt();
        Inflater inf = new Inflater();
        inf.setInput(png, 41, len);
        byte[] raw = new byte[1 << 24];
        int n = inf.inflate(raw);
        int o = y * (1 + 3 * width) + 1 + 3 * x;
        return new int[] {raw[o] & 0xff, raw[o + 1] & 0xff, raw[o + 2] & 0xff, n};
    }
}
