package org.pvn3d.ort.ops;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.pvn3d.ort.OnnxTensor;
import org.pvn3d.ort.OnnxTensorType;
import org.pvn3d.ort.OrtSession;

/**
 * A run of each PVN3D operator's one-node model on the CPU provider, into preallocated outputs,
 * allocates nothing on the Java heap at steady state: the run, the compute upcall and the kernel's
 * reading of its inputs and allocating of its outputs. Counted with the thread's allocated bytes after
 * a warm-up; this counts bytes, it times nothing.
 */
class OpsZeroAllocationTest {
    static final int WARMUP = 20_000;
    static final int MEASURED = 5_000;

    @BeforeAll
    static void environment() {
        Pvn3dOpsTest.environment(); // the helpers' environment
    }

    @ParameterizedTest
    @MethodSource("org.pvn3d.ort.ops.Pvn3dOpsTest#ops")
    void aRunOfTheOperatorAllocatesNothing(Pvn3dOpsTest.Op op) throws IOException {
        Map<String, Pvt.Tensor> f = Pvn3dOpsTest.fixture(op.snake(), 1);
        Map<String, OnnxTensor> in = new LinkedHashMap<>();
        Map<String, OnnxTensor> out = new LinkedHashMap<>();
        try (OrtSession s = Pvn3dOpsTest.session(op.snake() + ".onnx")) {
            for (String name : op.inputs()) {
                in.put(name, Pvn3dOpsTest.tensor(f.get(name)));
            }
            for (String name : op.outputs()) {
                Pvt.Tensor e = f.get(name);
                out.put(name, OnnxTensor.allocate(e.isFloat() ? OnnxTensorType.FLOAT : OnnxTensorType.INT64, e.shape()));
            }
            com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
            for (int i = 0; i < WARMUP; i++) {
                s.run(in, out, null);
            }
            double best = Double.MAX_VALUE;
            for (int attempt = 0; attempt < 3 && best > 0; attempt++) { // a JIT recompilation may land in one attempt
                long before = mx.getCurrentThreadAllocatedBytes();
                for (int i = 0; i < MEASURED; i++) {
                    s.run(in, out, null);
                }
                best = Math.min(best, (double) (mx.getCurrentThreadAllocatedBytes() - before) / MEASURED);
            }
            for (String name : op.outputs()) { // and the results are still right
                Pvt.Tensor e = f.get(name);
                if (e.isFloat()) {
                    Pvn3dOpsTest.assertClose(e.floats(), out.get(name).getFloatArray(), op + ": " + name);
                } else {
                    assertArrayEquals(e.longs(), out.get(name).getLongArray(), op + ": " + name);
                }
            }
            assertTrue(best < 1, op + ": a run allocates " + best + " bytes per call");
        } finally {
            in.values().forEach(OnnxTensor::close);
            out.values().forEach(OnnxTensor::close);
        }
    }
}
