package org.pvn3d.ort;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Tensors over memory another object owns ({@link TensorMemory}, what the CUDA buffers are), checked on
 * the CPU with memory that counts its holds: which kind of tensor each memory makes, and that a tensor
 * keeps the memory past its owner's close.
 */
class TensorMemoryTest {
    /** Host memory that says it is host memory ("Cpu") or, never read, device memory ("Cuda"). */
    static final class CountedMemory extends TensorMemory implements AutoCloseable {
        final Arena arena = Arena.ofShared();
        final MemorySegment segment;
        final boolean device;
        int holds;
        boolean ownerClosed;
        boolean freed;

        CountedMemory(long bytes, boolean device) {
            this.segment = arena.allocate(bytes, 64);
            this.device = device;
        }

        @Override
        public long byteSize() {
            return segment.byteSize();
        }

        @Override
        public OrtMemoryInfo memoryInfo() {
            return device ? OrtMemoryInfo.cuda(0) : OrtMemoryInfo.cpu();
        }

        @Override
        protected MemorySegment memory() {
            if (ownerClosed) {
                throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "memory is closed");
            }
            return device ? MemorySegment.ofAddress(segment.address()) : segment;
        }

        @Override
        protected synchronized AutoCloseable hold() {
            if (ownerClosed) {
                throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "memory is closed");
            }
            holds++;
            boolean[] ended = {false};
            return () -> {
                synchronized (this) {
                    if (!ended[0]) {
                        ended[0] = true;
                        holds--;
                        freeIfDone();
                    }
                }
            };
        }

        @Override
        public synchronized void close() {
            ownerClosed = true;
            freeIfDone();
        }

        private void freeIfDone() {
            if (ownerClosed && holds == 0 && !freed) {
                freed = true;
                arena.close();
            }
        }
    }

    @Test
    void hostMemoryMakesAHostTensorThatOutlivesTheOwnersClose() {
        CountedMemory x = new CountedMemory(16, false);
        x.segment.copyFrom(MemorySegment.ofArray(new float[] {1, 2, 3, 4}));
        OnnxTensor tx = OnnxTensor.createTensor(x, OnnxTensorType.FLOAT, 1, 4);
        assertFalse(tx.isOnDevice());
        assertEquals(1, x.holds);
        x.close();
        assertFalse(x.freed, "the tensor holds the memory");
        try (OrtSession s = OrtEnvironment.getEnvironment().createSession(TestModels.model("arith.onnx"));
                OnnxTensor y = OnnxTensor.createTensor(new float[] {1, 1, 1, 1}, 1, 4);
                Result r = s.run(Map.of("x", tx, "y", y))) {
            assertArrayEquals(new float[] {2, 3, 4, 5}, r.tensor("sum").getFloatArray());
            assertArrayEquals(new float[] {1, 2, 3, 4}, tx.getFloatArray());
        }
        tx.close();
        tx.close();
        assertTrue(x.freed, "the last holder freed it");
        assertThrows(OrtException.class, () -> OnnxTensor.createTensor(x, OnnxTensorType.FLOAT, 4), "its owner closed it");
    }

    @Test
    void deviceMemoryMakesADeviceTensorAndEachKindRefusesTheOther() {
        try (CountedMemory device = new CountedMemory(64, true); CountedMemory host = new CountedMemory(64, false)) {
            try (DeviceTensor t = DeviceTensor.createTensor(device, OnnxTensorType.FLOAT, 4, 4);
                    OrtMemoryInfo where = t.getMemoryInfo()) {
                assertTrue(t.isOnDevice());
                assertEquals(device.segment.address(), t.deviceAddress());
                assertEquals(OrtMemoryInfo.DeviceType.GPU, where.getDeviceType());
                assertEquals(64, t.byteSize());
                assertEquals(1, device.holds);
            }
            assertEquals(0, device.holds, "closing the tensor ended its hold");
            OrtException hostOverDevice = assertThrows(OrtException.class,
                    () -> OnnxTensor.createTensor(device, OnnxTensorType.FLOAT, 4, 4));
            assertTrue(hostOverDevice.getMessage().contains("device memory"), hostOverDevice.getMessage());
            OrtException deviceOverHost = assertThrows(OrtException.class,
                    () -> DeviceTensor.createTensor(host, OnnxTensorType.FLOAT, 4, 4));
            assertTrue(deviceOverHost.getMessage().contains("host memory"), deviceOverHost.getMessage());
            OrtException tooSmall = assertThrows(OrtException.class,
                    () -> DeviceTensor.createTensor(device, OnnxTensorType.FLOAT, 4, 5));
            assertTrue(tooSmall.getMessage().contains("too small"), tooSmall.getMessage());
            assertEquals(0, device.holds + host.holds, "no refused tensor kept a hold");
        }
    }

    @Test
    void aHostOutputIsNotADeviceTensor() {
        // the CPU provider puts every output in host memory: the host side of Result's split
        try (OrtSession s = OrtEnvironment.getEnvironment().createSession(TestModels.model("arith.onnx"));
                OnnxTensor x = OnnxTensor.createTensor(new float[] {1, 2, 3, 4}, 1, 4);
                Result r = s.run(Map.of("x", x, "y", x))) {
            assertEquals(4f, r.tensor("prod").data().getAtIndex(ValueLayout.JAVA_FLOAT, 1));
            OrtException e = assertThrows(OrtException.class, () -> r.deviceTensor("prod"));
            assertTrue(e.getMessage().contains("in host memory"), e.getMessage());
        }
    }
}
