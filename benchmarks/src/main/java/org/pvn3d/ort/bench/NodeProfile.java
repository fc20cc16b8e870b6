package org.pvn3d.ort.bench;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.pvn3d.ort.DeviceTensor;
import org.pvn3d.ort.OnnxTensor;
import org.pvn3d.ort.OnnxTensorLike;
import org.pvn3d.ort.OrtEnvironment;
import org.pvn3d.ort.OrtIoBinding;
import org.pvn3d.ort.OrtMemoryInfo;
import org.pvn3d.ort.OrtSession;
import org.pvn3d.ort.SessionOptions;
import org.pvn3d.ort.cuda.DeviceBuffer;
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
        List<OnnxTensorLike> tensors = new ArrayList<>();
        List<DeviceBuffer> buffers = new ArrayList<>();
        try (SessionOptions options = new SessionOptions()) {
            options.enableProfiling(args[5]);
            Pvn3dOps.register(options).close(); // the options and the session keep the domain alive
            if (cuda) {
                options.addExecutionProvider(new OrtCUDAProviderOptions(0));
            }
            try (OrtSession session = OrtEnvironment.getEnvironment().createSession(model, options);
                    OrtIoBinding binding = session.createIoBinding();
                    OrtMemoryInfo outputMemory = cuda ? OrtMemoryInfo.cuda(0) : OrtMemoryInfo.cpu()) {
                for (String name : session.getInputNames()) {
                    PvtFile.Entry e = sample.get(name);
                    if (e == null) {
                        throw new IllegalArgumentException(args[1] + " has no input '" + name + "'");
                    }
                    OnnxTensor host = e.toTensor();
                    tensors.add(host);
                    if (cuda) {
                        DeviceBuffer b = DeviceBuffer.allocate(0, Math.max(1, e.data().length));
                        buffers.add(b);
                        b.copyFromHost(MemorySegment.ofArray(e.data()));
                        DeviceTensor d = DeviceTensor.createTensor(b, e.type(), e.shape());
                        tensors.add(d);
                        binding.bindInput(name, d);
                    } else {
                        binding.bindInput(name, host);
                    }
                }
                for (String name : session.getOutputNames()) {
                    binding.bindOutput(name, outputMemory); // ORT allocates them there on each run
                }
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
        } finally {
            tensors.forEach(OnnxTensorLike::close);
            buffers.forEach(DeviceBuffer::close);
        }
    }
}
