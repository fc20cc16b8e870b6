package org.pvn3d.ort.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Counts beyond any real use are usage errors that name the option and its limit, checked before anything
 * starts: {@code --inflight 2147483647} once made sessions until the machine ran out, {@code --frames 2147483647}
 * ended in "out of memory, give the JVM -Xmx8g" (no heap holds an array that long).
 */
class OptionLimitsTest {
    private static final String NO_SAMPLE = "/no/such/sample.bin";

    /** Exit code 2, "OPTION takes at most LIMIT, not VALUE", the command's usage line; nothing ran. */
    private static void refused(String option, int limit, String... args) {
        MainTest.Output o = MainTest.run(args);
        String what = String.join(" ", args);
        assertEquals(2, o.code(), what + ": " + o.out() + o.err());
        assertTrue(o.err().startsWith("pvn3d-ort: " + option + " takes at most " + limit + ", not "), what + ": " + o.err());
        assertTrue(o.err().contains("Usage: pvn3d-ort"), what + ": " + o.err());
        assertTrue(o.out().isEmpty(), what + ": nothing ran: " + o.out());
    }

    /** At the limit the value passes its check: the run fails on the missing sample, a later check. */
    private static void accepted(String... args) {
        MainTest.Output o = MainTest.run(args);
        assertEquals(2, o.code(), String.join(" ", args) + ": " + o.err());
        assertTrue(o.err().contains("no sample file"), String.join(" ", args) + ": " + o.err());
    }

    @Test
    void framesToPoseInFlightAndThreadsAreBounded() {
        refused("--inflight", 4096, "frame-to-pose", "--inflight", "2147483647", "--frames", "2");
        refused("--inflight", 4096, "frame-to-pose", "--inflight", "1,4097");
        refused("--threads", 1024, "frame-to-pose", "--threads", "2147483647");
        refused("--frames", CommonOptions.MAX_RUNS, "frame-to-pose", "--frames", "2147483647");
        refused("--warmup", CommonOptions.MAX_RUNS, "frame-to-pose", "--warmup", "2147483647");
        refused("--batch", CommonOptions.MAX_BATCH, "frame-to-pose", "--batch", "1," + (CommonOptions.MAX_BATCH + 1));
        accepted("frame-to-pose", "--inflight", "16", "--threads", "1024", "--frames", String.valueOf(CommonOptions.MAX_RUNS),
                "--warmup", String.valueOf(CommonOptions.MAX_RUNS), "--batch", String.valueOf(CommonOptions.MAX_BATCH),
                "--sample", NO_SAMPLE);
        accepted("frame-to-pose", "--inflight", "4096", "--threads", "4", "--sample", NO_SAMPLE);
    }

    /** Each count within its bound, their product not: 4096 sessions x 1024 threads passed both checks (a hostile review). */
    @Test
    void sessionsTimesThreadsIsBoundedToo() {
        for (String[] args : new String[][] {{"frame-to-pose", "--inflight", "4096", "--threads", "1024"},
                {"frame-to-pose", "--inflight", "1,17", "--threads", "1024"}, {"pool-bench", "--sessions", "4096", "--threads", "1024"},
                {"pool-bench", "--ep", "cuda", "--sessions", "2", "--devices", "0,1,2,3,4,5,6,7,8", "--threads", "1024"}}) {
            MainTest.Output o = MainTest.run(args);
            String what = String.join(" ", args);
            assertEquals(2, o.code(), what + ": " + o.out() + o.err());
            assertTrue(o.err().contains("ORT threads; at most " + CommonOptions.MAX_TOTAL_THREADS + " together"), what + ": " + o.err());
            assertTrue(o.out().isEmpty(), what + ": nothing ran: " + o.out());
        }
    }

    @Test
    void everyCommandBoundsItsThreadsRunsAndWarmUp() {
        refused("--threads", 1024, "--threads", "5000");
        refused("--runs", CommonOptions.MAX_RUNS, "--runs", "2147483647");
        refused("--warmup", CommonOptions.MAX_RUNS, "--warmup", "2147483647");
        accepted("--threads", "1024", "--runs", String.valueOf(CommonOptions.MAX_RUNS), "--sample", NO_SAMPLE);
        refused("--threads", 1024, "eval", "/tmp", "--threads", "1025");
        refused("--warmup", CommonOptions.MAX_RUNS, "eval", "/tmp", "--warmup", "2147483647");
        refused("--threads", 1024, "pointnet2", "--threads", "100000");
        refused("--runs", CommonOptions.MAX_RUNS, "pointnet2", "--runs", "2147483647");
        refused("--warmup", CommonOptions.MAX_RUNS, "pointnet2", "--warmup", "2147483647");
        refused("--threads", 1024, "pool-bench", "--threads", "2147483647");
        refused("--frames", CommonOptions.MAX_RUNS, "pool-bench", "--frames", "2147483647");
        refused("--warmup", CommonOptions.MAX_RUNS, "pool-bench", "--warmup", "2147483647");
        refused("--inflight", CommonOptions.MAX_POOL_INFLIGHT, "pool-bench", "--inflight", "2147483647");
        // the bounds that were there: the same message
        refused("--sessions", 4096, "pool-bench", "--sessions", "4097");
        refused("--queue", 1 << 20, "pool-bench", "--queue", "2147483647");
        refused("--scale", 32, "--scale", "33");
    }

    @Test
    void theCallsPerSessionDoNotOverflow() {
        assertEquals(1, FrameToPoseCommand.callsPerSession(1, 8, 4));
        assertEquals(3, FrameToPoseCommand.callsPerSession(10, 2, 2));
        assertEquals(CommonOptions.MAX_RUNS / 2, FrameToPoseCommand.callsPerSession(CommonOptions.MAX_RUNS, 2, 1));
        // was (frames + b * inflight - 1) in int: negative, then one call for 2^31 - 1 frames
        assertEquals(1 << 30, FrameToPoseCommand.callsPerSession(Integer.MAX_VALUE, 2, 1));
        assertEquals(1, FrameToPoseCommand.callsPerSession(1, CommonOptions.MAX_BATCH, 4096));
    }

    @Test
    void outOfMemoryAdviceFitsWhatWentWrong() {
        String tooLong = Errors.describe(new OutOfMemoryError("Requested array size exceeds VM limit"));
        assertTrue(!tooLong.contains("-Xmx"), "no heap holds an array longer than Java allows: " + tooLong);
        assertTrue(tooLong.contains("longer than Java allows") && tooLong.contains("lower"), tooLong);
        String heap = Errors.describe(new OutOfMemoryError("Java heap space"));
        Matcher m = Pattern.compile("-Xmx([0-9]+)g").matcher(heap);
        assertTrue(m.find(), heap);
        long suggested = Long.parseLong(m.group(1)) << 30;
        assertTrue(suggested > Runtime.getRuntime().maxMemory(), "more than this JVM has: " + heap);
        assertEquals("-Xmx2g", Errors.moreHeap(512L << 20));
        assertEquals("-Xmx16g", Errors.moreHeap(8L << 30));
        assertEquals("-Xmx13g", Errors.moreHeap((6L << 30) + 1));
        assertTrue(Errors.moreHeap(Long.MAX_VALUE).matches("-Xmx[0-9]+g"), "no overflow: " + Errors.moreHeap(Long.MAX_VALUE));
        assertTrue(Errors.expected(new OutOfMemoryError("Requested array size exceeds VM limit")));
    }
}
