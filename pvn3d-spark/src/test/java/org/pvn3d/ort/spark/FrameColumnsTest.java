package org.pvn3d.ort.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.expressions.GenericRowWithSchema;
import org.junit.jupiter.api.Test;
import org.pvn3d.ort.pipeline.Pvn3dPipeline;
import org.pvn3d.ort.pipeline.Pvn3dSample;

/** Rows and samples without a Spark session: the tensor columns round trip, their checks, the cache key outside a task. */
class FrameColumnsTest {
    static Row withSchema(Row r) {
        Object[] values = new Object[r.length()];
        for (int i = 0; i < values.length; i++) {
            values[i] = r.get(i);
        }
        return new GenericRowWithSchema(values, FrameColumns.TENSOR_FRAMES);
    }

    @Test
    void tensorColumnsCarryTheNetworkInputsAndTheGroundTruth() {
        Pvn3dSample s = Pvn3dSample.resource(Pvn3dSample.RESOURCE);
        Pvn3dSample back = FrameColumns.fromTensors(withSchema(FrameColumns.toTensorRow(s)));
        for (String name : List.of("rgb", "cld_rgb_nrm", "choose", "model_kps", "gt_R", "gt_t", "model_points", "model_diameter")) {
            assertArrayEquals(s.entry(name).shape(), back.entry(name).shape(), name);
            assertArrayEquals(s.entry(name).data(), back.entry(name).data(), name);
        }
        assertTrue(back.hasGroundTruth());
    }

    @Test
    void badSizesAreRefusedWithTheColumnsName() {
        Pvn3dSample s = Pvn3dSample.resource(Pvn3dSample.RESOURCE);
        Row good = FrameColumns.toTensorRow(s);
        long[] choose = s.entry("choose").longs();
        choose[7] = 64 * 64;
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> FrameColumns.fromTensors("x", good.get(1), 64, 64,
                good.get(4), choose, good.get(6), null, null, null, null));
        assertEquals("x: choose holds pixel 4096, outside the 64x64 crop", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> FrameColumns.fromTensors("x", good.get(1), 64, 32, good.get(4), good.get(5),
                good.get(6), null, null, null, null));
        assertTrue(e.getMessage().contains("rgb has 12288 values, not 3 x rgb_height 64 x rgb_width 32"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> FrameColumns.fromTensors("x", good.get(1), 64, 64, good.get(4), good.get(5),
                null, null, null, null, null));
        assertEquals("no model_kps", e.getMessage());
        // double arrays are taken too
        double[] kps = new double[27];
        assertEquals(9, FrameColumns.fromTensors("x", good.get(1), 64, 64, good.get(4), good.get(5), kps, null, null, null, null)
                .entry("model_kps").shape()[0]);
    }

    @Test
    void outsideATaskTheKeyFollowsTheOptions() {
        SessionCache.Key cpu = SessionCache.key(Pvn3dSparkOptions.defaults());
        assertEquals(Pvn3dPipeline.Provider.CPU, cpu.provider());
        assertEquals("cpu", cpu.deviceName());
        assertEquals("native", cpu.pose());
        assertEquals(0, cpu.threads(), "no task: ORT's thread count");
        assertEquals("classpath:" + Pvn3dPipeline.MODEL_RESOURCE, cpu.model());
        SessionCache.Key cuda = SessionCache.key(Pvn3dSparkOptions.defaults().withEp(Pvn3dSparkOptions.Ep.CUDA, 3).withThreads(2));
        assertEquals("cuda:3", cuda.deviceName());
        assertEquals("cuda", cuda.pose());
        assertEquals(2, cuda.threads());
    }
}
