package org.pvn3d.ort;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SessionOptionsTest {
    final OrtEnvironment env = OrtEnvironment.getEnvironment();

    static float[] runArith(OrtSession s, float[] x, float[] y, int batch) {
        try (OnnxTensor tx = OnnxTensor.createTensor(x, batch, 4);
                OnnxTensor ty = OnnxTensor.createTensor(y, batch, 4);
                Result r = s.run(Map.of("x", tx, "y", ty))) {
            return r.tensor("prod").getFloatArray();
        }
    }

    @Test
    void everySettingIsAcceptedAndTheModelStillComputes() {
        try (SessionOptions o = new SessionOptions()
                .setOptimizationLevel(SessionOptions.OptLevel.NO_OPT)
                .setIntraOpNumThreads(2)
                .setInterOpNumThreads(1)
                .setExecutionMode(SessionOptions.ExecutionMode.PARALLEL)
                .setMemoryPatternOptimization(false)
                .setCPUArenaAllocator(false)
                .setLogId("options-test")
                .setSessionLogLevel(OrtLoggingLevel.ORT_LOGGING_LEVEL_ERROR)
                .setSessionLogVerbosityLevel(0)
                .addConfigEntry("session.intra_op.allow_spinning", "0");
                OrtSession s = env.createSession(TestModels.model("arith.onnx"), o)) {
            assertArrayEquals(new float[] {2, 4, 6, 8}, runArith(s, new float[] {1, 2, 3, 4}, new float[] {2, 2, 2, 2}, 1));
        }
        for (SessionOptions.OptLevel level : SessionOptions.OptLevel.values()) {
            try (SessionOptions o = new SessionOptions().setOptimizationLevel(level);
                    OrtSession s = env.createSession(TestModels.model("matmul_chain.onnx"), o)) {
                assertEquals(List.of("y"), s.getOutputNames());
            }
        }
    }

    @Test
    void aFreeDimensionOverrideFixesTheBatch() {
        try (SessionOptions o = new SessionOptions().addFreeDimensionOverrideByName("batch", 2);
                OrtSession s = env.createSession(TestModels.model("arith.onnx"), o)) {
            assertArrayEquals(new float[] {1, 1, 1, 1, 4, 4, 4, 4},
                    runArith(s, new float[] {1, 1, 1, 1, 2, 2, 2, 2}, new float[] {1, 1, 1, 1, 2, 2, 2, 2}, 2));
            assertThrows(OrtException.class, () -> runArith(s, new float[4], new float[4], 1));
        }
    }

    @Test
    void profilingWritesATraceWithTheModelsNodes(@TempDir Path dir) throws Exception {
        String prefix = dir.resolve("profile").toString();
        try (SessionOptions o = new SessionOptions().enableProfiling(prefix);
                OrtSession s = env.createSession(TestModels.model("arith.onnx"), o)) {
            runArith(s, new float[4], new float[4], 1);
            Path file = Path.of(s.endProfiling());
            if (!file.isAbsolute()) {
                file = Path.of(System.getProperty("user.dir")).resolve(file);
            }
            assertTrue(file.getFileName().toString().startsWith("profile"), file.toString());
            String trace = Files.readString(file);
            assertTrue(trace.contains("\"cat\" : \"Node\"") || trace.contains("\"cat\":\"Node\""), "node events in the trace");
            assertTrue(trace.contains("Mul") && trace.contains("Add"), "the model's operators appear in the trace");
        }
    }

    @Test
    void aBadConfigValueIsAClearException() {
        try (SessionOptions o = new SessionOptions()) {
            o.addConfigEntry("session.disable_prepacking", "1");
            o.addConfigEntry("session.disable_prepacking", "0"); // overriding an entry is allowed
            OrtException e = assertThrows(OrtException.class, () -> o.addConfigEntry("", "1"));
            assertEquals(OrtErrorCode.ORT_INVALID_ARGUMENT, e.getCode());
            assertTrue(e.getMessage().contains("config entry"), e.getMessage());
        }
    }

    @Test
    void configEntriesReadBackWithTheirLastValue() {
        try (SessionOptions o = new SessionOptions()) {
            assertEquals(Map.of(), o.getConfigEntries());
            o.addConfigEntry("session.intra_op.allow_spinning", "0").addConfigEntry("session.disable_prepacking", "1");
            o.addConfigEntry("session.intra_op.allow_spinning", "1");
            assertThrows(OrtException.class, () -> o.addConfigEntry("", "1")); // refused: not recorded
            Map<String, String> entries = o.getConfigEntries();
            assertEquals(List.of("session.intra_op.allow_spinning", "session.disable_prepacking"), List.copyOf(entries.keySet()));
            assertEquals("1", entries.get("session.intra_op.allow_spinning"));
            assertThrows(UnsupportedOperationException.class, () -> entries.put("x", "y"));
        }
    }

    @Test
    void ortsLogGoesToTheJavaLogger() {
        Logger logger = Logger.getLogger(OrtEnvironment.ORT_LOGGER);
        Level old = logger.getLevel();
        List<LogRecord> records = new CopyOnWriteArrayList<>();
        Handler handler = new Handler() {
            @Override
            public void publish(LogRecord record) {
                records.add(record);
            }

            @Override
            public void flush() {}

            @Override
            public void close() {}
        };
        logger.setLevel(Level.ALL);
        logger.addHandler(handler);
        try (SessionOptions o = new SessionOptions()
                .setLogId("verbose-session")
                .setSessionLogLevel(OrtLoggingLevel.ORT_LOGGING_LEVEL_VERBOSE);
                OrtSession s = env.createSession(TestModels.model("arith.onnx"), o)) {
            runArith(s, new float[4], new float[4], 1);
        } finally {
            logger.removeHandler(handler);
            logger.setLevel(old);
        }
        assertTrue(!records.isEmpty(), "ORT's verbose session log reached the Java logger");
        assertTrue(records.stream().anyMatch(r -> String.valueOf(r.getParameters() == null ? r.getMessage()
                : java.text.MessageFormat.format(r.getMessage(), r.getParameters())).contains("verbose-session")),
                "the session's log id is in the messages");
    }

    @Test
    void aNegativeThreadCountIsRefused() {
        try (SessionOptions o = new SessionOptions()) {
            OrtException intra = assertThrows(OrtException.class, () -> o.setIntraOpNumThreads(-1));
            assertEquals(OrtErrorCode.ORT_INVALID_ARGUMENT, intra.getCode());
            assertTrue(intra.getMessage().contains("intra-op") && intra.getMessage().contains("-1"), intra.getMessage());
            OrtException inter = assertThrows(OrtException.class, () -> o.setInterOpNumThreads(-4));
            assertEquals(OrtErrorCode.ORT_INVALID_ARGUMENT, inter.getCode());
            assertTrue(inter.getMessage().contains("inter-op") && inter.getMessage().contains("-4"), inter.getMessage());
            o.setIntraOpNumThreads(0).setInterOpNumThreads(0); // 0 still lets ORT choose
        }
    }
}
