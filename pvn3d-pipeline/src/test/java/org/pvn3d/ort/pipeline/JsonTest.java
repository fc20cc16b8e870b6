package org.pvn3d.ort.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The reports' JSON writer keeps every kind of number as it is (BigDecimal 2.5 was written as 2). */
class JsonTest {
    @Test
    void numbersOfEveryKindKeepTheirValue() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("decimal", new BigDecimal("2.5"));
        m.put("small", new BigDecimal("0.001"));
        m.put("big", BigInteger.TWO.pow(70));
        m.put("int", 7);
        m.put("long", Long.MAX_VALUE);
        m.put("double", 0.25);
        m.put("nan", Double.NaN);
        m.put("atomic", new java.util.concurrent.atomic.AtomicLong(12));
        assertEquals("{\n  \"decimal\": 2.5,\n  \"small\": 0.001,\n  \"big\": 1180591620717411303424,\n  \"int\": 7,\n"
                + "  \"long\": 9223372036854775807,\n  \"double\": 0.25,\n  \"nan\": null,\n  \"atomic\": 12\n}\n", Json.write(m));
    }
}
