package org.pvn3d.ort.bench;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.pvn3d.ort.OnnxTensor;
import org.pvn3d.ort.OrtEnvironment;
import org.pvn3d.ort.OrtSession;

/**
 * The binding's own cost: one run of a 16-float Add through this project's API (CPU provider), with
 * fresh input tensors and an ORT-allocated output per run, and with inputs and output reused.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class TinyModelBenchmark {
    private OrtSession session;
    private OnnxTensor a;
    private OnnxTensor b;
    private OnnxTensor c;
    private final float[] data = new float[16];

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        Path model = Files.createTempFile("add16", ".onnx");
        try (InputStream in = TinyModelBenchmark.class.getResourceAsStream("/add16.onnx")) {
            Files.write(model, in.readAllBytes());
        }
        session = OrtEnvironment.getEnvironment().createSession(model);
        Files.delete(model);
        a = OnnxTensor.createTensor(data, 16);
        b = OnnxTensor.createTensor(data, 16);
        c = OnnxTensor.allocate(org.pvn3d.ort.OnnxTensorType.FLOAT, 16);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        a.close();
        b.close();
        c.close();
        session.close();
    }

    /** Fresh tensors from arrays, run, read the output back into an array. */
    @Benchmark
    public float[] runWithFreshTensors() {
        try (OnnxTensor x = OnnxTensor.createTensor(data, 16);
                OnnxTensor y = OnnxTensor.createTensor(data, 16);
                OrtSession.Result r = session.run(Map.of("a", x, "b", y))) {
            return r.tensor("c").getFloatArray();
        }
    }

    /** Inputs and output reused: the floor of one run through this API. */
    @Benchmark
    public OnnxTensor runPreallocated() {
        session.run(Map.of("a", a, "b", b), Map.of("c", c), null);
        return c;
    }
}
