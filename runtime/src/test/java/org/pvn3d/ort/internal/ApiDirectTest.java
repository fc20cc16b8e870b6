package org.pvn3d.ort.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.lang.foreign.FunctionDescriptor;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Api.Direct's descriptors, written out by hand, are the generated ones with every pointer as a long. */
class ApiDirectTest {
    @Test
    void everyRawDescriptorMatchesTheGeneratedOne() {
        Map<String, FunctionDescriptor[]> all = Api.Direct.descriptors();
        assertFalse(all.isEmpty());
        all.forEach((name, d) -> assertEquals(Api.Direct.addressesAsLongs(d[1]), d[0], name));
    }
}
