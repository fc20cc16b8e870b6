package org.pvn3d.ort.pipeline;

import java.util.Locale;
import java.util.Objects;

/**
 * The refinement stage: trimmed point-to-point ICP of the object's model points {@code [V,3]} (object
 * frame) against the observed points {@code [K,3]} (camera frame: the cloud's points whose predicted
 * class is the object), starting from the voting pose. Each round pairs every observed point with its
 * nearest model point under the current pose, keeps the pairs closer than the trim distance
 * ({@link IcpRefinement#trimFraction()} of the object's diameter) and fits the pose to them with
 * {@link Kabsch} in double; it stops when a round moves the pose by less than the tolerances, after
 * {@link IcpRefinement#maxIterations()} rounds, or when fewer than
 * {@link IcpRefinement#minCorrespondences()} pairs are left.
 *
 * <p>The nearest-neighbour search is exact: the observed points are taken into the object frame
 * ({@code R^T (q - t)}), where a grid over the model points with cells no smaller than the trim distance
 * is built once per call, so only the 27 cells around a point are searched (a neighbour farther than the
 * trim distance would be dropped anyway). One call allocates its grid and correspondence arrays once;
 * the rounds allocate only a few 3x3 matrices. Instances hold only their settings and are thread-safe.
 *
 * <p>Too few observed points (an empty cloud included), too few within the trim distance of the model
 * under the initial pose, or a non-finite initial pose (what an empty mask gives) is not an error: the
 * initial pose comes back unchanged with a {@link Status} that says why. Non-finite coordinates, a model
 * of fewer than three points or a diameter that is not positive are: {@link IllegalArgumentException}, as
 * the pose stage's own checks.
 */
public final class IcpRefiner {
    /** How a refinement ended; {@link #refined()} says whether the pose came from ICP. */
    public enum Status {
        /** Fitted; the last round moved the pose by less than the tolerances. */
        CONVERGED(true, "converged"),
        /** Fitted; stopped at the iteration limit. */
        MAX_ITERATIONS(true, "stopped at the iteration limit"),
        /** Fitted, then a later round found too few correspondences; the pose is the last fit. */
        LOST_CORRESPONDENCES(true, "stopped early: too few correspondences left"),
        /** Not run: too few observed points, or too few within the trim distance of the initial pose. */
        TOO_FEW_POINTS(false, "not run: too few observed points near the model"),
        /** Not run: the initial pose is not finite (e.g. an empty mask). */
        INVALID_POSE(false, "not run: the voting pose is not finite"),
        /** Not run: the sample has no model points for the object. */
        NO_MODEL_POINTS(false, "not run: no model points for the object"),
        /** Not run: the model points lie on one line (or are one point), so no rotation about it can be fitted. */
        DEGENERATE_MODEL(false, "not run: the model points lie on one line"),
        /** Not run: refinement is off. */
        DISABLED(false, "not run: off");

        private final boolean refined;
        private final String text;

        Status(boolean refined, String text) {
            this.refined = refined;
            this.text = text;
        }

        /** Whether the pose is ICP's (otherwise it is the initial pose, unchanged). */
        public boolean refined() {
            return refined;
        }

        /** A few words for reports. */
        public String text() {
            return text;
        }
    }

    /**
     * The outcome: the pose (the initial one when {@code !refined()}), how it ended, the rounds fitted,
     * the correspondences of the last fit (of the first round when none was fitted), the observed points,
     * the trim distance in metres (NaN when not known) and the RMS distance of the last fit's pairs under
     * the final pose (NaN when nothing was fitted).
     */
    public record Result(Pose pose, Status status, int iterations, int correspondences, int observed, double trimDistance,
            double rmsError) {
        public Result {
            Objects.requireNonNull(pose);
            Objects.requireNonNull(status);
        }

        /** The initial pose back, with why nothing was fitted. */
        public static Result notRun(Pose initial, Status status) {
            return new Result(initial, status, 0, 0, 0, Double.NaN, Double.NaN);
        }

        public boolean refined() {
            return status.refined();
        }

        /**
         * One line for reports, e.g. {@code converged after 6 iterations, 262 of 280 points within 28.4 mm, rms 1.21 mm}
         * or {@code not run: too few observed points near the model (4 of 6 within 28.4 mm, needs 10)}.
         */
        public String describe(IcpRefinement settings) {
            return switch (status) {
                case CONVERGED, MAX_ITERATIONS, LOST_CORRESPONDENCES -> String.format(Locale.ROOT,
                        "%s after %d iteration%s, %d of %d points within %.1f mm, rms %.2f mm", status.text(), iterations,
                        iterations == 1 ? "" : "s", correspondences, observed, 1e3 * trimDistance, 1e3 * rmsError);
                case TOO_FEW_POINTS -> String.format(Locale.ROOT, "%s (%d of %d within %.1f mm, needs %d)", status.text(), correspondences,
                        observed, 1e3 * trimDistance, settings == null ? IcpRefinement.DEFAULT.minCorrespondences()
                                : settings.minCorrespondences());
                default -> status.text();
            };
        }
    }

    /** Grid cells per axis at most: a tiny trim distance on a large model gets larger cells, never more. */
    static final int MAX_CELLS_PER_AXIS = 24;

    private final IcpRefinement settings;

    public IcpRefiner(IcpRefinement settings) {
        this.settings = Objects.requireNonNull(settings);
    }

    /** With {@link IcpRefinement#DEFAULT}. */
    public IcpRefiner() {
        this(IcpRefinement.DEFAULT);
    }

    public IcpRefinement settings() {
        return settings;
    }

    /**
     * Refines {@code initial} against the points of {@code sample}'s cloud that {@code mask} keeps, with the
     * sample's model points and {@code model_diameter} (computed from the points where the sample has none);
     * not run ({@link Status#NO_MODEL_POINTS}) when the sample has no model points.
     */
    public Result refine(Pose initial, Pvn3dSample sample, boolean[] mask) {
        if (!sample.has("model_points")) {
            return Result.notRun(initial, Status.NO_MODEL_POINTS);
        }
        float[] model = sample.modelPoints();
        float[] observed = maskedPoints(sample.cloud(), sample.cloudChannels(), mask);
        if (sample.has("model_diameter")) {
            return refine(initial, observed, model, sample.diameter());
        }
        // the exact diameter is O(V^2) in the model's points: computed only when the refinement gets past the
        // checks that need none (100k points took 7 s, for a sample whose mask kept nothing)
        Result early = earlyExit(initial, observed, Double.NaN);
        return early != null ? early : refine(initial, observed, model, diameter(model));
    }

    /** Not run for too few observed points or a non-finite initial pose; null when the refinement can go on. */
    private Result earlyExit(Pose initial, float[] observed, double trim) {
        Objects.requireNonNull(initial, "initial pose");
        checkPoints("observed points", observed, 0);
        int k = observed.length / 3;
        if (k < settings.minCorrespondences()) {
            return new Result(initial, Status.TOO_FEW_POINTS, 0, k, k, trim, Double.NaN);
        }
        if (!initial.isFinite()) {
            return new Result(initial, Status.INVALID_POSE, 0, 0, k, trim, Double.NaN);
        }
        return null;
    }

    /**
     * Refines {@code initial} (object frame to camera frame).
     *
     * @param observed    the observed points {@code [K,3]} in the camera frame (row-major x, y, z)
     * @param modelPoints the object's model points {@code [V,3]} in its own frame
     * @param diameter    the object's diameter in metres (the trim distance is a fraction of it)
     * @throws IllegalArgumentException for a non-finite coordinate, lengths that are not rows of three, a model
     *                                  of fewer than 3 points or a diameter that is not finite and positive
     */
    public Result refine(Pose initial, float[] observed, float[] modelPoints, double diameter) {
        Objects.requireNonNull(initial, "initial pose");
        checkPoints("model points", modelPoints, 3);
        if (!(diameter > 0) || !Double.isFinite(diameter)) {
            throw new IllegalArgumentException("ICP: the object's diameter must be finite and positive, not " + diameter);
        }
        double trim = settings.trimFraction() * diameter;
        Result early = earlyExit(initial, observed, trim);
        if (early != null) {
            return early;
        }
        int k = observed.length / 3;
        int min = settings.minCorrespondences();
        if (collinear(modelPoints, diameter)) {
            // every correspondence set would be on that line too: Kabsch's rotation about it is arbitrary (it
            // reported CONVERGED, the exact start pose turned by 17 degrees)
            return new Result(initial, Status.DEGENERATE_MODEL, 0, 0, k, trim, Double.NaN);
        }
        ModelGrid grid = new ModelGrid(modelPoints, trim);
        float trim2 = (float) (trim * trim);
        double[] src = new double[3 * k];
        double[] dst = new double[3 * k];
        Pose pose = initial;
        double[] r = initial.r();
        double[] t = initial.t();
        Status status = Status.MAX_ITERATIONS;
        int iterations = 0;
        int used = 0;
        double rms = Double.NaN;
        for (int it = 0; it < settings.maxIterations(); it++) {
            int n = 0;
            for (int i = 0; i < k; i++) {
                double qx = observed[3 * i] - t[0];
                double qy = observed[3 * i + 1] - t[1];
                double qz = observed[3 * i + 2] - t[2];
                // R^T (q - t): the observed point in the object frame, where distances are the same
                int j = grid.nearest((float) (r[0] * qx + r[3] * qy + r[6] * qz), (float) (r[1] * qx + r[4] * qy + r[7] * qz),
                        (float) (r[2] * qx + r[5] * qy + r[8] * qz), trim2);
                if (j >= 0) {
                    src[3 * n] = modelPoints[3 * j];
                    src[3 * n + 1] = modelPoints[3 * j + 1];
                    src[3 * n + 2] = modelPoints[3 * j + 2];
                    dst[3 * n] = observed[3 * i];
                    dst[3 * n + 1] = observed[3 * i + 1];
                    dst[3 * n + 2] = observed[3 * i + 2];
                    n++;
                }
            }
            if (n < min) {
                if (it == 0) {
                    return new Result(initial, Status.TOO_FEW_POINTS, 0, n, k, trim, Double.NaN);
                }
                status = Status.LOST_CORRESPONDENCES;
                break;
            }
            Pose next = Kabsch.fit(src, dst, n);
            double moved = next.translationError(pose);
            double turned = Math.toRadians(pose.rotationErrorDegrees(next));
            pose = next;
            r = next.r();
            t = next.t();
            iterations = it + 1;
            used = n;
            rms = rms(r, t, src, dst, n);
            if (moved < settings.translationTolerance() && turned < settings.rotationTolerance()) {
                status = Status.CONVERGED;
                break;
            }
        }
        return new Result(pose, status, iterations, used, k, trim, rms);
    }

    /** The RMS of {@code |R a_i + t - b_i|} over the first n rows. */
    private static double rms(double[] r, double[] t, double[] a, double[] b, int n) {
        double sum = 0;
        for (int i = 0; i < n; i++) {
            double ax = a[3 * i];
            double ay = a[3 * i + 1];
            double az = a[3 * i + 2];
            double dx = r[0] * ax + r[1] * ay + r[2] * az + t[0] - b[3 * i];
            double dy = r[3] * ax + r[4] * ay + r[5] * az + t[1] - b[3 * i + 1];
            double dz = r[6] * ax + r[7] * ay + r[8] * az + t[2] - b[3 * i + 2];
            sum += dx * dx + dy * dy + dz * dz;
        }
        return Math.sqrt(sum / n);
    }

    private static void checkPoints(String what, float[] p, int minRows) {
        Objects.requireNonNull(p, what);
        if (p.length % 3 != 0 || p.length / 3 < minRows) {
            throw new IllegalArgumentException("ICP: " + what + " must be rows of x, y, z" + (minRows > 0 ? ", at least " + minRows : "")
                    + "; got " + p.length + " floats");
        }
        for (int i = 0; i < p.length; i++) {
            if (!Float.isFinite(p[i])) {
                throw new IllegalArgumentException("ICP: " + what + " hold a non-finite value (" + p[i] + ") at row " + i / 3
                        + ", column " + i % 3);
            }
        }
    }

    /**
     * The xyz of the cloud's points that the mask selects: {@code cloud [N,C]} with x, y, z in its first three
     * channels, {@code mask [N]}; a new {@code [count,3]} array.
     */
    public static float[] maskedPoints(float[] cloud, int channels, boolean[] mask) {
        if (channels < 3 || cloud.length != (long) mask.length * channels) {
            throw new IllegalArgumentException("ICP: the cloud must be [N,C] with C >= 3 and the mask [N]; got " + cloud.length
                    + " floats, C=" + channels + ", " + mask.length + " mask entries");
        }
        int count = 0;
        for (boolean b : mask) {
            if (b) {
                count++;
            }
        }
        float[] out = new float[3 * count];
        int o = 0;
        for (int i = 0; i < mask.length; i++) {
            if (mask[i]) {
                out[o++] = cloud[i * channels];
                out[o++] = cloud[i * channels + 1];
                out[o++] = cloud[i * channels + 2];
            }
        }
        return out;
    }

    /**
     * Whether the points {@code [n,3]} lie on one line (or at one point), within a millionth of {@code scale}:
     * the largest distance of any point from the line through their centroid and the point farthest from it.
     */
    static boolean collinear(float[] points, double scale) {
        int n = points.length / 3;
        double cx = 0, cy = 0, cz = 0;
        for (int i = 0; i < n; i++) {
            cx += points[3 * i];
            cy += points[3 * i + 1];
            cz += points[3 * i + 2];
        }
        cx /= n;
        cy /= n;
        cz /= n;
        double ux = 0, uy = 0, uz = 0, far = 0;
        for (int i = 0; i < n; i++) {
            double dx = points[3 * i] - cx, dy = points[3 * i + 1] - cy, dz = points[3 * i + 2] - cz;
            double d = dx * dx + dy * dy + dz * dz;
            if (d > far) {
                far = d;
                ux = dx;
                uy = dy;
                uz = dz;
            }
        }
        double tolerance = 1e-6 * scale;
        if (Math.sqrt(far) <= tolerance) {
            return true; // one point
        }
        double len = Math.sqrt(far);
        ux /= len;
        uy /= len;
        uz /= len;
        for (int i = 0; i < n; i++) {
            double dx = points[3 * i] - cx, dy = points[3 * i + 1] - cy, dz = points[3 * i + 2] - cz;
            double ox = dy * uz - dz * uy, oy = dz * ux - dx * uz, oz = dx * uy - dy * ux; // |d x u|: distance from the line
            if (ox * ox + oy * oy + oz * oz > tolerance * tolerance) {
                return false;
            }
        }
        return true;
    }

    /** The largest distance between two of the points {@code [n,3]} (exact, O(n^2)); 0 for fewer than two. */
    public static double diameter(float[] points) {
        int n = points.length / 3;
        double best = 0;
        for (int i = 0; i < n; i++) {
            double x = points[3 * i];
            double y = points[3 * i + 1];
            double z = points[3 * i + 2];
            for (int j = i + 1; j < n; j++) {
                double dx = x - points[3 * j];
                double dy = y - points[3 * j + 1];
                double dz = z - points[3 * j + 2];
                best = Math.max(best, dx * dx + dy * dy + dz * dz);
            }
        }
        return Math.sqrt(best);
    }

    /**
     * A uniform grid over model points (their own frame), cells no smaller than the search radius: a point
     * within the radius of a query lies in one of the 27 cells around the query's. The points are stored
     * cell by cell (x fastest), as x, y, z arrays with their original indices. Not thread-safe (a search
     * keeps its state in fields): one per refinement.
     */
    static final class ModelGrid {
        private final float[] xs;
        private final float[] ys;
        private final float[] zs;
        private final int[] index;
        private final int[] cellStart;
        private final double minX;
        private final double minY;
        private final double minZ;
        private final double cell;
        private final int nx;
        private final int ny;
        private final int nz;
        /** The squared distance of the last {@link #nearest} hit. */
        float lastDistance2;
        /** The search in progress: the best squared distance so far and its point (-1: none). */
        private float bestDistance2;
        private int bestPoint;

        ModelGrid(float[] points, double radius) {
            int v = points.length / 3;
            double loX = Double.POSITIVE_INFINITY;
            double loY = Double.POSITIVE_INFINITY;
            double loZ = Double.POSITIVE_INFINITY;
            double hiX = Double.NEGATIVE_INFINITY;
            double hiY = Double.NEGATIVE_INFINITY;
            double hiZ = Double.NEGATIVE_INFINITY;
            for (int i = 0; i < v; i++) {
                loX = Math.min(loX, points[3 * i]);
                hiX = Math.max(hiX, points[3 * i]);
                loY = Math.min(loY, points[3 * i + 1]);
                hiY = Math.max(hiY, points[3 * i + 1]);
                loZ = Math.min(loZ, points[3 * i + 2]);
                hiZ = Math.max(hiZ, points[3 * i + 2]);
            }
            double extent = Math.max(hiX - loX, Math.max(hiY - loY, hiZ - loZ));
            // a hair above the radius, so that rounding never puts a neighbour two cells away
            this.cell = Math.max(radius * (1 + 1e-6), extent / MAX_CELLS_PER_AXIS);
            this.minX = loX;
            this.minY = loY;
            this.minZ = loZ;
            this.nx = cells(hiX - loX);
            this.ny = cells(hiY - loY);
            this.nz = cells(hiZ - loZ);
            int[] cellOf = new int[v];
            int[] start = new int[nx * ny * nz + 1];
            for (int i = 0; i < v; i++) {
                int c = (axis(points[3 * i + 2], minZ, nz) * ny + axis(points[3 * i + 1], minY, ny)) * nx
                        + axis(points[3 * i], minX, nx);
                cellOf[i] = c;
                start[c + 1]++;
            }
            for (int c = 0; c < nx * ny * nz; c++) {
                start[c + 1] += start[c];
            }
            this.cellStart = start;
            this.xs = new float[v];
            this.ys = new float[v];
            this.zs = new float[v];
            this.index = new int[v];
            int[] fill = java.util.Arrays.copyOf(start, start.length - 1);
            for (int i = 0; i < v; i++) {
                int at = fill[cellOf[i]]++;
                xs[at] = points[3 * i];
                ys[at] = points[3 * i + 1];
                zs[at] = points[3 * i + 2];
                index[at] = i;
            }
        }

        private int cells(double extent) {
            return (int) Math.floor(extent / cell) + 1;
        }

        private int axis(double x, double min, int n) {
            return Math.min(n - 1, (int) Math.floor((x - min) / cell));
        }

        /**
         * The index of the model point nearest to (x, y, z) among those whose squared distance is below
         * {@code radius2} (at most the grid's radius squared), or -1 when there is none; its squared
         * distance goes to {@link #lastDistance2}. The query's own cell is searched first; a neighbouring
         * cell only when its box is nearer than the best point so far (mostly none: the observed points lie
         * a few millimetres from the surface, the cells are centimetres wide).
         */
        int nearest(float x, float y, float z, float radius2) {
            double ux = (x - minX) / cell;
            double uy = (y - minY) / cell;
            double uz = (z - minZ) / cell;
            double fx = Math.floor(ux);
            double fy = Math.floor(uy);
            double fz = Math.floor(uz);
            if (fx < -1 || fy < -1 || fz < -1 || fx > nx || fy > ny || fz > nz) {
                return -1;
            }
            int ix = (int) fx;
            int iy = (int) fy;
            int iz = (int) fz;
            // squared distances (in cells) to the lower and upper face of the own cell, along each axis
            double lx = sq(ux - fx);
            double hx = sq(fx + 1 - ux);
            double ly = sq(uy - fy);
            double hy = sq(fy + 1 - uy);
            double lz = sq(uz - fz);
            double hz = sq(fz + 1 - uz);
            // cells^2 to metres^2, a little short so that rounding never skips a cell that holds a nearer point
            double scale = cell * cell * (1 - 1e-6);
            bestDistance2 = radius2;
            bestPoint = -1;
            boolean inside = ix >= 0 && ix < nx && iy >= 0 && iy < ny && iz >= 0 && iz < nz;
            if (inside) {
                scan((iz * ny + iy) * nx + ix, x, y, z);
            }
            for (int oz = -1; oz <= 1; oz++) {
                int cz = iz + oz;
                if (cz < 0 || cz >= nz) {
                    continue;
                }
                double gz = oz < 0 ? lz : oz > 0 ? hz : 0;
                for (int oy = -1; oy <= 1; oy++) {
                    int cy = iy + oy;
                    if (cy < 0 || cy >= ny) {
                        continue;
                    }
                    double gzy = gz + (oy < 0 ? ly : oy > 0 ? hy : 0);
                    for (int ox = -1; ox <= 1; ox++) {
                        int cx = ix + ox;
                        if (cx < 0 || cx >= nx || (inside && ox == 0 && oy == 0 && oz == 0)) {
                            continue;
                        }
                        double gap = (gzy + (ox < 0 ? lx : ox > 0 ? hx : 0)) * scale;
                        if (gap < bestDistance2) {
                            scan((cz * ny + cy) * nx + cx, x, y, z);
                        }
                    }
                }
            }
            int found = bestPoint;
            if (found < 0) {
                return -1;
            }
            lastDistance2 = bestDistance2;
            return index[found];
        }

        /** Keeps the nearest point of one cell in {@link #bestPoint} when it beats {@link #bestDistance2}. */
        private void scan(int c, float x, float y, float z) {
            float best = bestDistance2;
            int found = bestPoint;
            for (int p = cellStart[c], end = cellStart[c + 1]; p < end; p++) {
                float dx = xs[p] - x;
                float dy = ys[p] - y;
                float dz = zs[p] - z;
                float d = dx * dx + dy * dy + dz * dz;
                if (d < best) {
                    best = d;
                    found = p;
                }
            }
            bestDistance2 = best;
            bestPoint = found;
        }

        private static double sq(double v) {
            return v * v;
        }
    }
}
