package org.pvn3d.ort.profile;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.customop.CustomOpDomain;

/**
 * A summary of an ONNX Runtime profile (the JSON file a session writes with profiling on, in Chrome's
 * trace format; {@code OrtSession.endProfiling()} returns its name): time per operator type and per
 * node, split by execution provider, with the custom operators apart from ORT's own.
 *
 * <p><b>Host time</b> is the duration of each node's {@code <node>_kernel_time} event ({@code cat
 * "Node"}): the wall time ORT's executor spent in the node's kernel on the host. On the CPU provider
 * that is the operator's time; on the CUDA provider it is the launch (the kernels run asynchronously on
 * the stream). <b>Device time</b> comes from the profile's {@code cat "Kernel"} events when ORT wrote
 * them (only ORT builds with CUDA profiling through CUPTI do; each names its node in
 * {@code args.parent_name}), or for custom operators from CUDA events recorded around their launches
 * ({@link #withDeviceTimes}); otherwise it is not known (null in the JSON, "-" in the table).
 *
 * <p>Which operator types are custom: those the predicate given to {@link #read(Path, Predicate)} accepts;
 * by default every operator of every {@link CustomOpDomain} created in this process and every op type
 * named {@code PVN3D_*}. The profile itself does not name domains.
 */
public final class ProfileSummary {
    /** Where device times come from. */
    public enum DeviceTimeSource {
        /** The profile's own CUDA kernel events (CUPTI). */
        PROFILE_KERNEL_EVENTS("ORT's CUDA kernel events"),
        /** CUDA events recorded around the custom operators' launches. */
        CUDA_EVENTS("CUDA events around the custom operators' launches"),
        /** Neither: device time is not known. */
        NONE("not known");

        private final String label;

        DeviceTimeSource(String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }
    }

    /** One node of the graph: its calls and times in microseconds ({@code deviceMicros} -1 when not known). */
    public record Node(String name, String opType, String provider, boolean custom, long calls, long hostMicros,
            long deviceMicros) {
        public boolean deviceKnown() {
            return deviceMicros >= 0;
        }
    }

    /** The nodes of one operator type on one provider, added up ({@code deviceMicros} -1 when not known). */
    public record OpType(String opType, String provider, boolean custom, int nodes, long calls, long hostMicros,
            long deviceMicros) {
        public boolean deviceKnown() {
            return deviceMicros >= 0;
        }
    }

    /** Device time of one custom operator type measured outside the profile (e.g. CUDA events). */
    public record DeviceTime(long calls, double totalMillis) {}

    private final String source;
    private final int runs;
    private final long runMicros;
    private final List<Node> nodes;
    private final List<OpType> opTypes;
    private final DeviceTimeSource deviceSource;

    private ProfileSummary(String source, int runs, long runMicros, List<Node> nodes, DeviceTimeSource deviceSource) {
        this.source = source;
        this.runs = runs;
        this.runMicros = runMicros;
        this.nodes = List.copyOf(nodes);
        this.deviceSource = deviceSource;
        this.opTypes = group(this.nodes);
    }

    /** The longest event taken: 10^12 us (11.6 days); a million of them still sum within a long. */
    private static final long MAX_EVENT_MICROS = 1_000_000_000_000L;

    /** The largest profile file {@link #read} takes (1 GiB; a run of a few thousand nodes writes megabytes). */
    public static final long MAX_PROFILE_BYTES = 1L << 30;

    /** Reads an ORT profile; custom operators as the class comment says. */
    public static ProfileSummary read(Path profile) {
        return read(profile, ProfileSummary::knownCustomOperator);
    }

    /** Reads an ORT profile; {@code custom} says which op types are custom operators. */
    public static ProfileSummary read(Path profile, Predicate<String> custom) {
        String text;
        try {
            // a regular file of a sane size: a FIFO would block forever, /dev/zero never end
            if (!Files.isRegularFile(profile)) {
                throw new OrtException(OrtErrorCode.ORT_NO_SUCHFILE, "the profile " + profile + " is not a regular file");
            }
            if (Files.size(profile) > MAX_PROFILE_BYTES) {
                throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "the profile " + profile + " has " + Files.size(profile)
                        + " bytes, more than the " + MAX_PROFILE_BYTES + " this reader takes");
            }
            text = Files.readString(profile);
        } catch (IOException e) {
            throw new OrtException(OrtErrorCode.ORT_NO_SUCHFILE, "cannot read the profile " + profile + ": " + e, e);
        }
        try {
            return parse(text, profile.toString(), custom);
        } catch (IllegalArgumentException | ClassCastException e) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, profile + " is not an ONNX Runtime profile: " + e.getMessage(), e);
        }
    }

    /** Summarises the text of an ORT profile; {@code source} names it in the output. */
    public static ProfileSummary parse(String json, String source, Predicate<String> custom) {
        Object root = JsonText.parse(json);
        List<?> events = root instanceof List<?> l ? l
                : root instanceof Map<?, ?> m && m.get("traceEvents") instanceof List<?> l2 ? l2 : null;
        if (events == null) {
            throw new IllegalArgumentException("expected an array of trace events");
        }
        boolean kernelTimeNames = false;
        for (Object o : events) {
            if (o instanceof Map<?, ?> e && "Node".equals(e.get("cat")) && String.valueOf(e.get("name")).endsWith("_kernel_time")) {
                kernelTimeNames = true;
                break;
            }
        }
        Map<String, NodeAcc> byNode = new LinkedHashMap<>();
        Map<String, Long> deviceByNode = new LinkedHashMap<>();
        int runs = 0;
        long runMicros = 0;
        boolean kernelEvents = false;
        for (Object o : events) {
            if (!(o instanceof Map<?, ?> e)) {
                continue;
            }
            String cat = String.valueOf(e.get("cat"));
            String name = String.valueOf(e.get("name"));
            long dur = e.get("dur") instanceof Number n ? n.longValue() : 0;
            if (dur < 0 || dur > MAX_EVENT_MICROS || e.get("dur") instanceof Double d && !Double.isFinite(d)) {
                // ORT writes whole non-negative microseconds; anything else would make negative or overflowing sums
                throw new IllegalArgumentException("event '" + name + "' has the duration " + e.get("dur") + " us");
            }
            Map<?, ?> args = e.get("args") instanceof Map<?, ?> a ? a : Map.of();
            switch (cat) {
                case "Session" -> {
                    if (name.equals("model_run")) {
                        runs++;
                        runMicros += dur;
                    }
                }
                case "Node" -> {
                    if (kernelTimeNames && !name.endsWith("_kernel_time")) {
                        continue; // the fences before and after a node
                    }
                    String node = stripSuffix(name);
                    String opType = String.valueOf(args.containsKey("op_name") ? args.get("op_name") : "?");
                    String provider = String.valueOf(args.containsKey("provider") ? args.get("provider") : "?");
                    byNode.computeIfAbsent(node, k -> new NodeAcc(opType, provider)).add(dur);
                }
                case "Kernel", "kernel" -> {
                    kernelEvents = true;
                    Object parent = args.get("parent_name");
                    if (parent != null) {
                        deviceByNode.merge(stripSuffix(String.valueOf(parent)), dur, Long::sum);
                    }
                }
                default -> { }
            }
        }
        List<Node> nodes = new ArrayList<>();
        for (Map.Entry<String, NodeAcc> n : byNode.entrySet()) {
            NodeAcc a = n.getValue();
            long device = kernelEvents ? deviceByNode.getOrDefault(n.getKey(), 0L) : -1;
            if (kernelEvents && a.provider.equals("CPUExecutionProvider")) {
                device = -1; // nothing of a CPU node runs on the device
            }
            nodes.add(new Node(n.getKey(), a.opType, a.provider, custom.test(a.opType), a.calls, a.micros, device));
        }
        return new ProfileSummary(source, runs, runMicros, nodes,
                kernelEvents ? DeviceTimeSource.PROFILE_KERNEL_EVENTS : DeviceTimeSource.NONE);
    }

    /**
     * This summary with device times for custom operator types measured outside the profile (e.g.
     * {@code Pvn3dOps.deviceTimes()}): each node of such a type on a non-CPU provider gets its share
     * (the type's total split by the node's calls). Types whose device time the profile already has are
     * left as they are.
     */
    public ProfileSummary withDeviceTimes(Map<String, DeviceTime> byOpType) {
        if (byOpType.isEmpty()) {
            return this;
        }
        Map<String, Long> callsByType = new LinkedHashMap<>();
        for (Node n : nodes) {
            if (!n.provider().equals("CPUExecutionProvider")) {
                callsByType.merge(n.opType(), n.calls(), Long::sum);
            }
        }
        boolean used = false;
        List<Node> out = new ArrayList<>();
        for (Node n : nodes) {
            DeviceTime t = byOpType.get(n.opType());
            long calls = callsByType.getOrDefault(n.opType(), 0L);
            if (t != null && !n.deviceKnown() && calls > 0 && !n.provider().equals("CPUExecutionProvider")) {
                long micros = Math.round(t.totalMillis() * 1000.0 * n.calls() / calls);
                out.add(new Node(n.name(), n.opType(), n.provider(), n.custom(), n.calls(), n.hostMicros(), micros));
                used = true;
            } else {
                out.add(n);
            }
        }
        DeviceTimeSource s = deviceSource == DeviceTimeSource.NONE && used ? DeviceTimeSource.CUDA_EVENTS : deviceSource;
        return new ProfileSummary(source, runs, runMicros, out, s);
    }

    /** The profile file (or what {@link #parse} was told). */
    public String source() {
        return source;
    }

    /** How many runs the profile holds ({@code model_run} events). */
    public int runs() {
        return runs;
    }

    /** The runs' wall time in all, microseconds. */
    public long runMicros() {
        return runMicros;
    }

    /** Every node, heaviest host time first. */
    public List<Node> nodes() {
        return nodes.stream().sorted(Comparator.comparingLong(Node::hostMicros).reversed()).toList();
    }

    /** Operator types per provider, heaviest host time first. */
    public List<OpType> opTypes() {
        return opTypes;
    }

    /** Where the device times come from. */
    public DeviceTimeSource deviceTimeSource() {
        return deviceSource;
    }

    /** The nodes' host time in all, microseconds. */
    public long hostMicros() {
        return nodes.stream().mapToLong(Node::hostMicros).sum();
    }

    /** Host time per provider, microseconds, heaviest first. */
    public Map<String, Long> hostMicrosByProvider() {
        Map<String, Long> m = new TreeMap<>();
        for (Node n : nodes) {
            m.merge(n.provider(), n.hostMicros(), Long::sum);
        }
        Map<String, Long> sorted = new LinkedHashMap<>();
        m.entrySet().stream().sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                .forEach(e -> sorted.put(e.getKey(), e.getValue()));
        return sorted;
    }

    /** Host time of the custom operators' nodes, microseconds. */
    public long customHostMicros() {
        return nodes.stream().filter(Node::custom).mapToLong(Node::hostMicros).sum();
    }

    private static List<OpType> group(List<Node> nodes) {
        Map<String, List<Node>> by = new LinkedHashMap<>();
        for (Node n : nodes) {
            by.computeIfAbsent(n.opType() + "\u0000" + n.provider(), k -> new ArrayList<>()).add(n);
        }
        List<OpType> out = new ArrayList<>();
        for (List<Node> group : by.values()) {
            Node first = group.get(0);
            long calls = 0;
            long host = 0;
            long device = 0;
            boolean known = true;
            for (Node n : group) {
                calls += n.calls();
                host += n.hostMicros();
                known &= n.deviceKnown();
                device += Math.max(0, n.deviceMicros());
            }
            out.add(new OpType(first.opType(), first.provider(), first.custom(), group.size(), calls, host, known ? device : -1));
        }
        out.sort(Comparator.comparingLong(OpType::hostMicros).reversed().thenComparing(OpType::opType));
        return List.copyOf(out);
    }

    // ---- output ----

    /** The summary as a text table: per operator type, per provider, custom operators, the heaviest {@code topNodes} nodes. */
    public String table(int topNodes) {
        StringBuilder sb = new StringBuilder();
        long total = hostMicros();
        sb.append(String.format(Locale.ROOT, "ORT profile %s: %d run(s), %.3f ms per run; node host time %.3f ms in all%n", source, runs,
                runs == 0 ? 0.0 : runMicros / 1000.0 / runs, total / 1000.0));
        sb.append("by operator type (host: ORT's node events; device: ").append(deviceSource.label()).append("):\n");
        sb.append(String.format(Locale.ROOT, "  %-28s %-6s %-6s %5s %7s %11s %6s %11s %11s%n", "op type", "EP", "custom", "nodes", "calls",
                "host ms", "host%", "host us/call", "device ms"));
        for (OpType t : opTypes) {
            sb.append(String.format(Locale.ROOT, "  %-28s %-6s %-6s %5d %7d %11.3f %5.1f%% %11.1f %11s%n", clip(t.opType(), 28),
                    shortProvider(t.provider()), t.custom() ? "yes" : "no", t.nodes(), t.calls(), t.hostMicros() / 1000.0,
                    percent(t.hostMicros(), total), t.calls() == 0 ? 0.0 : (double) t.hostMicros() / t.calls(),
                    t.deviceKnown() ? String.format(Locale.ROOT, "%.3f", t.deviceMicros() / 1000.0) : "-"));
        }
        sb.append("by provider:");
        for (Map.Entry<String, Long> e : hostMicrosByProvider().entrySet()) {
            sb.append(String.format(Locale.ROOT, "  %s %.3f ms (%.1f%%)", e.getKey(), e.getValue() / 1000.0, percent(e.getValue(), total)));
        }
        sb.append('\n');
        long custom = customHostMicros();
        long customDevice = 0;
        boolean customKnown = true;
        int customTypes = 0;
        for (OpType t : opTypes) {
            if (t.custom()) {
                customTypes++;
                customKnown &= t.deviceKnown();
                customDevice += Math.max(0, t.deviceMicros());
            }
        }
        sb.append(String.format(Locale.ROOT, "custom operators: %d type(s), host %.3f ms (%.1f%% of node time), device %s; ORT's own: "
                + "host %.3f ms%n", customTypes, custom / 1000.0, percent(custom, total),
                customTypes > 0 && customKnown ? String.format(Locale.ROOT, "%.3f ms", customDevice / 1000.0) : "not known",
                (total - custom) / 1000.0));
        List<Node> heaviest = nodes();
        int n = Math.min(topNodes, heaviest.size());
        if (n > 0) {
            sb.append("heaviest ").append(n).append(" of ").append(heaviest.size()).append(" nodes:\n");
            for (int i = 0; i < n; i++) {
                Node node = heaviest.get(i);
                sb.append(String.format(Locale.ROOT, "  %-40s %-28s %-6s %7d %11.3f ms %11s%n", clipLeft(node.name(), 40), clip(node.opType(), 28),
                        shortProvider(node.provider()), node.calls(), node.hostMicros() / 1000.0,
                        node.deviceKnown() ? String.format(Locale.ROOT, "%.3f ms", node.deviceMicros() / 1000.0) : "-"));
            }
        }
        return sb.toString();
    }

    /** The summary as JSON: totals, per provider, per operator type, custom operators, every node. */
    public String toJson() {
        Map<String, Object> doc = new LinkedHashMap<>();
        long total = hostMicros();
        doc.put("profile", source);
        doc.put("runs", runs);
        doc.put("run_ms_total", runMicros / 1000.0);
        doc.put("run_ms_mean", runs == 0 ? null : runMicros / 1000.0 / runs);
        doc.put("node_host_ms_total", total / 1000.0);
        doc.put("device_time_source", deviceSource.name().toLowerCase(Locale.ROOT));
        Map<String, Object> providers = new LinkedHashMap<>();
        hostMicrosByProvider().forEach((k, v) -> providers.put(k, v / 1000.0));
        doc.put("host_ms_by_provider", providers);
        List<Object> types = new ArrayList<>();
        long customHost = 0;
        long customDevice = 0;
        boolean customKnown = true;
        List<String> customNames = new ArrayList<>();
        for (OpType t : opTypes) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("op_type", t.opType());
            m.put("provider", t.provider());
            m.put("custom", t.custom());
            m.put("nodes", t.nodes());
            m.put("calls", t.calls());
            m.put("host_ms", t.hostMicros() / 1000.0);
            m.put("host_ms_per_run", runs == 0 ? null : t.hostMicros() / 1000.0 / runs);
            m.put("host_percent", percent(t.hostMicros(), total));
            m.put("device_ms", t.deviceKnown() ? t.deviceMicros() / 1000.0 : null);
            types.add(m);
            if (t.custom()) {
                customHost += t.hostMicros();
                customDevice += Math.max(0, t.deviceMicros());
                customKnown &= t.deviceKnown();
                customNames.add(t.opType());
            }
        }
        doc.put("op_types", types);
        Map<String, Object> custom = new LinkedHashMap<>();
        custom.put("op_types", customNames);
        custom.put("host_ms", customHost / 1000.0);
        custom.put("host_percent", percent(customHost, total));
        custom.put("device_ms", !customNames.isEmpty() && customKnown ? customDevice / 1000.0 : null);
        custom.put("ort_host_ms", (total - customHost) / 1000.0);
        doc.put("custom_operators", custom);
        List<Object> nodeList = new ArrayList<>();
        for (Node n : nodes()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("node", n.name());
            m.put("op_type", n.opType());
            m.put("provider", n.provider());
            m.put("custom", n.custom());
            m.put("calls", n.calls());
            m.put("host_ms", n.hostMicros() / 1000.0);
            m.put("device_ms", n.deviceKnown() ? n.deviceMicros() / 1000.0 : null);
            nodeList.add(m);
        }
        doc.put("nodes", nodeList);
        return JsonText.write(doc);
    }

    /** "CUDAExecutionProvider" becomes "CUDA". */
    public static String shortProvider(String provider) {
        return provider.endsWith("ExecutionProvider") ? provider.substring(0, provider.length() - "ExecutionProvider".length()) : provider;
    }

    /** The default for which op types are custom: see the class comment. */
    public static boolean knownCustomOperator(String opType) {
        return opType.startsWith("PVN3D_") || CustomOpDomain.operatorNames().contains(opType);
    }

    private static String stripSuffix(String name) {
        return name.endsWith("_kernel_time") ? name.substring(0, name.length() - "_kernel_time".length()) : name;
    }

    private static double percent(long part, long whole) {
        return whole == 0 ? 0.0 : 100.0 * part / whole;
    }

    private static String clip(String s, int width) {
        return s.length() <= width ? s : s.substring(0, width - 1) + "~";
    }

    /** Node names differ at their end ("/net/SA_modules.0/PVN3D_GroupPoints_3"): keep that. */
    private static String clipLeft(String s, int width) {
        return s.length() <= width ? s : "~" + s.substring(s.length() - width + 1);
    }

    private static final class NodeAcc {
        final String opType;
        final String provider;
        long calls;
        long micros;

        NodeAcc(String opType, String provider) {
            this.opType = opType;
            this.provider = provider;
        }

        void add(long dur) {
            calls++;
            micros += dur;
        }
    }
}
