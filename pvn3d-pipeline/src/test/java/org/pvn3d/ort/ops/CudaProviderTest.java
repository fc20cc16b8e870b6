package org.pvn3d.ort.ops;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pvn3d.ort.OnnxTensor;
import org.pvn3d.ort.OrtEnvironment;
import org.pvn3d.ort.OrtRuntime;
import org.pvn3d.ort.OrtSession;
import org.pvn3d.ort.Result;
import org.pvn3d.ort.SessionOptions;
import org.pvn3d.ort.cuda.CudaStream;
import org.pvn3d.ort.io.PvtFile;
import org.pvn3d.ort.providers.OrtCUDAProviderOptions;

/**
 * The embedded PointNet++ graph on the CUDA provider (GPU machine only): it equals the CPU provider,
 * every PVN3D node ran on CUDA (ORT's profile says so, node by node), and the kernels ran on ORT's
 * compute stream, or on the caller's stream once {@code user_compute_stream} is set.
 */
class CudaProviderTest {
    static byte[] model;
    static Map<String, PvtFile.Entry> sample;

    @BeforeAll
    static void gpuOnly() throws Exception {
        Assumptions.assumeTrue(Pvn3dOps.nativeBuiltWithCuda() && Pvn3dOps.cudaDeviceCount() > 0,
                "no CUDA device (or a CPU-only libpvn3d_ops): these runs are made on the GPU machine");
        model = PointNet2DefaultTest.resource("/models/pointnet2_default.onnx");
        sample = PvtFile.read(new ByteArrayInputStream(PointNet2DefaultTest.resource("/models/bunny_sample.bin")), "bunny");
    }

    /** CUDA options that keep convolutions in full fp32 (no TF32) so that CPU and CUDA compare closely. */
    static OrtCUDAProviderOptions cudaOptions() {
        return new OrtCUDAProviderOptions(0).setUseTf32(false);
    }

    static float[] run(SessionOptions options) {
        Pvn3dOps.register(options).close();
        try (OrtSession s = OrtEnvironment.getEnvironment().createSession(model, options);
                OnnxTensor xyz = sample.get("xyz").toTensor();
                Result r = s.run(Map.of("xyz", xyz))) {
            float[] out = r.tensor("point_features").getFloatArray();
            // a second run through the same session gives the same numbers
            try (Result again = s.run(Map.of("xyz", xyz))) {
                assertArrayEquals(out, again.tensor("point_features").getFloatArray());
            }
            return out;
        }
    }

    @Test
    void cudaEqualsCpuAndNoPvn3dNodeFallsBackToTheCpu(@TempDir Path dir) throws Exception {
        float[] cpu;
        try (SessionOptions o = new SessionOptions()) {
            cpu = run(o);
        }
        float[] cuda;
        String trace;
        try (SessionOptions o = new SessionOptions()) {
            o.enableProfiling(dir.resolve("cuda").toString());
            Pvn3dOps.register(o).close();
            o.addExecutionProvider(cudaOptions());
            try (OrtSession s = OrtEnvironment.getEnvironment().createSession(model, o);
                    OnnxTensor xyz = sample.get("xyz").toTensor();
                    Result r = s.run(Map.of("xyz", xyz))) {
                cuda = r.tensor("point_features").getFloatArray();
                Path file = Path.of(s.endProfiling());
                trace = Files.readString(file.isAbsolute() ? file : Path.of(System.getProperty("user.dir")).resolve(file));
            }
        }
        double maxDiff = 0;
        double maxAbs = 0;
        for (int i = 0; i < cpu.length; i++) {
            maxDiff = Math.max(maxDiff, Math.abs(cpu[i] - cuda[i]));
            maxAbs = Math.max(maxAbs, Math.abs(cpu[i]));
        }
        Map<String, Map<String, Integer>> placement = placement(trace);
        System.out.printf("CudaProviderTest: PointNet++ on %s, max |CUDA - CPU| = %.3g (max |x| = %.3g)%n",
                OrtRuntime.get(), maxDiff, maxAbs);
        System.out.println("CudaProviderTest: node placement from ORT's profile (op -> provider -> node runs): " + placement);
        assertTrue(maxDiff <= 1e-4 * Math.max(1, maxAbs), "max abs difference " + maxDiff);
        for (String op : Pvn3dOps.OPERATORS) {
            Map<String, Integer> where = placement.get(op);
            assertTrue(where != null && !where.isEmpty(), op + " appears in the profile");
            assertEquals(java.util.Set.of("CUDAExecutionProvider"), where.keySet(), op + " ran only on CUDA");
        }
    }

    @Test
    void kernelsRunOnOrtsStreamOrOnTheCallersStream() {
        long before = Pvn3dOps.cudaLaunchCount();
        try (SessionOptions o = new SessionOptions()) {
            o.addExecutionProvider(cudaOptions());
            run(o);
        }
        long ortStream = Pvn3dOps.lastCudaStream();
        assertTrue(Pvn3dOps.cudaLaunchCount() > before, "the PVN3D kernels launched on CUDA");
        try (CudaStream mine = CudaStream.create(); SessionOptions o = new SessionOptions()) {
            o.addExecutionProvider(cudaOptions().setUserComputeStream(mine));
            long launches = Pvn3dOps.cudaLaunchCount();
            run(o);
            System.out.printf("CudaProviderTest: ORT's own compute stream 0x%x; with user_compute_stream the kernels"
                    + " ran on 0x%x, the stream Java created (0x%x), %d launches%n", ortStream,
                    Pvn3dOps.lastCudaStream(), mine.address(), Pvn3dOps.cudaLaunchCount() - launches);
            assertEquals(mine.address(), Pvn3dOps.lastCudaStream(), "ORT handed the kernels the caller's stream");
            assertNotEquals(ortStream, mine.address());
            mine.synchronize();
        }
    }

    /** op type -> provider -> number of node events, from an ORT profile (chrome trace JSON). */
    static Map<String, Map<String, Integer>> placement(String trace) {
        Pattern op = Pattern.compile("\"op_name\"\\s*:\\s*\"([^\"]+)\"");
        Pattern provider = Pattern.compile("\"provider\"\\s*:\\s*\"([^\"]+)\"");
        Map<String, Map<String, Integer>> out = new TreeMap<>();
        for (String event : trace.split("\\{\\s*\"cat\"")) {
            if (!event.contains("\"Node\"")) {
                continue;
            }
            Matcher m = op.matcher(event);
            Matcher p = provider.matcher(event);
            if (m.find() && p.find()) {
                out.computeIfAbsent(m.group(1), k -> new TreeMap<>()).merge(p.group(1), 1, Integer::sum);
            }
        }
        return out;
    }
}
