package org.pvn3d.ort.pipeline;

/**
 * PVN3D's votes for one sample: {@code votes [K,N,3]} (the keypoints first, the centre last) and the
 * object mask {@code [N]}.
 */
public record Votes(int k, int n, float[] votes, boolean[] mask) {
    public Votes {
        if (votes.length != (long) k * n * 3 || mask.length != n) {
            throw new IllegalArgumentException("votes must be [K,N,3] and mask [N]: K=" + k + ", N=" + n + ", "
                    + votes.length + " vote floats, " + mask.length + " mask entries");
        }
    }

    /**
     * PVN3D's convention (exporter/README.md): point n votes for keypoint k at
     * {@code xyz[n] - kp_of[k,n]} and for the centre at {@code xyz[n] - ctr_of[n]}; the mask is
     * {@code argmax(seg[n]) == objectClass} (ties: the lowest class, as torch.argmax).
     *
     * @param cld     {@code cld_rgb_nrm [N,C]} with xyz in its first three channels
     * @param cldChannels C (9 for PVN3D's LineMOD layout)
     * @param kpOf    {@code pred_kp_of [Kp,N,3]}
     * @param ctrOf   {@code pred_ctr_of [1,N,3]}
     * @param seg     {@code pred_rgbd_seg [N,classes]}
     */
    public static Votes fromPredictions(float[] cld, int cldChannels, float[] kpOf, float[] ctrOf, float[] seg, int classes,
            int objectClass) {
        int n = cld.length / cldChannels;
        if (cld.length != n * cldChannels || ctrOf.length != n * 3 || kpOf.length % (n * 3) != 0 || seg.length != n * classes) {
            throw new IllegalArgumentException("inconsistent shapes: cld " + cld.length + " floats (C=" + cldChannels + "), kp_of "
                    + kpOf.length + ", ctr_of " + ctrOf.length + ", seg " + seg.length + " (classes=" + classes + ")");
        }
        if (objectClass < 0 || objectClass >= classes) {
            throw new IllegalArgumentException("object class " + objectClass + " is not one of the model's " + classes
                    + " classes (0 to " + (classes - 1) + ")");
        }
        int kp = kpOf.length / (n * 3);
        int k = kp + 1;
        float[] votes = new float[k * n * 3];
        for (int row = 0; row < k; row++) {
            float[] of = row < kp ? kpOf : ctrOf;
            int base = row < kp ? row * n * 3 : 0;
            for (int i = 0; i < n; i++) {
                for (int c = 0; c < 3; c++) {
                    votes[(row * n + i) * 3 + c] = cld[i * cldChannels + c] - of[base + i * 3 + c];
                }
            }
        }
        boolean[] mask = new boolean[n];
        for (int i = 0; i < n; i++) {
            int arg = 0;
            for (int c = 1; c < classes; c++) {
                if (seg[i * classes + c] > seg[i * classes + arg]) {
                    arg = c;
                }
            }
            mask[i] = arg == objectClass;
        }
        return new Votes(k, n, votes, mask);
    }

    /** How many points the mask selects. */
    public int maskedCount() {
        int c = 0;
        for (boolean b : mask) {
            if (b) {
                c++;
            }
        }
        return c;
    }
}
