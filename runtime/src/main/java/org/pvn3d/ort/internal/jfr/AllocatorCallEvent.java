package org.pvn3d.ort.internal.jfr;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/** One call ORT made into an allocator implemented in Java: {@code org.pvn3d.ort.jfr.OrtEvents#ALLOCATOR_CALL}. */
@Name("org.pvn3d.ort.AllocatorCall")
@Label("Allocator Call")
@Category({"pvn3d-ort", "Memory"})
@Description("One Alloc or Free that ORT called on a JavaAllocator")
@StackTrace(false)
public final class AllocatorCallEvent extends jdk.jfr.Event {
    @Label("Allocator")
    public String allocator;

    @Label("Operation")
    @Description("alloc or free")
    public String operation;

    @Label("Bytes")
    @DataAmount
    public long bytes;

    @Label("Address")
    public long address;

    @Label("Succeeded")
    public boolean succeeded;
}
