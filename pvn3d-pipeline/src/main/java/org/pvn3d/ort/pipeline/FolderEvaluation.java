package org.pvn3d.ort.pipeline;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Locale;
import java.util.stream.Stream;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;

/**
 * Runs the pipeline over a folder of PVT1 samples (files ending in {@code .bin}, the entry names of
 * {@link Pvn3dSample}), reporting its progress, and summarises ADD / ADD-S and the 10%-of-diameter accuracy
 * of the final pose, and the same of the voting pose before refinement.
 */
public final class FolderEvaluation {
    private FolderEvaluation() {}

    /**
     * One sample's outcome; the metrics are NaN when it has no ground truth, {@code error} set when it
     * failed; {@code occlusion} is the fraction of the object hidden (NaN where the sample does not say).
     * {@code add} and {@code adds} are the final pose's, {@code votingAdd} and {@code votingAdds} the
     * voting pose's before refinement (equal when refinement did not run); {@code refinement} is how the
     * refinement went (null when not known, e.g. a failed sample).
     */
    public record Row(String name, int points, int masked, int inliers, double add, double adds, double diameter, double ms,
            String error, double occlusion, double votingAdd, double votingAdds, IcpRefiner.Status refinement) {
        /** Without a refinement: the voting pose is the final one. */
        public Row(String name, int points, int masked, int inliers, double add, double adds, double diameter, double ms,
                String error, double occlusion) {
            this(name, points, masked, inliers, add, adds, diameter, ms, error, occlusion, add, adds, null);
        }

        public boolean addCorrect() {
            return add < 0.1 * diameter;
        }

        public boolean addsCorrect() {
            return adds < 0.1 * diameter;
        }

        /** The voting pose's ADD below 10% of the diameter. */
        public boolean votingAddCorrect() {
            return votingAdd < 0.1 * diameter;
        }

        public boolean votingAddsCorrect() {
            return votingAdds < 0.1 * diameter;
        }

        /** Whether the final pose is the refined one. */
        public boolean refined() {
            return refinement != null && refinement.refined();
        }

        public boolean evaluated() {
            return error == null && Double.isFinite(diameter);
        }
    }

    /**
     * All rows and the aggregates over the samples that have a ground truth; {@code refinement} names the
     * refinement the pipeline was set to ({@link Pvn3dPipeline.Config#refinementName()}; null: not known).
     */
    public record Summary(List<Row> rows, String refinement) {
        /** Without saying which refinement ran. */
        public Summary(List<Row> rows) {
            this(rows, null);
        }

        public int evaluated() {
            return (int) rows.stream().filter(Row::evaluated).count();
        }

        /**
         * Mean ADD of the evaluated samples that gave a pose: one that gave none (no point masked: a NaN pose)
         * counts as wrong in the accuracies and is left out of the means ({@link #noPose()} counts them).
         */
        public double meanAdd() {
            return finiteMean(Row::add);
        }

        public double meanAdds() {
            return finiteMean(Row::adds);
        }

        /** Evaluated samples whose final pose is not finite (no point masked, say). */
        public int noPose() {
            return (int) rows.stream().filter(Row::evaluated).filter(r -> !Double.isFinite(r.add())).count();
        }

        private double finiteMean(java.util.function.ToDoubleFunction<Row> metric) {
            return rows.stream().filter(Row::evaluated).mapToDouble(metric).filter(Double::isFinite).average().orElse(Double.NaN);
        }

        /** Fraction of evaluated samples with ADD below 10% of the diameter. */
        public double addAccuracy() {
            int n = evaluated();
            return n == 0 ? Double.NaN : rows.stream().filter(Row::evaluated).filter(Row::addCorrect).count() / (double) n;
        }

        /** Fraction of evaluated samples with ADD-S below 10% of the diameter. */
        public double addsAccuracy() {
            int n = evaluated();
            return n == 0 ? Double.NaN : rows.stream().filter(Row::evaluated).filter(Row::addsCorrect).count() / (double) n;
        }

        public int failures() {
            return (int) rows.stream().filter(r -> r.error() != null).count();
        }

        /** Samples whose final pose is the refined one. */
        public int refinedCount() {
            return (int) rows.stream().filter(Row::refined).count();
        }

        /** {@link #meanAdd()} of the voting pose, before refinement. */
        public double votingMeanAdd() {
            return finiteMean(Row::votingAdd);
        }

        public double votingMeanAdds() {
            return finiteMean(Row::votingAdds);
        }

        /** {@link #addAccuracy()} of the voting pose, before refinement. */
        public double votingAddAccuracy() {
            int n = evaluated();
            return n == 0 ? Double.NaN : rows.stream().filter(Row::evaluated).filter(Row::votingAddCorrect).count() / (double) n;
        }

        public double votingAddsAccuracy() {
            int n = evaluated();
            return n == 0 ? Double.NaN : rows.stream().filter(Row::evaluated).filter(Row::votingAddsCorrect).count() / (double) n;
        }

        /**
         * The line about the refinement: what ran, on how many samples, and the voting pose's accuracy before
         * it, e.g. {@code refinement: icp (...) on 48 of 50 samples; before it (voting pose): ADD-S < 10% of the
         * diameter on 96.0%, ADD on 76.0% (mean ADD-S 7.10 mm, ADD 13.20 mm)}.
         */
        public String refinementLine() {
            String what = refinement == null ? "refinement: not known" : "refinement: " + refinement;
            if ("none".equals(refinement)) {
                return what + " (the final pose is the voting pose)\n";
            }
            return String.format(Locale.ROOT, "%s on %d of %d samples; before it (voting pose): ADD-S < 10%% of the diameter on %.1f%%, "
                    + "ADD on %.1f%% (mean ADD-S %.2f mm, ADD %.2f mm)%n", what, refinedCount(), rows.size() - failures(),
                    100 * votingAddsAccuracy(), 100 * votingAddAccuracy(), 1000 * votingMeanAdds(), 1000 * votingMeanAdd());
        }

        /** The occlusion bins of {@link #byOcclusion()}: [0,10%), [10%,20%), ... [50%,60%), 60% and more. */
        public static final double[] OCCLUSION_BINS = {0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6};

        /** Accuracy per occlusion level, over the evaluated rows that say their occlusion (bins with no row left out). */
        public Map<String, Summary> byOcclusion() {
            Map<String, Summary> out = new LinkedHashMap<>();
            for (int b = 0; b < OCCLUSION_BINS.length; b++) {
                double lo = OCCLUSION_BINS[b];
                double hi = b + 1 < OCCLUSION_BINS.length ? OCCLUSION_BINS[b + 1] : Double.POSITIVE_INFINITY;
                List<Row> in = rows.stream().filter(Row::evaluated)
                        .filter(r -> r.occlusion() >= lo && r.occlusion() < hi).toList();
                if (!in.isEmpty()) {
                    String label = Double.isInfinite(hi) ? String.format(Locale.ROOT, ">=%.0f%%", 100 * lo)
                            : String.format(Locale.ROOT, "%.0f-%.0f%%", 100 * lo, 100 * hi);
                    out.put(label, new Summary(in, refinement));
                }
            }
            return out;
        }

        /** The accuracy by occlusion level as a table (empty when no row says its occlusion). */
        public String occlusionTable() {
            Map<String, Summary> bins = byOcclusion();
            if (bins.isEmpty()) {
                return "";
            }
            StringBuilder sb = new StringBuilder(String.format(Locale.ROOT, "%-10s %7s %11s %11s %9s %9s%n", "occlusion",
                    "samples", "ADD [mm]", "ADD-S [mm]", "ADD ok", "ADD-S ok"));
            bins.forEach((label, s) -> sb.append(String.format(Locale.ROOT, "%-10s %7d %11.2f %11.2f %8.1f%% %8.1f%%%n", label,
                    s.evaluated(), 1000 * s.meanAdd(), 1000 * s.meanAdds(), 100 * s.addAccuracy(), 100 * s.addsAccuracy())));
            return sb.toString();
        }

        /**
         * The accuracy report as JSON: sample counts, the refinement and how many samples it refined, the
         * accuracies of the final pose (fraction under 10% of the diameter), mean ADD / ADD-S in millimetres,
         * the same for the voting pose before refinement ({@code before_refinement}), and the final pose's per
         * occlusion level.
         */
        public String toJson(String provider, String model, String dataset) {
            Map<String, Object> json = new LinkedHashMap<>();
            json.put("samples", rows.size());
            json.put("evaluated", evaluated());
            json.put("failed", failures());
            json.put("no_pose", noPose());
            json.put("provider", provider);
            json.put("model", model);
            json.put("dataset", dataset);
            json.put("refinement", refinement);
            json.put("refined", refinedCount());
            json.putAll(metrics());
            Map<String, Object> before = new LinkedHashMap<>();
            before.put("add_s_accuracy", votingAddsAccuracy());
            before.put("add_accuracy", votingAddAccuracy());
            before.put("mean_add_s_mm", 1000 * votingMeanAdds());
            before.put("mean_add_mm", 1000 * votingMeanAdd());
            json.put("before_refinement", before);
            Map<String, Object> bins = new LinkedHashMap<>();
            byOcclusion().forEach((label, s) -> {
                Map<String, Object> bin = new LinkedHashMap<>();
                bin.put("samples", s.evaluated());
                bin.putAll(s.metrics());
                bins.put(label, bin);
            });
            json.put("by_occlusion", bins);
            return Json.write(json);
        }

        /** The summary table. */
        public String table() {
            StringBuilder sb = new StringBuilder();
            int w = Math.max(6, rows.stream().mapToInt(r -> r.name().length()).max().orElse(6));
            String head = String.format(Locale.ROOT, "%-" + w + "s %6s %6s %7s %10s %10s %9s %9s %9s%n", "sample", "points", "masked",
                    "inliers", "ADD [m]", "ADD-S [m]", "ADD ok", "ADD-S ok", "ms");
            sb.append(head).append("-".repeat(head.length() - 1)).append('\n');
            for (Row r : rows) {
                if (r.error() != null) {
                    sb.append(String.format(Locale.ROOT, "%-" + w + "s error: %s%n", r.name(), r.error()));
                    continue;
                }
                sb.append(String.format(Locale.ROOT, "%-" + w + "s %6d %6d %7d %10.5f %10.5f %9s %9s %9.1f%n", r.name(), r.points(),
                        r.masked(), r.inliers(), r.add(), r.adds(), r.evaluated() ? (r.addCorrect() ? "yes" : "no") : "-",
                        r.evaluated() ? (r.addsCorrect() ? "yes" : "no") : "-", r.ms()));
            }
            sb.append("-".repeat(head.length() - 1)).append('\n');
            sb.append(String.format(Locale.ROOT, "%-" + w + "s %6s %6s %7s %10.5f %10.5f %8.1f%% %8.1f%%%n", "mean (" + evaluated() + ")", "", "",
                    "", meanAdd(), meanAdds(), 100 * addAccuracy(), 100 * addsAccuracy()));
            if (noPose() > 0) {
                sb.append(noPose()).append(" sample(s) gave no pose: counted as wrong, left out of the mean ADD and ADD-S\n");
            }
            if (failures() > 0) {
                sb.append(failures()).append(" sample(s) failed\n");
            }
            return sb.toString();
        }

        private Map<String, Object> metrics() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("add_s_accuracy", addsAccuracy());
            m.put("add_accuracy", addAccuracy());
            m.put("mean_add_s_mm", 1000 * meanAdds());
            m.put("mean_add_mm", 1000 * meanAdd());
            return m;
        }
    }

    /** The PVT1 sample files ({@code *.bin}, not {@value Pvn3dSample#MODEL_FILE}) directly in {@code folder}, sorted by name. */
    public static List<Path> samples(Path folder) {
        if (!Files.isDirectory(folder)) {
            throw new OrtException(OrtErrorCode.ORT_NO_SUCHFILE, "no folder " + folder);
        }
        try (Stream<Path> s = Files.list(folder)) {
            return s.filter(p -> p.getFileName().toString().endsWith(".bin") && Files.isRegularFile(p))
                    .filter(p -> !p.getFileName().toString().equals(Pvn3dSample.MODEL_FILE)).sorted().toList();
        } catch (IOException e) {
            throw new OrtException(OrtErrorCode.ORT_NO_SUCHFILE, "cannot list " + folder + ": " + e, e);
        }
    }

    /**
     * How an evaluation reports its progress: before each sample ({@code next} its file name, {@code done}
     * the samples finished so far) and once at the end ({@code done == total}, {@code next} null).
     */
    @FunctionalInterface
    public interface Progress {
        /** No progress at all. */
        Progress NONE = (done, total, next) -> { };

        void update(int done, int total, String next);

        /** A bar redrawn in place with carriage returns, for a terminal: {@code [#####.....] 3/10 name}. */
        static Progress bar(PrintStream out) {
            return (done, total, next) -> {
                if (next != null) {
                    out.print("\r" + FolderEvaluation.bar(done, total, next));
                    out.flush();
                } else {
                    out.println("\r" + FolderEvaluation.bar(done, total, "done"));
                }
            };
        }

        /**
         * Plain lines for a log or a pipe (no carriage returns): {@code eval: 3/10 samples (30%)}, one each
         * time another tenth of the samples is done, so at most ten lines.
         */
        static Progress lines(PrintStream out) {
            int[] printed = {0};
            return (done, total, next) -> {
                int tenth = total == 0 ? 10 : done * 10 / total;
                if (done > 0 && tenth > printed[0]) {
                    printed[0] = tenth;
                    out.printf(Locale.ROOT, "eval: %d/%d samples (%d%%)%n", done, total, total == 0 ? 100 : done * 100 / total);
                    out.flush();
                }
            };
        }
    }

    /**
     * Evaluates every file; a sample that fails (unreadable, wrong entries, a run error) becomes a row
     * with its error and the evaluation goes on. {@code progress} may be null (none).
     */
    public static Summary evaluate(Pvn3dPipeline pipeline, List<Path> files, Progress progress) {
        if (progress == null) {
            progress = Progress.NONE;
        }
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < files.size(); i++) {
            Path f = files.get(i);
            String name = f.getFileName().toString();
            progress.update(i, files.size(), name);
            long t0 = System.nanoTime();
            try {
                Pvn3dSample sample = Pvn3dSample.read(f);
                Pvn3dPipeline.Result r = pipeline.run(sample);
                double ms = (System.nanoTime() - t0) / 1e6;
                PoseMetrics.Result m = r.metrics();
                PoseMetrics.Result v = r.votingMetrics();
                rows.add(new Row(name, r.votes().n(), r.votes().maskedCount(), r.pose().inliers(), m == null ? Double.NaN : m.add(),
                        m == null ? Double.NaN : m.adds(), m == null ? Double.NaN : m.diameter(), ms, null, sample.occlusion(),
                        v == null ? Double.NaN : v.add(), v == null ? Double.NaN : v.adds(), r.refinement().status()));
            } catch (RuntimeException e) {
                rows.add(new Row(name, 0, 0, 0, Double.NaN, Double.NaN, Double.NaN, (System.nanoTime() - t0) / 1e6,
                        message(e), Double.NaN));
            }
        }
        progress.update(files.size(), files.size(), null);
        return new Summary(rows, pipeline.config().refinementName());
    }

    /** A failed sample's error for its row: an OrtException's message without its "[ORT_...] " prefix, else the exception. */
    public static String message(RuntimeException e) {
        String m = String.valueOf(e.getMessage());
        if (e instanceof OrtException o && m.startsWith("[" + o.getCode() + "] ")) {
            return m.substring(o.getCode().toString().length() + 3);
        }
        return e instanceof OrtException ? m : e.toString();
    }

    /** {@code [#########...........]  3/10  name}. */
    static String bar(int done, int total, String label) {
        int width = 30;
        int filled = total == 0 ? width : done * width / total;
        String l = label.length() > 40 ? label.substring(0, 37) + "..." : label;
        return String.format(Locale.ROOT, "[%s%s] %d/%d %-40s", "#".repeat(filled), ".".repeat(width - filled), done, total, l);
    }
}
