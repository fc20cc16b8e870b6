package org.pvn3d.ort.spark;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.expressions.GenericRowWithSchema;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.pvn3d.ort.OnnxTensorType;
import org.pvn3d.ort.io.PvtFile;
import org.pvn3d.ort.pipeline.PoseMetrics;
import org.pvn3d.ort.pipeline.Pvn3dSample;
import org.pvn3d.ort.pipeline.pool.PoseResult;

/**
 * The job's columns and the conversions between rows and samples.
 *
 * <p>Frames come in one of two forms. <b>PVT1 frames</b>: {@code id string, pvt binary}, the bytes of a
 * sample file ({@link Pvn3dSparkJob#readSamples}). <b>Tensor frames</b>, for Parquet written by other
 * tools, flat arrays in row-major order:
 *
 * <table>
 * <caption>tensor frame columns</caption>
 * <tr><th>column</th><th>type</th><th>content</th></tr>
 * <tr><td>{@code id}</td><td>string</td><td>the frame's name</td></tr>
 * <tr><td>{@code rgb}</td><td>array&lt;float&gt;</td><td>the RGB crop, channels first {@code [3,H,W]}, as the network's {@code rgb} input</td></tr>
 * <tr><td>{@code rgb_height}, {@code rgb_width}</td><td>int</td><td>H and W</td></tr>
 * <tr><td>{@code cld_rgb_nrm}</td><td>array&lt;float&gt;</td><td>{@code [N,9]}: per point x, y, z (m), r, g, b, nx, ny, nz</td></tr>
 * <tr><td>{@code choose}</td><td>array&lt;bigint&gt;</td><td>{@code [N]}: each point's pixel in the crop ({@code row * W + col})</td></tr>
 * <tr><td>{@code model_kps}</td><td>array&lt;float&gt;</td><td>{@code [K,3]}: the object's keypoints, centre last</td></tr>
 * <tr><td>{@code gt_R}, {@code gt_t}</td><td>array&lt;float&gt;, nullable</td><td>ground truth, {@code [3,3]} row-major and {@code [3]} (m)</td></tr>
 * <tr><td>{@code model_points}</td><td>array&lt;float&gt;, nullable</td><td>{@code [M,3]}: the object's points, for ADD / ADD-S</td></tr>
 * <tr><td>{@code model_diameter}</td><td>float, nullable</td><td>the object's diameter (m)</td></tr>
 * <tr><td>{@code error}</td><td>string, nullable (optional)</td><td>set by {@link Pvn3dSparkJob#toTensorColumns} for a file that did not decode</td></tr>
 * </table>
 *
 * <p>Float columns may also be {@code array<double>}. With all four ground-truth columns set, the
 * output has ADD / ADD-S; otherwise those are null.
 */
public final class FrameColumns {
    private FrameColumns() {}

    public static final String ID = "id";
    public static final String PVT = "pvt";
    /**
     * The object's entries ({@code model_kps}, {@code model_points}, {@code model_diameter}) as PVT1 bytes, for
     * samples that leave them out: the dataset generator's layout, where one {@code model.bin} beside the
     * samples holds them ({@link Pvn3dSample#MODEL_FILE}). Optional; null when each sample is complete.
     */
    public static final String OBJECT_PVT = "object_pvt";
    public static final String RGB = "rgb";
    public static final String RGB_HEIGHT = "rgb_height";
    public static final String RGB_WIDTH = "rgb_width";
    public static final String CLOUD = "cld_rgb_nrm";
    public static final String CHOOSE = "choose";
    public static final String MODEL_KPS = "model_kps";
    public static final String GT_R = "gt_R";
    public static final String GT_T = "gt_t";
    public static final String MODEL_POINTS = "model_points";
    public static final String MODEL_DIAMETER = "model_diameter";
    public static final String ERROR = "error";

    /** Values per point in {@code cld_rgb_nrm}. */
    public static final int CLOUD_CHANNELS = 9;

    /** The columns a tensor frame must have. */
    public static final List<String> REQUIRED = List.of(ID, RGB, RGB_HEIGHT, RGB_WIDTH, CLOUD, CHOOSE, MODEL_KPS);

    private static final DataType FLOATS = DataTypes.createArrayType(DataTypes.FloatType, false);
    private static final DataType DOUBLES = DataTypes.createArrayType(DataTypes.DoubleType, false);

    /** {@code id, pvt, object_pvt}. */
    public static final StructType PVT_FRAMES = new StructType(new StructField[] {
        DataTypes.createStructField(ID, DataTypes.StringType, false),
        DataTypes.createStructField(PVT, DataTypes.BinaryType, true),
        DataTypes.createStructField(OBJECT_PVT, DataTypes.BinaryType, true)});

    /** The tensor frame columns as {@link Pvn3dSparkJob#toTensorColumns} writes them ({@code id} null only where the input's was). */
    public static final StructType TENSOR_FRAMES = new StructType(new StructField[] {
        DataTypes.createStructField(ID, DataTypes.StringType, true),
        DataTypes.createStructField(RGB, FLOATS, true),
        DataTypes.createStructField(RGB_HEIGHT, DataTypes.IntegerType, true),
        DataTypes.createStructField(RGB_WIDTH, DataTypes.IntegerType, true),
        DataTypes.createStructField(CLOUD, FLOATS, true),
        DataTypes.createStructField(CHOOSE, DataTypes.createArrayType(DataTypes.LongType, false), true),
        DataTypes.createStructField(MODEL_KPS, FLOATS, true),
        DataTypes.createStructField(GT_R, FLOATS, true),
        DataTypes.createStructField(GT_T, FLOATS, true),
        DataTypes.createStructField(MODEL_POINTS, FLOATS, true),
        DataTypes.createStructField(MODEL_DIAMETER, DataTypes.FloatType, true),
        DataTypes.createStructField(ERROR, DataTypes.StringType, true)});

    /**
     * The job's output: the pose ({@code R} row-major, {@code t} in metres), the keypoints {@code [K,3]}, the
     * inliers of the fit, the points and masked points, ADD / ADD-S with the diameter and the 10%-of-diameter
     * verdicts (null without ground truth), the pipeline's time on the frame, where it ran, and the error
     * (null when the frame worked; then every other column but {@code id} is null). {@code id} is the input's,
     * as a string (null only where the input row had none: its error says so).
     */
    public static final StructType OUTPUT = new StructType(new StructField[] {
        DataTypes.createStructField(ID, DataTypes.StringType, true),
        DataTypes.createStructField("R", DOUBLES, true),
        DataTypes.createStructField("t", DOUBLES, true),
        DataTypes.createStructField("keypoints", FLOATS, true),
        DataTypes.createStructField("inliers", DataTypes.IntegerType, true),
        DataTypes.createStructField("points", DataTypes.IntegerType, true),
        DataTypes.createStructField("masked", DataTypes.IntegerType, true),
        DataTypes.createStructField("add", DataTypes.DoubleType, true),
        DataTypes.createStructField("adds", DataTypes.DoubleType, true),
        DataTypes.createStructField("diameter", DataTypes.DoubleType, true),
        DataTypes.createStructField("add_correct", DataTypes.BooleanType, true),
        DataTypes.createStructField("adds_correct", DataTypes.BooleanType, true),
        DataTypes.createStructField("latency_ms", DataTypes.DoubleType, true),
        DataTypes.createStructField("device", DataTypes.StringType, true),
        DataTypes.createStructField("executor", DataTypes.StringType, true),
        DataTypes.createStructField(ERROR, DataTypes.StringType, true)});

    /** What the SQL functions return: the pose part of {@link #OUTPUT}. */
    public static final StructType UDF_RESULT = new StructType(new StructField[] {
        DataTypes.createStructField("R", DOUBLES, true),
        DataTypes.createStructField("t", DOUBLES, true),
        DataTypes.createStructField("keypoints", FLOATS, true),
        DataTypes.createStructField("inliers", DataTypes.IntegerType, true),
        DataTypes.createStructField("add", DataTypes.DoubleType, true),
        DataTypes.createStructField("adds", DataTypes.DoubleType, true),
        DataTypes.createStructField("latency_ms", DataTypes.DoubleType, true),
        DataTypes.createStructField("device", DataTypes.StringType, true),
        DataTypes.createStructField(ERROR, DataTypes.StringType, true)});

    // ---- decoding ----

    /** A sample from the bytes of a PVT1 file. */
    public static Pvn3dSample fromPvt(String id, byte[] bytes) {
        return fromPvt(id, bytes, null);
    }

    /**
     * A sample from the bytes of a PVT1 file, the entries it lacks taken from {@code objectBytes} (a
     * {@code model.bin}, PVT1 too) when that is not null, as {@link Pvn3dSample#read} does beside a file.
     */
    public static Pvn3dSample fromPvt(String id, byte[] bytes, byte[] objectBytes) {
        if (bytes == null) {
            throw new IllegalArgumentException(id + ": no " + PVT + " bytes");
        }
        try {
            Map<String, PvtFile.Entry> entries = new LinkedHashMap<>(PvtFile.read(new ByteArrayInputStream(bytes), id));
            if (objectBytes != null) {
                PvtFile.read(new ByteArrayInputStream(objectBytes), Pvn3dSample.MODEL_FILE).forEach(entries::putIfAbsent);
            }
            return new Pvn3dSample(id, entries);
        } catch (IOException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
    }

    /** {@link #fromPvt(String, byte[], byte[])} on a row of {@link #PVT_FRAMES} (with or without {@link #OBJECT_PVT}). */
    public static Pvn3dSample fromPvtRow(Row row, String id) {
        int i = row.fieldIndex(PVT);
        int o = java.util.Arrays.asList(row.schema().fieldNames()).indexOf(OBJECT_PVT);
        return fromPvt(id, row.isNullAt(i) ? null : (byte[]) row.get(i), o < 0 || row.isNullAt(o) ? null : (byte[]) row.get(o));
    }

    /** A sample from the tensor columns of {@code row}, with every size checked. */
    public static Pvn3dSample fromTensors(Row row) {
        String id = id(row);
        return fromTensors(id, get(row, RGB), get(row, RGB_HEIGHT), get(row, RGB_WIDTH), get(row, CLOUD), get(row, CHOOSE),
                get(row, MODEL_KPS), get(row, GT_R), get(row, GT_T), get(row, MODEL_POINTS), get(row, MODEL_DIAMETER));
    }

    /** The same from the column values (arrays as Spark hands them: Scala or Java sequences, or Java arrays). */
    public static Pvn3dSample fromTensors(String id, Object rgbV, Object heightV, Object widthV, Object cloudV, Object chooseV,
            Object kpsV, Object gtRV, Object gtTV, Object pointsV, Object diameterV) {
        int h = integer(heightV, RGB_HEIGHT);
        int w = integer(widthV, RGB_WIDTH);
        float[] rgb = floats(rgbV, RGB);
        if (h < 1 || w < 1 || rgb.length != 3L * h * w) {
            throw new IllegalArgumentException(id + ": " + RGB + " has " + rgb.length + " values, not 3 x " + RGB_HEIGHT + " " + h + " x "
                    + RGB_WIDTH + " " + w);
        }
        float[] cloud = floats(cloudV, CLOUD);
        if (cloud.length == 0 || cloud.length % CLOUD_CHANNELS != 0) {
            throw new IllegalArgumentException(id + ": " + CLOUD + " has " + cloud.length + " values, not a positive multiple of "
                    + CLOUD_CHANNELS);
        }
        int n = cloud.length / CLOUD_CHANNELS;
        long[] choose = longs(chooseV, CHOOSE);
        if (choose.length != n) {
            throw new IllegalArgumentException(id + ": " + CHOOSE + " has " + choose.length + " values for " + n + " points");
        }
        for (long c : choose) {
            if (c < 0 || c >= (long) h * w) {
                throw new IllegalArgumentException(id + ": " + CHOOSE + " holds pixel " + c + ", outside the " + h + "x" + w + " crop");
            }
        }
        float[] kps = floats(kpsV, MODEL_KPS);
        if (kps.length == 0 || kps.length % 3 != 0) {
            throw new IllegalArgumentException(id + ": " + MODEL_KPS + " has " + kps.length + " values, not [K,3]");
        }
        Map<String, PvtFile.Entry> e = new LinkedHashMap<>();
        put(e, RGB, rgb, 1, 3, h, w);
        put(e, CLOUD, cloud, 1, n, CLOUD_CHANNELS);
        e.put(CHOOSE, new PvtFile.Entry(CHOOSE, OnnxTensorType.INT64, new long[] {1, 1, n}, bytes(choose)));
        put(e, MODEL_KPS, kps, kps.length / 3, 3);
        if (gtRV != null && gtTV != null && pointsV != null && diameterV != null) {
            float[] r = floats(gtRV, GT_R);
            float[] t = floats(gtTV, GT_T);
            float[] points = floats(pointsV, MODEL_POINTS);
            if (r.length != 9 || t.length != 3 || points.length == 0 || points.length % 3 != 0) {
                throw new IllegalArgumentException(id + ": the ground truth needs " + GT_R + " [9], " + GT_T + " [3] and " + MODEL_POINTS
                        + " [M,3], not " + r.length + ", " + t.length + " and " + points.length + " values");
            }
            put(e, GT_R, r, 3, 3);
            put(e, GT_T, t, 3);
            put(e, MODEL_POINTS, points, points.length / 3, 3);
            put(e, MODEL_DIAMETER, new float[] {((Number) diameterV).floatValue()}, 1);
        }
        return new Pvn3dSample(id, e);
    }

    /** A tensor frame row from a sample (its image, intrinsics and labels are not carried). */
    public static Row toTensorRow(Pvn3dSample s) {
        long[] rgbShape = s.entry(RGB).shape();
        if (rgbShape.length < 3 || s.cloudChannels() != CLOUD_CHANNELS) {
            throw new IllegalArgumentException(s.source() + ": rgb must be [..,3,H,W] and cld_rgb_nrm [..,N,9], not "
                    + java.util.Arrays.toString(rgbShape) + " and " + java.util.Arrays.toString(s.entry(CLOUD).shape()));
        }
        boolean gt = s.hasGroundTruth();
        return row(TENSOR_FRAMES, s.source(), s.entry(RGB).floats(), (int) rgbShape[rgbShape.length - 2], (int) rgbShape[rgbShape.length - 1],
                s.cloud(), s.entry(CHOOSE).longs(), s.modelKps(), gt ? s.entry(GT_R).floats() : null, gt ? s.entry(GT_T).floats() : null,
                gt ? s.modelPoints() : null, gt ? (float) s.diameter() : null, null);
    }

    /** A tensor frame row for a file that did not decode. */
    public static Row tensorErrorRow(String id, String error) {
        return row(TENSOR_FRAMES, id, null, null, null, null, null, null, null, null, null, null, error);
    }

    // ---- output ----

    public static Row output(String id, PoseResult r, String device, String executor) {
        PoseMetrics.Result m = r.metrics();
        return row(OUTPUT, id, r.pose().r(), r.pose().t(), r.keypoints(), r.inliers(), r.points(), r.masked(),
                m == null ? null : m.add(), m == null ? null : m.adds(), m == null ? null : m.diameter(),
                m == null ? null : m.addCorrect(), m == null ? null : m.addsCorrect(), r.serviceMs(), device, executor, null);
    }

    public static Row errorOutput(String id, String device, String executor, String error) {
        return row(OUTPUT, id, null, null, null, null, null, null, null, null, null, null, null, null, device, executor, error);
    }

    static Row udfResult(PoseResult r, String device) {
        PoseMetrics.Result m = r.metrics();
        return row(UDF_RESULT, r.pose().r(), r.pose().t(), r.keypoints(), r.inliers(), m == null ? null : m.add(),
                m == null ? null : m.adds(), r.serviceMs(), device, null);
    }

    static Row udfError(String device, String error) {
        return row(UDF_RESULT, null, null, null, null, null, null, null, device, error);
    }

    /**
     * A row that knows its schema: the next stage of the same job reads it by column name (a schema-less row
     * made {@code estimate(toTensorColumns(frames))} fail on every row).
     */
    private static Row row(StructType schema, Object... values) {
        if (values.length != schema.length()) {
            throw new IllegalStateException(values.length + " values for the " + schema.length() + " columns of " + schema.simpleString());
        }
        return new GenericRowWithSchema(values, schema);
    }

    /** A row's {@code id} as a string (an int or long id column too), or null when it has none. */
    public static String id(Row row) {
        int i = row.fieldIndex(ID);
        return row.isNullAt(i) ? null : row.get(i).toString();
    }

    /** A throwable as the error column shows it: its message, or its class when it has none. */
    static String message(Throwable t) {
        String m = t.getMessage();
        return m == null || m.isBlank() ? t.getClass().getName() : m;
    }

    // ---- values ----

    private static Object get(Row row, String name) {
        int i;
        try {
            i = row.fieldIndex(name);
        } catch (IllegalArgumentException e) {
            return null;
        }
        return row.isNullAt(i) ? null : row.get(i);
    }

    private static void put(Map<String, PvtFile.Entry> e, String name, float[] data, long... shape) {
        ByteBuffer b = ByteBuffer.allocate(data.length * Float.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        b.asFloatBuffer().put(data);
        e.put(name, new PvtFile.Entry(name, OnnxTensorType.FLOAT, shape, b.array()));
    }

    private static byte[] bytes(long[] data) {
        ByteBuffer b = ByteBuffer.allocate(data.length * Long.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        b.asLongBuffer().put(data);
        return b.array();
    }

    private static int integer(Object v, String column) {
        if (!(v instanceof Number n)) {
            throw new IllegalArgumentException(v == null ? "no " + column : column + " is not a number: " + v);
        }
        return n.intValue();
    }

    static float[] floats(Object v, String column) {
        return switch (v) {
            case null -> throw new IllegalArgumentException("no " + column);
            case float[] f -> f;
            case double[] d -> {
                float[] f = new float[d.length];
                for (int i = 0; i < d.length; i++) {
                    f[i] = (float) d[i];
                }
                yield f;
            }
            default -> {
                List<?> list = list(v, column);
                float[] f = new float[list.size()];
                for (int i = 0; i < f.length; i++) {
                    f[i] = number(list.get(i), column).floatValue();
                }
                yield f;
            }
        };
    }

    static long[] longs(Object v, String column) {
        return switch (v) {
            case null -> throw new IllegalArgumentException("no " + column);
            case long[] l -> l;
            default -> {
                List<?> list = list(v, column);
                long[] l = new long[list.size()];
                for (int i = 0; i < l.length; i++) {
                    l[i] = number(list.get(i), column).longValue();
                }
                yield l;
            }
        };
    }

    private static Number number(Object o, String column) {
        if (o instanceof Number n) {
            return n;
        }
        throw new IllegalArgumentException(column + " holds " + (o == null ? "a null" : "a " + o.getClass().getSimpleName()) + ", not a number");
    }

    private static List<?> list(Object v, String column) {
        if (v instanceof List<?> l) {
            return l;
        }
        if (v instanceof scala.collection.Seq<?> s) {
            return scala.jdk.javaapi.CollectionConverters.asJava(s);
        }
        if (v instanceof Object[] a) {
            return java.util.Arrays.asList(a);
        }
        throw new IllegalArgumentException(column + " is a " + v.getClass().getName() + ", not an array");
    }
}
