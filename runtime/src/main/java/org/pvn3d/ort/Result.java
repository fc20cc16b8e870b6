package org.pvn3d.ort;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.pvn3d.ort.internal.Api;
import org.pvn3d.ort.internal.RunScratch;

/**
 * The outputs of one run, by name and in the order requested. Owns the values: closing the
 * result closes them (a value taken out with {@link #take} is the caller's to close).
 */
public final class Result implements AutoCloseable, Iterable<Map.Entry<String, OnnxValue>> {
    private final List<String> names;
    private final OnnxValue[] values;

    /**
     * Takes the values {@code raw} (a run's outputs, named by {@code names}), reading each through
     * {@code scratch}; if one cannot be read, releases them all and throws.
     */
    Result(List<String> names, long[] raw, RunScratch scratch) {
        this.names = List.copyOf(names);
        this.values = new OnnxValue[raw.length];
        try {
            for (int i = 0; i < raw.length; i++) {
                Api.checkStatus(Api.Direct.getValueType(raw[i], scratch.out(0)));
                OnnxValueType type = OnnxValueType.of(scratch.outInt(0));
                values[i] = type == OnnxValueType.TENSOR ? OnnxTensorLike.fromOrtValue(raw[i], scratch)
                        : new OnnxOtherValue(MemorySegment.ofAddress(raw[i]), type);
            }
        } catch (RuntimeException | Error e) {
            for (int i = 0; i < raw.length; i++) {
                if (values[i] != null) {
                    values[i].close();
                } else if (raw[i] != 0) {
                    Api.Direct.releaseValue(raw[i]);
                }
            }
            throw e;
        }
    }

    public int size() {
        return values.length;
    }

    /** The output at {@code index} (the model's output order, or the binding's); see {@link #get(String)}. */
    public OnnxValue get(int index) {
        if (index < 0 || index >= values.length) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "no output #" + index + " in this result; it has "
                    + values.length + " " + names);
        }
        return get(names.get(index));
    }

    public OnnxValue get(String name) {
        int i = names.indexOf(name);
        if (i < 0) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "no output '" + name + "' in this result; it has " + names);
        }
        if (values[i] == null) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "output '" + name + "' was taken out of this result");
        }
        return values[i];
    }

    /** The named output as a tensor in host memory; an output in device memory is {@link #deviceTensor}'s. */
    public OnnxTensor tensor(String name) {
        OnnxValue v = get(name);
        if (v instanceof OnnxTensor t) {
            return t;
        }
        if (v instanceof DeviceTensor) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "output '" + name + "' is in device memory, "
                    + "which the host cannot read: take it with deviceTensor(name) and copy it (CudaCopy.toHost)");
        }
        throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "output '" + name + "' is a " + v.getValueType() + ", not a tensor");
    }

    /** The named output as a tensor in device memory (an output bound to a device, say). */
    public DeviceTensor deviceTensor(String name) {
        OnnxValue v = get(name);
        if (v instanceof DeviceTensor t) {
            return t;
        }
        throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "output '" + name + "' is "
                + (v instanceof OnnxTensor ? "in host memory: read it with tensor(name)" : "a " + v.getValueType() + ", not a tensor"));
    }

    /** Removes the named output from this result: the caller owns (and closes) it. */
    public OnnxValue take(String name) {
        OnnxValue v = get(name);
        values[names.indexOf(name)] = null;
        return v;
    }

    public List<String> names() {
        return names;
    }

    @Override
    public Iterator<Map.Entry<String, OnnxValue>> iterator() {
        List<Map.Entry<String, OnnxValue>> entries = new ArrayList<>();
        for (int i = 0; i < values.length; i++) {
            if (values[i] != null) {
                entries.add(Map.entry(names.get(i), values[i]));
            }
        }
        return entries.iterator();
    }

    @Override
    public void close() {
        for (int i = 0; i < values.length; i++) {
            if (values[i] != null) {
                values[i].close();
            }
        }
    }
}
