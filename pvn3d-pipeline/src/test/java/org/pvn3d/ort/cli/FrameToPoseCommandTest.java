package org.pvn3d.ort.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code pvn3d-ort frame-to-pose} on the CPU provider, briefly: one graph and the concurrent branches, the table and the JSON. */
class FrameToPoseCommandTest {
    @Test
    void measuresOneGraphAndTheBranchesAndWritesJson(@TempDir Path dir) throws Exception {
        Path json = dir.resolve("f2p.json");
        MainTest.Output o = MainTest.run("frame-to-pose", "--frames", "2", "--warmup", "1", "--threads", "1", "--branches", "both",
                "--json", json.toString());
        assertEquals(0, o.code(), o.out() + o.err());
        assertTrue(Pattern.compile("(?m)^strict +1 +off +off +1 +2 ").matcher(o.out()).find(), o.out());
        assertTrue(Pattern.compile("(?m)^strict +1 +off +on +1 +2 ").matcher(o.out()).find(), o.out());
        String j = Files.readString(json);
        assertTrue(j.contains("\"branches\": false") && j.contains("\"branches\": true"), j);
        MainTest.Output bad = MainTest.run("frame-to-pose", "--branches", "maybe");
        assertEquals(2, bad.code(), bad.out() + bad.err());
        assertTrue(bad.err().contains("--branches takes off, on or both, not maybe"), bad.err());
    }

    @Test
    void recordsJfrAndRefusesTheSessionProfiler(@TempDir Path dir) throws Exception {
        Path jfr = dir.resolve("f2p.jfr");
        MainTest.Output o = MainTest.run("frame-to-pose", "--frames", "2", "--warmup", "1", "--threads", "1", "--jfr", jfr.toString());
        assertEquals(0, o.code(), o.out() + o.err());
        assertTrue(o.out().contains("jfr: " + jfr), o.out());
        assertTrue(jdk.jfr.consumer.RecordingFile.readAllEvents(jfr).stream()
                .anyMatch(e -> e.getEventType().getName().equals(org.pvn3d.ort.jfr.OrtEvents.RUN)), "the runs are recorded");
        for (String option : new String[] {"--profile=" + dir.resolve("p"), "--device-timing"}) {
            MainTest.Output bad = MainTest.run("frame-to-pose", "--frames", "2", option);
            assertEquals(2, bad.code(), bad.out() + bad.err());
            assertTrue(bad.err().contains("frame-to-pose takes --jfr and --nvtx, not " + option.replaceAll("=.*", "")), bad.err());
        }
    }
}
