package org.pvn3d.ort.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pvn3d.ort.pipeline.FolderEvaluation;
import org.pvn3d.ort.pipeline.FolderEvaluationTestSamples;
import org.pvn3d.ort.pipeline.NativePoseSolver;
import org.pvn3d.ort.pipeline.Pvn3dPipeline;
import org.pvn3d.ort.pipeline.Pvn3dSample;

/**
 * The Spark job in {@code local[2]} on the CPU provider, over the pipeline's shipped sample and the
 * samples its folder-evaluation test makes from it (or over {@code -Dpvn3d.spark.samples=DIR}, e.g. a
 * held-out set), against the single-process evaluation sample by sample; a corrupt file and a corrupt
 * tensor row fail only their rows; the executor's session cache opens at most one session per task slot,
 * reuses them across jobs and closes them when Spark stops.
 */
class Pvn3dSparkJobTest {
    static SparkSession spark;
    static Path samples;
    static int sessionsBefore;
    /** The single-process results of every good sample, by file name. */
    static Map<String, Pvn3dPipeline.Result> reference = new LinkedHashMap<>();
    static FolderEvaluation.Summary referenceSummary;

    @BeforeAll
    static void start(@TempDir Path dir) throws Exception {
        String given = System.getProperty("pvn3d.spark.samples");
        if (given != null && !given.isBlank()) {
            samples = dir.resolve("samples");
            Files.createDirectories(samples);
            for (Path f : FolderEvaluation.samples(Path.of(given))) {
                Files.copy(f, samples.resolve(f.getFileName()));
            }
        } else {
            samples = dir.resolve("samples");
            Files.createDirectories(samples);
            FolderEvaluationTestSamples.write(samples); // the shipped sample, moved 2 cm, 700 of its points
            Files.delete(samples.resolve("notes.txt"));
            // three held-out scenes in the dataset generator's layout: the object's entries only in model.bin,
            // which is no row of its own and is merged into each sample, as `pvn3d-ort eval` does
            for (String n : List.of(Pvn3dSample.MODEL_FILE, "test_000000.bin", "test_000001.bin", "test_000002.bin")) {
                try (java.io.InputStream in = Pvn3dSparkJobTest.class.getResourceAsStream("/heldout/" + n)) {
                    assertNotNull(in, "/heldout/" + n + " on the class path (pvn3d-pipeline's test jar)");
                    Files.copy(in, samples.resolve(n));
                }
            }
        }
        Files.writeString(samples.resolve("x_corrupt.bin"), "not a sample at all");
        // the single-process evaluation, as `pvn3d-ort eval DIR` runs it (the fused pose kernel on the CPU)
        try (Pvn3dPipeline p = Pvn3dPipeline.tiny(Pvn3dPipeline.Config.cpu().withPoseSolver(new NativePoseSolver()))) {
            List<Path> files = FolderEvaluation.samples(samples);
            referenceSummary = FolderEvaluation.evaluate(p, files, null);
            for (Path f : files) {
                if (!f.getFileName().toString().equals("x_corrupt.bin")) {
                    reference.put(f.getFileName().toString(), p.run(Pvn3dSample.read(f)));
                }
            }
        }
        sessionsBefore = SessionCache.opened();
        spark = SparkSession.builder().master("local[2]").appName("Pvn3dSparkJobTest").config("spark.ui.enabled", "false")
                .config("spark.sql.warehouse.dir", dir.resolve("warehouse").toString())
                .config("spark.sql.shuffle.partitions", "2").config("spark.plugins", Pvn3dSparkPlugin.class.getName()).getOrCreate();
    }

    @AfterAll
    static void stop() {
        if (spark != null) {
            int opened = SessionCache.opened();
            spark.stop();
            // the executor plugin closed every session the job opened
            assertEquals(opened, SessionCache.closed(), "sessions closed when Spark stopped");
            assertEquals(0, SessionCache.idle());
        }
    }

    static List<Row> sorted(Dataset<Row> d) {
        List<Row> rows = new ArrayList<>(d.collectAsList());
        rows.sort(Comparator.comparing(r -> r.<String>getAs("id")));
        return rows;
    }

    static double[] doubles(Row r, String column) {
        return r.<scala.collection.Seq<Double>>getAs(column) == null ? null
                : scala.jdk.javaapi.CollectionConverters.asJava(r.<scala.collection.Seq<Double>>getAs(column)).stream()
                        .mapToDouble(Double::doubleValue).toArray();
    }

    /** Every good row has the single-process pose exactly; the corrupt ones only an error. */
    static void assertSameAsSingleProcess(List<Row> rows, String corruptId, String corruptMessage) {
        assertEquals(reference.size() + 1, rows.size(), rows.toString());
        for (Row r : rows) {
            String id = r.getAs("id");
            if (id.equals(corruptId)) {
                String error = r.getAs("error");
                assertNotNull(error, id);
                assertTrue(error.contains(corruptMessage), error);
                assertNull(r.getAs("R"));
                assertNull(r.getAs("add"));
                continue;
            }
            Pvn3dPipeline.Result ref = reference.get(id);
            assertNotNull(ref, id);
            assertNull(r.getAs("error"), id);
            assertArrayEquals(ref.pose().pose().r(), doubles(r, "R"), 0.0, id + " R");
            assertArrayEquals(ref.pose().pose().t(), doubles(r, "t"), 0.0, id + " t");
            assertEquals(ref.pose().inliers(), r.<Integer>getAs("inliers"), id);
            assertEquals(ref.votes().maskedCount(), r.<Integer>getAs("masked"), id);
            assertEquals(ref.votes().n(), r.<Integer>getAs("points"), id);
            assertEquals(ref.metrics().add(), r.<Double>getAs("add"), 0.0, id);
            assertEquals(ref.metrics().adds(), r.<Double>getAs("adds"), 0.0, id);
            assertEquals(ref.metrics().addCorrect(), r.<Boolean>getAs("add_correct"), id);
            assertEquals(ref.pose().kps().length, r.<scala.collection.Seq<?>>getAs("keypoints").length());
            assertTrue(r.<Double>getAs("latency_ms") > 0);
            assertEquals("cpu", r.getAs("device"));
        }
    }

    @Test
    void theJobGivesTheSingleProcessPosesAndACorruptFileFailsOnlyItsRow() {
        long t0 = System.nanoTime();
        List<Row> rows = sorted(Pvn3dSparkJob.estimate(Pvn3dSparkJob.readSamples(spark, samples.toString()), Pvn3dSparkOptions.defaults()));
        double s = (System.nanoTime() - t0) / 1e9;
        System.out.printf("Pvn3dSparkJobTest: %d rows in %.2f s (%.2f rows/s) in local[2]%n", rows.size(), s, rows.size() / s);
        assertSameAsSingleProcess(rows, "x_corrupt.bin", "not a PVT1 file");

        // the summary table is the evaluation's, row for row
        FolderEvaluation.Summary summary = Pvn3dSparkJob.summary(rows);
        assertEquals(referenceSummary.rows().size(), summary.rows().size());
        for (int i = 0; i < summary.rows().size(); i++) {
            FolderEvaluation.Row a = summary.rows().get(i);
            FolderEvaluation.Row b = referenceSummary.rows().get(i);
            assertEquals(b.name(), a.name());
            assertEquals(b.error() != null, a.error() != null, a.name());
            if (a.error() == null) {
                assertEquals(List.of(b.points(), b.masked(), b.inliers(), b.add(), b.adds()), List.of(a.points(), a.masked(), a.inliers(),
                        a.add(), a.adds()), a.name());
            }
        }
        assertEquals(referenceSummary.meanAdd(), summary.meanAdd(), 0.0);
        assertEquals(1, summary.failures());
    }

    @Test
    void tensorFramesFromParquetGiveTheSamePosesAndACorruptRowFailsAlone(@TempDir Path dir) {
        String parquet = dir.resolve("frames.parquet").toString();
        Pvn3dSparkJob.toTensorColumns(Pvn3dSparkJob.readSamples(spark, samples.toString())).write().parquet(parquet);
        Dataset<Row> frames = spark.read().parquet(parquet);
        assertTrue(List.of(frames.columns()).containsAll(FrameColumns.REQUIRED), List.of(frames.columns()).toString());
        // the corrupt file came through as a row with its error: drop it, add a corrupt tensor row instead
        Row good = frames.filter("id = 'a_shipped.bin'").first();
        Object[] values = new Object[good.length()];
        for (int i = 0; i < values.length; i++) {
            values[i] = good.get(i);
        }
        values[good.fieldIndex("id")] = "x_truncated";
        float[] cloud = FrameColumns.floats(good.get(good.fieldIndex("cld_rgb_nrm")), "cld_rgb_nrm");
        values[good.fieldIndex("cld_rgb_nrm")] = java.util.Arrays.copyOf(cloud, cloud.length - 5);
        Dataset<Row> truncated = spark.createDataFrame(List.of(RowFactory.create(values)), FrameColumns.TENSOR_FRAMES);
        Dataset<Row> input = frames.filter("error IS NULL").unionByName(truncated).repartition(2);

        List<Row> rows = sorted(Pvn3dSparkJob.estimate(input, Pvn3dSparkOptions.defaults().withBatchSize(2)));
        assertSameAsSingleProcess(rows, "x_truncated", "cld_rgb_nrm has 9211 values, not a positive multiple of 9");
    }

    @Test
    void theSqlFunctionGivesTheSamePose() {
        Pvn3dSparkJob.registerUdfs(spark, Pvn3dSparkOptions.defaults());
        Pvn3dSparkJob.readSamples(spark, samples.toString()).createOrReplaceTempView("frames");
        // pvn3d_pose_object: the held-out scenes' object entries come from model.bin (object_pvt)
        List<Row> rows = spark.sql("SELECT id, pvn3d_pose_object(pvt, object_pvt) AS pose FROM frames ORDER BY id").collectAsList();
        Row self = spark.sql("SELECT pvn3d_pose(pvt) AS pose FROM frames WHERE id = 'a_shipped.bin'").first().getStruct(0);
        assertNull(self.getAs("error"), "a self-contained sample needs no object_pvt");
        assertArrayEquals(reference.get("a_shipped.bin").pose().pose().t(), doubles(self, "t"), 0.0);
        assertEquals(reference.size() + 1, rows.size());
        for (Row r : rows) {
            Row pose = r.getStruct(1);
            String id = r.getString(0);
            if (id.equals("x_corrupt.bin")) {
                assertTrue(pose.<String>getAs("error").contains("not a PVT1 file"));
                continue;
            }
            assertNull(pose.getAs("error"), id);
            assertArrayEquals(reference.get(id).pose().pose().t(), doubles(pose, "t"), 0.0, id);
            assertEquals(reference.get(id).metrics().adds(), pose.<Double>getAs("adds"), 0.0, id);
        }
        Row one = spark.sql("SELECT pvn3d_pose_tensors(rgb, rgb_height, rgb_width, cld_rgb_nrm, choose, model_kps) AS pose FROM ("
                + "SELECT * FROM parquet.`" + writeTensorFrames() + "` WHERE id = 'a_shipped.bin')").first().getStruct(0);
        assertNull(one.getAs("error"));
        assertNull(one.getAs("add"), "no ground truth passed: no ADD");
        // nor model points: nothing to refine against, the pose is the voting pose
        assertArrayEquals(reference.get("a_shipped.bin").voting().pose().r(), doubles(one, "R"), 0.0);
    }

    @Test
    void rowsAndArgumentsAHostileUserGivesFailAloneOrAtOnce() throws Exception {
        // toTensorColumns straight into estimate (its rows had no schema: every row failed)
        List<Row> chained = sorted(Pvn3dSparkJob.estimate(Pvn3dSparkJob.toTensorColumns(Pvn3dSparkJob.readSamples(spark,
                samples.toString())), Pvn3dSparkOptions.defaults()));
        assertSameAsSingleProcess(chained, "x_corrupt.bin", "not a PVT1 file");

        byte[] shipped = Files.readAllBytes(samples.resolve("a_shipped.bin"));
        org.apache.spark.sql.types.StructType nullableId = new org.apache.spark.sql.types.StructType()
                .add("id", org.apache.spark.sql.types.DataTypes.StringType, true)
                .add("pvt", org.apache.spark.sql.types.DataTypes.BinaryType, true);
        // a row without an id gets its error row (it aborted the whole job)
        List<Row> rows = Pvn3dSparkJob.estimate(spark.createDataFrame(List.of(RowFactory.create(null, shipped),
                RowFactory.create("a_shipped.bin", shipped)), nullableId), Pvn3dSparkOptions.defaults()).collectAsList();
        assertEquals(2, rows.size());
        for (Row r : rows) {
            if (r.getAs("id") == null) {
                assertEquals("the row has no id", r.getAs("error"));
            } else {
                assertArrayEquals(reference.get("a_shipped.bin").pose().pose().t(), doubles(r, "t"), 0.0);
            }
        }
        // an int id column is taken as its string (a ClassCastException aborted the job)
        org.apache.spark.sql.types.StructType intId = new org.apache.spark.sql.types.StructType()
                .add("id", org.apache.spark.sql.types.DataTypes.IntegerType, false)
                .add("pvt", org.apache.spark.sql.types.DataTypes.BinaryType, true);
        Row byInt = Pvn3dSparkJob.estimate(spark.createDataFrame(List.of(RowFactory.create(42, shipped)), intId),
                Pvn3dSparkOptions.defaults()).first();
        assertEquals("42", byInt.getAs("id"));
        assertNull(byInt.getAs("error"));
        // a pvt column that is not binary: refused before the job runs
        org.apache.spark.sql.types.StructType stringPvt = new org.apache.spark.sql.types.StructType()
                .add("id", org.apache.spark.sql.types.DataTypes.StringType, false)
                .add("pvt", org.apache.spark.sql.types.DataTypes.StringType, true);
        IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> Pvn3dSparkJob.estimate(spark.createDataFrame(List.of(RowFactory.create("s", "abc")), stringPvt),
                        Pvn3dSparkOptions.defaults()));
        assertEquals("column pvt must be binary (the bytes of a PVT1 file), not string", e.getMessage());
        // the SQL function given a string or a number: the call's error, the query goes on (a ClassCastException aborted it)
        Pvn3dSparkJob.registerUdfs(spark, Pvn3dSparkOptions.defaults());
        Row bad = spark.sql("SELECT pvn3d_pose('abc') AS a, pvn3d_pose(42) AS b").first();
        assertEquals("pvt must be binary (the bytes of a PVT1 file), not String", bad.getStruct(0).getAs("error"));
        assertEquals("pvt must be binary (the bytes of a PVT1 file), not Integer", bad.getStruct(1).getAs("error"));
    }

    private static String writeTensorFrames() {
        try {
            Path d = Files.createTempDirectory("pvn3d-frames");
            String out = d.resolve("frames.parquet").toString();
            Pvn3dSparkJob.toTensorColumns(Pvn3dSparkJob.readSamples(spark, samples.toString())).write().parquet(out);
            return out;
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void theSessionCacheOpensOneSessionPerTaskSlotAndReusesThem() {
        // four partitions on two task slots: at most two tasks at a time, so at most two sessions (of a key
        // no other test uses: two intra-op threads)
        Dataset<Row> frames = Pvn3dSparkJob.readSamples(spark, samples.toString(), 4);
        int before = SessionCache.opened();
        Pvn3dSparkJob.estimate(frames, Pvn3dSparkOptions.defaults().withThreads(2)).collectAsList();
        int first = SessionCache.opened() - before;
        Pvn3dSparkJob.estimate(frames, Pvn3dSparkOptions.defaults().withThreads(2)).collectAsList();
        int second = SessionCache.opened() - before - first;
        System.out.printf("Pvn3dSparkJobTest: sessions opened by the first job %d, by the second %d, idle now %d%n", first, second,
                SessionCache.idle());
        assertTrue(first >= 1 && first <= 2, "one session per task slot at most: " + first);
        assertEquals(0, second, "the second job reuses the cached sessions");
        assertTrue(SessionCache.opened() - sessionsBefore <= 2 * 2, "two keys (one and two threads), at most two sessions each");
    }

    @Test
    void theEntryPointWritesParquetAndPrintsTheEvaluationTable(@TempDir Path dir) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        String output = dir.resolve("poses.parquet").toString();
        int code = Pvn3dSparkMain.run(new String[] {"--input", samples.toString(), "--output", output, "--ep", "cpu"}, spark,
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        String text = out.toString(StandardCharsets.UTF_8);
        System.out.print(text);
        assertEquals(1, code, "a failed row makes exit code 1\n" + text + err);
        assertTrue(text.contains("a_shipped.bin") && text.matches("(?s).*x_corrupt\\.bin +error: .*not a PVT1 file.*")
                && text.contains("mean (" + reference.size() + ")"), text);
        assertTrue(text.matches("(?s).*\\d+ row\\(s\\) in [0-9.]+ s: [0-9.]+ rows/s \\(1 failed\\).*"), text);
        assertEquals(reference.size() + 1, spark.read().parquet(output).count());
        assertFalse(Pvn3dSparkMain.run(new String[] {"--input", samples.toString()}, spark, new PrintStream(out), new PrintStream(err)) == 0);
    }
}
