package org.pvn3d.ort.bench;

import java.io.IOException;
import java.nio.FloatBuffer;
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
import org.pvn3d.ort.Result;

/**
 * The binding's own cost: one run of a 16-float Add ({@code c = a + b}, add16.onnx) on ORT's CPU
 * provider, through this project's API (FFM) and through ORT's official Java API (JNI,
 * {@code ai.onnxruntime}), in the same JMH run and against the same {@code libonnxruntime.so}: give
 * both the same folder, {@code -Dpvn3d.ort.path=DIR -Donnxruntime.native.path=DIR}, holding ORT
 * 1.16.3's {@code libonnxruntime.so} and {@code libonnxruntime4j_jni.so} (the run scripts extract them
 * from the official jar). The floor, a plain C loop over the C API, is benchmarks/native/add16_floor.c.
 *
 * <p>Both sessions: default options but one intra-op thread (as the C floor). Pairs that do the same
 * work:
 * <ul>
 *   <li>{@code *Fresh}: input tensors made from float arrays, run, output read back into an array,
 *       everything released;</li>
 *   <li>{@code *ReuseInputs}: input tensors made once; run, ORT allocates the output, released;</li>
 *   <li>{@code oursPreallocated}: inputs and output made once (ORT's 1.16 Java API has no
 *       preallocated outputs): the least one run through this API can cost, comparable to the C
 *       floor's preallocated loop.</li>
 * </ul>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xmx1g"})
public class TinyModelBenchmark {
    private static final long[] SHAPE = Add16.SHAPE;

    private final float[] data = Add16.DATA.clone();

    private Add16 add16;
    private OrtSession ours;
    private OnnxTensor c;
    private Map<String, OnnxTensor> oursInputs;
    private Map<String, OnnxTensor> oursOutputs;

    private ai.onnxruntime.OrtEnvironment jniEnv;
    private ai.onnxruntime.OrtSession.SessionOptions jniOptions;
    private ai.onnxruntime.OrtSession jni;
    private ai.onnxruntime.OnnxTensor ja;
    private ai.onnxruntime.OnnxTensor jb;
    private Map<String, ai.onnxruntime.OnnxTensor> jniInputs;

    @Setup(Level.Trial)
    public void setUp() throws IOException, ai.onnxruntime.OrtException {
        add16 = new Add16();
        ours = add16.session;
        c = add16.c;
        oursInputs = add16.inputs;
        oursOutputs = add16.outputs;

        jniEnv = ai.onnxruntime.OrtEnvironment.getEnvironment();
        jniOptions = new ai.onnxruntime.OrtSession.SessionOptions();
        jniOptions.setIntraOpNumThreads(1);
        jni = jniEnv.createSession(add16.model, jniOptions);
        ja = ai.onnxruntime.OnnxTensor.createTensor(jniEnv, FloatBuffer.wrap(data), SHAPE);
        jb = ai.onnxruntime.OnnxTensor.createTensor(jniEnv, FloatBuffer.wrap(data), SHAPE);
        jniInputs = Map.of("a", ja, "b", jb);

        String ortVersion = OrtEnvironment.getEnvironment().getRuntime().version();
        String jniVersion = jniEnv.getVersion();
        if (!ortVersion.equals(jniVersion)) {
            throw new IllegalStateException("not the same ORT: this project's API loaded " + ortVersion
                    + ", ORT's Java API " + jniVersion + " (point -Dpvn3d.ort.path and -Donnxruntime.native.path"
                    + " at the same folder)");
        }
        Add16.check(oursFresh(), "through this project's API");
        Add16.check(jniFresh(), "through ORT's Java API");
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        add16.close();
        ja.close();
        jb.close();
        try {
            jni.close();
        } catch (ai.onnxruntime.OrtException e) {
            throw new IllegalStateException(e);
        }
        jniOptions.close();
    }

    /** This project's API: fresh tensors from arrays, run, the output read back into an array. */
    @Benchmark
    public float[] oursFresh() {
        try (OnnxTensor x = OnnxTensor.createTensor(data, SHAPE);
                OnnxTensor y = OnnxTensor.createTensor(data, SHAPE);
                Result r = ours.run(Map.of("a", x, "b", y))) {
            return r.tensor("c").getFloatArray();
        }
    }

    /** ORT's Java API (JNI): the same. */
    @Benchmark
    public float[] jniFresh() {
        try (ai.onnxruntime.OnnxTensor x = ai.onnxruntime.OnnxTensor.createTensor(jniEnv, FloatBuffer.wrap(data), SHAPE);
                ai.onnxruntime.OnnxTensor y = ai.onnxruntime.OnnxTensor.createTensor(jniEnv, FloatBuffer.wrap(data), SHAPE);
                ai.onnxruntime.OrtSession.Result r = jni.run(Map.of("a", x, "b", y))) {
            return (float[]) r.get(0).getValue();
        } catch (ai.onnxruntime.OrtException e) {
            throw new IllegalStateException(e);
        }
    }

    /** This project's API: inputs reused, ORT allocates the output, the result is closed. */
    @Benchmark
    public OnnxTensor oursReuseInputs() {
        try (Result r = ours.run(oursInputs)) {
            return r.tensor("c");
        }
    }

    /** ORT's Java API (JNI): the same. */
    @Benchmark
    public Object jniReuseInputs() {
        try (ai.onnxruntime.OrtSession.Result r = jni.run(jniInputs)) {
            return r.get(0);
        } catch (ai.onnxruntime.OrtException e) {
            throw new IllegalStateException(e);
        }
    }

    /** This project's API: inputs and output reused (preallocated output). */
    @Benchmark
    public OnnxTensor oursPreallocated() {
        ours.run(oursInputs, oursOutputs, null);
        return c;
    }
}
