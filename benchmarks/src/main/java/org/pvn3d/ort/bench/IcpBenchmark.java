package org.pvn3d.ort.bench;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.pvn3d.ort.pipeline.IcpRefinement;
import org.pvn3d.ort.pipeline.IcpRefiner;
import org.pvn3d.ort.pipeline.Kabsch;
import org.pvn3d.ort.pipeline.Pose;
import org.pvn3d.ort.pipeline.Pvn3dSample;

/**
 * The pipeline's refinement stage on the host ({@link IcpRefiner}, pure Java, one thread): the bunny's 1839
 * model points (the shipped sample's {@code model_points}) against {@code observed} points of its half
 * nearer the camera with 1 mm Gaussian noise per axis (a fixed seed), from the true pose turned by 8
 * degrees and moved 15 mm (about the voting pose's error on a hard scene; the set-up prints how many
 * iterations ICP takes from there).
 * <ul>
 *   <li>{@code refine}: the whole refinement with the default settings ({@link IcpRefinement#DEFAULT});</li>
 *   <li>{@code oneIteration}: one round (grid built, every observed point's nearest model point, the fit);</li>
 *   <li>{@code oneIterationBruteForce}: the same round with the nearest neighbours by brute force over all
 *       model points (what the grid saves).</li>
 * </ul>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"-Xmx1g"})
public class IcpBenchmark {
    @Param({"280"})
    public int observed;

    private float[] model;
    private double diameter;
    private float[] points;
    private Pose start;
    private IcpRefiner refiner;
    private IcpRefiner once;

    @Setup(Level.Trial)
    public void setUp() {
        Pvn3dSample sample = Pvn3dSample.resource(Pvn3dSample.RESOURCE);
        model = sample.modelPoints();
        diameter = sample.diameter();
        Random rng = new Random(42);
        Pose truth = new Pose(Pose.axisAngle(0.3, -0.8, 0.5, 2.1), new double[] {0.02, -0.03, 0.62});
        double[] pc = truth.apply(model);
        List<Integer> visible = new ArrayList<>();
        for (int i = 0; i < pc.length / 3; i++) {
            if (pc[3 * i + 2] <= truth.t(2)) {
                visible.add(i);
            }
        }
        Collections.shuffle(visible, rng);
        if (visible.size() < observed) {
            throw new IllegalStateException("only " + visible.size() + " visible points");
        }
        points = new float[3 * observed];
        for (int i = 0; i < observed; i++) {
            for (int c = 0; c < 3; c++) {
                points[3 * i + c] = (float) (pc[3 * visible.get(i) + c] + 0.001 * rng.nextGaussian());
            }
        }
        Pose turned = truth.compose(new Pose(Pose.axisAngle(1, 2, -1, Math.toRadians(8)), new double[3]));
        double[] t = turned.t();
        t[0] += 0.015;
        start = new Pose(turned.r(), t);
        refiner = new IcpRefiner(IcpRefinement.DEFAULT);
        once = new IcpRefiner(IcpRefinement.DEFAULT.withMaxIterations(1));
        IcpRefiner.Result r = refiner.refine(start, points, model, diameter);
        System.out.printf(java.util.Locale.ROOT, "%nIcpBenchmark: %d observed, %d model points; %s; error %.3f deg, %.2f mm (from 8 deg, 15 mm)%n",
                observed, model.length / 3, r.describe(IcpRefinement.DEFAULT), r.pose().rotationErrorDegrees(truth),
                1e3 * r.pose().translationError(truth));
    }

    @Benchmark
    public IcpRefiner.Result refine() {
        return refiner.refine(start, points, model, diameter);
    }

    @Benchmark
    public IcpRefiner.Result oneIteration() {
        return once.refine(start, points, model, diameter);
    }

    @Benchmark
    public Pose oneIterationBruteForce() {
        double trim2 = Math.pow(IcpRefinement.DEFAULT.trimFraction() * diameter, 2);
        double[] r = start.r();
        double[] t = start.t();
        int k = points.length / 3;
        int v = model.length / 3;
        float[] m = new float[3 * v];
        for (int j = 0; j < v; j++) {
            for (int row = 0; row < 3; row++) {
                m[3 * j + row] = (float) (r[3 * row] * model[3 * j] + r[3 * row + 1] * model[3 * j + 1] + r[3 * row + 2] * model[3 * j + 2]
                        + t[row]);
            }
        }
        double[] src = new double[3 * k];
        double[] dst = new double[3 * k];
        int n = 0;
        for (int i = 0; i < k; i++) {
            float x = points[3 * i];
            float y = points[3 * i + 1];
            float z = points[3 * i + 2];
            float best = Float.POSITIVE_INFINITY;
            int arg = -1;
            for (int j = 0; j < v; j++) {
                float dx = m[3 * j] - x;
                float dy = m[3 * j + 1] - y;
                float dz = m[3 * j + 2] - z;
                float d = dx * dx + dy * dy + dz * dz;
                if (d < best) {
                    best = d;
                    arg = j;
                }
            }
            if (best < trim2) {
                for (int c = 0; c < 3; c++) {
                    src[3 * n + c] = model[3 * arg + c];
                    dst[3 * n + c] = points[3 * i + c];
                }
                n++;
            }
        }
        return Kabsch.fit(src, dst, n);
    }
}
