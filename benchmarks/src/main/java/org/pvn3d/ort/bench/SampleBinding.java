package org.pvn3d.ort.bench;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.pvn3d.ort.DeviceTensor;
import org.pvn3d.ort.OnnxTensor;
import org.pvn3d.ort.OnnxTensorLike;
import org.pvn3d.ort.OrtIoBinding;
import org.pvn3d.ort.OrtMemoryInfo;
import org.pvn3d.ort.OrtSession;
import org.pvn3d.ort.cuda.DeviceBuffer;
import org.pvn3d.ort.io.PvtFile;

/**
 * A session's IO binding set up the way a service runs a model, with a sample's tensors as the inputs:
 * on CUDA the inputs copied once into GPU memory and every output bound to the GPU (device 0), on the
 * CPU host inputs and outputs ORT allocates on each run. Owns the binding, the tensors and the device
 * buffers behind them; the session stays the caller's.
 */
final class SampleBinding implements AutoCloseable {
    private final OrtIoBinding binding;
    private final List<OnnxTensorLike> tensors = new ArrayList<>();
    private final List<DeviceBuffer> buffers = new ArrayList<>();

    /**
     * Binds every input of {@code session} to the sample's entry of that name.
     *
     * @param source the sample's name, for the message when it lacks an input
     */
    SampleBinding(OrtSession session, Map<String, PvtFile.Entry> sample, String source, boolean cuda) {
        binding = session.createIoBinding();
        try (OrtMemoryInfo outputMemory = cuda ? OrtMemoryInfo.cuda(0) : OrtMemoryInfo.cpu()) {
            for (String name : session.getInputNames()) {
                PvtFile.Entry e = sample.get(name);
                if (e == null) {
                    throw new IllegalArgumentException(source + " has no input '" + name + "' (it has " + sample.keySet() + ")");
                }
                OnnxTensor host = e.toTensor();
                tensors.add(host);
                if (cuda) {
                    DeviceBuffer b = DeviceBuffer.allocate(0, Math.max(1, e.data().length));
                    buffers.add(b);
                    b.copyFromHost(MemorySegment.ofArray(e.data()));
                    DeviceTensor d = DeviceTensor.createTensor(b, e.type(), e.shape());
                    tensors.add(d);
                    binding.bindInput(name, d);
                } else {
                    binding.bindInput(name, host);
                }
            }
            for (String name : session.getOutputNames()) {
                binding.bindOutput(name, outputMemory); // ORT allocates them there on each run
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    OrtIoBinding binding() {
        return binding;
    }

    @Override
    public void close() {
        try {
            binding.close();
        } finally {
            tensors.forEach(OnnxTensorLike::close);
            buffers.forEach(DeviceBuffer::close);
        }
    }
}
