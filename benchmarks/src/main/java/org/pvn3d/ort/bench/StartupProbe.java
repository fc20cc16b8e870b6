package org.pvn3d.ort.bench;

import java.lang.management.ManagementFactory;
import java.util.Locale;
import java.util.Map;
import org.pvn3d.ort.OnnxTensor;
import org.pvn3d.ort.OnnxTensorType;
import org.pvn3d.ort.OrtEnvironment;
import org.pvn3d.ort.OrtSession;
import org.pvn3d.ort.SessionOptions;

/**
 * Time to the first result, in a fresh JVM: how long the steps before the first inference of the tiny
 * model (add16.onnx, CPU provider, one intra-op thread, preallocated output) take, and then the same
 * for new sessions in the now warm process. Prints one JSON object (milliseconds):
 * <ul>
 * <li>{@code jvm_to_main}: from the JVM's start (its own clock) to this method;</li>
 * <li>{@code load_runtime}: loading ORT and the bindings, creating the environment;</li>
 * <li>{@code first_session}, {@code first_run}, {@code second_run}: the first session's creation and
 * its first two runs;</li>
 * <li>{@code process_to_first_result}: the JVM's start to the end of the first run;</li>
 * <li>{@code new_session} and {@code new_session_first_run}: the medians over {@code sessions} more
 * sessions created one after another (each closed before the next), the first run of each.</li>
 * </ul>
 * Run it as {@code java -cp benchmarks.jar org.pvn3d.ort.bench.StartupProbe [sessions]} with
 * {@code -Dpvn3d.ort.path=DIR}; the whole process's wall time is the caller's to measure (e.g. with
 * hyperfine), with and without the JVM's class-data or ahead-of-time caches.
 */
public final class StartupProbe {
    private StartupProbe() {}

    public static void main(String[] args) throws Exception {
        long mainMillis = System.currentTimeMillis();
        long startMillis = ManagementFactory.getRuntimeMXBean().getStartTime();
        double jvmToMain = mainMillis - startMillis;
        int sessions = args.length > 0 ? Integer.parseInt(args[0]) : 10;

        long t = System.nanoTime();
        OrtEnvironment env = OrtEnvironment.getEnvironment();
        double loadRuntime = ms(t);
        byte[] model = BenchData.resource("/add16.onnx");
        float[] data = new float[16];
        for (int i = 0; i < data.length; i++) {
            data[i] = i * 0.5f;
        }
        try (OnnxTensor a = OnnxTensor.createTensor(data, 16);
                OnnxTensor b = OnnxTensor.createTensor(data, 16);
                OnnxTensor c = OnnxTensor.allocate(OnnxTensorType.FLOAT, 16)) {
            Map<String, OnnxTensor> in = Map.of("a", a, "b", b);
            Map<String, OnnxTensor> out = Map.of("c", c);
            double firstSession;
            double firstRun;
            double secondRun;
            double processToFirst;
            try (SessionOptions options = new SessionOptions().setIntraOpNumThreads(1)) {
                t = System.nanoTime();
                try (OrtSession session = env.createSession(model, options)) {
                    firstSession = ms(t);
                    t = System.nanoTime();
                    session.run(in, out, null);
                    firstRun = ms(t);
                    processToFirst = System.currentTimeMillis() - startMillis;
                    t = System.nanoTime();
                    session.run(in, out, null);
                    secondRun = ms(t);
                }
                Add16.check(c.getFloatArray(), "in the startup probe");
                double[] create = new double[sessions];
                double[] run = new double[sessions];
                for (int s = 0; s < sessions; s++) {
                    t = System.nanoTime();
                    try (OrtSession session = env.createSession(model, options)) {
                        create[s] = ms(t);
                        t = System.nanoTime();
                        session.run(in, out, null);
                        run[s] = ms(t);
                    }
                }
                System.out.printf(Locale.ROOT, "{\"jvm_to_main\": %.2f, \"load_runtime\": %.2f, \"first_session\": %.2f, "
                        + "\"first_run\": %.3f, \"second_run\": %.3f, \"process_to_first_result\": %.1f, \"sessions\": %d, "
                        + "\"new_session\": %.3f, \"new_session_first_run\": %.3f}%n", jvmToMain, loadRuntime, firstSession,
                        firstRun, secondRun, processToFirst, sessions, median(create), median(run));
            }
        }
    }

    private static double ms(long start) {
        return (System.nanoTime() - start) / 1e6;
    }

    private static double median(double[] v) {
        if (v.length == 0) {
            return Double.NaN;
        }
        double[] s = v.clone();
        java.util.Arrays.sort(s);
        return s[s.length / 2];
    }
}
