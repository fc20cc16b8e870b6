package org.pvn3d.ort.iobinding;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pvn3d.ort.DeviceTensor;
import org.pvn3d.ort.JavaAllocator;
import org.pvn3d.ort.OnnxTensor;
import org.pvn3d.ort.OnnxTensorType;
import org.pvn3d.ort.OrtAllocator;
import org.pvn3d.ort.OrtEnvironment;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.OrtIoBinding;
import org.pvn3d.ort.OrtMemoryInfo;
import org.pvn3d.ort.OrtSession;
import org.pvn3d.ort.Result;
import org.pvn3d.ort.SessionOptions;
import org.pvn3d.ort.cuda.CudaCopy;
import org.pvn3d.ort.cuda.CudaDevice;
import org.pvn3d.ort.cuda.CudaEvent;
import org.pvn3d.ort.cuda.CudaJavaAllocator;
import org.pvn3d.ort.cuda.CudaStream;
import org.pvn3d.ort.cuda.DeviceBuffer;
import org.pvn3d.ort.cuda.PinnedBuffer;
import org.pvn3d.ort.providers.OrtCUDAProviderOptions;

/**
 * Device tensors, IO binding and allocators on the CUDA provider (GPU machine only; skipped, and
 * says so, without a CUDA device).
 */
class IoBindingGpuTest {
    static final OrtEnvironment env = OrtEnvironment.getEnvironment();

    @BeforeAll
    static void gpuOnly() {
        Assumptions.assumeTrue(CudaDevice.count() > 0,
                "no CUDA device (or no CUDA runtime library): these runs are made on the GPU machine");
        CudaDevice.Properties p = CudaDevice.properties(0);
        System.out.println("IoBindingGpuTest on " + p + ", " + CudaDevice.memoryInfo(0) + ", ORT " + env.getRuntime());
    }

    static OrtSession cudaSession(String model, Path profilePrefix) {
        try (SessionOptions o = new SessionOptions()) {
            if (profilePrefix != null) {
                o.enableProfiling(profilePrefix.toString());
            }
            o.addExecutionProvider(new OrtCUDAProviderOptions(0));
            return env.createSession(IoBindingCpuTest.model(model), o);
        }
    }

    static float[] floats(DeviceTensor deviceTensor) {
        try (OnnxTensor h = CudaCopy.toHost(deviceTensor)) {
            return h.getFloatArray();
        }
    }

    @Test
    void buffersPinnedMemoryStreamsAndEvents() {
        float[] values = IoBindingCpuTest.ramp(1 << 16, -5, 0.001f);
        long bytes = (long) values.length * Float.BYTES;
        try (CudaStream stream = CudaStream.create();
                PinnedBuffer pinned = PinnedBuffer.allocate(bytes);
                PinnedBuffer back = PinnedBuffer.allocate(bytes);
                DeviceBuffer a = DeviceBuffer.allocate(0, bytes);
                DeviceBuffer b = DeviceBuffer.allocate(0, bytes);
                CudaEvent start = CudaEvent.create();
                CudaEvent end = CudaEvent.create()) {
            pinned.segment().copyFrom(MemorySegment.ofArray(values));
            start.record(stream);
            a.copyFromHostAsync(pinned.segment(), 0, stream);
            b.copyFromDeviceAsync(a, 0, 0, bytes, stream);
            b.copyToHostAsync(back.segment(), 0, stream);
            end.record(stream);
            end.synchronize();
            float ms = CudaEvent.elapsedMillis(start, end);
            System.out.printf("h2d + d2d + d2h of %d bytes through pinned memory on a Java stream: %.3f ms%n", bytes, ms);
            assertArrayEquals(values, back.segment().toArray(ValueLayout.JAVA_FLOAT));
            a.fillAsync(0, stream);
            stream.synchronize();
            assertArrayEquals(new float[16], a.toFloatArray(16));
            assertThrows(OrtException.class, () -> a.copyFromHostAsync(MemorySegment.ofArray(new float[4]), 0, stream),
                    "an async copy from the Java heap is refused");
            assertThrows(OrtException.class, () -> a.copyToHostAsync(pinned.segment(), 8, stream), "out of bounds");
        }
    }

    @Test
    void deviceTensorsInAndOutOnTheCudaProvider() {
        float[] x = IoBindingCpuTest.ramp(4 * 4, 1, 0.5f);
        float[] y = IoBindingCpuTest.ramp(4 * 4, -2, 0.25f);
        try (OrtSession s = cudaSession("arith.onnx", null);
                DeviceBuffer bx = DeviceBuffer.of(x);
                DeviceBuffer by = DeviceBuffer.of(y);
                DeviceTensor tx = DeviceTensor.createTensor(bx, OnnxTensorType.FLOAT, 4, 4);
                DeviceTensor ty = DeviceTensor.createTensor(by, OnnxTensorType.FLOAT, 4, 4);
                OrtMemoryInfo cuda = OrtMemoryInfo.cuda(0);
                OrtMemoryInfo cpu = OrtMemoryInfo.cpu();
                OrtIoBinding b = s.createIoBinding()) {
            assertTrue(tx.isOnDevice());
            // a DeviceTensor has no host reads at all; a host tensor over device memory is refused
            OrtException e = assertThrows(OrtException.class, () -> OnnxTensor.createTensor(bx, OnnxTensorType.FLOAT, 4, 4));
            assertTrue(e.getMessage().contains("device memory"), e.getMessage());
            b.bindInput("x", tx).bindInput("y", ty).bindOutput("sum", cuda).bindOutput("prod", cuda).bindOutput("affine", cpu);
            b.synchronizeBoundInputs();
            s.run(b);
            b.synchronizeBoundOutputs();
            try (Result r = b.getOutputs()) {
                DeviceTensor sum = r.deviceTensor("sum");
                assertTrue(sum.isOnDevice() && r.deviceTensor("prod").isOnDevice());
                assertTrue(!r.tensor("affine").isOnDevice());
                OrtException hostRead = assertThrows(OrtException.class, () -> r.tensor("sum"));
                assertTrue(hostRead.getMessage().contains("device memory"), hostRead.getMessage());
                try (OrtMemoryInfo where = sum.getMemoryInfo()) {
                    assertEquals("Cuda", where.getName());
                    assertEquals(OrtMemoryInfo.DeviceType.GPU, where.getDeviceType());
                }
                IoBindingCpuTest.assertArith(x, y, floats(sum), floats(r.deviceTensor("prod")), r.tensor("affine").getFloatArray());
            }
            // a device tensor the session's CUDA allocator holds, written from the host
            try (OrtAllocator alloc = s.getAllocator(cuda)) {
                try (DeviceTensor t = DeviceTensor.createTensor(alloc, OnnxTensorType.FLOAT, 4, 4)) {
                    assertTrue(t.isOnDevice());
                    CudaCopy.copyFromHost(MemorySegment.ofArray(y), t, null);
                    b.bindInput("x", t);
                    s.run(b);
                    try (Result r = b.getOutputs()) {
                        IoBindingCpuTest.assertArith(y, y, floats(r.deviceTensor("sum")), null, null);
                    }
                }
            }
            // the buffer's owner closes it first: the tensor over it stays valid
            bx.close();
            assertTrue(!bx.isFreed());
            b.bindInput("x", tx);
            s.run(b);
            try (Result r = b.getOutputs()) {
                IoBindingCpuTest.assertArith(x, y, floats(r.deviceTensor("sum")), null, null);
            }
            tx.close();
            assertTrue(!bx.isFreed(), "ORT's binding still references x: the buffer stays");
            b.clearBoundInputs();
            assertTrue(bx.isFreed(), "once the binding let go of the last tensor over it, the buffer is freed");
        }
    }

    /** Memcpy nodes (MemcpyFromHost / MemcpyToHost) that ORT ran, from a profile. */
    static int memcpyEvents(String profile) throws Exception {
        String json = Files.readString(Path.of(profile));
        Matcher m = Pattern.compile("\"name\"\\s*:\\s*\"([^\"]*)\"").matcher(json);
        int n = 0;
        int nodes = 0;
        while (m.find()) {
            String name = m.group(1);
            if (name.endsWith("_kernel_time")) {
                nodes++;
                if (name.contains("Memcpy")) {
                    n++;
                }
            }
        }
        assertTrue(nodes > 0, "the profile " + profile + " lists node runs");
        Matcher op = Pattern.compile("\"op_name\"\\s*:\\s*\"(Memcpy[A-Za-z]*)\"").matcher(json);
        int ops = 0;
        while (op.find()) {
            ops++;
        }
        return Math.max(n, ops);
    }

    @Test
    void twoSessionChainKeepsTheIntermediateOnTheDevice(@TempDir Path dir) throws Exception {
        float[] x = IoBindingCpuTest.ramp(8 * 4, 0.5f, 0.5f);
        float[] y = IoBindingCpuTest.ramp(8 * 4, 3, -0.125f);
        OrtSession first = cudaSession("arith.onnx", dir.resolve("first"));
        OrtSession second = cudaSession("arith.onnx", dir.resolve("second"));
        try (first; second;
                DeviceBuffer bx = DeviceBuffer.of(x);
                DeviceBuffer by = DeviceBuffer.of(y);
                DeviceTensor tx = DeviceTensor.createTensor(bx, OnnxTensorType.FLOAT, 8, 4);
                DeviceTensor ty = DeviceTensor.createTensor(by, OnnxTensorType.FLOAT, 8, 4);
                OrtMemoryInfo cuda = OrtMemoryInfo.cuda(0);
                OrtIoBinding b1 = first.createIoBinding();
                OrtIoBinding b2 = second.createIoBinding()) {
            b1.bindInput("x", tx).bindInput("y", ty).bindOutput("sum", cuda);
            b2.bindInput("y", ty).bindOutput("prod", cuda);
            for (int run = 0; run < 5; run++) {
                first.run(b1);
                try (Result r1 = b1.getOutputs()) {
                    DeviceTensor mid = r1.deviceTensor("sum"); // x + y, on the device
                    assertTrue(mid.isOnDevice());
                    b2.bindInput("x", mid);
                    second.run(b2);
                    try (Result r2 = b2.getOutputs()) {
                        DeviceTensor out = r2.deviceTensor("prod"); // (x + y) * y
                        assertTrue(out.isOnDevice());
                        float[] got = floats(out);
                        for (int i = 0; i < x.length; i++) {
                            assertEquals((x[i] + y[i]) * y[i], got[i], 1e-5f * Math.max(1, Math.abs(got[i])));
                        }
                    }
                    b2.clearBoundInputs();
                    b2.bindInput("y", ty);
                }
            }
            int m1 = memcpyEvents(first.endProfiling());
            int m2 = memcpyEvents(second.endProfiling());
            System.out.println("two-session device chain: Memcpy nodes run by session 1 = " + m1 + ", by session 2 = " + m2);
            assertEquals(0, m1, "session 1 copied nothing between host and device");
            assertEquals(0, m2, "session 2 copied nothing between host and device");
        }
    }

    @Test
    void twoThousandBoundRunsKeepDeviceMemoryFlat() {
        float[] x = IoBindingCpuTest.ramp(32 * 64, -1, 1f / 1024);
        try (OrtSession s = cudaSession("matmul_chain.onnx", null);
                DeviceBuffer bx = DeviceBuffer.of(x);
                DeviceTensor tx = DeviceTensor.createTensor(bx, OnnxTensorType.FLOAT, 32, 64);
                OnnxTensor hx = OnnxTensor.createTensor(x, 32, 64);
                OrtMemoryInfo cuda = OrtMemoryInfo.cuda(0);
                OrtIoBinding b = s.createIoBinding()) {
            float[] expected;
            try (Result r = s.run(Map.of("x", hx))) {
                expected = r.tensor("y").getFloatArray();
            }
            b.bindInput("x", tx).bindOutput("y", cuda);
            for (int i = 0; i < 100; i++) { // warm-up: arenas reach their steady size
                s.run(b);
                b.getOutputs().close();
            }
            CudaDevice.synchronize();
            long liveValues = org.pvn3d.ort.NativeObject.liveCount("OrtValue");
            CudaDevice.MemoryInfo start = CudaDevice.memoryInfo(0);
            long t0 = System.nanoTime();
            for (int i = 0; i < 2000; i++) {
                s.run(b);
                try (Result r = b.getOutputs()) {
                    if (i % 500 == 0) {
                        assertArrayEquals(expected, floats(r.deviceTensor("y")), 1e-4f);
                    }
                }
            }
            CudaDevice.synchronize();
            CudaDevice.MemoryInfo end = CudaDevice.memoryInfo(0);
            long delta = start.freeBytes() - end.freeBytes();
            System.out.printf("2000 bound runs in %.1f ms; device free memory %d -> %d bytes (%+d)%n",
                    (System.nanoTime() - t0) / 1e6, start.freeBytes(), end.freeBytes(), -delta);
            assertTrue(Math.abs(delta) <= 8L << 20, "device memory changed by " + delta + " bytes over 2000 runs");
            assertEquals(liveValues, org.pvn3d.ort.NativeObject.liveCount("OrtValue"), "no output leaked");
        }
    }

    @Test
    void javaAllocatorServesTheCudaProvider() {
        JavaAllocator ja = CudaJavaAllocator.create(0);
        try {
            try {
                env.registerAllocator(ja);
            } catch (OrtException e) {
                Assumptions.abort("this ORT runtime (" + env.getRuntime() + ") does not share a CUDA allocator: " + e.getMessage());
            }
            float[] x = IoBindingCpuTest.ramp(16 * 64, -1, 1f / 512);
            try (SessionOptions o = new SessionOptions()
                    .addConfigEntry(OrtEnvironment.USE_ENV_ALLOCATORS, "1")) {
                o.addExecutionProvider(new OrtCUDAProviderOptions(0));
                try (OrtSession s = env.createSession(IoBindingCpuTest.model("matmul_chain.onnx"), o);
                        OnnxTensor hx = OnnxTensor.createTensor(x, 16, 64);
                        OrtMemoryInfo cuda = OrtMemoryInfo.cuda(0);
                        OrtIoBinding b = s.createIoBinding()) {
                    b.bindInput("x", hx).bindOutput("y", cuda);
                    s.run(b);
                    try (Result r = b.getOutputs(); Result plain = s.run(Map.of("x", hx))) {
                        assertArrayEquals(plain.tensor("y").getFloatArray(), floats(r.deviceTensor("y")), 1e-5f);
                    }
                    System.out.println("JavaAllocator (cuda) with a CUDA session: " + ja.counters());
                    assertTrue(ja.counters().allocations() > 0, "the CUDA provider allocated through Java: " + ja.counters());
                }
            }
            System.out.println("JavaAllocator (cuda) after the session closed: " + ja.counters());
            assertEquals(0, ja.counters().bytesLive());
            env.unregisterAllocator(ja);
        } finally {
            ja.close();
        }
    }

    @Test
    void deviceFacts() {
        int n = CudaDevice.count();
        assertTrue(n > 0);
        List<CudaDevice.Properties> all = java.util.stream.IntStream.range(0, n).mapToObj(CudaDevice::properties).toList();
        all.forEach(p -> System.out.println("CUDA device: " + p));
        assertTrue(all.get(0).totalMemory() > 0 && all.get(0).multiprocessors() > 0);
        CudaDevice.MemoryInfo m = CudaDevice.memoryInfo(0);
        assertTrue(m.freeBytes() > 0 && m.freeBytes() <= m.totalBytes());
    }
}
