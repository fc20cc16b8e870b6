#!/usr/bin/env bash
# The CPU kernels before and after ef098cd (mean shift skipping settled modes, AVX2/AVX-512 clones, block
# skips in ThreeNN and BallQuery), side by side on this machine: both commits built CPU-only (Release, the
# project's CMake flags), benchmarks/scripts/compare_cpu_builds.cpp run on both (every CPU entry point, bit for bit), then
# interleaved JMH rounds of KernelBenchmark on the CPU (the benchmarks jar of this tree, the library chosen
# with PVN3D_OPS_PATH). Writes build-compare.txt and jmh-<lib>-<round>.txt here.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(git -C "$here" rev-parse --show-toplevel)
base=${BASE:-f549901} new=${NEW:-ef098cd}
export JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64} PATH=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin:$PATH
work=$(mktemp -d)
for c in "$base" "$new"; do
  git -C "$repo" worktree add -q --detach "$work/src-$c" "$c"
  cmake -S "$work/src-$c" -B "$work/build-$c" -DPVN3D_WITH_CUDA=OFF -DPVN3D_BUILD_TESTS=OFF >/dev/null
  cmake --build "$work/build-$c" -j2 >/dev/null
done
g++ -O1 -std=c++17 "$repo/benchmarks/scripts/compare_cpu_builds.cpp" -o "$work/compare_builds" -ldl
"$work/compare_builds" "$work/build-$base/libpvn3d_ops.so" "$work/build-$new/libpvn3d_ops.so" | tee "$here/build-compare.txt"
jar="$repo/benchmarks/target/benchmarks.jar"
fast=FPS_B1_N12288_np2048,BallQuery_B1_N12288_M2048_S16_r0.0175,BallQuery_B1_N12288_M2048_S32_r0.025,ThreeNN_B1_n12288_m2048,GroupPoints_B1_C99_N2048_M1024_S32,ThreeInterpolate_B1_C128_m2048_n12288,GatherPoints_B8_C256_N4096_M1024
pose=VoteAggregate_B1_K9_N3000,PoseSolve_B1_K9_N3000,PoseSolve_B4_K9_N3000
for r in 1 2; do
  for c in "$base" "$new"; do
    PVN3D_OPS_PATH="$work/build-$c/libpvn3d_ops.so" java --enable-native-access=ALL-UNNAMED -jar "$jar" KernelBenchmark \
      -p device=cpu -p kernel=$fast -wi 2 -w 1 -i 3 -r 1 -f 1 > "$here/jmh-$c-fast-$r.txt" 2>&1
  done
done
for c in "$base" "$new"; do
  PVN3D_OPS_PATH="$work/build-$c/libpvn3d_ops.so" java --enable-native-access=ALL-UNNAMED -jar "$jar" KernelBenchmark \
    -p device=cpu -p kernel=$pose -wi 1 -w 2 -i 3 -r 2 -f 1 > "$here/jmh-$c-pose.txt" 2>&1
done
for c in "$base" "$new"; do git -C "$repo" worktree remove --force "$work/src-$c"; done
rm -rf "$work"
# The medians, one line per kernel and library
for f in "$here"/jmh-*.txt; do
  grep -E 'call:p0.50 ' "$f" | awk -v f="$(basename "$f" .txt)" '{printf "%-28s %-40s %12.1f us\n", f, $3, $5}'
done | sort -k2,2 -k1,1 | tee "$here/medians.txt"
