package org.pvn3d.ort.bench;

import java.io.IOException;
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
import org.pvn3d.ort.OnnxTensorType;
import org.pvn3d.ort.OrtEnvironment;
import org.pvn3d.ort.OrtIoBinding;
import org.pvn3d.ort.OrtSession;

/**
 * The IO-binding path against plain {@code run}, on the tiny model of {@link TinyModelBenchmark}
 * (add16.onnx, CPU provider, one intra-op thread), one session: inputs and output are the same
 * preallocated host tensors in both, bound once to an {@link OrtIoBinding} or passed to
 * {@code run(inputs, outputs, null)} on every call. The difference is the binding path's own cost.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xmx1g"})
public class IoBindingBenchmark {
    private static final long[] SHAPE = {16};

    private OrtSession.SessionOptions options;
    private OrtSession session;
    private OnnxTensor a;
    private OnnxTensor b;
    private OnnxTensor c;
    private Map<String, OnnxTensor> inputs;
    private Map<String, OnnxTensor> outputs;
    private OrtIoBinding binding;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        byte[] model = BenchData.resource("/add16.onnx");
        float[] data = new float[16];
        for (int i = 0; i < data.length; i++) {
            data[i] = i * 0.5f;
        }
        options = new OrtSession.SessionOptions();
        options.setIntraOpNumThreads(1);
        session = OrtEnvironment.getEnvironment().createSession(model, options);
        a = OnnxTensor.createTensor(data, SHAPE);
        b = OnnxTensor.createTensor(data, SHAPE);
        c = OnnxTensor.allocate(OnnxTensorType.FLOAT, SHAPE);
        inputs = Map.of("a", a, "b", b);
        outputs = Map.of("c", c);
        binding = session.createIoBinding();
        binding.bindInput("a", a).bindInput("b", b).bindOutput("c", c);
        session.run(binding);
        if (c.getFloatArray()[3] != data[3] * 2) {
            throw new IllegalStateException("add16 through the IO binding gave a wrong result");
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        binding.close();
        a.close();
        b.close();
        c.close();
        session.close();
        options.close();
    }

    /** Plain run into the preallocated output (as TinyModelBenchmark.oursPreallocated). */
    @Benchmark
    public OnnxTensor plainRun() {
        session.run(inputs, outputs, null);
        return c;
    }

    /** The same through the IO binding ({@code RunWithBinding}). */
    @Benchmark
    public OnnxTensor ioBindingRun() {
        session.run(binding);
        return c;
    }
}
