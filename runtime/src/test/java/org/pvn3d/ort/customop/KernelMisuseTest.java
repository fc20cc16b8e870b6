package org.pvn3d.ort.customop;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.pvn3d.ort.OnnxTensor;
import org.pvn3d.ort.OrtEnvironment;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.OrtSession;
import org.pvn3d.ort.Result;
import org.pvn3d.ort.SessionOptions;

/**
 * A kernel that keeps its views past compute, reads attributes of every kind with the right and the wrong
 * getter, or asks for ports that do not exist: each gets an OrtException, the caller's result stays intact.
 */
class KernelMisuseTest {
    static volatile KernelTensor keptOutput;
    static volatile KernelTensor keptInput;

    static CustomOp op(KernelFactory f) {
        return CustomOp.builder("JavaScale")
                .input(Port.of("x", org.pvn3d.ort.OnnxTensorType.FLOAT))
                .output(Port.of("y", org.pvn3d.ort.OnnxTensorType.FLOAT))
                .kernel(f)
                .build();
    }

    static byte[] scaleModel(TinyOnnx... attrs) {
        TinyOnnx node = TinyOnnx.msg().s(1, "x").s(2, "y").s(3, "n0").s(4, "JavaScale").s(7, "test.java");
        for (TinyOnnx a : attrs) {
            node.m(5, a);
        }
        return TinyOnnx.model(node, "test.java");
    }

    @Test
    void keptKernelTensorIsRefusedAfterCompute() {
        KernelFactory f = info -> ctx -> {
            KernelTensor x = ctx.input(0);
            KernelTensor y = ctx.output(0, x.dim(0));
            for (long i = 0; i < x.elementCount(); i++) {
                y.data().setAtIndex(JAVA_FLOAT, i, x.data().getAtIndex(JAVA_FLOAT, i) * 2);
            }
            keptOutput = y;
            keptInput = x;
        };
        try (CustomOpDomain d = CustomOpDomain.of("test.java", op(f)); SessionOptions o = new SessionOptions()) {
            o.registerCustomOps(d);
            try (OrtSession s = OrtEnvironment.getEnvironment().createSession(scaleModel(), o);
                    OnnxTensor x = OnnxTensor.createTensor(new float[] {1, 2, 3}, 3);
                    Result r = s.run(Map.of("x", x))) {
                float[] before = r.tensor("y").getFloatArray();
                assertArrayEquals(new float[] {2, 4, 6}, before);
                // after compute returned the views are refused: a write would land in the caller's result
                for (KernelTensor kept : new KernelTensor[] {keptOutput, keptInput}) {
                    OrtException e = assertThrows(OrtException.class, kept::data);
                    assertTrue(e.getMessage().endsWith("the KernelContext is only valid while compute runs"), e.getMessage());
                }
                assertArrayEquals(before, r.tensor("y").getFloatArray());
            }
        }
    }

    @Test
    void attributesOfEveryKind() {
        List<String> problems = new ArrayList<>();
        KernelFactory f = info -> {
            check(problems, "getInt absent default", () -> info.getInt("absent", 7), 7L);
            check(problems, "getFloat absent default", () -> info.getFloat("absent", 1.5f), 1.5f);
            check(problems, "getInt", () -> info.getInt("i"), -5L);
            check(problems, "getFloat", () -> info.getFloat("f"), 2.5f);
            check(problems, "getString", () -> info.getString("s"), "héllo");
            check(problems, "getString empty", () -> info.getString("empty"), "");
            check(problems, "getString long", () -> info.getString("long").length(), 100000);
            checkArray(problems, "getInts", () -> info.getInts("ints"), new long[] {1, -2, 3});
            checkArray(problems, "getFloats", () -> info.getFloats("floats"), new float[] {0.5f, -1f});
            checkArray(problems, "getInts empty", () -> info.getInts("noints"), new long[0]);
            check(problems, "hasAttribute s", () -> info.hasAttribute("s"), true);
            check(problems, "hasAttribute floats", () -> info.hasAttribute("floats"), true);
            check(problems, "hasAttribute absent", () -> info.hasAttribute("absent"), false);
            check(problems, "getInt(f, default) on a float", () -> info.getInt("f", 3), "OrtException");
            check(problems, "getFloat on int", () -> info.getFloat("i"), "OrtException");
            check(problems, "getInt on float", () -> info.getInt("f"), "OrtException");
            check(problems, "getString on int", () -> info.getString("i"), "OrtException");
            check(problems, "getString absent", () -> info.getString("absent"), "OrtException");
            check(problems, "getInts on floats", () -> info.getInts("floats"), "OrtException");
            check(problems, "getFloats on ints", () -> info.getFloats("ints"), "OrtException");
            check(problems, "getInts on int", () -> info.getInts("i"), "OrtException");
            check(problems, "getInts absent", () -> info.getInts("absent"), "OrtException");
            check(problems, "getInt NUL", () -> info.getInt("i\0x"), "OrtException");
            return ctx -> {
                KernelTensor x = ctx.input(0);
                KernelTensor y = ctx.output(0, x.dim(0));
                MemorySegment.copy(x.data(), 0, y.data(), 0, x.data().byteSize());
            };
        };
        byte[] model = scaleModel(TinyOnnx.attrInt("i", -5), TinyOnnx.attrFloat("f", 2.5f), TinyOnnx.attrString("s", "héllo"),
                TinyOnnx.attrString("empty", ""), TinyOnnx.attrString("long", "z".repeat(100000)),
                TinyOnnx.attrInts("ints", 1, -2, 3), TinyOnnx.attrFloats("floats", 0.5f, -1f), TinyOnnx.attrInts("noints"));
        try (CustomOpDomain d = CustomOpDomain.of("test.java", op(f)); SessionOptions o = new SessionOptions()) {
            o.registerCustomOps(d);
            try (OrtSession s = OrtEnvironment.getEnvironment().createSession(model, o)) {
                assertTrue(problems.isEmpty(), String.join("\n", problems));
            }
        }
    }

    static void check(List<String> problems, String what, Supplier<Object> call, Object expected) {
        Object got;
        try {
            got = call.get();
        } catch (Throwable t) {
            got = t instanceof OrtException ? "OrtException" : t.toString();
        }
        if (!expected.equals(got)) {
            problems.add(what + ": expected " + expected + " got " + got);
        }
    }

    static void checkArray(List<String> problems, String what, Supplier<Object> call, Object expected) {
        Object got;
        try {
            got = call.get();
        } catch (Throwable t) {
            problems.add(what + ": threw " + t);
            return;
        }
        boolean eq = expected instanceof long[] l ? java.util.Arrays.equals(l, (long[]) got)
                : java.util.Arrays.equals((float[]) expected, (float[]) got);
        if (!eq) {
            problems.add(what + ": got " + (got instanceof long[] l ? java.util.Arrays.toString(l) : java.util.Arrays.toString((float[]) got)));
        }
    }

    @Test
    void badIndicesInsideComputeFailTheRunClearly() {
        List<String> seen = new ArrayList<>();
        KernelFactory f = info -> ctx -> {
            for (Supplier<Object> call : List.<Supplier<Object>>of(() -> ctx.inputOrNull(-1), () -> ctx.inputOrNull(5),
                    () -> ctx.output(-1, 2), () -> ctx.output(3, 2), () -> ctx.output(0, -1))) {
                try {
                    Object o = call.get();
                    seen.add("ok " + o);
                } catch (OrtException e) {
                    seen.add("OrtException");
                } catch (Throwable t) {
                    seen.add(t.toString());
                }
            }
            KernelTensor x = ctx.input(0);
            KernelTensor y = ctx.output(0, x.dim(0));
            MemorySegment.copy(x.data(), 0, y.data(), 0, x.data().byteSize());
        };
        try (CustomOpDomain d = CustomOpDomain.of("test.java", op(f)); SessionOptions o = new SessionOptions()) {
            o.registerCustomOps(d);
            try (OrtSession s = OrtEnvironment.getEnvironment().createSession(scaleModel(), o);
                    OnnxTensor x = OnnxTensor.createTensor(new float[] {1, 2}, 2)) {
                try (Result r = s.run(Map.of("x", x))) {
                    assertArrayEquals(new float[] {1, 2}, r.tensor("y").getFloatArray(), "the kernel goes on after the refusals");
                }
                // an input index out of range is absent (null) on ORT 1.16, refused by ORT itself on 1.24 (input -1)
                for (String v : seen.subList(0, 2)) {
                    assertTrue(v.equals("ok null") || v.equals("OrtException"), seen.toString());
                }
                assertEquals(List.of("OrtException", "OrtException", "OrtException"), seen.subList(2, 5), seen.toString());
            }
        }
    }
}
