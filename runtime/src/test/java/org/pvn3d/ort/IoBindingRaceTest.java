package org.pvn3d.ort;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * One output bound from two threads at once, to ORT-allocated memory and to a preallocated tensor:
 * whichever wins, the binding's own record and ORT's binding agree, so a run writes the tensor exactly
 * when the binding says the output is bound to it.
 */
class IoBindingRaceTest {
    static final int ROUNDS = 60000;

    @Test
    void concurrentRebindsOfOneOutputLeaveTheBindingAndOrtAgreeing() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try (OrtSession s = OrtEnvironment.getEnvironment().createSession(TestModels.model("arith.onnx"));
                OnnxTensor x = OnnxTensor.createTensor(new float[] {1, 2, 3, 4, 5, 6, 7, 8}, 2, 4);
                OnnxTensor prod = OnnxTensor.allocate(OnnxTensorType.FLOAT, 2, 4);
                OrtMemoryInfo cpu = OrtMemoryInfo.cpu();
                OrtIoBinding b = s.createIoBinding()) {
            b.bindInput("x", x).bindInput("y", x).bindOutput("sum", cpu).bindOutput("affine", cpu);
            CyclicBarrier start = new CyclicBarrier(2);
            for (int round = 0; round < ROUNDS; round++) {
                Future<?> toDevice = pool.submit(() -> {
                    start.await();
                    return b.bindOutput("prod", cpu);
                });
                Future<?> toTensor = pool.submit(() -> {
                    start.await();
                    return b.bindOutput("prod", prod);
                });
                toDevice.get();
                toTensor.get();
                prod.data().fill((byte) 0xff); // NaN
                s.run(b);
                boolean boundToTensor = b.sizes().outputBytes() > 0; // an output ORT allocates has no bytes
                boolean written = !Float.isNaN(prod.data().getAtIndex(JAVA_FLOAT, 0));
                assertEquals(boundToTensor, written, "round " + round + ": the run wrote the tensor iff the binding says it is bound");
            }
        } finally {
            pool.shutdownNow();
        }
    }
}
