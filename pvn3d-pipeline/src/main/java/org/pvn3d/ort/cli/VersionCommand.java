package org.pvn3d.ort.cli;

import java.io.PrintStream;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.pvn3d.ort.OrtEnvironment;
import org.pvn3d.ort.OrtRuntime;
import org.pvn3d.ort.ops.Pvn3dOps;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * {@code version}, {@code --version}, {@code -V}: this tool's version, the ONNX Runtime it loaded and from
 * where, the execution providers that actually start (ORT's own list names every provider compiled in,
 * even one whose CUDA libraries are missing), libpvn3d_ops, the JVM.
 */
@Command(name = "version", mixinStandardHelpOptions = true, abbreviateSynopsis = true, usageHelpAutoWidth = true,
        header = "Versions, paths, and the execution providers that work here (also -V, --version).",
        description = {
            "Prints the versions and paths of pvn3d-ort, ONNX Runtime and libpvn3d_ops, and the execution providers that "
                    + "work here: CUDA only once a session on it could be created, otherwise why not and what to do.",
            ""})
final class VersionCommand implements Callable<Integer> {
    private final Io io;

    @Mixin
    GlobalOptions global;

    VersionCommand(Io io) {
        this.io = io;
    }

    @Override
    public Integer call() {
        PrintStream out = io.out();
        out.println("pvn3d-ort " + OrtRuntime.libraryVersion());
        out.println("Java " + System.getProperty("java.version") + " (" + System.getProperty("java.vm.name") + ")");
        OrtRuntime ort = OrtRuntime.get();
        out.println("ONNX Runtime " + ort.version() + " at " + ort.library() + " (from " + ort.source() + ")");
        String cuda = CudaCheck.status();
        boolean cudaWorks = cuda.startsWith("available");
        out.println("execution providers: CPU" + (cudaWorks ? ", CUDA" : ""));
        out.println("  CUDA: " + cuda);
        List<String> others = OrtEnvironment.getEnvironment().getAvailableProviders().stream()
                .filter(p -> !p.equals("CPUExecutionProvider") && !p.equals("CUDAExecutionProvider"))
                .map(p -> p.replace("ExecutionProvider", "")).toList();
        if (!others.isEmpty()) {
            out.println("  also compiled into this ONNX Runtime, not used by pvn3d-ort: " + String.join(", ", others));
        }
        out.printf(Locale.ROOT, "libpvn3d_ops %s at %s (CUDA kernels: %s)%n", Pvn3dOps.nativeVersion(), Pvn3dOps.nativeLibrary(),
                Pvn3dOps.nativeBuiltWithCuda() ? "built in" : "not built");
        return Main.OK;
    }
}
