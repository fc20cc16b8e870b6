package org.pvn3d.ort.customop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.pvn3d.ort.OnnxTensor;
import org.pvn3d.ort.OnnxTensorType;
import org.pvn3d.ort.OrtEnvironment;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.OrtSession;
import org.pvn3d.ort.SessionOptions;

/**
 * A kernel asking for an output that does not exist gets the project's exception from ORT, not a Java one from
 * the output-size check that runs before ORT is asked (found by the review of 2026-12-05: index -1 threw
 * ArrayIndexOutOfBoundsException), and the session goes on serving.
 */
class KernelOutputIndexTest {
    private static volatile int index;

    @Test
    void anOutputIndexOutOfRangeIsAnOrtException() throws Exception {
        Path model = JavaScaleOp.model("java_scale.onnx");
        try (CustomOpDomain domain = JavaScaleOp.domain(info -> ctx -> ctx.output(index, 4).data().fill((byte) 0));
                SessionOptions options = new SessionOptions().setIntraOpNumThreads(1).registerCustomOps(domain);
                OrtSession session = OrtEnvironment.getEnvironment().createSession(model, options);
                OnnxTensor x = OnnxTensor.createTensor(new float[] {1, 2, 3, 4}, 4)) {
            for (int bad : new int[] {-1, 3}) {
                index = bad;
                OrtException e = assertThrows(OrtException.class, () -> session.run(Map.of("x", x)).close());
                assertFalse(e.getMessage().contains("IndexOutOfBounds"), e.getMessage());
            }
            index = 0;
            try (var r = session.run(Map.of("x", x))) {
                assertArrayEquals(new float[4], r.tensor("y").getFloatArray());
            }
        }
    }
}
