package org.pvn3d.ort.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.pvn3d.ort.OnnxTensorType;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.pipeline.Pvn3dPipeline;
import org.pvn3d.ort.pipeline.Pvn3dSample;

/** The Spark job and the executor's session cache under bad rows, a replaced model file and bad options. */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class Pvn3dSparkBadInputTest {
    static SparkSession spark;

    @BeforeAll
    static void start(@TempDir Path dir) {
        spark = SparkSession.builder().master("local[2]").appName("Pvn3dSparkBadInputTest").config("spark.ui.enabled", "false")
                .config("spark.sql.warehouse.dir", dir.resolve("warehouse").toString()).getOrCreate();
    }

    @AfterAll
    static void stop() {
        if (spark != null) {
            spark.stop();
        }
        SessionCache.closeAll();
    }

    static byte[] pvt(Pvn3dSample s, Path dir, String name) throws Exception {
        Path f = dir.resolve(name);
        s.write(f);
        return Files.readAllBytes(f);
    }

    /**
     * PVT1 frames whose choose names a pixel outside the image are bad rows: each gets its error and the others
     * their poses. (They used to fail inside the network with a code the job took for a broken session: three in a
     * row failed the task, and with it the job.)
     */
    @Test
    void threeFramesWithABadChooseFailOnlyTheirRows(@TempDir Path dir) throws Exception {
        Pvn3dSample good = Pvn3dSample.resource(Pvn3dSample.RESOURCE);
        long[] c = good.entry("choose").longs().clone();
        c[3] = 1L << 20; // the image has 64 x 64 pixels
        Pvn3dSample bad = good.with("choose", OnnxTensorType.INT64, good.entry("choose").shape(), c);
        List<Row> in = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            in.add(RowFactory.create("bad_" + i, pvt(bad, dir, "bad_" + i + ".bin"), null));
        }
        in.add(RowFactory.create("good", pvt(good, dir, "good.bin"), null));
        var frames = spark.createDataFrame(in, FrameColumns.PVT_FRAMES).coalesce(1);
        List<Row> out = new ArrayList<>(Pvn3dSparkJob.estimate(frames, Pvn3dSparkOptions.defaults().withEp(Pvn3dSparkOptions.Ep.CPU, 0)
                .withThreads(1)).collectAsList());
        out.sort(Comparator.comparing(r -> r.<String>getAs("id")));
        assertEquals(4, out.size());
        for (int i = 0; i < 3; i++) {
            assertNotNull(out.get(i).getAs("error"), out.get(i).toString());
        }
        assertNull(out.get(3).getAs("error"), out.get(3).toString());
    }

    /**
     * After the file at a model's path changes (a retrained model written over the old one; here: bytes that are
     * no model at all), the cache reads it again instead of serving the old model's session.
     */
    @Test
    void aModelReplacedAtTheSamePathIsNotServedFromTheOldSession(@TempDir Path dir) throws Exception {
        Path model = dir.resolve("model.onnx");
        Files.write(model, Pvn3dPipeline.tinyModelBytes());
        SessionCache.Key key = new SessionCache.Key(model.toString(), Pvn3dPipeline.Provider.CPU, 0, 1, "native", 1, "none");
        Pvn3dPipeline first;
        try (SessionCache.Lease lease = SessionCache.borrow(key)) {
            first = lease.pipeline();
        }
        Files.writeString(model, "not an ONNX model any more");
        try {
            // the new file must be what runs: it does not load, so borrowing fails (or at least a new session is opened)
            SessionCache.Lease lease = null;
            try {
                lease = SessionCache.borrow(key);
                assertNotSame(first, lease.pipeline(), "the session of the model that used to be at " + model + " was served");
            } catch (OrtException expected) {
                // the replaced model was read again: right
            } finally {
                if (lease != null) {
                    lease.close();
                }
            }
        } finally {
            SessionCache.closeAll();
        }
    }

    /** A null refinement is a wrong argument like any other: IllegalArgumentException with the message, not an NPE. */
    @Test
    void aNullRefinementIsRefusedWithTheDocumentedException() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Pvn3dSparkOptions.defaults().withRefine(null));
        org.junit.jupiter.api.Assertions.assertTrue(e.getMessage().contains("refine"), e.getMessage());
    }
}
