package org.pvn3d.ort.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.pvn3d.ort.OnnxTensor;
import org.pvn3d.ort.OrtEnvironment;
import org.pvn3d.ort.OrtSession;
import org.pvn3d.ort.profile.Nvtx;

/**
 * NVTX from Java: a no-op while off and when no library is there; where the CUDA toolkit's NVTX library
 * is installed (as here), enabling it binds the domain and pushes and pops succeed (no tool attached),
 * around runs too.
 */
class NvtxLibraryTest {
    @AfterEach
    void off() {
        Nvtx.disable();
    }

    @Test
    void offByDefaultAndEveryCallIsANoOp() {
        assertFalse(Nvtx.isEnabled(), "nothing is looked up unless asked (-Dpvn3d.nvtx is not set in the tests)");
        Nvtx.push("not recorded");
        Nvtx.pop();
        Nvtx.Range a = Nvtx.range("a");
        Nvtx.Range b = Nvtx.range("b");
        assertSame(a, b, "a disabled range is one shared object: nothing is allocated");
        a.close();
    }

    @Test
    void noLibraryIsAClearFailureOfTheLookup() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> NvtxLibrary.load(List.of(Path.of("/nonexistent/libnvtx3interop.so.1")), List.of("libnot-nvtx-at-all.so.9"), List.of()));
        assertTrue(e.getMessage().contains("no NVTX library"), e.getMessage());
        assertTrue(e.getMessage().contains("/nonexistent/libnvtx3interop.so.1"), e.getMessage());
    }

    @Test
    void withTheToolkitsLibraryPushAndPopSucceedWithoutATool() {
        Path lib = List.of(Path.of("/usr/local/cuda/lib64/libnvtx3interop.so.1"), Path.of("/usr/local/cuda/lib/libnvtx3interop.so.1"))
                .stream().filter(Files::isRegularFile).findFirst().orElse(null);
        Assumptions.assumeTrue(lib != null, "no CUDA toolkit NVTX library on this machine");
        NvtxLibrary.Functions f = NvtxLibrary.load(List.of(lib), List.of(), List.of());
        assertNotNull(f.push());
        assertTrue(Nvtx.enable(), "enable finds an NVTX library: " + Nvtx.unavailableReason());
        assertTrue(Nvtx.isEnabled());
        assertNotNull(Nvtx.library());
        for (int i = 0; i < 3; i++) {
            try (Nvtx.Range outer = Nvtx.range("outer"); Nvtx.Range inner = Nvtx.range("inner " + i)) {
                Nvtx.push("innermost");
                Nvtx.pop();
            }
        }
        float[] a = new float[16];
        try (OrtSession s = OrtEnvironment.getEnvironment().createSession(model());
                OnnxTensor x = OnnxTensor.createTensor(a, 16)) {
            s.run(Map.of("a", x, "b", x)).close(); // with the "run" range around it
        }
        // a name per frame: registered up to the cap, then passed as a message each time (memory grew without end)
        for (int i = 0; i < NvtxLibrary.MAX_REGISTERED_NAMES + 500; i++) {
            Nvtx.push("frame " + i);
            Nvtx.pop();
        }
        assertEquals(NvtxLibrary.MAX_REGISTERED_NAMES, NvtxLibrary.registeredNames());
        Nvtx.disable();
        assertFalse(Nvtx.isEnabled());
    }

    @Test
    void coloursAreOpaqueAndStable() {
        assertEquals(NvtxLibrary.colour("run"), NvtxLibrary.colour("run"));
        assertEquals(0xFF000000, NvtxLibrary.colour("stage:inference") & 0xFF000000);
    }

    private static Path model() {
        try {
            return Path.of(NvtxLibraryTest.class.getResource("/models/add16.onnx").toURI());
        } catch (java.net.URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }
}
