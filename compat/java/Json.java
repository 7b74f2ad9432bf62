import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.Iterator;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;

/** The drivers' only output format: a minimal JSON writer (no dependency beyond the JDK). */
final class Json {
    private Json() {}

    static String write(Object value) {
        StringBuilder out = new StringBuilder();
        write(out, value);
        return out.toString();
    }

    private static void write(StringBuilder out, Object v) {
        if (v == null) {
            out.append("null");
        } else if (v instanceof String s) {
            string(out, s);
        } else if (v instanceof byte[] b) {
            string(out, new String(b, StandardCharsets.UTF_8));
        } else if (v instanceof Boolean || v instanceof Integer || v instanceof Long || v instanceof Short) {
            out.append(v);
        } else if (v instanceof Number n) {
            out.append(n.doubleValue());
        } else if (v instanceof OptionalLong o) {
            write(out, o.isPresent() ? (Object) o.getAsLong() : null);
        } else if (v instanceof OptionalInt o) {
            write(out, o.isPresent() ? (Object) o.getAsInt() : null);
        } else if (v instanceof Optional<?> o) {
            write(out, o.orElse(null));
        } else if (v instanceof Map<?, ?> m) {
            out.append('{');
            Iterator<? extends Map.Entry<?, ?>> it = m.entrySet().iterator();
            while (it.hasNext()) {
                Map.Entry<?, ?> e = it.next();
                string(out, String.valueOf(e.getKey()));
                out.append(':');
                write(out, e.getValue());
                if (it.hasNext()) out.append(',');
            }
            out.append('}');
        } else if (v instanceof Collection<?> c) {
            out.append('[');
            Iterator<?> it = c.iterator();
            while (it.hasNext()) {
                write(out, it.next());
                if (it.hasNext()) out.append(',');
            }
            out.append(']');
        } else if (v instanceof Enum<?> e) {
            string(out, e.name());
        } else {
            string(out, v.toString());
        }
    }

    private static void string(StringBuilder out, String s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20) out.append(String.format("\\u%04x", (int) c));
                    else out.append(c);
                }
            }
        }
        out.append('"');
    }
}
