package org.pvn3d.ort.pipeline;

import java.util.List;
import java.util.Map;

/**
 * A small JSON writer (no dependency): maps (insertion order kept), lists, strings, numbers, booleans,
 * null, and double / float / long / int arrays. Non-finite numbers become {@code null}. Output is
 * indented with two spaces; arrays of numbers stay on one line.
 */
public final class Json {
    private Json() {}

    public static String write(Object value) {
        StringBuilder sb = new StringBuilder();
        write(sb, value, 0);
        return sb.append('\n').toString();
    }

    private static void write(StringBuilder sb, Object v, int indent) {
        switch (v) {
            case null -> sb.append("null");
            case String s -> string(sb, s);
            case Boolean b -> sb.append(b);
            case Double d -> number(sb, d);
            case Float f -> number(sb, f.doubleValue());
            case Long n -> sb.append(n.longValue());
            case Integer n -> sb.append(n.intValue());
            case Short n -> sb.append(n.shortValue());
            case Byte n -> sb.append(n.byteValue());
            case java.math.BigInteger n -> sb.append(n);
            case java.math.BigDecimal n -> sb.append(n.toString()); // exact (plain or scientific, both JSON)
            case Number n -> number(sb, n.doubleValue()); // others (AtomicLong, ...): their value, not truncated
            case double[] a -> {
                sb.append('[');
                for (int i = 0; i < a.length; i++) {
                    sb.append(i == 0 ? "" : ", ");
                    number(sb, a[i]);
                }
                sb.append(']');
            }
            case float[] a -> {
                sb.append('[');
                for (int i = 0; i < a.length; i++) {
                    sb.append(i == 0 ? "" : ", ");
                    number(sb, a[i]);
                }
                sb.append(']');
            }
            case long[] a -> {
                sb.append('[');
                for (int i = 0; i < a.length; i++) {
                    sb.append(i == 0 ? "" : ", ").append(a[i]);
                }
                sb.append(']');
            }
            case int[] a -> {
                sb.append('[');
                for (int i = 0; i < a.length; i++) {
                    sb.append(i == 0 ? "" : ", ").append(a[i]);
                }
                sb.append(']');
            }
            case Map<?, ?> m -> {
                if (m.isEmpty()) {
                    sb.append("{}");
                    return;
                }
                sb.append("{\n");
                int i = 0;
                for (Map.Entry<?, ?> e : m.entrySet()) {
                    pad(sb, indent + 1);
                    string(sb, String.valueOf(e.getKey()));
                    sb.append(": ");
                    write(sb, e.getValue(), indent + 1);
                    sb.append(++i < m.size() ? ",\n" : "\n");
                }
                pad(sb, indent);
                sb.append('}');
            }
            case List<?> l -> {
                if (l.isEmpty()) {
                    sb.append("[]");
                    return;
                }
                sb.append("[\n");
                for (int i = 0; i < l.size(); i++) {
                    pad(sb, indent + 1);
                    write(sb, l.get(i), indent + 1);
                    sb.append(i + 1 < l.size() ? ",\n" : "\n");
                }
                pad(sb, indent);
                sb.append(']');
            }
            default -> string(sb, v.toString());
        }
    }

    private static void number(StringBuilder sb, double d) {
        if (!Double.isFinite(d)) {
            sb.append("null");
        } else if (d == Math.rint(d) && Math.abs(d) < 1e15) {
            sb.append((long) d);
        } else {
            sb.append(d);
        }
    }

    private static void pad(StringBuilder sb, int indent) {
        sb.append("  ".repeat(indent));
    }

    static void string(StringBuilder sb, String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                default -> {
                    if (c < 0x20) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        sb.append('"');
    }
}
