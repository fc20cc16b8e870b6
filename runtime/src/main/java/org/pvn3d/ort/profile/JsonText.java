package org.pvn3d.ort.profile;

import java.math.BigDecimal;
import java.math.MathContext;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The little JSON this package needs, with no dependency: a reader for ORT's profile files (chrome
 * trace format: an array of event objects) into maps (insertion order kept), lists, strings, numbers
 * ({@code Long} when integral, else {@code Double}), booleans and null; and a writer for the summary.
 */
final class JsonText {
    /** Arrays and objects nested deeper than this are refused (the reader recurses: deeper would overflow the stack). */
    static final int MAX_DEPTH = 512;

    private final String text;
    private int pos;
    private int depth;

    private JsonText(String text) {
        this.text = text;
    }

    /** Parses one JSON value; an {@link IllegalArgumentException} says where the text is not JSON. */
    static Object parse(String text) {
        JsonText p = new JsonText(text);
        p.skipSpace();
        Object v = p.value();
        p.skipSpace();
        if (p.pos != text.length()) {
            throw p.error("text after the JSON value");
        }
        return v;
    }

    private Object value() {
        if (pos >= text.length()) {
            throw error("unexpected end");
        }
        char c = text.charAt(pos);
        return switch (c) {
            case '{' -> object();
            case '[' -> array();
            case '"' -> string();
            case 't' -> literal("true", Boolean.TRUE);
            case 'f' -> literal("false", Boolean.FALSE);
            case 'n' -> literal("null", null);
            default -> {
                if (c == '-' || (c >= '0' && c <= '9')) {
                    yield number();
                }
                throw error("unexpected '" + c + "'");
            }
        };
    }

    private Map<String, Object> object() {
        enter();
        Map<String, Object> m = new LinkedHashMap<>();
        pos++;
        skipSpace();
        if (peek() == '}') {
            pos++;
            depth--;
            return m;
        }
        while (true) {
            skipSpace();
            if (peek() != '"') {
                throw error("expected a member name");
            }
            String key = string();
            skipSpace();
            expect(':');
            skipSpace();
            m.put(key, value());
            skipSpace();
            char c = next();
            if (c == '}') {
                depth--;
                return m;
            }
            if (c != ',') {
                throw error("expected ',' or '}'");
            }
        }
    }

    private List<Object> array() {
        enter();
        List<Object> l = new ArrayList<>();
        pos++;
        skipSpace();
        if (peek() == ']') {
            pos++;
            depth--;
            return l;
        }
        while (true) {
            skipSpace();
            l.add(value());
            skipSpace();
            char c = next();
            if (c == ']') {
                depth--;
                return l;
            }
            if (c != ',') {
                throw error("expected ',' or ']'");
            }
        }
    }

    private void enter() {
        if (++depth > MAX_DEPTH) {
            throw error("arrays and objects nested deeper than " + MAX_DEPTH);
        }
    }

    private String string() {
        pos++; // the opening quote
        StringBuilder sb = null;
        int start = pos;
        while (true) {
            if (pos >= text.length()) {
                throw error("unterminated string");
            }
            char c = text.charAt(pos);
            if (c == '"') {
                String s = sb == null ? text.substring(start, pos) : sb.append(text, start, pos).toString();
                pos++;
                return s;
            }
            if (c == '\\') {
                if (sb == null) {
                    sb = new StringBuilder();
                }
                sb.append(text, start, pos);
                pos++;
                char e = next();
                switch (e) {
                    case '"', '\\', '/' -> sb.append(e);
                    case 'b' -> sb.append('\b');
                    case 'f' -> sb.append('\f');
                    case 'n' -> sb.append('\n');
                    case 'r' -> sb.append('\r');
                    case 't' -> sb.append('\t');
                    case 'u' -> {
                        if (pos + 4 > text.length()) {
                            throw error("short \\u escape");
                        }
                        sb.append((char) Integer.parseInt(text.substring(pos, pos + 4), 16));
                        pos += 4;
                    }
                    default -> throw error("bad escape \\" + e);
                }
                start = pos;
            } else {
                pos++;
            }
        }
    }

    private Object number() {
        int start = pos;
        if (peek() == '-') {
            pos++;
        }
        boolean integral = true;
        while (pos < text.length()) {
            char c = text.charAt(pos);
            if (c >= '0' && c <= '9') {
                pos++;
            } else if (c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
                integral = false;
                pos++;
            } else {
                break;
            }
        }
        String s = text.substring(start, pos);
        try {
            if (integral) {
                try {
                    return Long.parseLong(s);
                } catch (NumberFormatException tooLong) {
                    return Double.parseDouble(s);
                }
            }
            return Double.parseDouble(s);
        } catch (NumberFormatException e) {
            throw error("bad number " + s);
        }
    }

    private Object literal(String word, Object value) {
        if (!text.startsWith(word, pos)) {
            throw error("unexpected token");
        }
        pos += word.length();
        return value;
    }

    private void skipSpace() {
        while (pos < text.length()) {
            char c = text.charAt(pos);
            if (c == ' ' || c == '\n' || c == '\r' || c == '\t') {
                pos++;
            } else {
                break;
            }
        }
    }

    private char peek() {
        return pos < text.length() ? text.charAt(pos) : '\0';
    }

    private char next() {
        if (pos >= text.length()) {
            throw error("unexpected end");
        }
        return text.charAt(pos++);
    }

    private void expect(char c) {
        if (next() != c) {
            pos--;
            throw error("expected '" + c + "'");
        }
    }

    private IllegalArgumentException error(String what) {
        return new IllegalArgumentException("not JSON at character " + pos + ": " + what);
    }

    // ---- writing ----

    /** Writes maps, lists, strings, numbers (non-finite ones as null), booleans and null, indented by two spaces. */
    static String write(Object value) {
        StringBuilder sb = new StringBuilder();
        write(sb, value, 0);
        return sb.append('\n').toString();
    }

    private static void write(StringBuilder sb, Object v, int indent) {
        switch (v) {
            case null -> sb.append("null");
            case String s -> quote(sb, s);
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
            case Map<?, ?> m -> {
                if (m.isEmpty()) {
                    sb.append("{}");
                    return;
                }
                sb.append("{\n");
                int i = 0;
                for (Map.Entry<?, ?> e : m.entrySet()) {
                    sb.append("  ".repeat(indent + 1));
                    quote(sb, String.valueOf(e.getKey()));
                    sb.append(": ");
                    write(sb, e.getValue(), indent + 1);
                    sb.append(++i < m.size() ? ",\n" : "\n");
                }
                sb.append("  ".repeat(indent)).append('}');
            }
            case List<?> l -> {
                if (l.isEmpty()) {
                    sb.append("[]");
                    return;
                }
                sb.append("[\n");
                for (int i = 0; i < l.size(); i++) {
                    sb.append("  ".repeat(indent + 1));
                    write(sb, l.get(i), indent + 1);
                    sb.append(i + 1 < l.size() ? ",\n" : "\n");
                }
                sb.append("  ".repeat(indent)).append(']');
            }
            default -> quote(sb, v.toString());
        }
    }

    private static void number(StringBuilder sb, double d) {
        if (!Double.isFinite(d)) {
            sb.append("null");
        } else if (d == Math.rint(d) && Math.abs(d) < 1e15) {
            sb.append((long) d);
        } else {
            // six significant digits, trailing zeros of the fraction dropped (never the integer digits or the exponent's);
            // plain notation unless that would be long
            BigDecimal r = new BigDecimal(d).round(new MathContext(6)).stripTrailingZeros();
            int exponent = r.precision() - r.scale() - 1;
            sb.append(Math.abs(exponent) < 16 ? r.toPlainString() : r.toString());
        }
    }

    private static void quote(StringBuilder sb, String s) {
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
