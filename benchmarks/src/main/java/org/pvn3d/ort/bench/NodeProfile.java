package org.pvn3d.ort.bench;

import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import org.pvn3d.ort.OrtEnvironment;
import org.pvn3d.ort.OrtIoBinding;
import org.pvn3d.ort.OrtSession;
import org.pvn3d.ort.SessionOptions;
import org.pvn3d.ort.io.PvtFile;
import org.pvn3d.ort.ops.Pvn3dOps;
import org.pvn3d.ort.providers.OrtCUDAProviderOptions;

/**
 * Runs a model with the PVN3D operators many times with ORT's profiler on, so that the profile holds
 * every node's host time (ORT's {@code Node} events: the time around each kernel's compute on the
 * host; on the CUDA provider that is the launch side, the GPU runs it asynchronously). The way a
 * service runs: one {@link OrtIoBinding}, bound once; on {@code cuda} the inputs in GPU memory and
 * every output bound to the GPU ({@code OrtMemoryInfo.cuda(0)}), on {@code cpu} host inputs and
 * outputs ORT allocates. {@code benchmarks/scripts/profile_nodes.py} turns the profile into each
 * node's median host time over the last {@code runs} runs.
 *
 * <pre>
 * java -cp benchmarks.jar org.pvn3d.ort.bench.NodeProfile MODEL.onnx SAMPLE.bin cpu|cuda WARMUP RUNS PREFIX
 * </pre>
 * prints the profile file's name. The sample is a PVT1 file holding the model's inputs by name.
 */
public final class NodeProfile {
    private NodeProfile() {}

    public static void main(String[] args) {
        if (args.length != 6) {
            System.err.println("usage: NodeProfile MODEL.onnx SAMPLE.bin cpu|cuda WARMUP RUNS PROFILE_PREFIX");
            System.exit(2);
        }
        Path model = Path.of(args[0]);
        Map<String, PvtFile.Entry> sample = PvtFile.read(Path.of(args[1]));
        boolean cuda = switch (args[2]) {
            case "cpu" -> false;
            case "cuda" -> true;
            default -> throw new IllegalArgumentException("provider must be cpu or cuda, not " + args[2]);
        };
        int warmup = Integer.parseInt(args[3]);
        int runs = Integer.parseInt(args[4]);
        try (SessionOptions options = new SessionOptions()) {
            options.enableProfiling(args[5]);
            Pvn3dOps.register(options).close(); // the options and the session keep the domain alive
            if (cuda) {
                options.addExecutionProvider(new OrtCUDAProviderOptions(0));
            }
            try (OrtSession session = OrtEnvironment.getEnvironment().createSession(model, options);
                    SampleBinding bound = new SampleBinding(session, sample, args[1], cuda)) {
                OrtIoBinding binding = bound.binding();
                long[] ns = new long[runs];
                for (int i = -warmup; i < runs; i++) {
                    long t = System.nanoTime();
                    session.run(binding);
                    if (i >= 0) {
                        ns[i] = System.nanoTime() - t;
                    }
                }
                java.util.Arrays.sort(ns);
                System.out.printf(Locale.ROOT, "runs: %d after %d warm-up, median %.3f ms per run (%s provider)%n", runs,
                        warmup, ns[runs / 2] / 1e6, cuda ? "CUDA" : "CPU");
                System.out.println("profile: " + session.endProfiling());
            }
        }
    }
}
