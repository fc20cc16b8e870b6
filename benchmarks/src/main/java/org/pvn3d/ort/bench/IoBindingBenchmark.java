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
    private Add16 add16;
    private OrtSession session;
    private OnnxTensor c;
    private Map<String, OnnxTensor> inputs;
    private Map<String, OnnxTensor> outputs;
    private OrtIoBinding binding;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        add16 = new Add16();
        session = add16.session;
        c = add16.c;
        inputs = add16.inputs;
        outputs = add16.outputs;
        binding = session.createIoBinding();
        binding.bindInput("a", add16.a).bindInput("b", add16.b).bindOutput("c", c);
        session.run(binding);
        Add16.check(c.getFloatArray(), "through the IO binding");
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        binding.close();
        add16.close();
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
