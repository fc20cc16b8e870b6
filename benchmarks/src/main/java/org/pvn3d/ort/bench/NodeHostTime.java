package org.pvn3d.ort.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.pvn3d.ort.OrtEnvironment;
import org.pvn3d.ort.OrtIoBinding;
import org.pvn3d.ort.OrtSession;
import org.pvn3d.ort.SessionOptions;
import org.pvn3d.ort.io.PvtFile;
import org.pvn3d.ort.jfr.OrtEvents;
import org.pvn3d.ort.ops.Pvn3dOps;
import org.pvn3d.ort.pipeline.Json;
import org.pvn3d.ort.providers.OrtCUDAProviderOptions;

/**
 * Each custom-operator node's host time at steady state, from the runtime's JFR event
 * {@value OrtEvents#CUSTOM_OP_COMPUTE} instead of ORT's profiler (which inflates every node's time: ORT's
 * own CUDA nodes show 13 us in its profile while a whole one-node run takes 11 us). The event's duration
 * is exactly the time inside our compute upcall (ORT's dispatch up to the upcall is outside it); on the
 * CUDA provider that is the launch side, the GPU runs the work asynchronously. Session and IO binding as
 * {@link NodeProfile} sets them up ({@link SampleBinding}): on {@code cuda} the inputs in GPU memory and every output bound to
 * the GPU, on {@code cpu} host inputs and outputs ORT allocates.
 *
 * <p>The steps: {@code WARMUP} runs with no recording; {@code RUNS} runs with no recording, each timed
 * with {@code System.nanoTime} around {@code run(binding)} (ORT synchronises the CUDA provider's stream
 * before its run returns, so on {@code cuda} that is the run's real time, GPU work included, as
 * {@link NodeProfile} and {@link DispatchBenchmark} time it); then {@code WARMUP} runs with the event
 * enabled in a recording that is thrown away (enabling it switches the upcall to its recording path,
 * which the first warm-up never ran: this lets the JIT compile that path too); then {@code RUNS} runs in
 * a recording of that event alone (threshold 0, no stack traces), read back with
 * {@code jdk.jfr.consumer} and grouped by node.
 *
 * <p>Statistics, as {@code benchmarks/scripts/profile_nodes.py} computes them so the two tables compare:
 * the median is the middle of the sorted values (the mean of the two middle ones for an even count), the
 * 90th percentile the sorted value at index {@code round(0.9 * (n - 1))}.
 *
 * <pre>
 * java -cp benchmarks.jar org.pvn3d.ort.bench.NodeHostTime MODEL.onnx SAMPLE.bin cpu|cuda WARMUP RUNS [JSON_OUT]
 * </pre>
 * The sample is a PVT1 file holding the model's inputs by name. Exit status 3 when the JVM has no
 * {@code jdk.jfr} module (a jlinked runtime without it).
 */
public final class NodeHostTime {
    private NodeHostTime() {}

    /** One custom node's compute-upcall times over the recorded runs, in microseconds. */
    public record Node(String node, String operator, int count, double medianUs, double p90Us, double maxUs) {}

    /**
     * What one measurement found: the custom nodes (sorted by operator, then node), the number of
     * compute events the measured recording held, and each unrecorded run's wall time.
     */
    public record Result(String model, String provider, int warmup, int runs, int events, List<Node> nodes,
            double runMsMedian, double runMsP90) {
        /** Events the recording should hold: one per custom node and run. */
        public int expectedEvents() {
            return runs * nodes.size();
        }

        /** The median of the nodes' medians. */
        public double customNodeHostUsMedian() {
            return median(nodes.stream().mapToDouble(Node::medianUs).toArray());
        }

        /** The largest of the nodes' medians. */
        public double customNodeHostUsMax() {
            return nodes.stream().mapToDouble(Node::medianUs).max().orElse(Double.NaN);
        }
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 5 && args.length != 6) {
            System.err.println("usage: NodeHostTime MODEL.onnx SAMPLE.bin cpu|cuda WARMUP RUNS [JSON_OUT]");
            System.exit(2);
        }
        if (!OrtEvents.isAvailable()) {
            System.err.println("NodeHostTime: this JVM has no jdk.jfr module (or the runtime cannot read it), so the "
                    + OrtEvents.CUSTOM_OP_COMPUTE + " events cannot be recorded; use a full JDK or JRE");
            System.exit(3);
        }
        boolean cuda = switch (args[2]) {
            case "cpu" -> false;
            case "cuda" -> true;
            default -> throw new IllegalArgumentException("provider must be cpu or cuda, not " + args[2]);
        };
        Result r = measure(Path.of(args[0]), PvtFile.read(Path.of(args[1])), cuda, Integer.parseInt(args[3]),
                Integer.parseInt(args[4]));
        System.out.print(table(r));
        if (args.length == 6) {
            Files.writeString(Path.of(args[5]), json(r));
            System.out.println("json: " + args[5]);
        }
    }

    /**
     * Runs the model as the class comment says and returns what the recording and the timed runs found.
     * The sample must hold every model input by name.
     */
    public static Result measure(Path model, Map<String, PvtFile.Entry> sample, boolean cuda, int warmup, int runs) {
        if (!OrtEvents.isAvailable()) {
            throw new IllegalStateException("no jdk.jfr module in this JVM: " + OrtEvents.CUSTOM_OP_COMPUTE
                    + " cannot be recorded");
        }
        if (warmup < 0 || runs < 1) {
            throw new IllegalArgumentException("need WARMUP >= 0 and RUNS >= 1, not " + warmup + " and " + runs);
        }
        try (SessionOptions options = new SessionOptions()) {
            Pvn3dOps.register(options).close(); // the options and the session keep the domain alive
            if (cuda) {
                options.addExecutionProvider(new OrtCUDAProviderOptions(0));
            }
            try (OrtSession session = OrtEnvironment.getEnvironment().createSession(model, options);
                    SampleBinding bound = new SampleBinding(session, sample, "the sample", cuda)) {
                OrtIoBinding binding = bound.binding();
                Runnable run = () -> session.run(binding);
                repeat(run, warmup);
                double[] runMs = new double[runs];
                for (int i = 0; i < runs; i++) {
                    long t = System.nanoTime();
                    run.run();
                    runMs[i] = (System.nanoTime() - t) / 1e6;
                }
                // Its own class, so that nothing of jdk.jfr is loaded unless the module is there.
                Jfr.Recorded recorded = Jfr.recordRuns(run, warmup, runs);
                return new Result(model.toString(), cuda ? "cuda" : "cpu", warmup, runs, recorded.events(),
                        nodes(recorded.micros(), recorded.operators()), median(runMs), p90(runMs));
            }
        }
    }

    private static void repeat(Runnable run, int times) {
        for (int i = 0; i < times; i++) {
            run.run();
        }
    }

    private static List<Node> nodes(Map<String, List<Double>> micros, Map<String, String> operators) {
        List<Node> out = new ArrayList<>();
        micros.forEach((node, us) -> {
            double[] v = us.stream().mapToDouble(Double::doubleValue).toArray();
            out.add(new Node(node, operators.get(node), v.length, median(v), p90(v), Arrays.stream(v).max().orElseThrow()));
        });
        out.sort(Comparator.comparing(Node::operator).thenComparing(Node::node));
        return out;
    }

    static double median(double[] values) {
        if (values.length == 0) {
            return Double.NaN;
        }
        double[] s = values.clone();
        Arrays.sort(s);
        int n = s.length;
        return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    }

    static double p90(double[] values) {
        double[] s = values.clone();
        Arrays.sort(s);
        return s[(int) Math.round(0.9 * (s.length - 1))];
    }

    /** The table the command prints. */
    static String table(Result r) {
        StringBuilder b = new StringBuilder();
        b.append(String.format(Locale.ROOT, "%s, %s provider: %d warm-up runs, %d recorded runs (after %d more warm-up"
                + " runs with the event on)%n", r.model(), r.provider(), r.warmup(), r.runs(), r.warmup()));
        // node names in full (they are what the model and ORT's profile call the nodes), so the column fits the longest
        int w = Math.max("custom node".length(), r.nodes().stream().mapToInt(n -> n.node().length()).max().orElse(0));
        b.append(String.format(Locale.ROOT, "%-" + w + "s %-28s %5s %9s %9s %9s%n", "custom node", "operator", "count",
                "median_us", "p90_us", "max_us"));
        for (Node n : r.nodes()) {
            b.append(String.format(Locale.ROOT, "%-" + w + "s %-28s %5d %9.1f %9.1f %9.1f%n", n.node(), n.operator(),
                    n.count(), n.medianUs(), n.p90Us(), n.maxUs()));
        }
        Map<String, List<Double>> byOp = new TreeMap<>();
        r.nodes().forEach(n -> byOp.computeIfAbsent(n.operator(), k -> new ArrayList<>()).add(n.medianUs()));
        b.append(String.format(Locale.ROOT, "%nper operator (the nodes' medians):%n%-28s %5s %9s %9s %9s%n", "operator",
                "nodes", "min_us", "median_us", "max_us"));
        byOp.forEach((op, m) -> {
            double[] v = m.stream().mapToDouble(Double::doubleValue).toArray();
            b.append(String.format(Locale.ROOT, "%-28s %5d %9.1f %9.1f %9.1f%n", op, v.length,
                    Arrays.stream(v).min().orElseThrow(), median(v), Arrays.stream(v).max().orElseThrow()));
        });
        b.append(String.format(Locale.ROOT, "%nall %d custom nodes: median %.1f us, max %.1f us (of the nodes' medians)%n",
                r.nodes().size(), r.customNodeHostUsMedian(), r.customNodeHostUsMax()));
        b.append(String.format(Locale.ROOT, "run time without recording (%d runs%s): median %.3f ms, p90 %.3f ms%n",
                r.runs(), r.provider().equals("cuda") ? ", ORT synchronises its stream before run returns" : "",
                r.runMsMedian(), r.runMsP90()));
        b.append(String.format(Locale.ROOT, "events: %d seen, %d expected (%d runs x %d custom nodes)%n", r.events(),
                r.expectedEvents(), r.runs(), r.nodes().size()));
        return b.toString();
    }

    /** The result as a JSON object (the fields the class comment lists, times in us and ms). */
    static String json(Result r) {
        Map<String, Object> o = new LinkedHashMap<>();
        o.put("model", r.model());
        o.put("provider", r.provider());
        o.put("warmup", r.warmup());
        o.put("runs", r.runs());
        o.put("events", r.events());
        o.put("nodes", r.nodes().stream().map(n -> {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("node", n.node());
            m.put("operator", n.operator());
            m.put("count", n.count());
            m.put("median_us", n.medianUs());
            m.put("p90_us", n.p90Us());
            m.put("max_us", n.maxUs());
            return m;
        }).toList());
        o.put("custom_node_host_us_median", r.customNodeHostUsMedian());
        o.put("custom_node_host_us_max", r.customNodeHostUsMax());
        o.put("run_ms_median", r.runMsMedian());
        o.put("run_ms_p90", r.runMsP90());
        return Json.write(o);
    }

    /** Everything that touches jdk.jfr, loaded only once {@link OrtEvents#isAvailable()} said yes. */
    private static final class Jfr {
        /** The compute events of the measured recording: each node's durations in us, in order, and its operator. */
        record Recorded(int events, Map<String, List<Double>> micros, Map<String, String> operators) {}

        static Recorded recordRuns(Runnable run, int warmup, int runs) {
            // Warm-up with the event on, recorded and thrown away: the upcall's recording path gets compiled.
            try (jdk.jfr.Recording settle = recording()) {
                settle.start();
                repeat(run, warmup);
                settle.stop();
            }
            Path file;
            try (jdk.jfr.Recording measured = recording()) {
                measured.start();
                repeat(run, runs);
                measured.stop();
                file = Files.createTempFile("pvn3d-node-host-time", ".jfr");
                measured.dump(file);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            try {
                Map<String, List<Double>> micros = new TreeMap<>();
                Map<String, String> operators = new TreeMap<>();
                int events = 0;
                for (jdk.jfr.consumer.RecordedEvent e : jdk.jfr.consumer.RecordingFile.readAllEvents(file)) {
                    if (!e.getEventType().getName().equals(OrtEvents.CUSTOM_OP_COMPUTE)) {
                        continue;
                    }
                    events++;
                    String node = e.getString("node");
                    micros.computeIfAbsent(node, k -> new ArrayList<>()).add(e.getDuration().toNanos() / 1e3);
                    operators.put(node, e.getString("operator"));
                }
                return new Recorded(events, micros, operators);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            } finally {
                try {
                    Files.deleteIfExists(file);
                } catch (IOException ignored) {
                    // a temp file left behind is harmless
                }
            }
        }

        /** A recording of the compute event alone: every call (threshold 0), no stack trace to walk. */
        private static jdk.jfr.Recording recording() {
            jdk.jfr.Recording r = new jdk.jfr.Recording();
            r.setName("NodeHostTime");
            r.enable(OrtEvents.CUSTOM_OP_COMPUTE).withoutStackTrace().withThreshold(Duration.ZERO);
            r.setToDisk(true);
            return r;
        }
    }
}
