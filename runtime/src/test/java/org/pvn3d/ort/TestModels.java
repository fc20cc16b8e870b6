package org.pvn3d.ort;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Paths of the committed test models and small helpers to read their fixtures. */
final class TestModels {
    private TestModels() {}

    static Path model(String name) {
        try {
            var url = TestModels.class.getResource("/models/" + name);
            if (url == null) {
                throw new IllegalStateException("missing test model " + name);
            }
            return Path.of(url.toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The numbers of a JSON array-of-arrays field, flattened (a tiny reader for our own fixtures). */
    static float[] jsonMatrix(Path json, String field) throws IOException {
        String text = Files.readString(json);
        int start = text.indexOf("\"" + field + "\"");
        if (start < 0) {
            throw new IllegalStateException("no field " + field + " in " + json);
        }
        int open = text.indexOf('[', start);
        int depth = 0;
        int end = open;
        for (; end < text.length(); end++) {
            char c = text.charAt(end);
            if (c == '[') {
                depth++;
            } else if (c == ']' && --depth == 0) {
                break;
            }
        }
        Matcher m = Pattern.compile("-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?").matcher(text.substring(open, end));
        List<Float> values = new ArrayList<>();
        while (m.find()) {
            values.add(Float.parseFloat(m.group()));
        }
        float[] out = new float[values.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = values.get(i);
        }
        return out;
    }
}
