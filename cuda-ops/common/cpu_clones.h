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
 * Elsewhere (not x86-64 Linux, GCC before 12, Clang before 18, or PVN3D_NO_CPU_CLONES defined: CMake's
 * -DPVN3D_CPU_CLONES=OFF) the macro is empty: one baseline build. PVN3D_CPU_CLONES_ENABLED says which.
 */
#ifndef PVN3D_COMMON_CPU_CLONES_H
#define PVN3D_COMMON_CPU_CLONES_H

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define PVN3D_TSAN_BUILD 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define PVN3D_TSAN_BUILD 1
#endif

/* ThreadSanitizer builds get the baseline: their instrumented ifunc resolvers run before the sanitizer's
 * runtime is set up, and the library crashed while loading. */
#if defined(__x86_64__) && defined(__linux__) && !defined(PVN3D_NO_CPU_CLONES) && !defined(PVN3D_TSAN_BUILD) && \
    ((defined(__clang__) && __clang_major__ >= 18) ||                                \
     (!defined(__clang__) && defined(__GNUC__) && __GNUC__ >= 12))
/* GCC takes "arch=x86-64-vN" clones from 12 on (11: "no dispatcher found"); Clang's dispatcher for them
 * never picks the v4 clone and drops v3 before 18 (LLVM issue 55830): older compilers get the baseline. */
#define PVN3D_CPU_CLONES_ENABLED 1
#define PVN3D_CPU_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define PVN3D_CPU_CLONES_ENABLED 0
#define PVN3D_CPU_CLONES
#endif

#endif /* PVN3D_COMMON_CPU_CLONES_H */
