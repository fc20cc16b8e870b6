package org.pvn3d.ort.pipeline;

import java.math.BigDecimal;
import java.math.MathContext;
import java.util.Locale;

/**
 * Settings of the ICP refinement stage ({@link IcpRefiner}): trimmed point-to-point ICP of the object's
 * model points against the observed points the segmentation kept, starting from the voting pose.
 *
 * @param maxIterations          correspondence-and-fit rounds at most (>= 1)
 * @param trimFraction           the trim distance as a fraction of the object's diameter: an observed
 *                               point whose nearest model point is farther takes no part in the fit
 *                               (0.15: 28 mm on the 0.19 m bunny; a Python prototype on held-out scenes did best
 *                               with 30 mm, nearly as well with 20 mm, worse with 10 mm)
 * @param minCorrespondences     fewer correspondences within the trim distance and the round does not fit
 *                               (>= 3, what a rigid fit needs)
 * @param translationTolerance   converged once one round moves the translation by less than this (metres)
 * @param rotationTolerance      ... and the rotation by less than this (radians)
 */
public record IcpRefinement(int maxIterations, double trimFraction, int minCorrespondences, double translationTolerance,
        double rotationTolerance) {
    /** 30 rounds, trim 15% of the diameter, at least 10 correspondences, converged below 1e-6 m and 1e-6 rad. */
    public static final IcpRefinement DEFAULT = new IcpRefinement(30, 0.15, 10, 1e-6, 1e-6);

    public IcpRefinement {
        if (maxIterations < 1 || minCorrespondences < 3 || !(trimFraction > 0) || !Double.isFinite(trimFraction)
                || !(translationTolerance >= 0) || !(rotationTolerance >= 0)) {
            throw new IllegalArgumentException("ICP: maxIterations >= 1, minCorrespondences >= 3, a finite trimFraction > 0 and "
                    + "tolerances >= 0, not " + maxIterations + ", " + minCorrespondences + ", " + trimFraction + ", "
                    + translationTolerance + ", " + rotationTolerance);
        }
    }

    public IcpRefinement withMaxIterations(int n) {
        return new IcpRefinement(n, trimFraction, minCorrespondences, translationTolerance, rotationTolerance);
    }

    public IcpRefinement withTrimFraction(double f) {
        return new IcpRefinement(maxIterations, f, minCorrespondences, translationTolerance, rotationTolerance);
    }

    public IcpRefinement withMinCorrespondences(int n) {
        return new IcpRefinement(maxIterations, trimFraction, n, translationTolerance, rotationTolerance);
    }

    /**
     * What the stage does, for reports: {@code icp (trim 15% of the diameter, at most 30 iterations, at least 10
     * correspondences)}.
     */
    public String describe() {
        String percent = new BigDecimal(100 * trimFraction).round(new MathContext(3)).stripTrailingZeros().toPlainString();
        return String.format(Locale.ROOT, "icp (trim %s%% of the diameter, at most %d iterations, at least %d correspondences)",
                percent, maxIterations, minCorrespondences);
    }
}
