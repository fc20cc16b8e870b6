package org.pvn3d.ort;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.pvn3d.ort.customop.CustomKernel;
import org.pvn3d.ort.customop.CustomOpDomain;
import org.pvn3d.ort.customop.JavaScaleOp;
import org.pvn3d.ort.customop.KernelContext;
import org.pvn3d.ort.customop.KernelTensor;

/**
 * The steady state of the per-run paths allocates nothing on the Java heap: a run into preallocated
 * outputs, a bound run, and a run whose node is a Java custom operator (the compute upcall). Counted
 * with the thread's allocated bytes ({@code com.sun.management.ThreadMXBean}) over {@value #MEASURED}
 * calls after {@value #WARMUP} to let the JIT settle; this counts bytes, it times nothing.
 */
class ZeroAllocationTest {
    static final int WARMUP = 20_000;
    static final int MEASURED = 10_000;

    /** Average bytes the current thread allocates per call of {@code call}, after a warm-up. */
    static double bytesPerCall(Runnable call) {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        for (int i = 0; i < WARMUP; i++) {
            call.run();
        }
        double best = Double.MAX_VALUE;
        for (int attempt = 0; attempt < 3 && best > 0; attempt++) { // a JIT recompilation may land in one attempt
            long before = mx.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < MEASURED; i++) {
                call.run();
            }
            long after = mx.getCurrentThreadAllocatedBytes();
            best = Math.min(best, (double) (after - before) / MEASURED);
        }
        return best;
    }

    static OnnxTensor floats16(float start) {
        float[] d = new float[16];
        for (int i = 0; i < d.length; i++) {
            d[i] = start + i;
        }
        return OnnxTensor.createTensor(d, 16);
    }

    @Test
    void aRunIntoPreallocatedOutputsAllocatesNothing() {
        OrtEnvironment env = OrtEnvironment.getEnvironment();
        try (SessionOptions options = new SessionOptions().setIntraOpNumThreads(1);
                OrtSession session = env.createSession(TestModels.model("add16.onnx"), options);
                OnnxTensor a = floats16(0);
                OnnxTensor b = floats16(100);
                OnnxTensor c = OnnxTensor.allocate(OnnxTensorType.FLOAT, 16)) {
            Map<String, OnnxTensor> in = Map.of("a", a, "b", b);
            Map<String, OnnxTensor> out = Map.of("c", c);
            double bytes = bytesPerCall(() -> session.run(in, out, null));
            assertEquals(102f, c.getFloatArray()[1]);
            assertTrue(bytes < 1, "a preallocated run allocates " + bytes + " bytes per call");
        }
    }

    @Test
    void aBoundRunAllocatesNothing() {
        OrtEnvironment env = OrtEnvironment.getEnvironment();
        try (SessionOptions options = new SessionOptions().setIntraOpNumThreads(1);
                OrtSession session = env.createSession(TestModels.model("add16.onnx"), options);
                OnnxTensor a = floats16(0);
                OnnxTensor b = floats16(100);
                OnnxTensor c = OnnxTensor.allocate(OnnxTensorType.FLOAT, 16);
                OrtIoBinding binding = session.createIoBinding()) {
            binding.bindInput("a", a).bindInput("b", b).bindOutput("c", c);
            double bytes = bytesPerCall(() -> session.run(binding));
            assertEquals(130f, c.getFloatArray()[15]);
            assertTrue(bytes < 1, "a bound run allocates " + bytes + " bytes per call");
        }
    }

    /** y = x * factor over a rank-1 float input, reading and writing through the views only. */
    static final class Scale implements CustomKernel {
        private final float factor;

        Scale(float factor) {
            this.factor = factor;
        }

        @Override
        public void compute(KernelContext ctx) {
            KernelTensor x = ctx.input(0, OnnxTensorType.FLOAT, 1);
            KernelTensor y = ctx.output(0, x.dim(0));
            MemorySegment in = x.data();
            MemorySegment out = y.data();
            for (long i = 0, n = x.dim(0); i < n; i++) {
                out.setAtIndex(JAVA_FLOAT, i, in.getAtIndex(JAVA_FLOAT, i) * factor);
            }
        }
    }

    @Test
    void aRunThroughAJavaCustomOperatorAllocatesNothing() {
        Path model = JavaScaleOp.model("java_scale.onnx");
        OrtEnvironment env = OrtEnvironment.getEnvironment();
        try (CustomOpDomain domain = JavaScaleOp.domain(info -> new Scale(info.getFloat("factor")));
                SessionOptions options = new SessionOptions().setIntraOpNumThreads(1).registerCustomOps(domain);
                OrtSession session = env.createSession(model, options);
                OnnxTensor x = floats16(1);
                OnnxTensor y = OnnxTensor.allocate(OnnxTensorType.FLOAT, 16);
                OrtIoBinding binding = session.createIoBinding()) {
            Map<String, OnnxTensor> in = Map.of("x", x);
            Map<String, OnnxTensor> out = Map.of("y", y);
            double bytes = bytesPerCall(() -> session.run(in, out, null));
            assertEquals(2.5f, y.getFloatArray()[0]);
            assertTrue(bytes < 1, "a run of a Java custom operator allocates " + bytes + " bytes per call");
            binding.bindInput("x", x).bindOutput("y", y);
            double bound = bytesPerCall(() -> session.run(binding));
            assertTrue(bound < 1, "a bound run of a Java custom operator allocates " + bound + " bytes per call");
        }
    }
}
