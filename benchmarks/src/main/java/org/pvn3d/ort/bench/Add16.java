package org.pvn3d.ort.bench;

import java.io.IOException;
import java.util.Map;
import org.pvn3d.ort.OnnxTensor;
import org.pvn3d.ort.OnnxTensorType;
import org.pvn3d.ort.OrtEnvironment;
import org.pvn3d.ort.OrtSession;
import org.pvn3d.ort.SessionOptions;

/**
 * The tiny model of the binding-cost benchmarks (add16.onnx: c = a + b over 16 floats) through this
 * project's API: a session with one intra-op thread (as the C floor), inputs a and b over {@link #DATA}
 * and a preallocated output c. {@link TinyModelBenchmark} and {@link IoBindingBenchmark} share it.
 */
final class Add16 implements AutoCloseable {
    static final long[] SHAPE = {16};
    /** The inputs' values: 0, 0.5, 1, ... */
    static final float[] DATA = new float[16];

    static {
        for (int i = 0; i < DATA.length; i++) {
            DATA[i] = i * 0.5f;
        }
    }

    final byte[] model;
    final SessionOptions options;
    final OrtSession session;
    final OnnxTensor a;
    final OnnxTensor b;
    final OnnxTensor c;
    final Map<String, OnnxTensor> inputs;
    final Map<String, OnnxTensor> outputs;

    Add16() throws IOException {
        model = BenchData.resource("/add16.onnx");
        options = new SessionOptions();
        options.setIntraOpNumThreads(1);
        session = OrtEnvironment.getEnvironment().createSession(model, options);
        a = OnnxTensor.createTensor(DATA, SHAPE);
        b = OnnxTensor.createTensor(DATA, SHAPE);
        c = OnnxTensor.allocate(OnnxTensorType.FLOAT, SHAPE);
        inputs = Map.of("a", a, "b", b);
        outputs = Map.of("c", c);
    }

    /** Throws unless {@code out} is a + b (element 3 checked: 1.5 + 1.5). */
    static void check(float[] out, String what) {
        if (out[3] != DATA[3] * 2) {
            throw new IllegalStateException("add16 " + what + " gave a wrong result: " + out[3]);
        }
    }

    @Override
    public void close() {
        a.close();
        b.close();
        c.close();
        session.close();
        options.close();
    }
}
