package org.pvn3d.ort.spark;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.element_at;
import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.not;
import static org.apache.spark.sql.functions.split;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.stream.Stream;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.function.MapPartitionsFunction;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.api.java.UDF2;
import org.apache.spark.sql.api.java.UDF6;
import org.apache.spark.sql.types.DataTypes;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.pipeline.FolderEvaluation;
import org.pvn3d.ort.pipeline.Pvn3dPipeline;
import org.pvn3d.ort.pipeline.Pvn3dSample;
import org.pvn3d.ort.pipeline.pool.PoseResult;
import org.pvn3d.ort.pipeline.pool.Pvn3dPool;

/**
 * PVN3D pose estimation as a Spark job: {@link #estimate} maps a Dataset of frames ({@link FrameColumns}:
 * PVT1 bytes or tensor columns) to a Dataset of poses ({@link FrameColumns#OUTPUT}), partition by
 * partition, each task borrowing a pipeline from its executor's {@link SessionCache} for a batch of rows
 * at a time. A frame that cannot be decoded or run becomes a row with its {@code error} set and the
 * others go on; a session that fails on a frame (a CUDA error, say) is closed and the next batch opens a
 * new one, and a task whose sessions fail three times in a row fails (Spark then retries it).
 *
 * <p>{@link #registerUdfs} adds the same as SQL functions, one frame per call.
 */
public final class Pvn3dSparkJob {
    private Pvn3dSparkJob() {}

    /** Consecutive session failures within a task before the task itself fails. */
    static final int MAX_SESSION_FAILURES = 3;

    /**
     * The PVT1 samples ({@code *.bin}) in a folder as {@code id, pvt, object_pvt} ({@link FrameColumns#PVT_FRAMES};
     * the id is the file name), spread over {@code partitions} partitions (Spark would put many small files in
     * one). A {@code model.bin} there (the dataset generator's layout: the object's entries once for all
     * samples) is no row: its bytes go into every row's {@code object_pvt}, as {@code pvn3d-ort eval} merges it.
     */
    public static Dataset<Row> readSamples(SparkSession spark, String dir, int partitions) {
        Dataset<Row> all = spark.read().format("binaryFile").option("pathGlobFilter", "*.bin").load(dir)
                .withColumn(FrameColumns.ID, element_at(split(col("path"), "/"), -1));
        Column isObject = col(FrameColumns.ID).equalTo(Pvn3dSample.MODEL_FILE);
        List<Row> object = all.filter(isObject).select("content").collectAsList();
        Column objectBytes = object.isEmpty() ? lit(null).cast(DataTypes.BinaryType) : lit((byte[]) object.get(0).get(0));
        return all.filter(not(isObject))
                .select(col(FrameColumns.ID), col("content").as(FrameColumns.PVT), objectBytes.as(FrameColumns.OBJECT_PVT))
                .repartition(Math.max(1, partitions));
    }

    /** {@link #readSamples(SparkSession, String, int)} over the default parallelism's partitions. */
    public static Dataset<Row> readSamples(SparkSession spark, String dir) {
        return readSamples(spark, dir, spark.sparkContext().defaultParallelism());
    }

    /** A folder holding {@code *.bin} samples (read as such), else Parquet (either frame form). */
    public static Dataset<Row> read(SparkSession spark, String path, int partitions) {
        Path local = Path.of(path.startsWith("file:") ? path.substring("file:".length()) : path);
        if (!path.contains("://") && Files.isDirectory(local) && hasSamples(local)) {
            return readSamples(spark, path, partitions);
        }
        Dataset<Row> d = spark.read().parquet(path);
        return partitions > 0 ? d.repartition(partitions) : d;
    }

    private static boolean hasSamples(Path dir) {
        try (Stream<Path> s = Files.list(dir)) {
            return s.anyMatch(p -> p.getFileName().toString().endsWith(".bin") && Files.isRegularFile(p));
        } catch (java.io.IOException e) {
            return false;
        }
    }

    /**
     * PVT1 frames decoded into the documented tensor columns ({@link FrameColumns#TENSOR_FRAMES}), e.g. to
     * write them as Parquet for other tools; a file that does not decode keeps its id and gets an error.
     */
    public static Dataset<Row> toTensorColumns(Dataset<Row> pvtFrames) {
        requireColumns(pvtFrames, List.of(FrameColumns.ID, FrameColumns.PVT));
        return pvtFrames.mapPartitions((MapPartitionsFunction<Row, Row>) rows -> new Iterator<>() {
            @Override
            public boolean hasNext() {
                return rows.hasNext();
            }

            @Override
            public Row next() {
                Row row = rows.next();
                String id = FrameColumns.id(row);
                try {
                    return FrameColumns.toTensorRow(FrameColumns.fromPvtRow(row, requireId(id)));
                } catch (RuntimeException e) {
                    return FrameColumns.tensorErrorRow(id, FrameColumns.message(e));
                }
            }
        }, Encoders.row(FrameColumns.TENSOR_FRAMES));
    }

    /**
     * The poses of {@code frames} (PVT1 frames when there is a {@code pvt} column, else tensor frames):
     * one output row per input row, in the same partitions ({@link FrameColumns#OUTPUT}).
     */
    public static Dataset<Row> estimate(Dataset<Row> frames, Pvn3dSparkOptions options) {
        boolean pvt = Arrays.asList(frames.columns()).contains(FrameColumns.PVT);
        requireColumns(frames, pvt ? List.of(FrameColumns.ID, FrameColumns.PVT) : FrameColumns.REQUIRED);
        return frames.mapPartitions(new EstimatePartition(options, pvt), Encoders.row(FrameColumns.OUTPUT));
    }

    private static void requireColumns(Dataset<Row> frames, List<String> required) {
        List<String> have = Arrays.asList(frames.columns());
        List<String> missing = required.stream().filter(c -> !have.contains(c)).toList();
        if (!missing.isEmpty()) {
            throw new IllegalArgumentException("the frames lack the column(s) " + missing + " (they have " + have + "; PVT1 frames need "
                    + "id and pvt, tensor frames " + FrameColumns.REQUIRED + ")");
        }
        for (String binary : List.of(FrameColumns.PVT, FrameColumns.OBJECT_PVT)) {
            if (have.contains(binary)) {
                org.apache.spark.sql.types.DataType type = frames.schema().apply(binary).dataType();
                if (!(type instanceof org.apache.spark.sql.types.BinaryType)) {
                    throw new IllegalArgumentException("column " + binary + " must be binary (the bytes of a PVT1 file), not "
                            + type.simpleString());
                }
            }
        }
    }

    /** A row's id, which a frame needs (a row without one gets an error row saying so). */
    private static String requireId(String id) {
        if (id == null) {
            throw new IllegalArgumentException("the row has no id");
        }
        return id;
    }

    /**
     * Registers {@code pvn3d_pose(pvt)} (the bytes of a PVT1 sample; ADD / ADD-S when it holds a ground
     * truth), {@code pvn3d_pose_object(pvt, object_pvt)} (the same, the entries the sample lacks taken from
     * {@code object_pvt}, a {@code model.bin}: the dataset layout, as {@link #readSamples} gives it) and {@code pvn3d_pose_tensors(rgb, rgb_height, rgb_width, cld_rgb_nrm, choose, model_kps)},
     * both returning {@link FrameColumns#UDF_RESULT}: a struct with R, t, keypoints, inliers, add, adds,
     * latency_ms, device and error.
     */
    public static void registerUdfs(SparkSession spark, Pvn3dSparkOptions options) {
        // the arguments as Object: a string or a number given for the bytes becomes the call's error, not a
        // ClassCastException that aborts the query
        spark.udf().register("pvn3d_pose", (UDF1<Object, Row>) bytes -> udf(options, () -> FrameColumns.fromPvt("pvt",
                pvtBytes(bytes, "pvt"))), FrameColumns.UDF_RESULT);
        spark.udf().register("pvn3d_pose_object", (UDF2<Object, Object, Row>) (bytes, object) -> udf(options,
                () -> FrameColumns.fromPvt("pvt", pvtBytes(bytes, "pvt"), pvtBytes(object, "object_pvt"))), FrameColumns.UDF_RESULT);
        spark.udf().register("pvn3d_pose_tensors", (UDF6<Object, Object, Object, Object, Object, Object, Row>) (rgb, h, w, cloud, choose,
                kps) -> udf(options, () -> FrameColumns.fromTensors("frame", rgb, h, w, cloud, choose, kps, null, null, null, null)),
                FrameColumns.UDF_RESULT);
    }

    /** A SQL function's bytes argument: binary or null, else an error naming what was given. */
    private static byte[] pvtBytes(Object v, String what) {
        if (v == null || v instanceof byte[]) {
            return (byte[]) v;
        }
        throw new IllegalArgumentException(what + " must be binary (the bytes of a PVT1 file), not " + v.getClass().getSimpleName());
    }

    private static Row udf(Pvn3dSparkOptions options, java.util.function.Supplier<Pvn3dSample> decode) {
        SessionCache.Key key = SessionCache.key(options);
        Pvn3dSample sample;
        try {
            sample = decode.get();
        } catch (RuntimeException e) {
            return FrameColumns.udfError(key.deviceName(), FrameColumns.message(e));
        }
        SessionCache.Lease lease = SessionCache.borrow(key);
        try {
            long t0 = System.nanoTime();
            Pvn3dPipeline.Result r = lease.pipeline().run(sample);
            double ms = (System.nanoTime() - t0) / 1e6;
            return FrameColumns.udfResult(PoseResult.of(sample.source(), r, key.deviceName(), 0, ms, ms), key.deviceName());
        } catch (RuntimeException | Error e) {
            if (Pvn3dPool.isSessionFailure(e)) {
                lease.discard();
            }
            if (e instanceof VirtualMachineError) {
                throw e;
            }
            return FrameColumns.udfError(key.deviceName(), FrameColumns.message(e));
        } finally {
            lease.close();
        }
    }

    /** The output rows (collected) as the CLI's evaluation summary, sorted by id. */
    public static FolderEvaluation.Summary summary(List<Row> output) {
        List<FolderEvaluation.Row> rows = new ArrayList<>();
        for (Row r : output) {
            String error = r.getAs(FrameColumns.ERROR);
            String id = r.getAs(FrameColumns.ID);
            if (error != null) {
                rows.add(new FolderEvaluation.Row(id, 0, 0, 0, Double.NaN, Double.NaN, Double.NaN, Double.NaN, error, Double.NaN));
            } else {
                rows.add(new FolderEvaluation.Row(id, r.<Integer>getAs("points"), r.<Integer>getAs("masked"), r.<Integer>getAs("inliers"),
                        orNaN(r.getAs("add")), orNaN(r.getAs("adds")), orNaN(r.getAs("diameter")), r.<Double>getAs("latency_ms"), null, Double.NaN));
            }
        }
        rows.sort(Comparator.comparing(FolderEvaluation.Row::name));
        return new FolderEvaluation.Summary(rows);
    }

    private static double orNaN(Double d) {
        return d == null ? Double.NaN : d;
    }

    /** The executor's id ({@code driver} in local mode). */
    static String executorId() {
        SparkEnv env = SparkEnv.get();
        return env == null ? "none" : env.executorId();
    }

    /** One task's rows: decoded, run in batches on a borrowed pipeline, one output row each. */
    static final class EstimatePartition implements MapPartitionsFunction<Row, Row> {
        private static final long serialVersionUID = 1L;

        private final Pvn3dSparkOptions options;
        private final boolean pvt;

        EstimatePartition(Pvn3dSparkOptions options, boolean pvt) {
            this.options = options;
            this.pvt = pvt;
        }

        @Override
        public Iterator<Row> call(Iterator<Row> rows) {
            SessionCache.Key key = SessionCache.key(options);
            String executor = executorId();
            return new Iterator<>() {
                private Iterator<Row> ready = Collections.emptyIterator();
                private int sessionFailures;

                @Override
                public boolean hasNext() {
                    while (!ready.hasNext() && rows.hasNext()) {
                        ready = batch();
                    }
                    return ready.hasNext();
                }

                @Override
                public Row next() {
                    if (!hasNext()) {
                        throw new NoSuchElementException();
                    }
                    return ready.next();
                }

                private Iterator<Row> batch() {
                    List<Row> out = new ArrayList<>(options.batchSize());
                    SessionCache.Lease lease = null;
                    try {
                        for (int i = 0; i < options.batchSize() && rows.hasNext(); i++) {
                            Row row = rows.next();
                            String id = FrameColumns.id(row);
                            Pvn3dSample sample;
                            try {
                                sample = decode(row, requireId(id));
                            } catch (RuntimeException e) {
                                out.add(FrameColumns.errorOutput(id, key.deviceName(), executor, FrameColumns.message(e)));
                                continue;
                            }
                            if (lease == null) {
                                // a session that cannot open fails the task: no row could run
                                lease = SessionCache.borrow(key);
                            }
                            long t0 = System.nanoTime();
                            try {
                                Pvn3dPipeline.Result r = lease.pipeline().run(sample);
                                double ms = (System.nanoTime() - t0) / 1e6;
                                out.add(FrameColumns.output(id, PoseResult.of(id, r, key.deviceName(), 0, ms, ms), key.deviceName(), executor));
                                sessionFailures = 0;
                            } catch (RuntimeException | Error e) {
                                out.add(FrameColumns.errorOutput(id, key.deviceName(), executor, FrameColumns.message(e)));
                                if (Pvn3dPool.isSessionFailure(e)) {
                                    lease.discard();
                                    lease = null;
                                    if (e instanceof VirtualMachineError vme) {
                                        throw vme; // out of memory and the like: the JVM's, not the session's
                                    }
                                    if (++sessionFailures >= MAX_SESSION_FAILURES) {
                                        throw new OrtException(OrtErrorCode.ORT_FAIL, "the " + key.deviceName() + " sessions of executor "
                                                + executor + " failed " + sessionFailures + " time(s) in a row, last on " + id + ": "
                                                + FrameColumns.message(e), e);
                                    }
                                }
                            }
                        }
                    } finally {
                        if (lease != null) {
                            lease.close();
                        }
                    }
                    return out.iterator();
                }

                private Pvn3dSample decode(Row row, String id) {
                    if (pvt) {
                        return FrameColumns.fromPvtRow(row, id);
                    }
                    int e = Arrays.asList(row.schema().fieldNames()).indexOf(FrameColumns.ERROR);
                    if (e >= 0 && !row.isNullAt(e)) {
                        throw new IllegalArgumentException(row.getString(e));
                    }
                    return FrameColumns.fromTensors(row);
                }
            };
        }
    }
}
