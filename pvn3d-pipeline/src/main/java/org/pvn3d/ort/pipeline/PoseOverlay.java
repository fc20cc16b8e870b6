package org.pvn3d.ort.pipeline;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.CRC32;
import java.util.zip.Deflater;
import org.pvn3d.ort.OrtErrorCode;
import org.pvn3d.ort.OrtException;

/**
 * The sample's image, upscaled, with the predicted keypoints and pose axes drawn on it (projected with
 * {@code cam_K}), written as a PNG by java.base alone (a tiny rasteriser and PNG encoder: no
 * java.desktop, so it works on JREs without AWT too).
 *
 * <p>Legend: filled discs = predicted keypoints (orange; the centre white; the command line draws the model keypoints under the predicted pose), hollow squares = ground-truth
 * keypoints (cyan), thick lines = the predicted pose's axes (x red, y green, z blue; {@link #AXIS_LENGTH}),
 * thin lines = the ground-truth axes.
 */
public final class PoseOverlay {
    /** Length of the drawn axes, metres. */
    public static final double AXIS_LENGTH = 0.05;

    private final int width;
    private final int height;
    private final int scale;
    private final int[] rgb;
    private final double[] k;

    private PoseOverlay(int width, int height, int scale, int[] rgb, double[] k) {
        this.width = width;
        this.height = height;
        this.scale = scale;
        this.rgb = rgb;
        this.k = k;
    }

    /** The most pixels a picture may have (1 GB of raster). */
    static final long MAX_PIXELS = 1L << 28;

    /**
     * Renders the overlay for a sample with {@code image [H,W,3]} (floats in [0,1]) and {@code cam_K}.
     *
     * @param kps   predicted keypoints [K,3] in the camera frame (NaN rows are skipped), or null
     * @param pose  the predicted pose, or null / non-finite to skip its axes
     * @param scale integer upscaling (nearest neighbour), e.g. 4
     */
    public static byte[] render(Pvn3dSample sample, float[] kps, Pose pose, int scale) {
        long[] shape = sample.entry("image").shape();
        if (shape.length != 3 || shape[2] != 3 || shape[0] < 1 || shape[1] < 1) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, sample.source() + ": the picture needs an 'image' [H,W,3]"
                    + " with H, W >= 1, not " + java.util.Arrays.toString(shape));
        }
        long pixels = shape[0] * shape[1]; // at most a PVT1 entry's size: no overflow
        if (scale < 1 || pixels > MAX_PIXELS || (long) scale * scale > MAX_PIXELS / pixels) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, "a picture of " + shape[1] + "x" + shape[0] + " pixels at scale "
                    + scale + " would hold more than " + MAX_PIXELS + " pixels: use a smaller scale");
        }
        int h = (int) shape[0];
        int w = (int) shape[1];
        float[] img = sample.entry("image").floats();
        float[] kf = sample.entry("cam_K").floats();
        if (kf.length != 9) {
            throw new OrtException(OrtErrorCode.ORT_INVALID_ARGUMENT, sample.source() + ": 'cam_K' must hold the 9 floats of a 3x3"
                    + " matrix, not " + kf.length);
        }
        double[] kk = new double[9];
        for (int i = 0; i < 9; i++) {
            kk[i] = kf[i];
        }
        int[] rgb = new int[w * scale * h * scale];
        for (int y = 0; y < h * scale; y++) {
            for (int x = 0; x < w * scale; x++) {
                int o = ((y / scale) * w + x / scale) * 3;
                rgb[y * w * scale + x] = pack(channel(img[o]), channel(img[o + 1]), channel(img[o + 2]));
            }
        }
        PoseOverlay ov = new PoseOverlay(w * scale, h * scale, scale, rgb, kk);
        if (sample.hasGroundTruth()) {
            Pose gt = sample.groundTruth();
            ov.axes(gt, 1, 0.55);
            double[] gk = gt.apply(sample.modelKps());
            for (int i = 0; i < gk.length; i += 3) {
                double[] p = ov.project(gk[i], gk[i + 1], gk[i + 2]);
                if (p != null) {
                    ov.square(p[0], p[1], Math.max(3, scale), pack(0, 230, 230));
                }
            }
        }
        if (pose != null && pose.isFinite()) {
            ov.axes(pose, Math.max(2, scale / 2 + 1), 1.0);
        }
        if (kps != null) {
            int kk3 = kps.length / 3;
            for (int i = 0; i < kk3; i++) {
                double[] p = ov.project(kps[i * 3], kps[i * 3 + 1], kps[i * 3 + 2]);
                if (p != null) {
                    boolean centre = i == kk3 - 1;
                    ov.disc(p[0], p[1], Math.max(2, scale * 0.75) + 1, pack(0, 0, 0));
                    ov.disc(p[0], p[1], Math.max(2, scale * 0.75), centre ? pack(255, 255, 255) : pack(255, 150, 0));
                }
            }
        }
        return ov.png();
    }

    /** {@link #render} and write to {@code path}. */
    public static void write(Path path, Pvn3dSample sample, float[] kps, Pose pose, int scale) throws IOException {
        Files.write(path, render(sample, kps, pose, scale));
    }

    private void axes(Pose pose, int thickness, double brightness) {
        double[] o = project(pose.t(0), pose.t(1), pose.t(2));
        if (o == null) {
            return;
        }
        int[][] colours = {{255, 40, 40}, {40, 220, 40}, {60, 100, 255}};
        for (int a = 0; a < 3; a++) {
            double[] end = project(pose.t(0) + AXIS_LENGTH * pose.r(0, a), pose.t(1) + AXIS_LENGTH * pose.r(1, a),
                    pose.t(2) + AXIS_LENGTH * pose.r(2, a));
            if (end != null) {
                int c = pack((int) (colours[a][0] * brightness), (int) (colours[a][1] * brightness), (int) (colours[a][2] * brightness));
                line(o[0], o[1], end[0], end[1], thickness, c);
            }
        }
    }

    /**
     * Pixel coordinates in the upscaled image of a camera-frame point; null behind the camera, or farther
     * outside the picture than its own size (nothing of it would show, and a pixel index past 2^31 would wrap
     * into the picture).
     */
    double[] project(double x, double y, double z) {
        if (!(z > 1e-6) || !Double.isFinite(x) || !Double.isFinite(y)) {
            return null;
        }
        double u = (k[0] * x / z + k[1] * y / z + k[2] + 0.5) * scale - 0.5;
        double v = (k[4] * y / z + k[5] + 0.5) * scale - 0.5;
        double margin = Math.max(width, height);
        if (!(u >= -margin && u <= width + margin && v >= -margin && v <= height + margin)) { // NaN too
            return null;
        }
        return new double[] {u, v};
    }

    private void line(double x0, double y0, double x1, double y1, int thickness, int colour) {
        double len = Math.hypot(x1 - x0, y1 - y0);
        int steps = Math.max(1, (int) Math.ceil(len * 2));
        if (steps > 100_000) {
            return;
        }
        for (int s = 0; s <= steps; s++) {
            double f = (double) s / steps;
            disc(x0 + f * (x1 - x0), y0 + f * (y1 - y0), thickness / 2.0, colour);
        }
    }

    private void disc(double cx, double cy, double r, int colour) {
        int r0 = (int) Math.ceil(r);
        for (int dy = -r0; dy <= r0; dy++) {
            for (int dx = -r0; dx <= r0; dx++) {
                int x = (int) Math.round(cx) + dx;
                int y = (int) Math.round(cy) + dy;
                if (dx * dx + dy * dy <= r * r + 0.25) {
                    set(x, y, colour);
                }
            }
        }
    }

    private void square(double cx, double cy, int half, int colour) {
        int x0 = (int) Math.round(cx);
        int y0 = (int) Math.round(cy);
        for (int d = -half; d <= half; d++) {
            set(x0 + d, y0 - half, colour);
            set(x0 + d, y0 + half, colour);
            set(x0 - half, y0 + d, colour);
            set(x0 + half, y0 + d, colour);
        }
    }

    private void set(int x, int y, int colour) {
        if (x >= 0 && y >= 0 && x < width && y < height) {
            rgb[y * width + x] = colour;
        }
    }

    private static int channel(float v) {
        return Math.max(0, Math.min(255, Math.round(v * 255)));
    }

    private static int pack(int r, int g, int b) {
        return (r << 16) | (g << 8) | b;
    }

    /** The raster as an 8-bit RGB PNG. */
    private byte[] png() {
        byte[] raw = new byte[height * (1 + width * 3)];
        int o = 0;
        for (int y = 0; y < height; y++) {
            raw[o++] = 0; // filter: none
            for (int x = 0; x < width; x++) {
                int c = rgb[y * width + x];
                raw[o++] = (byte) (c >> 16);
                raw[o++] = (byte) (c >> 8);
                raw[o++] = (byte) c;
            }
        }
        return encodePng(width, height, raw);
    }

    /** A PNG of 8-bit RGB scanlines, each already prefixed with its filter byte. */
    static byte[] encodePng(int width, int height, byte[] filteredScanlines) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(new byte[] {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'});
        byte[] ihdr = new byte[13];
        putInt(ihdr, 0, width);
        putInt(ihdr, 4, height);
        ihdr[8] = 8; // bit depth
        ihdr[9] = 2; // colour type: RGB
        chunk(out, "IHDR", ihdr);
        Deflater deflater = new Deflater(Deflater.BEST_COMPRESSION);
        deflater.setInput(filteredScanlines);
        deflater.finish();
        ByteArrayOutputStream z = new ByteArrayOutputStream();
        byte[] buf = new byte[1 << 16];
        while (!deflater.finished()) {
            z.write(buf, 0, deflater.deflate(buf));
        }
        deflater.end();
        chunk(out, "IDAT", z.toByteArray());
        chunk(out, "IEND", new byte[0]);
        return out.toByteArray();
    }

    private static void chunk(ByteArrayOutputStream out, String type, byte[] data) {
        byte[] len = new byte[4];
        putInt(len, 0, data.length);
        out.writeBytes(len);
        byte[] t = type.getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        out.writeBytes(t);
        out.writeBytes(data);
        CRC32 crc = new CRC32();
        crc.update(t);
        crc.update(data);
        byte[] c = new byte[4];
        putInt(c, 0, (int) crc.getValue());
        out.writeBytes(c);
    }

    private static void putInt(byte[] b, int off, int v) {
        b[off] = (byte) (v >>> 24);
        b[off + 1] = (byte) (v >>> 16);
        b[off + 2] = (byte) (v >>> 8);
        b[off + 3] = (byte) v;
    }
}
