/*
 * PVN3D_CPU_CLONES (internal): compile a hot CPU loop for three x86-64 levels and let the loader pick the
 * widest the CPU runs (GCC/Clang function multiversioning: one ifunc, resolved once at load).
 *
 *   PVN3D_CPU_CLONES static void loop(...) { ... }
 *
 * The library itself is built for the baseline (SSE2): no -march flag, so it runs on every x86-64. A clone
 * computes exactly what the baseline does, lane by lane: the library has no FMA contraction
 * (-ffp-contract=off) and no reassociation (no -ffast-math), so a loop written with fixed partial sums gives
 * the same bits at every level (cuda-ops/tests check the kernels against their references, and
 * benchmarks/results/2026-12-05-cpu-simd/ compared every CPU entry point bit for bit across builds).
 * Elsewhere (not x86-64 Linux, or PVN3D_NO_CPU_CLONES defined) the macro is empty: one baseline build.
 */
#ifndef PVN3D_COMMON_CPU_CLONES_H
#define PVN3D_COMMON_CPU_CLONES_H

#if defined(__x86_64__) && defined(__linux__) && (defined(__GNUC__) || defined(__clang__)) && \
    !defined(PVN3D_NO_CPU_CLONES)
#define PVN3D_CPU_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define PVN3D_CPU_CLONES
#endif

#endif /* PVN3D_COMMON_CPU_CLONES_H */
