package org.pvn3d.ort.spark;

import java.io.PrintStream;
import java.util.List;
import java.util.Locale;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.SparkSession;
import org.pvn3d.ort.pipeline.FolderEvaluation;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Help;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/**
 * {@code pvn3d-spark}: pose estimation over a folder of samples or a Parquet table, poses written as
 * Parquet, then the evaluation table of {@code pvn3d-ort eval} with the job's wall time and rows/s.
 * Runs under {@code spark-submit} (which sets the master) or on its own ({@code local[*]} by default).
 * picocli parses the command line ({@link Options}), as it does {@code pvn3d-ort}'s.
 */
public final class Pvn3dSparkMain {
    /** The exit code of a wrong command line. */
    static final int USAGE = 2;

    private Pvn3dSparkMain() {}

    public static void main(String[] args) {
        Options o = new Options();
        Integer done = parse(o, args, System.out, System.err);
        if (done != null) {
            System.exit(done);
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

    /** Parses and runs on {@code spark}; the exit code (1 when any row failed, 2 for a wrong command line). */
    public static int run(String[] args, SparkSession spark, PrintStream out, PrintStream err) {
        Options o = new Options();
        Integer done = parse(o, args, out, err);
        return done != null ? done : run(o, spark, out, err);
    }

    /**
     * Parses {@code args} into {@code o}. Returns null when the job is to run, else its exit code: 0 after
     * printing the help on {@code out}, {@value #USAGE} after printing what is wrong and the usage line on
     * {@code err}.
     */
    static Integer parse(Options o, String[] args, PrintStream out, PrintStream err) {
        CommandLine cl = new CommandLine(o);
        try {
            cl.parseArgs(args);
            if (cl.isUsageHelpRequested()) {
                cl.usage(out);
                return 0;
            }
            o.check(cl);
            return null;
        } catch (ParameterException e) {
            err.println("pvn3d-spark: " + e.getMessage());
            Help help = cl.getHelp();
            err.print(help.synopsisHeading() + help.synopsis(help.synopsisHeadingLength()));
            err.println("'pvn3d-spark --help' says more.");
            return USAGE;
        }
    }

    static int run(Options o, SparkSession spark, PrintStream out, PrintStream err) {
        int partitions = o.partitions != null ? o.partitions : spark.sparkContext().defaultParallelism();
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
        if (!o.noTable) {
            out.print(summary.table());
        } else if (summary.failures() > 0) {
            out.println(summary.failures() + " row(s) failed");
        }
        out.printf(Locale.ROOT, "%d row(s) in %.2f s: %.2f rows/s (%d failed); poses: %s%n", rows.size(), wall, rows.size() / wall,
                summary.failures(), o.output);
        return summary.failures() == 0 ? 0 : 1;
    }

    /** The command line. */
    @Command(name = "pvn3d-spark", sortOptions = false, usageHelpAutoWidth = true,
            description = {
                "Estimates the pose of every frame of a folder of PVT1 samples or a Parquet table on Spark, writes the poses "
                        + "as Parquet, then prints the table of pvn3d-ort eval with the job's wall time and rows/s. The exit "
                        + "code is 1 when a row failed, 2 for a wrong command line.",
                ""})
    static final class Options {
        @Option(names = "--input", paramLabel = "DIR|PARQUET", description = "A folder of PVT1 samples (*.bin), or Parquet with "
                + "PVT1 frames (id, pvt) or tensor frames (id, rgb, rgb_height, rgb_width, cld_rgb_nrm, choose, model_kps, and "
                + "gt_R, gt_t, model_points, model_diameter for ADD / ADD-S).")
        String input;

        @Option(names = "--output", paramLabel = "PARQUET", description = "Where the poses go (Parquet: id, R, t, keypoints, "
                + "inliers, points, masked, add, adds, diameter, add_correct, adds_correct, latency_ms, device, executor, error).")
        String output;

        @Option(names = "--ep", paramLabel = "auto|cpu|cuda", description = "auto (default): the GPU Spark assigned to the task, "
                + "else the CPU provider; cpu; cuda (the assigned GPU, else --device, default 0).")
        String ep = "auto";

        @Option(names = "--device", paramLabel = "N", description = "The CUDA device with --ep cuda when Spark assigns none "
                + "(default: 0).")
        int device;

        @Option(names = "--model", paramLabel = "FILE.onnx", description = "An ONNX model every executor can read (default: the "
                + "shipped model).")
        String model;

        @Option(names = "--threads", paramLabel = "N", description = "ORT intra-op threads per session (default: spark.task.cpus).")
        Integer threads;

        @Option(names = "--pose", paramLabel = "native|cuda|java", description = "The pose stage (default: the fused kernel on "
                + "the provider's side).")
        String pose;

        @Option(names = "--refine", paramLabel = "icp|none", description = "Refine the voting pose: icp (the default) runs ICP of "
                + "the object's model points against the points the segmentation kept, for frames that carry model points; none "
                + "keeps the voting pose.")
        String refine = "icp";

        @Option(names = "--batch", paramLabel = "N", description = "Rows per session borrow within a task (default: "
                + "${DEFAULT-VALUE}).")
        int batch = Pvn3dSparkOptions.defaults().batchSize();

        @Option(names = "--partitions", paramLabel = "N", description = "Partitions of the input (default: Spark's default "
                + "parallelism).")
        Integer partitions;

        @Option(names = "--frames-out", paramLabel = "PARQUET", description = "Also write the input as tensor frames (the "
                + "documented Parquet columns).")
        String framesOut;

        @Option(names = "--master", paramLabel = "URL", description = "When not run by spark-submit: the Spark master (default: "
                + "local[*]).")
        String master;

        @Option(names = "--no-table", description = "Skip the per-row table (the summary line stays).")
        boolean noTable;

        @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help message and exit.")
        boolean help;

        /** What the executors run with; set by {@link #check}. */
        Pvn3dSparkOptions options = Pvn3dSparkOptions.defaults();

        /** Checks what picocli cannot and builds {@link #options}; a {@link ParameterException} for a wrong value. */
        void check(CommandLine cl) {
            if (input == null || output == null) {
                throw new ParameterException(cl, "--input and --output are needed");
            }
            Pvn3dSparkOptions.Ep e;
            try {
                e = Pvn3dSparkOptions.Ep.parse(ep);
            } catch (IllegalArgumentException x) {
                throw new ParameterException(cl, x.getMessage());
            }
            atLeast(cl, "--device", device, 0);
            if (threads != null) {
                atLeast(cl, "--threads", threads, 1);
            }
            atLeast(cl, "--batch", batch, 1);
            if (partitions != null) {
                atLeast(cl, "--partitions", partitions, 1);
            }
            if (pose != null && !List.of("native", "cuda", "java").contains(pose)) {
                throw new ParameterException(cl, "--pose takes native, cuda or java, not " + pose);
            }
            if (!List.of("icp", "none").contains(refine)) {
                throw new ParameterException(cl, "--refine takes icp or none, not " + refine);
            }
            Pvn3dSparkOptions opts = Pvn3dSparkOptions.defaults().withEp(e, device).withBatchSize(batch).withPose(pose)
                    .withRefine(refine);
            if (model != null) {
                opts = opts.withModel(model);
            }
            if (threads != null) {
                opts = opts.withThreads(threads);
            }
            options = opts;
        }

        private static void atLeast(CommandLine cl, String option, int value, int min) {
            if (value < min) {
                throw new ParameterException(cl, option + " takes a " + (min == 0 ? "non-negative" : "positive") + " integer, not "
                        + value);
            }
        }
    }
}
