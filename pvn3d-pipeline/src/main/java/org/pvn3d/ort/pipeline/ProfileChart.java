package org.pvn3d.ort.pipeline;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.pvn3d.ort.profile.ProfileSummary;

/**
 * A bar chart of a {@link ProfileSummary} as a PNG, drawn by java.base alone (PoseOverlay's PNG encoder
 * and a 5x7 bitmap font here; no java.desktop): one row per operator type and provider, heaviest first,
 * a bar for its host time and, where known, a thinner one for its device time; custom operators in their
 * own colour.
 */
public final class ProfileChart {
    /** Operator types drawn at most (the rest are summed into one row). */
    public static final int MAX_ROWS = 24;

    private static final int SCALE = 2;
    private static final int CHAR_W = 6 * SCALE;
    private static final int LINE_H = 9 * SCALE;
    private static final int LABEL_CHARS = 36;
    private static final int BAR_W = 520;
    private static final int VALUE_CHARS = 22;
    private static final int MARGIN = 16;
    private static final int ROW_H = 34;
    private static final int WHITE = 0xFFFFFF;
    private static final int INK = 0x202020;
    private static final int GRID = 0xDDDDDD;
    private static final int ORT_CPU = 0x4C78A8;
    private static final int ORT_GPU = 0x54A24B;
    private static final int CUSTOM = 0xF58518;
    private static final int DEVICE = 0x7B4FA0;

    private final int width;
    private final int height;
    private final int[] rgb;

    private ProfileChart(int width, int height) {
        this.width = width;
        this.height = height;
        this.rgb = new int[width * height];
        java.util.Arrays.fill(rgb, WHITE);
    }

    /** The chart of {@code summary} as PNG bytes. */
    public static byte[] render(ProfileSummary summary) {
        List<ProfileSummary.OpType> types = summary.opTypes();
        int shown = Math.min(types.size(), MAX_ROWS);
        boolean rest = types.size() > shown;
        int rows = shown + (rest ? 1 : 0);
        int width = 2 * MARGIN + LABEL_CHARS * CHAR_W + BAR_W + VALUE_CHARS * CHAR_W;
        int height = 2 * MARGIN + 3 * LINE_H + Math.max(1, rows) * ROW_H + 3 * LINE_H;
        ProfileChart c = new ProfileChart(width, height);
        int runs = Math.max(1, summary.runs());
        c.text(MARGIN, MARGIN, String.format(Locale.ROOT, "ORT profile: time per operator type, per run (%d run%s)", summary.runs(),
                summary.runs() == 1 ? "" : "s"), INK);
        c.text(MARGIN, MARGIN + LINE_H, "host: ORT's node events; device: " + summary.deviceTimeSource().label(), INK);
        long max = 1;
        for (ProfileSummary.OpType t : types) {
            max = Math.max(max, Math.max(t.hostMicros(), t.deviceMicros()));
        }
        long restHost = 0;
        for (int i = shown; i < types.size(); i++) {
            restHost += types.get(i).hostMicros();
        }
        max = Math.max(max, restHost);
        int top = MARGIN + 3 * LINE_H;
        int barX = MARGIN + LABEL_CHARS * CHAR_W;
        for (int g = 0; g <= 4; g++) {
            int x = barX + g * BAR_W / 4;
            c.fill(x, top - 4, 1, rows * ROW_H + 4, GRID);
        }
        for (int i = 0; i < rows; i++) {
            int y = top + i * ROW_H;
            String label;
            long host;
            long device;
            int colour;
            if (i < shown) {
                ProfileSummary.OpType t = types.get(i);
                label = (t.custom() ? "* " : "") + t.opType() + " [" + ProfileSummary.shortProvider(t.provider()) + "]";
                host = t.hostMicros();
                device = t.deviceMicros();
                colour = t.custom() ? CUSTOM : t.provider().equals("CPUExecutionProvider") ? ORT_CPU : ORT_GPU;
            } else {
                label = (types.size() - shown) + " more type(s)";
                host = restHost;
                device = -1;
                colour = GRID;
            }
            c.text(MARGIN, y + 2, clip(label, LABEL_CHARS - 1), INK);
            int w = (int) Math.round((double) BAR_W * host / max);
            c.fill(barX, y, Math.max(1, w), 16, colour);
            String value = String.format(Locale.ROOT, "%.3f ms", host / 1000.0 / runs);
            if (device >= 0) {
                int dw = (int) Math.round((double) BAR_W * device / max);
                c.fill(barX, y + 18, Math.max(1, dw), 8, DEVICE);
                value += String.format(Locale.ROOT, " dev %.3f", device / 1000.0 / runs);
            }
            c.text(barX + BAR_W + 8, y + 2, value, INK);
        }
        int legend = top + rows * ROW_H + LINE_H / 2;
        int x = MARGIN;
        x = c.key(x, legend, ORT_CPU, "ORT op, CPU");
        x = c.key(x, legend, ORT_GPU, "ORT op, GPU");
        x = c.key(x, legend, CUSTOM, "* custom op");
        c.key(x, legend, DEVICE, "device time");
        c.text(MARGIN, legend + LINE_H + 4, String.format(Locale.ROOT, "full scale %.3f ms per run; %s", max / 1000.0 / runs,
                clip(summary.source(), 60)), INK);
        return c.png();
    }

    /** {@link #render} written to {@code file}. */
    public static void write(ProfileSummary summary, Path file) throws IOException {
        Files.write(file, render(summary));
    }

    private int key(int x, int y, int colour, String label) {
        fill(x, y + 2, 24, 12, colour);
        text(x + 30, y, label, INK);
        return x + 30 + (label.length() + 3) * CHAR_W;
    }

    private void fill(int x0, int y0, int w, int h, int colour) {
        for (int y = Math.max(0, y0); y < Math.min(height, y0 + h); y++) {
            for (int x = Math.max(0, x0); x < Math.min(width, x0 + w); x++) {
                rgb[y * width + x] = colour;
            }
        }
    }

    private void text(int x0, int y0, String s, int colour) {
        for (int i = 0; i < s.length(); i++) {
            boolean[] glyph = Font.glyph(s.charAt(i));
            if (glyph == null) {
                continue;
            }
            for (int r = 0; r < 7; r++) {
                for (int col = 0; col < 5; col++) {
                    if (glyph[r * 5 + col]) {
                        fill(x0 + i * CHAR_W + col * SCALE, y0 + r * SCALE, SCALE, SCALE, colour);
                    }
                }
            }
        }
    }

    private byte[] png() {
        byte[] raw = new byte[height * (1 + width * 3)];
        int o = 0;
        for (int y = 0; y < height; y++) {
            raw[o++] = 0;
            for (int x = 0; x < width; x++) {
                int c = rgb[y * width + x];
                raw[o++] = (byte) (c >> 16);
                raw[o++] = (byte) (c >> 8);
                raw[o++] = (byte) c;
            }
        }
        return PoseOverlay.encodePng(width, height, raw);
    }

    private static String clip(String s, int n) {
        return s.length() <= n ? s : s.substring(0, n - 1) + "~";
    }

    /** A 5x7 bitmap font of the characters the chart needs; others are drawn as '?', a space as nothing. */
    static final class Font {
        /** Bands of 16 glyphs: a line naming them, then their 7 rows (5 columns each, '#' set). */
        private static final String BANDS = """
            A     B     C     D     E     F     G     H     I     J     K     L     M     N     O     P
            .###. ####. .###. ####. ##### ##### .###. #...# .###. ..### #...# #.... #...# #...# .###. ####.
            #...# #...# #...# #...# #.... #.... #...# #...# ..#.. ...#. #..#. #.... ##.## #...# #...# #...#
            #...# #...# #.... #...# #.... #.... #.... #...# ..#.. ...#. #.#.. #.... #.#.# ##..# #...# #...#
            ##### ####. #.... #...# ####. ####. #.### ##### ..#.. ...#. ##... #.... #.#.# #.#.# #...# ####.
            #...# #...# #.... #...# #.... #.... #...# #...# ..#.. ...#. #.#.. #.... #...# #..## #...# #....
            #...# #...# #...# #...# #.... #.... #...# #...# ..#.. #..#. #..#. #.... #...# #...# #...# #....
            #...# ####. .###. ####. ##### #.... .#### #...# .###. .##.. #...# ##### #...# #...# .###. #....
            Q     R     S     T     U     V     W     X     Y     Z     0     1     2     3     4     5
            .###. ####. .#### ##### #...# #...# #...# #...# #...# ##### .###. ..#.. .###. ##### ...#. #####
            #...# #...# #.... ..#.. #...# #...# #...# #...# #...# ....# #...# .##.. #...# ...#. ..##. #....
            #...# #...# #.... ..#.. #...# #...# #...# .#.#. .#.#. ...#. #..## ..#.. ....# ..#.. .#.#. ####.
            #...# ####. .###. ..#.. #...# #...# #.#.# ..#.. ..#.. ..#.. #.#.# ..#.. ...#. ...#. #..#. ....#
            #.#.# #.#.. ....# ..#.. #...# #...# #.#.# .#.#. ..#.. .#... ##..# ..#.. ..#.. ....# ##### ....#
            #..#. #..#. ....# ..#.. #...# .#.#. #.#.# #...# ..#.. #.... #...# ..#.. .#... #...# ...#. #...#
            .##.# #...# ####. ..#.. .###. ..#.. .#.#. #...# ..#.. ##### .###. .###. ##### .###. ...#. .###.
            6     7     8     9     a     b     c     d     e     f     g     h     i     j     k     l
            ..##. ##### .###. .###. ..... #.... ..... ....# ..... ..##. ..... #.... ..#.. ...#. #.... .##..
            .#... ....# #...# #...# ..... #.... ..... ....# ..... .#..# .#### #.... ..... ..... #.... ..#..
            #.... ...#. #...# #...# .###. #.##. .###. .##.# .###. .#... #...# #.##. .##.. ..##. #..#. ..#..
            ####. ..#.. .###. .#### ....# ##..# #.... #..## #...# ###.. #...# ##..# ..#.. ...#. #.#.. ..#..
            #...# .#... #...# ....# .#### #...# #.... #...# ##### .#... .#### #...# ..#.. ...#. ##... ..#..
            #...# .#... #...# ...#. #...# #...# #...# #...# #.... .#... ....# #...# ..#.. #..#. #.#.. ..#..
            .###. .#... .###. .##.. .#### ####. .###. .#### .###. .#... .###. #...# .###. .##.. #..#. .###.
            m     n     o     p     q     r     s     t     u     v     w     x     y     z     _     -
            ..... ..... ..... ..... ..... ..... ..... .#... ..... ..... ..... ..... ..... ..... ..... .....
            ..... ..... ..... ..... ..... ..... ..... .#... ..... ..... ..... ..... ..... ..... ..... .....
            ##.#. #.##. .###. ####. .##.# #.##. .###. ###.. #...# #...# #...# #...# #...# ##### ..... .....
            #.#.# ##..# #...# #...# #..## ##..# #.... .#... #...# #...# #...# .#.#. #...# ...#. ..... #####
            #.#.# #...# #...# ####. .#### #.... .###. .#... #...# #...# #.#.# ..#.. .#### ..#.. ..... .....
            #...# #...# #...# #.... ....# #.... ....# .#..# #..## .#.#. #.#.# .#.#. ....# .#... ..... .....
            #...# #...# .###. #.... ....# #.... ####. ..##. .##.# ..#.. .#.#. #...# .###. ##### ##### .....
            .     :     ,     (     )     %     /     [     ]     +     =     #     <     >     *     ~
            ..... ..... ..... ...#. .#... ##... ..... .###. .###. ..... ..... .#.#. ...#. .#... ..... .....
            ..... .##.. ..... ..#.. ..#.. ##..# ....# .#... ...#. ..#.. ..... .#.#. ..#.. ..#.. ..#.. .....
            ..... .##.. ..... .#... ...#. ...#. ...#. .#... ...#. ..#.. ##### ##### .#... ...#. #.#.# .#...
            ..... ..... ..... .#... ...#. ..#.. ..#.. .#... ...#. ##### ..... .#.#. #.... ....# .###. #.#.#
            ..... .##.. .##.. .#... ...#. .#... .#... .#... ...#. ..#.. ##### ##### .#... ...#. #.#.# ...#.
            .##.. .##.. ..#.. ..#.. ..#.. #..## #.... .#... ...#. ..#.. ..... .#.#. ..#.. ..#.. ..#.. .....
            .##.. ..... .#... ...#. .#... ...## ..... .###. .###. ..... ..... .#.#. ...#. .#... ..... .....
            ?     ;     '     !     |
            .###. ..... ..#.. ..#.. ..#..
            #...# .##.. ..#.. ..#.. ..#..
            ....# .##.. .#... ..#.. ..#..
            ...#. ..... ..... ..#.. ..#..
            ..#.. .##.. ..... ..#.. ..#..
            ..... ..#.. ..... ..... ..#..
            ..#.. .#... ..... ..#.. ..#..
            """;
        private static final Map<Character, boolean[]> GLYPHS = parse();

        private Font() {}

        static boolean[] glyph(char c) {
            if (c == ' ') {
                return null;
            }
            boolean[] g = GLYPHS.get(c);
            return g != null ? g : GLYPHS.get('?');
        }

        private static Map<Character, boolean[]> parse() {
            Map<Character, boolean[]> m = new HashMap<>();
            List<String> lines = BANDS.lines().filter(l -> !l.isBlank()).toList();
            for (int b = 0; b + 7 < lines.size(); b += 8) {
                String[] names = lines.get(b).trim().split("\\s+");
                for (int k = 0; k < names.length; k++) {
                    boolean[] g = new boolean[35];
                    for (int r = 0; r < 7; r++) {
                        String row = lines.get(b + 1 + r).trim().split(" ")[k];
                        for (int col = 0; col < 5; col++) {
                            g[r * 5 + col] = row.charAt(col) == '#';
                        }
                    }
                    m.put(names[k].charAt(0), g);
                }
            }
            return m;
        }
    }
}
