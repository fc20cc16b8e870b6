package org.pvn3d.ort.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.pvn3d.ort.OrtEnvironment;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.OrtRuntime;
import org.pvn3d.ort.SessionOptions;
import org.pvn3d.ort.cuda.CudaDevice;
import org.pvn3d.ort.pipeline.Pvn3dPipeline;
import org.pvn3d.ort.providers.OrtCUDAProviderOptions;

/**
 * Whether the CUDA execution provider can work in this process and, when not, why and what to do:
 * no CUDA runtime library, no device, an ONNX Runtime without a CUDA provider, or a provider whose CUDA
 * libraries are missing (ORT 1.16.3's provider needs CUDA 11.8 and cuDNN 8; its own message only names
 * one missing file).
 */
final class CudaCheck {
    /** An ORT build for CUDA 12 and 13 that the project runs on (the H200 runs). */
    static final String CUDA13_ORT = "org.bytedeco:onnxruntime:1.24.1-1.5.13 (classifier linux-x86_64-gpu)";

    /** ORT's message when its CUDA provider library, or a library that one needs, does not load. */
    private static final Pattern LOAD_FAILURE = Pattern.compile(
            "Failed to load library (\\S*onnxruntime_providers_cuda\\S*) with error: (\\S+?): cannot open shared object file");
    private static final String ADVICE_CPU = "without --ep cuda it runs on the CPU provider";

    private CudaCheck() {}

    /**
     * Throws an OrtException saying what to do when {@code --ep cuda} cannot work on {@code device}: no
     * device, no CUDA provider, or one that does not load (appended to throwaway session options, which
     * loads its library and the CUDA libraries it links).
     */
    static void require(int device) {
        String problem = deviceProblem(device);
        if (problem == null) {
            problem = providerProblem();
        }
        if (problem == null) {
            try (var options = new SessionOptions()) {
                options.addExecutionProvider(new OrtCUDAProviderOptions(device));
            } catch (OrtException e) {
                problem = Errors.describe(e);
            }
        }
        if (problem != null) {
            throw new OrtException(OrtErrorCode.ORT_EP_FAIL, "--ep cuda: " + problem + "; " + ADVICE_CPU);
        }
    }

    /** Why {@code device} cannot be used, or null when the CUDA runtime sees it. */
    static String deviceProblem(int device) {
        if (!CudaDevice.hasRuntime()) {
            return "no CUDA runtime library (libcudart.so) loads, so no GPU can be used (install CUDA's runtime, or set "
                    + "PVN3D_CUDART_PATH to the file)";
        }
        int n = CudaDevice.count();
        if (n == 0) {
            return "no CUDA device (the CUDA runtime finds no GPU: none in this machine, or no NVIDIA driver for it)";
        }
        if (device >= n) {
            return "no CUDA device " + device + ": this machine has " + n + " (--device " + (n == 1 ? "0" : "0 to " + (n - 1)) + ")";
        }
        return null;
    }

    /** Why the loaded ONNX Runtime has no CUDA provider to offer, or null when it has one. */
    static String providerProblem() {
        OrtRuntime ort = OrtRuntime.get();
        if (ort.hasCudaProvider()) {
            return null;
        }
        return "ONNX Runtime " + ort.version() + " (from " + shortSource(ort) + ") has no CUDA execution provider: use "
                + "com.microsoft.onnxruntime:onnxruntime_gpu (CUDA 11.8) instead of onnxruntime, or point PVN3D_ORT_PATH at "
                + "a folder holding an ORT build with a CUDA provider, e.g. " + CUDA13_ORT + " unpacked for CUDA 12/13";
    }

    /**
     * ORT's failure to start its CUDA provider in words a user can act on, or null when {@code message}
     * is about something else.
     */
    static String explain(String message) {
        Matcher m = LOAD_FAILURE.matcher(message);
        if (m.find()) {
            return providerLoadFailure(m.group(2));
        }
        if (message.contains("CUDA driver version is insufficient")) {
            String device = deviceProblem(0); // what CUDA also says when there is no driver at all
            if (device != null) {
                return device;
            }
            return "the NVIDIA driver is older than the CUDA runtime this ONNX Runtime was built with: update the driver, or "
                    + "point PVN3D_ORT_PATH at an ORT build for the CUDA version the driver supports (nvidia-smi shows it)";
        }
        return null;
    }

    static String providerLoadFailure(String missing) {
        OrtRuntime ort;
        try {
            ort = OrtRuntime.get();
        } catch (OrtException e) {
            return "the CUDA provider of ONNX Runtime could not load (" + missing + " missing)";
        }
        String needs = cudaNeeds(ort);
        StringBuilder sb = new StringBuilder("the CUDA provider of ONNX Runtime ").append(ort.version()).append(" could not load: ");
        sb.append(needs != null ? "it needs " + needs + " (" + missing + " missing)" : missing + " is missing");
        if (ort.isFromClassPath()) {
            sb.append("; for CUDA 12/13 point PVN3D_ORT_PATH at an ORT build for it, e.g. ").append(CUDA13_ORT)
                    .append(" unpacked into a folder");
        } else {
            sb.append("; install the CUDA and cuDNN libraries the ORT build in ").append(ort.directory())
                    .append(" was made for, or add their folder to LD_LIBRARY_PATH");
        }
        return sb.toString();
    }

    /**
     * What Microsoft's onnxruntime_gpu jar of this version needs: 1.16 to 1.18 were built for CUDA 11.8 and
     * cuDNN 8, later ones for CUDA 12 and cuDNN 9. Null for a build from a folder (unknown).
     */
    static String cudaNeeds(OrtRuntime ort) {
        if (!ort.isFromClassPath()) {
            return null;
        }
        return ort.isAtLeast("1.19") ? "CUDA 12 and cuDNN 9" : "CUDA 11.8 and cuDNN 8";
    }

    /**
     * For {@code --version}: "available: device 0 NVIDIA H200 (sm_90, 140 GiB)" after a one-node session
     * on the CUDA provider was created, or "unavailable: why".
     */
    static String status() {
        String problem = deviceProblem(0);
        if (problem == null) {
            problem = providerProblem();
        }
        if (problem == null) {
            try {
                tinySession();
            } catch (OrtException e) {
                problem = Errors.describe(e);
            }
        }
        return problem == null ? "available: " + devices() : "unavailable: " + problem;
    }

    /** Creates (and closes) a session of a one-node model on the CUDA provider of device 0. */
    private static void tinySession() {
        byte[] model = Pvn3dPipeline.resourceBytes("/cli/identity.onnx");
        try (var options = new SessionOptions()) {
            options.addExecutionProvider(new OrtCUDAProviderOptions(0));
            OrtEnvironment.getEnvironment().createSession(model, options).close();
        }
    }

    private static String devices() {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < CudaDevice.count(); i++) {
            CudaDevice.Properties p = CudaDevice.properties(i);
            out.add(String.format(Locale.ROOT, "device %d %s (sm_%d%d, %.0f GiB)", i, p.name(), p.computeCapabilityMajor(),
                    p.computeCapabilityMinor(), p.totalMemory() / (double) (1L << 30)));
        }
        return String.join(", ", out);
    }

    /** The ORT jar's file name, or the property / variable that named the folder. */
    static String shortSource(OrtRuntime ort) {
        String s = ort.source();
        int paren = s.indexOf(" (");
        return ort.isFromClassPath() && paren > 0 ? s.substring(0, paren) : s;
    }
}
