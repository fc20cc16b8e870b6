package org.pvn3d.ort.bench;

import org.openjdk.jmh.util.SampleBuffer;

/**
 * What a benchmark hands to {@link CudaEventProfiler} inside its forked JVM: the CUDA-event time of
 * every call it made (nanoseconds) and the work of one call. Written by the benchmark thread, drained
 * by the profiler after each iteration.
 */
final class EventSamples {
    private static long[] samples = new long[1024];
    private static int count;
    private static double bytesPerCall;
    private static double pairsPerCall;

    private EventSamples() {}

    static synchronized void add(long nanos) {
        if (count == samples.length) {
            samples = java.util.Arrays.copyOf(samples, count * 2);
        }
        samples[count++] = nanos;
    }

    static synchronized void clear() {
        count = 0;
    }

    /** The samples since the last drain, or null if there were none. */
    static synchronized SampleBuffer drain() {
        if (count == 0) {
            return null;
        }
        SampleBuffer buffer = new SampleBuffer();
        for (int i = 0; i < count; i++) {
            buffer.add(samples[i]);
        }
        count = 0;
        return buffer;
    }

    static synchronized void setWork(double bytes, double pairs) {
        bytesPerCall = bytes;
        pairsPerCall = pairs;
    }

    static synchronized double bytesPerCall() {
        return bytesPerCall;
    }

    static synchronized double pairsPerCall() {
        return pairsPerCall;
    }
}
