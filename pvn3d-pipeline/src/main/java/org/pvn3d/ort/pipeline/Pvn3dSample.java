package org.pvn3d.ort.pipeline;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.pvn3d.ort.OnnxTensorType;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;
import org.pvn3d.ort.io.PvtFile;

/**
 * One PVN3D sample in a PVT1 file, with the entry names of the exporter's fixtures and datasets
 * (exporter/README.md): the model inputs {@code rgb}, {@code cld_rgb_nrm}, {@code choose}, then the scene:
 * {@code image [H,W,3]}, {@code cam_K [3,3]}, {@code labels}, {@code gt_R [3,3]}, {@code gt_t [3]},
 * {@code model_kps [K,3]} (centre last), {@code model_points [n,3]}, {@code model_diameter [1]}, and
 * optionally {@code occlusion [1]} (the fraction of the object hidden) and {@code seed [1]}.
 *
 * <p>Two layouts are read. The fixture layout holds everything, with {@code image} as floats in [0,1].
 * The dataset layout ({@code exporter/make_dataset.py}) keeps each file small: {@code image} is the
 * camera's uint8 picture and {@code rgb} is left out (it is recomputed here, bit for bit as the
 * generator computes it: {@code (x/255 - mean) / std} in float32 with ImageNet's mean and std), and
 * the object's entries ({@code model_kps}, {@code model_points}, {@code model_diameter}) sit once in
 * {@value #MODEL_FILE} beside the samples, merged in by {@link #read(Path)}.
 * The inputs and {@code model_kps} are required; the rest is optional (no ground truth: no ADD /
 * ADD-S; no image or intrinsics: no picture).
 */
public record Pvn3dSample(String source, Map<String, PvtFile.Entry> entries) {
    /** The class-path resource of the shipped sample. */
    public static final String RESOURCE = "/pvn3d/pvn3d_tiny_sample.bin";

    /** The file of a dataset folder that holds the object's entries shared by its samples. */
    public static final String MODEL_FILE = "model.bin";

    private static final float[] IMAGENET_MEAN = {0.485f, 0.456f, 0.406f};
    private static final float[] IMAGENET_STD = {0.229f, 0.224f, 0.225f};

    public Pvn3dSample {
        entries = derived(source, entries);
        if (!entries.containsKey("cld_rgb_nrm") || !entries.containsKey("model_kps")) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, source + ": a PVN3D sample needs at least 'cld_rgb_nrm' and 'model_kps' (it has "
                    + entries.keySet() + ")");
        }
    }

    /** Reads a sample file; a {@value #MODEL_FILE} beside it supplies the object entries the file lacks. */
    public static Pvn3dSample read(Path path) {
        Map<String, PvtFile.Entry> entries = new LinkedHashMap<>(PvtFile.read(path));
        Path model = path.resolveSibling(MODEL_FILE);
        if (!path.getFileName().toString().equals(MODEL_FILE) && Files.isRegularFile(model)) {
            PvtFile.read(model).forEach(entries::putIfAbsent);
        }
        return new Pvn3dSample(path.getFileName().toString(), entries);
    }

    /**
     * The dataset layout made whole: {@code rgb} from a uint8 {@code image} where it is missing, and the
     * image as floats in [0,1] (what the fixture layout stores).
     */
    private static Map<String, PvtFile.Entry> derived(String source, Map<String, PvtFile.Entry> entries) {
        PvtFile.Entry image = entries.get("image");
        if (image == null || image.type() != OnnxTensorType.UINT8) {
            return entries;
        }
        long[] s = image.shape();
        if (s.length != 3 || s[2] != 3 || s[0] < 1 || s[1] < 1 || s[0] * s[1] > Integer.MAX_VALUE / 3) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, source + ": a uint8 'image' must be [H,W,3] with H, W >= 1"
                    + " and H*W*3 < 2^31, not " + java.util.Arrays.toString(s));
        }
        int h = (int) s[0];
        int w = (int) s[1];
        byte[] px = image.data();
        float[] unit = new float[px.length];
        float[] rgb = new float[px.length];
        for (int i = 0; i < px.length; i++) {
            int c = i % 3;
            float v = (px[i] & 0xff) / 255f;
            unit[i] = v;
            // [H,W,3] -> [1,3,H,W]; float32 arithmetic in the generator's order
            rgb[c * h * w + i / 3] = (v - IMAGENET_MEAN[c]) / IMAGENET_STD[c];
        }
        Map<String, PvtFile.Entry> out = new LinkedHashMap<>(entries);
        out.put("image", floatEntry("image", s, unit));
        out.putIfAbsent("rgb", floatEntry("rgb", new long[] {1, 3, h, w}, rgb));
        return out;
    }

    private static PvtFile.Entry floatEntry(String name, long[] shape, float[] values) {
        ByteBuffer buf = ByteBuffer.allocate(4 * values.length).order(ByteOrder.LITTLE_ENDIAN);
        buf.asFloatBuffer().put(values);
        return new PvtFile.Entry(name, OnnxTensorType.FLOAT, shape.clone(), buf.array());
    }

    /** A PVT1 class-path resource (e.g. {@link #RESOURCE}). */
    public static Pvn3dSample resource(String name) {
        return new Pvn3dSample(name, readResource(name));
    }

    static Map<String, PvtFile.Entry> readResource(String name) {
        try {
            return PvtFile.read(new ByteArrayInputStream(Pvn3dPipeline.resourceBytes(name)), name);
        } catch (IOException e) {
            throw new OrtException(OrtErrorCode.ORT_NO_SUCHFILE, "cannot read " + name + ": " + e, e);
        }
    }

    /** This sample with one entry added or replaced (e.g. to make perturbed copies). */
    public Pvn3dSample with(String name, OnnxTensorType type, long[] shape, Object data) {
        int n = Math.toIntExact(java.util.Arrays.stream(shape).reduce(1, Math::multiplyExact));
        ByteBuffer buf = ByteBuffer.allocate(n * type.byteSize()).order(ByteOrder.LITTLE_ENDIAN);
        switch (data) {
            case float[] f when type == OnnxTensorType.FLOAT && f.length == n -> buf.asFloatBuffer().put(f);
            case long[] l when type == OnnxTensorType.INT64 && l.length == n -> buf.asLongBuffer().put(l);
            default -> throw new IllegalArgumentException("entry " + name + ": give float[] for FLOAT or long[] for INT64 with "
                    + n + " elements");
        }
        Map<String, PvtFile.Entry> copy = new LinkedHashMap<>(entries);
        copy.put(name, new PvtFile.Entry(name, type, shape.clone(), buf.array()));
        return new Pvn3dSample(source, copy);
    }

    /** Writes the sample as a PVT1 file (the format {@link PvtFile} reads), entries in order. */
    public void write(Path path) throws IOException {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        ByteBuffer head = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
        head.put("PVT1".getBytes(StandardCharsets.US_ASCII)).putInt(entries.size());
        out.writeBytes(head.array());
        for (PvtFile.Entry e : entries.values()) {
            byte[] name = e.name().getBytes(StandardCharsets.UTF_8);
            ByteBuffer h = ByteBuffer.allocate(12 + name.length + 8 * e.shape().length).order(ByteOrder.LITTLE_ENDIAN);
            h.putInt(name.length).put(name).putInt(e.type().value()).putInt(e.shape().length);
            for (long d : e.shape()) {
                h.putLong(d);
            }
            out.writeBytes(h.array());
            out.writeBytes(e.data());
        }
        Files.write(path, out.toByteArray());
    }

    public PvtFile.Entry entry(String name) {
        PvtFile.Entry e = entries.get(name);
        if (e == null) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, source + " has no entry '" + name + "' (it has " + entries.keySet() + ")");
        }
        return e;
    }

    public boolean has(String name) {
        return entries.containsKey(name);
    }

    /** {@code cld_rgb_nrm} without its batch dimension: {@code [N,C]}. */
    public float[] cloud() {
        return entry("cld_rgb_nrm").floats();
    }

    /** What each of the cloud's nine channels holds, for messages. */
    private static final String[] CLOUD_CHANNELS = {"x", "y", "z", "red", "green", "blue", "normal x", "normal y", "normal z"};

    /**
     * Refuses what the network cannot take as input, before it runs: a non-finite value in the cloud or the
     * image ({@link #checkCloud}, {@link #checkImage}) and a {@code choose} that names no pixel of the image or
     * does not match the cloud ({@link #checkChoose}). ORT would run the network on them without an error (a
     * NaN pose, answered as if no object were there), or fail inside a node with a code that reads as a broken
     * session (a pool would reopen it).
     */
    public void checkInputs() {
        checkCloud();
        checkImage();
        checkChoose();
    }

    /**
     * Refuses a cloud holding a NaN or an infinite value, naming the first one. The PointNet++ operators take
     * such a point without an error and sample, group and interpolate around it (a NaN point is picked again
     * at every furthest-point step), and a NaN anywhere in a point's features spreads through the MLPs and the
     * max over its neighbours: the pose would be wrong with nothing to say why. Reads the bytes in place
     * (one pass over 12288 x 9 floats for a full-size frame).
     */
    public void checkCloud() {
        PvtFile.Entry e = entry("cld_rgb_nrm");
        if (e.type() != OnnxTensorType.FLOAT) {
            return; // the model's own input check names a wrong type
        }
        long i = firstNonFinite(e.data());
        if (i >= 0) {
            int channels = cloudChannels();
            long point = i / channels;
            int c = (int) (i % channels);
            String channel = channels == CLOUD_CHANNELS.length ? " (" + CLOUD_CHANNELS[c] + ")" : "";
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, source + ": 'cld_rgb_nrm' point " + point + " channel "
                    + c + channel + " holds a non-finite value (" + floatAt(e.data(), i) + ")");
        }
    }

    /**
     * Refuses an image ({@code rgb}, float [B,3,H,W]) holding a NaN or an infinite value, naming the first one:
     * the CNN would spread it over the whole feature map and the segmentation would find no object.
     */
    public void checkImage() {
        if (!has("rgb") || entry("rgb").type() != OnnxTensorType.FLOAT) {
            return;
        }
        PvtFile.Entry e = entry("rgb");
        long i = firstNonFinite(e.data());
        if (i >= 0) {
            long[] s = e.shape();
            String at = "element " + i;
            if (s.length == 4) {
                long w = s[3], h = s[2], c = s[1];
                at = "batch " + i / (c * h * w) + " channel " + i / (h * w) % c + " row " + i / w % h + " column " + i % w;
            }
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, source + ": 'rgb' holds a non-finite value ("
                    + floatAt(e.data(), i) + ") at " + at);
        }
    }

    /**
     * Refuses a {@code choose} (int64 [B,1,N]: the image pixel of each cloud point) whose length is not the
     * cloud's point count, or with an entry outside the image's H*W pixels ({@code rgb} [B,3,H,W]): ORT reads a
     * negative index from the end of the row and fails inside the network on one past it.
     */
    public void checkChoose() {
        if (!has("choose") || entry("choose").type() != OnnxTensorType.INT64) {
            return;
        }
        PvtFile.Entry e = entry("choose");
        long[] s = e.shape();
        if (s.length > 0 && has("cld_rgb_nrm") && entry("cld_rgb_nrm").shape().length >= 2 && s[s.length - 1] != points()) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, source + ": 'choose' picks " + s[s.length - 1]
                    + " pixels, but the cloud has " + points() + " points (one pixel a point)");
        }
        if (!has("rgb") || entry("rgb").shape().length != 4) {
            return;
        }
        long[] rgb = entry("rgb").shape();
        long pixels = rgb[2] * rgb[3];
        MemorySegment m = MemorySegment.ofArray(e.data());
        for (long i = 0, count = e.data().length / 8; i < count; i++) {
            long v = m.get(LONG_LE, 8 * i);
            if (v < 0 || v >= pixels) {
                throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, source + ": 'choose' point " + i + " names pixel " + v
                        + ", outside the " + pixels + " pixels of the image (0 <= choose < H*W)");
            }
        }
    }

    /**
     * The position of the first NaN or infinite float in {@code data} (PVT1's little-endian floats), or -1. A
     * branch-free pass first (the JIT vectorises it: 0.04 ms over a 480x640 image), then the exact one only when
     * there is something to name.
     */
    static long firstNonFinite(byte[] data) {
        MemorySegment m = MemorySegment.ofArray(data);
        long count = data.length / 4;
        int lowest = EXPONENT;
        for (long i = 0; i < count; i++) {
            lowest = Math.min(lowest, ~m.get(FLOAT_BITS, 4 * i) & EXPONENT); // 0 where the exponent is all ones
        }
        if (lowest != 0) {
            return -1;
        }
        for (long i = 0; i < count; i++) {
            if ((m.get(FLOAT_BITS, 4 * i) & EXPONENT) == EXPONENT) {
                return i;
            }
        }
        return -1;
    }

    private static float floatAt(byte[] data, long i) {
        return Float.intBitsToFloat(MemorySegment.ofArray(data).get(FLOAT_BITS, 4 * i));
    }

    /** A float's exponent bits: all ones for an infinity or a NaN. */
    private static final int EXPONENT = 0x7f800000;

    /** An int64 as PVT1 stores it. */
    private static final ValueLayout.OfLong LONG_LE = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** A float's bits as PVT1 stores them. */
    private static final ValueLayout.OfInt FLOAT_BITS = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    public int cloudChannels() {
        long[] s = cloudShape();
        return (int) s[s.length - 1];
    }

    public int points() {
        long[] s = cloudShape();
        return (int) s[s.length - 2];
    }

    /** The cloud's shape, [...,N,C] (a scalar or a single row has no points to name). */
    private long[] cloudShape() {
        long[] s = entry("cld_rgb_nrm").shape();
        if (s.length < 2) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, source + ": 'cld_rgb_nrm' must be [B,N,C], not "
                    + java.util.Arrays.toString(s));
        }
        return s;
    }

    /** The object's keypoints in its own frame, [K,3] with K >= 3 (what the pose fit needs), all finite. */
    public float[] modelKps() {
        return rows("model_kps", 3);
    }

    public boolean hasGroundTruth() {
        return has("gt_R") && has("gt_t") && has("model_points") && has("model_diameter");
    }

    public Pose groundTruth() {
        return Pose.of(floats("gt_R", 9, true), floats("gt_t", 3, true));
    }

    /** The object's model points in its own frame, [V,3] with V >= 3, all finite. */
    public float[] modelPoints() {
        return rows("model_points", 3);
    }

    /** The object's diameter, finite and positive (the 10% accuracy threshold and ICP's trim distance are fractions of it). */
    public double diameter() {
        double d = floats("model_diameter", 1, true)[0];
        if (!(d > 0)) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, source + ": 'model_diameter' must be positive, not " + d);
        }
        return d;
    }

    /** Entry {@code name}'s floats as rows of x, y, z: at least {@code least} rows, every value finite. */
    private float[] rows(String name, int least) {
        float[] v = entry(name).floats();
        if (v.length % 3 != 0 || v.length < 3 * least) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, source + ": '" + name + "' must hold rows of x, y, z, at least "
                    + least + "; it holds " + v.length + " floats");
        }
        for (int i = 0; i < v.length; i++) {
            if (!Float.isFinite(v[i])) {
                throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, source + ": '" + name + "' holds a non-finite value ("
                        + v[i] + ") at row " + i / 3 + ", column " + i % 3);
            }
        }
        return v;
    }

    public boolean hasImage() {
        return has("image") && has("cam_K");
    }

    /** The fraction of the object hidden by occluders, or NaN where the sample does not say. */
    public double occlusion() {
        return has("occlusion") ? floats("occlusion", 1, false)[0] : Double.NaN;
    }

    /** Entry {@code name}'s floats, which must be {@code count} of them, and all finite if {@code finite} (a ground truth's). */
    private float[] floats(String name, int count, boolean finite) {
        float[] v = entry(name).floats();
        if (v.length != count) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, source + ": '" + name + "' must hold " + count
                    + (count == 1 ? " float" : " floats") + ", not " + v.length);
        }
        for (int i = 0; finite && i < v.length; i++) {
            if (!Float.isFinite(v[i])) {
                throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, source + ": '" + name + "' holds a non-finite value ("
                        + v[i] + " at " + i + ")");
            }
        }
        return v;
    }
}
