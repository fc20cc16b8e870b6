package org.pvn3d.ort.pipeline;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.pvn3d.ort.io.PvtFile;

/**
 * How closely the ORT pipeline reproduces PyTorch on one sample: for every float output the max and mean
 * absolute difference, for every index output the count of mismatches, and for the pose ADD / ADD-S of
 * the ORT pipeline's voting pose (before any refinement, which the PyTorch pipeline does not do) against
 * the PyTorch-pipeline pose ({@code pose_R}, {@code pose_t} in the expected file).
 * Targets: indices identical, floats within 1e-4 on the CPU provider and 1e-3 on CUDA.
 */
public record ParityReport(String provider, String model, String sample, double floatTolerance, List<FloatParity> floats,
        List<IndexParity> indices, PoseParity pose, Pvn3dPipeline.Result result, Map<String, Object> extra) {

    /** CPU target for float outputs. */
    public static final double CPU_TOLERANCE = 1e-4;
    /** CUDA target for float outputs. */
    public static final double CUDA_TOLERANCE = 1e-3;

    /** A float output: elements, max |ORT - PyTorch|, mean |ORT - PyTorch|, max |PyTorch| (the scale). */
    public record FloatParity(String name, long[] shape, int count, double maxAbsDiff, double meanAbsDiff, double maxAbsReference) {}

    /** An index output: elements and how many differ. */
    public record IndexParity(String name, long[] shape, int count, int mismatches) {}

    /**
     * The ORT pipeline's voting pose against PyTorch's: ADD / ADD-S between the two poses over the model points,
     * rotation (degrees) and translation (m) differences, the largest keypoint difference, both inlier
     * counts.
     */
    public record PoseParity(Pose ort, Pose pytorch, double add, double adds, double diameter, double rotationDegrees,
            double translation, double kpsMaxAbsDiff, int inliers, long pytorchInliers) {}

    /**
     * Compares a pipeline result with the PyTorch reference entries. Every reference entry the model also
     * output is compared: float32 by difference, int64 by mismatch count; shape differences count every
     * element as a mismatch (floats: infinite difference). The pose part needs {@code pose_R}, {@code pose_t}
     * in {@code expected} and model points in the sample; it is null otherwise.
     */
    public static ParityReport compare(Pvn3dPipeline.Result result, Map<String, PvtFile.Entry> expected, Pvn3dSample sample,
            String provider, String model) {
        double tolerance = provider.equalsIgnoreCase("cuda") ? CUDA_TOLERANCE : CPU_TOLERANCE;
        List<FloatParity> floats = new ArrayList<>();
        List<IndexParity> indices = new ArrayList<>();
        for (Pvn3dPipeline.Output out : result.outputs().values()) {
            PvtFile.Entry ref = expected.get(out.name());
            if (ref == null) {
                continue;
            }
            boolean sameShape = Arrays.equals(ref.shape(), out.shape());
            if (out.isFloat()) {
                float[] want = ref.floats();
                float[] got = out.floats();
                double max = 0;
                double sum = 0;
                double scale = 0;
                if (!sameShape || want.length != got.length) {
                    max = Double.POSITIVE_INFINITY;
                    sum = Double.POSITIVE_INFINITY;
                } else {
                    for (int i = 0; i < got.length; i++) {
                        double d = Math.abs((double) got[i] - want[i]);
                        if (!(d <= max)) {
                            max = Double.isNaN(d) ? Double.POSITIVE_INFINITY : d;
                        }
                        sum += d;
                        scale = Math.max(scale, Math.abs(want[i]));
                    }
                }
                floats.add(new FloatParity(out.name(), out.shape(), got.length, max, got.length == 0 ? 0 : sum / got.length, scale));
            } else {
                long[] want = ref.longs();
                long[] got = out.longs();
                int mismatches = 0;
                if (!sameShape || want.length != got.length) {
                    mismatches = Math.max(want.length, got.length);
                } else {
                    for (int i = 0; i < got.length; i++) {
                        if (got[i] != want[i]) {
                            mismatches++;
                        }
                    }
                }
                indices.add(new IndexParity(out.name(), out.shape(), got.length, mismatches));
            }
        }
        PoseParity pose = null;
        if (expected.containsKey("pose_R") && expected.containsKey("pose_t") && sample.has("model_points")) {
            Pose ref = Pose.of(expected.get("pose_R").floats(), expected.get("pose_t").floats());
            // the voting pose: PyTorch's pipeline ends with the keypoint fit, there is no refinement to compare
            Pose got = result.voting().pose();
            float[] pts = sample.modelPoints();
            double diameter = sample.has("model_diameter") ? sample.diameter() : Double.NaN;
            double kpsDiff = Double.NaN;
            if (expected.containsKey("pose_kps")) {
                float[] want = expected.get("pose_kps").floats();
                float[] kps = result.voting().kps();
                if (want.length == kps.length) {
                    kpsDiff = 0;
                    for (int i = 0; i < kps.length; i++) {
                        kpsDiff = Math.max(kpsDiff, Math.abs((double) kps[i] - want[i]));
                    }
                }
            }
            long refInliers = expected.containsKey("pose_inliers") ? expected.get("pose_inliers").longs()[0] : -1;
            pose = new PoseParity(got, ref, PoseMetrics.add(got, ref, pts), PoseMetrics.adds(got, ref, pts), diameter,
                    got.isFinite() && ref.isFinite() ? got.rotationErrorDegrees(ref) : Double.NaN,
                    got.isFinite() && ref.isFinite() ? got.translationError(ref) : Double.NaN, kpsDiff, result.voting().inliers(), refInliers);
        }
        return new ParityReport(provider, model, sample.source(), tolerance, floats, indices, pose, result, new LinkedHashMap<>());
    }

    /** The largest float difference over all float outputs. */
    public double maxFloatDiff() {
        return floats.stream().mapToDouble(FloatParity::maxAbsDiff).max().orElse(0);
    }

    /** Index mismatches over all index outputs. */
    public int indexMismatches() {
        return indices.stream().mapToInt(IndexParity::mismatches).sum();
    }

    /** Indices identical and every float output within the provider's tolerance. */
    public boolean passes() {
        return indexMismatches() == 0 && maxFloatDiff() <= floatTolerance;
    }

    /** A few lines for a terminal. */
    public String summary() {
        StringBuilder sb = new StringBuilder();
        for (FloatParity f : floats) {
            sb.append(String.format(Locale.ROOT, "  %-16s %-18s max|d| %.3e  mean|d| %.3e  (max|ref| %.3g)%n", f.name(),
                    Arrays.toString(f.shape()), f.maxAbsDiff(), f.meanAbsDiff(), f.maxAbsReference()));
        }
        for (IndexParity i : indices) {
            sb.append(String.format(Locale.ROOT, "  %-16s %-18s mismatches %d of %d%n", i.name(), Arrays.toString(i.shape()),
                    i.mismatches(), i.count()));
        }
        if (pose != null) {
            sb.append(String.format(Locale.ROOT,
                    "  voting pose vs PyTorch pipeline (before refinement): ADD %.3e m, ADD-S %.3e m, rotation %.3e deg, translation %.3e m, keypoints max|d| %.3e, inliers %d (PyTorch %d)%n",
                    pose.add(), pose.adds(), pose.rotationDegrees(), pose.translation(), pose.kpsMaxAbsDiff(), pose.inliers(), pose.pytorchInliers()));
        }
        sb.append(String.format(Locale.ROOT, "  verdict: %s (indices identical: %s; floats max|d| %.3e <= %.0e: %s)%n", passes() ? "PASS" : "FAIL",
                indexMismatches() == 0, maxFloatDiff(), floatTolerance, maxFloatDiff() <= floatTolerance));
        return sb.toString();
    }

    /** The report as a JSON document. */
    public String toJson() {
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("provider", provider);
        root.put("model", model);
        root.put("sample", sample);
        root.put("pass", passes());
        Map<String, Object> targets = new LinkedHashMap<>();
        targets.put("float_max_abs_diff", floatTolerance);
        targets.put("index_mismatches", 0);
        root.put("targets", targets);
        Map<String, Object> fo = new LinkedHashMap<>();
        for (FloatParity f : floats) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("shape", f.shape());
            m.put("count", f.count());
            m.put("max_abs_diff", f.maxAbsDiff());
            m.put("mean_abs_diff", f.meanAbsDiff());
            m.put("max_abs_reference", f.maxAbsReference());
            m.put("within_target", f.maxAbsDiff() <= floatTolerance);
            fo.put(f.name(), m);
        }
        root.put("float_outputs", fo);
        Map<String, Object> io = new LinkedHashMap<>();
        for (IndexParity i : indices) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("shape", i.shape());
            m.put("count", i.count());
            m.put("mismatches", i.mismatches());
            io.put(i.name(), m);
        }
        root.put("index_outputs", io);
        if (pose != null) {
            Map<String, Object> p = new LinkedHashMap<>();
            p.put("add_vs_pytorch", pose.add());
            p.put("adds_vs_pytorch", pose.adds());
            p.put("add_vs_pytorch_over_diameter", pose.add() / pose.diameter());
            p.put("rotation_diff_deg", pose.rotationDegrees());
            p.put("translation_diff_m", pose.translation());
            p.put("kps_max_abs_diff", pose.kpsMaxAbsDiff());
            p.put("inliers", pose.inliers());
            p.put("pytorch_inliers", pose.pytorchInliers());
            p.put("ort_R", pose.ort().r());
            p.put("ort_t", pose.ort().t());
            p.put("pytorch_R", pose.pytorch().r());
            p.put("pytorch_t", pose.pytorch().t());
            root.put("pose_parity", p);
        }
        if (result != null) {
            Map<String, Object> pipeline = new LinkedHashMap<>();
            pipeline.put("points", result.votes().n());
            pipeline.put("masked_points", result.votes().maskedCount());
            pipeline.put("inliers", result.pose().inliers());
            pipeline.put("kps", result.pose().kps());
            pipeline.put("R", result.pose().pose().r());
            pipeline.put("t", result.pose().pose().t());
            IcpRefiner.Result icp = result.refinement();
            Map<String, Object> refinement = new LinkedHashMap<>();
            refinement.put("status", icp.status().name().toLowerCase(Locale.ROOT));
            refinement.put("refined", icp.refined());
            refinement.put("iterations", icp.iterations());
            refinement.put("correspondences", icp.correspondences());
            refinement.put("observed_points", icp.observed());
            refinement.put("trim_distance_m", icp.trimDistance());
            refinement.put("rms_m", icp.rmsError());
            pipeline.put("refinement", refinement);
            pipeline.put("voting_R", result.voting().pose().r());
            pipeline.put("voting_t", result.voting().pose().t());
            if (result.metrics() != null) {
                pipeline.put("vs_ground_truth", groundTruth(result.metrics()));
                pipeline.put("voting_vs_ground_truth", groundTruth(result.votingMetrics()));
            }
            Pvn3dPipeline.Timings t = result.timings();
            Map<String, Object> ms = new LinkedHashMap<>();
            ms.put("load", t.load());
            ms.put("upload", t.upload());
            ms.put("inference", t.inference());
            ms.put("download", t.download());
            ms.put("voting", t.voting());
            ms.put("clustering", t.clustering());
            ms.put("fit", t.fit());
            ms.put("refinement", t.refinement());
            ms.put("metrics", t.metrics());
            pipeline.put("timings_ms", ms);
            Pvn3dPipeline.Latency l = t.latency();
            Map<String, Object> lat = new LinkedHashMap<>();
            lat.put("runs", l.runs());
            lat.put("median", l.median());
            lat.put("min", l.min());
            lat.put("p90", l.p90());
            lat.put("max", l.max());
            pipeline.put("inference_latency_ms", lat);
            root.put("pipeline", pipeline);
        }
        root.putAll(extra);
        return Json.write(root);
    }

    private static Map<String, Object> groundTruth(PoseMetrics.Result m) {
        Map<String, Object> gt = new LinkedHashMap<>();
        gt.put("add", m.add());
        gt.put("adds", m.adds());
        gt.put("diameter", m.diameter());
        gt.put("threshold", m.threshold());
        gt.put("add_correct", m.addCorrect());
        gt.put("adds_correct", m.addsCorrect());
        return gt;
    }
}
