package org.pvn3d.ort.cli;

/** A command that takes the {@link ProfilingOptions}: {@link Main} starts and ends them around its call. */
interface Profiled {
    ProfilingOptions profiling();
}
