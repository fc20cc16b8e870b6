package org.pvn3d.ort.internal.jfr;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/** One copy between host and device memory: {@code org.pvn3d.ort.jfr.OrtEvents#DEVICE_COPY}. */
@Name("org.pvn3d.ort.DeviceCopy")
@Label("Device Copy")
@Category({"pvn3d-ort", "CUDA"})
@Description("A copy between host and device memory made through org.pvn3d.ort.cuda")
@StackTrace(false)
public final class DeviceCopyEvent extends jdk.jfr.Event {
    @Label("Direction")
    @Description("HostToDevice, DeviceToHost or DeviceToDevice")
    public String direction;

    @Label("Bytes")
    @DataAmount
    public long bytes;

    @Label("Waited")
    @Description("True when the call returned once the copy was complete; false when it only enqueued it")
    public boolean waited;

    @Label("Stream")
    @Description("The CUDA stream's address (0: the legacy default stream)")
    public long stream;
}
