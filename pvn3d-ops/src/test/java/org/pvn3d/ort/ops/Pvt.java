package org.pvn3d.ort.ops;

import java.io.IOException;
import java.io.InputStream;
import java.util.LinkedHashMap;
import java.util.Map;
import org.pvn3d.ort.OnnxTensorType;
import org.pvn3d.ort.io.PvtFile;

/** The op fixtures (PVT1 files, read by {@link PvtFile}) as float or long arrays with their shapes. */
final class Pvt {
    /** One tensor of a fixture: float data or long data, and the shape. */
    record Tensor(String name, long[] shape, float[] floats, long[] longs) {
        boolean isFloat() {
            return floats != null;
        }
    }

    private Pvt() {}

    static Map<String, Tensor> read(String resource) throws IOException {
        try (InputStream in = Pvt.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("missing fixture " + resource);
            }
            Map<String, Tensor> out = new LinkedHashMap<>();
            for (PvtFile.Entry e : PvtFile.read(in, resource).values()) {
                boolean f = e.type() == OnnxTensorType.FLOAT;
                out.put(e.name(), new Tensor(e.name(), e.shape(), f ? e.floats() : null, f ? null : e.longs()));
            }
            return out;
        }
    }
}
