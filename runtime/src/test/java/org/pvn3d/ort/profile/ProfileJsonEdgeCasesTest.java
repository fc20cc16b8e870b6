package org.pvn3d.ort.profile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The profile summary's JSON at the edges: large and tiny numbers written back whole, hostile JSON refused. */
class ProfileJsonEdgeCasesTest {
    static String node(String name, String op, long dur) {
        return "{\"cat\":\"Node\",\"name\":\"" + name + "_kernel_time\",\"dur\":" + dur
                + ",\"args\":{\"op_name\":\"" + op + "\",\"provider\":\"CPUExecutionProvider\"}}";
    }

    /** A node of 120000.4 ms (a slow operator over a profiled session) keeps its magnitude in the JSON summary. */
    @Test
    void summaryJsonKeepsTheMagnitudeOfItsNumbers() {
        String json = "[{\"cat\":\"Session\",\"name\":\"model_run\",\"dur\":120000400}," + node("conv", "Conv", 120000400) + "]";
        ProfileSummary s = ProfileSummary.parse(json, "p.json", t -> false);
        assertEquals(120000400L, s.hostMicros());
        Map<?, ?> doc = (Map<?, ?>) JsonText.parse(s.toJson());
        double hostMs = ((Number) ((Map<?, ?>) ((List<?>) doc.get("nodes")).get(0)).get("host_ms")).doubleValue();
        assertEquals(120000.4, hostMs, 1.0, "host_ms in " + s.toJson());
        double runMs = ((Number) doc.get("run_ms_total")).doubleValue();
        assertEquals(120000.4, runMs, 1.0);
    }

    @Test
    void writerKeepsExponents() {
        String out = JsonText.write(List.of(12345678912.5, 1.23456789e-10, 100000.3));
        List<?> back = (List<?>) JsonText.parse(out);
        assertEquals(12345678912.5, ((Number) back.get(0)).doubleValue(), 1e5, out);
        assertEquals(1.23456789e-10, ((Number) back.get(1)).doubleValue(), 1e-14, out);
        assertEquals(100000.3, ((Number) back.get(2)).doubleValue(), 1, out);
    }

    @Test
    void hostileJson() {
        assertEquals("é😀", JsonText.parse("\"\\u00e9\\ud83d\\ude00\""));
        assertThrows(IllegalArgumentException.class, () -> JsonText.parse("[".repeat(100000)));
        assertThrows(IllegalArgumentException.class, () -> JsonText.parse("[{\"cat\":\"Node\",\"dur\":1"));
        assertThrows(IllegalArgumentException.class, () -> JsonText.parse("\"\\uZZ\""));
        assertThrows(IllegalArgumentException.class, () -> ProfileSummary.parse("[" + node("a", "A", Long.MAX_VALUE) + "]", "x", t -> false));
        assertThrows(IllegalArgumentException.class, () -> ProfileSummary.parse("[{\"cat\":\"Node\",\"name\":\"a_kernel_time\",\"dur\":1e400}]", "x", t -> false));
        assertThrows(IllegalArgumentException.class, () -> ProfileSummary.parse("[{\"cat\":\"Node\",\"name\":\"a_kernel_time\",\"dur\":123456789012345678901234567890}]", "x", t -> false));
        // duplicate keys: the last wins
        ProfileSummary s = ProfileSummary.parse("[{\"cat\":\"Node\",\"name\":\"a_kernel_time\",\"dur\":5,\"dur\":7,\"args\":{\"op_name\":\"X\"}}]", "x", t -> false);
        assertEquals(7, s.hostMicros());
    }
}
