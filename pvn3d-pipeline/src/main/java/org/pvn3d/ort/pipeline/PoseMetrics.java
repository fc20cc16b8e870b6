package org.pvn3d.ort.pipeline;

/**
 * The pose metrics of spec/ops.md over the object's model points {@code x [n,3]}:
 * ADD = {@code mean_i |(R x_i + t) - (R* x_i + t*)|}, ADD-S = {@code mean_i min_j |(R x_i + t) - (R* x_j + t*)|};
 * a pose is correct when the metric is below 10% of the object's diameter.
 */
public final class PoseMetrics {
    private PoseMetrics() {}

    /** ADD and ADD-S of one pose, with the 10%-of-diameter threshold and verdicts. */
    public record Result(double add, double adds, double diameter) {
        public double threshold() {
            return 0.1 * diameter;
        }

        /** ADD below 10% of the diameter (asymmetric objects). */
        public boolean addCorrect() {
            return add < threshold();
        }

        /** ADD-S below 10% of the diameter (symmetric objects). */
        public boolean addsCorrect() {
            return adds < threshold();
        }
    }

    public static Result evaluate(Pose predicted, Pose truth, float[] modelPoints, double diameter) {
        return new Result(add(predicted, truth, modelPoints), adds(predicted, truth, modelPoints), diameter);
    }

    public static double add(Pose predicted, Pose truth, float[] modelPoints) {
        if (!predicted.isFinite() || !truth.isFinite()) {
            return Double.NaN;
        }
        double[] p = predicted.apply(modelPoints);
        double[] q = truth.apply(modelPoints);
        int n = p.length / 3;
        double sum = 0;
        for (int i = 0; i < n; i++) {
            sum += Math.sqrt(sq(p[i * 3] - q[i * 3]) + sq(p[i * 3 + 1] - q[i * 3 + 1]) + sq(p[i * 3 + 2] - q[i * 3 + 2]));
        }
        return sum / n;
    }

    /** ADD-S with an exact nearest-neighbour search (brute force over the model's points, in parallel). */
    public static double adds(Pose predicted, Pose truth, float[] modelPoints) {
        if (!predicted.isFinite() || !truth.isFinite()) {
            return Double.NaN;
        }
        double[] p = predicted.apply(modelPoints);
        double[] q = truth.apply(modelPoints);
        int n = p.length / 3;
        return java.util.stream.IntStream.range(0, n).parallel().mapToDouble(i -> {
            double best = Double.POSITIVE_INFINITY;
            double px = p[i * 3];
            double py = p[i * 3 + 1];
            double pz = p[i * 3 + 2];
            for (int j = 0; j < n; j++) {
                double d = sq(px - q[j * 3]) + sq(py - q[j * 3 + 1]) + sq(pz - q[j * 3 + 2]);
                if (d < best) {
                    best = d;
                }
            }
            return Math.sqrt(best);
        }).sum() / n;
    }

    private static double sq(double v) {
        return v * v;
    }
}
