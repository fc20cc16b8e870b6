package org.pvn3d.ort.spark;

import java.io.PrintStream;
import java.util.List;
import java.util.Locale;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.SparkSession;
import org.pvn3d.ort.pipeline.FolderEvaluation;

/**
 * {@code pvn3d-spark}: pose estimation over a folder of samples or a Parquet table, poses written as
 * Parquet, then the evaluation table of {@code pvn3d-ort eval} with the job's wall time and rows/s.
 * Runs under {@code spark-submit} (which sets the master) or on its own ({@code local[*]} by default).
 */
public final class Pvn3dSparkMain {
    static final String USAGE = """
            usage: pvn3d-spark --input DIR|PARQUET --output PARQUET [--ep auto|cpu|cuda] [--device N]
                               [--model FILE.onnx] [--threads N] [--pose native|cuda|java] [--batch N]
                               [--partitions N] [--frames-out PARQUET] [--master URL] [--no-table]
              --input       a folder of PVT1 samples (*.bin), or Parquet with PVT1 frames (id, pvt) or tensor
                            frames (id, rgb, rgb_height, rgb_width, cld_rgb_nrm, choose, model_kps, and
                            gt_R, gt_t, model_points, model_diameter for ADD / ADD-S)
              --output      where the poses go (Parquet: id, R, t, keypoints, inliers, points, masked, add,
                            adds, diameter, add_correct, adds_correct, latency_ms, device, executor, error)
              --ep          auto (default): the GPU Spark assigned to the task, else the CPU provider;
                            cpu; cuda (the assigned GPU, else --device, default 0)
              --model       an ONNX model every executor can read (default: the shipped model)
              --threads     ORT intra-op threads per session (default: spark.task.cpus)
              --pose        the pose stage (default: the fused kernel on the provider's side)
              --batch       rows per session borrow within a task (default 16)
              --partitions  partitions of the input (default: Spark's default parallelism)
              --frames-out  also write the input as tensor frames (the documented Parquet columns)
              --master      when not run by spark-submit: the Spark master (default local[*])
              --no-table    skip the per-row table (the summary line stays)""";

    private Pvn3dSparkMain() {}

    public static void main(String[] args) {
        Options o;
        try {
            o = Options.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("pvn3d-spark: " + e.getMessage());
            System.err.println(USAGE);
            System.exit(2);
            return;
        }
        if (o.help) {
            System.out.println(USAGE);
            return;
        }
        SparkSession.Builder b = SparkSession.builder().appName("pvn3d-spark")
                .config("spark.plugins", plugins(System.getProperty("spark.plugins")));
        if (System.getProperty("spark.master") == null) {
            b.master(o.master != null ? o.master : "local[*]");
        }
        int code;
        SparkSession spark = b.getOrCreate();
        if (System.getProperty("log4j2.configurationFile") == null && System.getenv("SPARK_CONF_DIR") == null) {
            spark.sparkContext().setLogLevel("WARN"); // Spark's default INFO lines would bury the table
        }
        try {
            code = run(o, spark, System.out, System.err);
        } finally {
            spark.stop();
        }
        System.exit(code);
    }

    /** {@code spark.plugins} with {@link Pvn3dSparkPlugin} added. */
    static String plugins(String existing) {
        String ours = Pvn3dSparkPlugin.class.getName();
        return existing == null || existing.isBlank() ? ours : existing.contains(ours) ? existing : existing + "," + ours;
    }

    /** Parses and runs on {@code spark}; the exit code (1 when any row failed). */
    public static int run(String[] args, SparkSession spark, PrintStream out, PrintStream err) {
        Options o;
        try {
            o = Options.parse(args);
        } catch (IllegalArgumentException e) {
            err.println("pvn3d-spark: " + e.getMessage());
            err.println(USAGE);
            return 2;
        }
        if (o.help) {
            out.println(USAGE);
            return 0;
        }
        return run(o, spark, out, err);
    }

    static int run(Options o, SparkSession spark, PrintStream out, PrintStream err) {
        int partitions = o.partitions > 0 ? o.partitions : spark.sparkContext().defaultParallelism();
        Dataset<Row> frames = Pvn3dSparkJob.read(spark, o.input, partitions);
        if (o.framesOut != null) {
            boolean pvt = java.util.Arrays.asList(frames.columns()).contains(FrameColumns.PVT);
            Dataset<Row> tensors = pvt ? Pvn3dSparkJob.toTensorColumns(frames) : frames;
            tensors.write().mode(SaveMode.Overwrite).parquet(o.framesOut);
            out.println("frames: " + o.framesOut);
        }
        out.printf(Locale.ROOT, "pvn3d-spark: %s -> %s, %s, ep %s, master %s (%d task slot(s)), %d partition(s)%n", o.input, o.output,
                o.options.model() == null ? "PVN3D tiny (class path)" : o.options.model(), o.options.ep().name().toLowerCase(Locale.ROOT),
                spark.sparkContext().master(), spark.sparkContext().defaultParallelism(), partitions);
        long t0 = System.nanoTime();
        Pvn3dSparkJob.estimate(frames, o.options).write().mode(SaveMode.Overwrite).parquet(o.output);
        double wall = (System.nanoTime() - t0) / 1e9;
        List<Row> rows = spark.read().parquet(o.output).collectAsList();
        FolderEvaluation.Summary summary = Pvn3dSparkJob.summary(rows);
        if (o.table) {
            out.print(summary.table());
        } else if (summary.failures() > 0) {
            out.println(summary.failures() + " row(s) failed");
        }
        out.printf(Locale.ROOT, "%d row(s) in %.2f s: %.2f rows/s (%d failed); poses: %s%n", rows.size(), wall, rows.size() / wall,
                summary.failures(), o.output);
        return summary.failures() == 0 ? 0 : 1;
    }

    static final class Options {
        boolean help;
        boolean table = true;
        String input;
        String output;
        String framesOut;
        String master;
        int partitions;
        Pvn3dSparkOptions options = Pvn3dSparkOptions.defaults();

        static Options parse(String[] args) {
            Options o = new Options();
            for (int i = 0; i < args.length; i++) {
                String a = args[i];
                switch (a) {
                    case "-h", "--help" -> o.help = true;
                    case "--input" -> o.input = value(args, ++i, a);
                    case "--output" -> o.output = value(args, ++i, a);
                    case "--frames-out" -> o.framesOut = value(args, ++i, a);
                    case "--master" -> o.master = value(args, ++i, a);
                    case "--no-table" -> o.table = false;
                    case "--ep" -> o.options = o.options.withEp(Pvn3dSparkOptions.Ep.parse(value(args, ++i, a)), o.options.device());
                    case "--device" -> o.options = o.options.withEp(o.options.ep(), number(value(args, ++i, a), a, true));
                    case "--model" -> o.options = o.options.withModel(value(args, ++i, a));
                    case "--threads" -> o.options = o.options.withThreads(number(value(args, ++i, a), a, false));
                    case "--pose" -> {
                        String p = value(args, ++i, a);
                        if (!List.of("native", "cuda", "java").contains(p)) {
                            throw new IllegalArgumentException("--pose takes native, cuda or java, not " + p);
                        }
                        o.options = o.options.withPose(p);
                    }
                    case "--batch" -> o.options = o.options.withBatchSize(number(value(args, ++i, a), a, false));
                    case "--partitions" -> o.partitions = number(value(args, ++i, a), a, false);
                    default -> throw new IllegalArgumentException("unknown argument " + a);
                }
            }
            if (!o.help && (o.input == null || o.output == null)) {
                throw new IllegalArgumentException("--input and --output are needed");
            }
            return o;
        }

        private static String value(String[] args, int i, String flag) {
            if (i >= args.length) {
                throw new IllegalArgumentException(flag + " needs a value");
            }
            return args[i];
        }

        private static int number(String s, String flag, boolean zeroAllowed) {
            try {
                int v = Integer.parseInt(s);
                if (v < 0 || (v == 0 && !zeroAllowed)) {
                    throw new NumberFormatException();
                }
                return v;
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(flag + " takes a " + (zeroAllowed ? "non-negative" : "positive") + " integer, not " + s);
            }
        }
    }
}
