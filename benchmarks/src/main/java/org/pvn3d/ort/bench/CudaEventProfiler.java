package org.pvn3d.ort.bench;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.profile.InternalProfiler;
import org.openjdk.jmh.results.AggregationPolicy;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.ResultRole;
import org.openjdk.jmh.results.SampleTimeResult;
import org.openjdk.jmh.results.ScalarResult;
import org.openjdk.jmh.util.SampleBuffer;

/**
 * Adds the GPU's own timing to JMH's results: {@code -prof org.pvn3d.ort.bench.CudaEventProfiler}.
 *
 * <p>The CUDA benchmarks bracket every launch with two CUDA events on their own stream and hand the
 * elapsed time to {@link EventSamples}. After each iteration this profiler turns those samples into a
 * secondary {@code cuda-event} result of the same kind as JMH's own sample-time result, so JMH merges
 * them over iterations and forks and prints (and writes to its JSON) their distribution: mean with
 * error, and percentiles, {@code cuda-event·p0.50} being the median GPU time per call.
 *
 * <p>For every benchmark that states the work of one call it also reports {@code bytes/call} and
 * {@code pairs/call}, and the rates {@code GB/s} and {@code Gpairs/s} at this iteration's median
 * (the CUDA-event median where there is one, else the median wall time of the primary result).
 */
public final class CudaEventProfiler implements InternalProfiler {
    public CudaEventProfiler() {}

    public CudaEventProfiler(String initLine) {}

    @Override
    public String getDescription() {
        return "CUDA-event time per call (median and percentiles) and bytes/s or point pairs/s";
    }

    @Override
    public void beforeIteration(BenchmarkParams benchmarkParams, IterationParams iterationParams) {
        EventSamples.clear();
    }

    @Override
    public Collection<? extends Result> afterIteration(BenchmarkParams benchmarkParams, IterationParams iterationParams,
            IterationResult result) {
        List<Result> out = new ArrayList<>();
        TimeUnit unit = benchmarkParams.getTimeUnit();
        SampleBuffer events = EventSamples.drain();
        double medianSeconds;
        if (events != null) {
            SampleTimeResult r = new SampleTimeResult(ResultRole.SECONDARY, "cuda-event", events, unit);
            out.add(r);
            medianSeconds = r.getStatistics().getPercentile(50) * secondsPer(unit);
        } else {
            medianSeconds = result.getPrimaryResult().getStatistics().getPercentile(50) * secondsPer(unit);
        }
        double bytes = EventSamples.bytesPerCall();
        double pairs = EventSamples.pairsPerCall();
        if (bytes > 0) {
            out.add(new ScalarResult("bytes/call", bytes, "B", AggregationPolicy.AVG));
            if (medianSeconds > 0) {
                out.add(new ScalarResult("GB/s", bytes / medianSeconds / 1e9, "GB/s", AggregationPolicy.AVG));
            }
        }
        if (pairs > 0) {
            out.add(new ScalarResult("pairs/call", pairs, "pairs", AggregationPolicy.AVG));
            if (medianSeconds > 0) {
                out.add(new ScalarResult("Gpairs/s", pairs / medianSeconds / 1e9, "Gpairs/s", AggregationPolicy.AVG));
            }
        }
        return out;
    }

    private static double secondsPer(TimeUnit unit) {
        return unit.toNanos(1) / 1e9;
    }
}
