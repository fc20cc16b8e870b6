package org.pvn3d.ort;

import java.lang.foreign.MemorySegment;
import org.pvn3d.ort.ffm.OrtApi;
import org.pvn3d.ort.internal.Api;

/** A value that is not a tensor (a sequence, a map, ...): owned and released, not read by this library. */
public final class OnnxOtherValue extends NativeObject implements OnnxValue {
    private final OnnxValueType type;

    OnnxOtherValue(MemorySegment value, OnnxValueType type) {
        super("OrtValue", value);
        this.type = type;
    }

    @Override
    public OnnxValueType getValueType() {
        return type;
    }

    @Override
    protected void releaseNative(MemorySegment handle) {
        OrtApi.ReleaseValue.invoke(Api.Value.ReleaseValue, handle);
    }
}
