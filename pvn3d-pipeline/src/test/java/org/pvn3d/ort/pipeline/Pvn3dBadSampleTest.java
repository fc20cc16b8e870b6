package org.pvn3d.ort.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.pvn3d.ort.OnnxTensorType;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;

/**
 * Samples and settings a hostile user gave the pipeline: each fails with a clear exception naming what is
 * wrong (it used to be an ArrayIndexOutOfBoundsException, or a silent non-finite pose), and the pipeline
 * still gives the shipped sample's pose afterwards.
 */
class Pvn3dBadSampleTest {
    static Pvn3dPipeline pipeline;
    static Pvn3dSample sample;
    static double[] expectedT;

    @BeforeAll
    static void open() {
        sample = Pvn3dSample.resource(Pvn3dSample.RESOURCE);
        pipeline = Pvn3dPipeline.tiny(Pvn3dPipeline.Config.cpu());
        expectedT = pipeline.run(sample).pose().pose().t();
    }

    @AfterAll
    static void close() {
        pipeline.close();
    }

    @AfterEach
    void thePipelineStillWorks() {
        assertEquals(java.util.Arrays.toString(expectedT), java.util.Arrays.toString(pipeline.run(sample).pose().pose().t()));
    }

    @Test
    void groundTruthEntriesOfTheWrongSize() {
        OrtException e = assertThrows(OrtException.class,
                () -> pipeline.run(sample.with("model_diameter", OnnxTensorType.FLOAT, new long[] {0}, new float[0])));
        assertEquals(OrtErrorCode.ORT_INVALID_ARGUMENT, e.getCode());
        assertTrue(e.getMessage().endsWith("'model_diameter' must hold 1 float, not 0"), e.getMessage());
        e = assertThrows(OrtException.class, () -> pipeline.run(sample.with("gt_R", OnnxTensorType.FLOAT, new long[] {4}, new float[4])));
        assertTrue(e.getMessage().endsWith("'gt_R' must hold 9 floats, not 4"), e.getMessage());
        e = assertThrows(OrtException.class, () -> pipeline.run(sample.with("gt_t", OnnxTensorType.FLOAT, new long[] {0}, new float[0])));
        assertTrue(e.getMessage().endsWith("'gt_t' must hold 3 floats, not 0"), e.getMessage());
    }

    @Test
    void aCloudWithANaNIsRefusedNamingThePointAndChannel() {
        float[] cloud = sample.cloud();
        int channels = sample.cloudChannels();
        cloud[11 * channels + channels - 1] = Float.NaN; // point 11, the last channel
        OrtException e = assertThrows(OrtException.class,
                () -> pipeline.run(sample.with("cld_rgb_nrm", OnnxTensorType.FLOAT, sample.entry("cld_rgb_nrm").shape(), cloud)));
        assertEquals(OrtErrorCode.ORT_INVALID_ARGUMENT, e.getCode());
        assertTrue(e.getMessage().endsWith("'cld_rgb_nrm' point 11 channel " + (channels - 1)
                + (channels == 9 ? " (normal z)" : "") + " holds a non-finite value (NaN)"), e.getMessage());
    }

    @Test
    void anObjectClassTheModelDoesNotHave() {
        try (Pvn3dPipeline other = Pvn3dPipeline.tiny(new Pvn3dPipeline.Config(Pvn3dPipeline.Provider.CPU, 0, 0,
                new JavaPoseSolver(), 99, 0, 1, true, null, IcpRefinement.DEFAULT))) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> other.run(sample));
            assertTrue(e.getMessage().startsWith("object class 99 is not one of the model's 2 classes"), e.getMessage());
        }
        assertThrows(IllegalArgumentException.class, () -> new Pvn3dPipeline.Config(Pvn3dPipeline.Provider.CPU, 0, 0,
                new JavaPoseSolver(), -1, 0, 1, true, null, IcpRefinement.DEFAULT));
    }

    @Test
    void aChooseOutsideTheImageOrOfAnotherLengthIsRefusedBeforeTheRun() {
        long[] shape = sample.entry("choose").shape();
        long pixels = sample.entry("rgb").shape()[2] * sample.entry("rgb").shape()[3];
        for (long bad : new long[] {-1, pixels, Long.MIN_VALUE}) {
            long[] choose = sample.entry("choose").longs();
            choose[11] = bad;
            Pvn3dSample s = sample.with("choose", OnnxTensorType.INT64, shape, choose);
            OrtException e = assertThrows(OrtException.class, () -> pipeline.run(s));
            assertEquals(OrtErrorCode.ORT_INVALID_ARGUMENT, e.getCode());
            assertTrue(e.getMessage().contains("'choose' point 11 names pixel " + bad), e.getMessage());
        }
        Pvn3dSample shorter = sample.with("choose", OnnxTensorType.INT64, new long[] {1, 1, 1000},
                java.util.Arrays.copyOf(sample.entry("choose").longs(), 1000));
        OrtException e = assertThrows(OrtException.class, () -> pipeline.run(shorter));
        assertTrue(e.getMessage().endsWith("'choose' picks 1000 pixels, but the cloud has " + sample.points() + " points (one pixel a point)"),
                e.getMessage());
    }

    @Test
    void theFiniteScanFindsTheFirstNaNOrInfinityAndNothingElse() {
        float[] finite = {0f, -0f, Float.MAX_VALUE, -Float.MAX_VALUE, Float.MIN_VALUE, 1e-40f, 3.5f};
        assertEquals(-1, Pvn3dSample.firstNonFinite(bytes(finite)));
        for (float bad : new float[] {Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, Float.intBitsToFloat(0xffc00001)}) {
            for (int at : new int[] {0, 3, finite.length - 1}) {
                float[] v = finite.clone();
                v[at] = bad;
                if (at == 3) {
                    v[5] = bad; // the first one is named
                }
                assertEquals(at, Pvn3dSample.firstNonFinite(bytes(v)), bad + " at " + at);
            }
        }
        assertEquals(-1, Pvn3dSample.firstNonFinite(new byte[0]));
    }

    private static byte[] bytes(float[] v) {
        java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(4 * v.length).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        for (float x : v) {
            b.putFloat(x);
        }
        return b.array();
    }
}
