package org.pvn3d.ort.pipeline;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
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
 * One PVN3D sample in a PVT1 file, with the entry names of the exporter's fixture
 * (exporter/README.md): the model inputs {@code rgb}, {@code cld_rgb_nrm}, {@code choose}, then the scene:
 * {@code image [H,W,3]} (float RGB in [0,1]), {@code cam_K [3,3]}, {@code labels}, {@code gt_R [3,3]},
 * {@code gt_t [3]}, {@code model_kps [K,3]} (centre last), {@code model_points [n,3]},
 * {@code model_diameter [1]}. The inputs and {@code model_kps} are required; the rest is optional
 * (no ground truth: no ADD / ADD-S; no image or intrinsics: no picture).
 */
public record Pvn3dSample(String source, Map<String, PvtFile.Entry> entries) {
    /** The class-path resource of the shipped sample. */
    public static final String RESOURCE = "/pvn3d/pvn3d_tiny_sample.bin";

    public Pvn3dSample {
        if (!entries.containsKey("cld_rgb_nrm") || !entries.containsKey("model_kps")) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, source + ": a PVN3D sample needs at least 'cld_rgb_nrm' and 'model_kps' (it has "
                    + entries.keySet() + ")");
        }
    }

    public static Pvn3dSample read(Path path) {
        return new Pvn3dSample(path.getFileName().toString(), PvtFile.read(path));
    }

    /** A PVT1 class-path resource (e.g. {@link #RESOURCE}). */
    public static Pvn3dSample resource(String name) {
        return new Pvn3dSample(name, readResource(name));
    }

    static Map<String, PvtFile.Entry> readResource(String name) {
        try (InputStream in = Pvn3dSample.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new OrtException(OrtErrorCode.ORT_NO_SUCHFILE, "missing class-path resource " + name);
            }
            return PvtFile.read(new ByteArrayInputStream(in.readAllBytes()), name);
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

    public int cloudChannels() {
        long[] s = entry("cld_rgb_nrm").shape();
        return (int) s[s.length - 1];
    }

    public int points() {
        long[] s = entry("cld_rgb_nrm").shape();
        return (int) s[s.length - 2];
    }

    public float[] modelKps() {
        return entry("model_kps").floats();
    }

    public boolean hasGroundTruth() {
        return has("gt_R") && has("gt_t") && has("model_points") && has("model_diameter");
    }

    public Pose groundTruth() {
        return Pose.of(entry("gt_R").floats(), entry("gt_t").floats());
    }

    public float[] modelPoints() {
        return entry("model_points").floats();
    }

    public double diameter() {
        return entry("model_diameter").floats()[0];
    }

    public boolean hasImage() {
        return has("image") && has("cam_K");
    }
}
