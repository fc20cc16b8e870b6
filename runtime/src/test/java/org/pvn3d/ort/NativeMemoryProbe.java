package org.pvn3d.ort;

import java.util.Map;

/**
 * A diagnostic for {@link NativeMemoryTest}: runs matmul_chain.onnx in many windows and prints the
 * C heap's floor per window, so a trend (a leak) can be told from noise on a given runtime.
 * Usage: java ... org.pvn3d.ort.NativeMemoryProbe [windows] [runsPerWindow]
 */
public final class NativeMemoryProbe {
    private NativeMemoryProbe() {}

    public static void main(String[] args) {
        int windows = args.length > 0 ? Integer.parseInt(args[0]) : 10;
        int runs = args.length > 1 ? Integer.parseInt(args[1]) : 5000;
        OrtEnvironment env = OrtEnvironment.getEnvironment();
        System.out.println("NativeMemoryProbe on " + OrtRuntime.get());
        try (OrtSession s = env.createSession(TestModels.model("matmul_chain.onnx"))) {
            float[] input = new float[4 * 64];
            for (int w = 0; w < windows; w++) {
                long floor = Long.MAX_VALUE;
                for (int i = 0; i < runs; i++) {
                    try (OnnxTensor x = OnnxTensor.createTensor(input, 4, 64); Result r = s.run(Map.of("x", x))) {
                        r.tensor("y").getFloatArray();
                    }
                    if (i % 500 == 499) {
                        floor = Math.min(floor, NativeMemoryTest.cHeapBytes());
                    }
                }
                System.out.printf("window %d (%d runs): C heap floor %.3f MB, live objects %s%n", w + 1, (w + 1) * runs,
                        floor / 1048576.0, NativeMemoryTest.live());
            }
        }
    }
}
