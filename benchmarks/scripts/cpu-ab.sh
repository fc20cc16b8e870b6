#!/usr/bin/env bash
# Two commits' CPU kernels side by side on this machine (no GPU needed):
#   BASE=<rev> NEW=<rev> OUT=<dir> bash benchmarks/scripts/cpu-ab.sh KERNEL[,KERNEL...]
# Builds libpvn3d_ops of both commits CPU-only (Release, the project's CMake flags) in temporary worktrees,
# compares every CPU entry point of the two bit for bit (compare_cpu_builds.cpp -> OUT/build-compare.txt),
# then runs interleaved JMH rounds of KernelBenchmark on the CPU with the benchmarks jar of this tree and the
# library chosen by PVN3D_OPS_PATH (OUT/jmh-<rev>-<threads>-<round>.txt, medians in OUT/medians.txt).
# Options (environment): ROUNDS (default 2); THREADS, the kernel thread counts to run ("default" = the
# library's default, a number sets OMP_NUM_THREADS; default "1 default"); PIPELINE=1 also times the tiny
# model and the embedded PointNet++ model through the command line, three interleaved rounds of 100 runs
# (OUT/pipeline.txt). Needs benchmarks/target/benchmarks.jar (mvn package) and, for PIPELINE, ./pvn3d-ort.
set -euo pipefail
kernels=${1:?usage: BASE=<rev> NEW=<rev> OUT=<dir> $0 KERNEL[,KERNEL...]}
repo=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
base=$(git -C "$repo" rev-parse --short "${BASE:?BASE=<rev>}") new=$(git -C "$repo" rev-parse --short "${NEW:?NEW=<rev>}")
out=${OUT:?OUT=<dir>} rounds=${ROUNDS:-2} threads=${THREADS:-1 default}
export JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
export PATH=$JAVA_HOME/bin:$PATH
mkdir -p "$out"
work=$(mktemp -d)
trap 'for c in "$base" "$new"; do git -C "$repo" worktree remove --force "$work/src-$c" 2>/dev/null || true; done; rm -rf "$work"' EXIT
for c in "$base" "$new"; do
  git -C "$repo" worktree add -q --detach "$work/src-$c" "$c"
  cmake -S "$work/src-$c" -B "$work/build-$c" -DCMAKE_BUILD_TYPE=Release -DPVN3D_WITH_CUDA=OFF -DPVN3D_BUILD_TESTS=OFF >/dev/null
  cmake --build "$work/build-$c" -j"$(nproc)" >/dev/null
done
lib() { echo "$work/build-$1/libpvn3d_ops.so"; }
g++ -O1 -std=c++17 "$repo/benchmarks/scripts/compare_cpu_builds.cpp" -o "$work/compare" -ldl
"$work/compare" "$(lib "$base")" "$(lib "$new")" | tee "$out/build-compare.txt"
jar="$repo/benchmarks/target/benchmarks.jar"
for r in $(seq "$rounds"); do
  for t in $threads; do
    for c in "$base" "$new"; do
      if [ "$t" = default ]; then unset OMP_NUM_THREADS; else export OMP_NUM_THREADS=$t; fi
      PVN3D_OPS_PATH=$(lib "$c") java --enable-native-access=ALL-UNNAMED -jar "$jar" KernelBenchmark -p device=cpu \
        -p kernel="$kernels" -wi 2 -w 1 -i 3 -r 1 -f 1 > "$out/jmh-$c-$t-$r.txt" 2>&1
    done
  done
done
unset OMP_NUM_THREADS
for f in "$out"/jmh-*.txt; do
  grep -E 'call:p0.50 ' "$f" | awk -v f="$(basename "$f" .txt)" '{printf "%-45s %-24s %12.1f us\n", $3, f, $5}'
done | sort | tee "$out/medians.txt"
if [ "${PIPELINE:-0}" = 1 ]; then
  cd "$repo"
  ./pvn3d-ort --help >/dev/null  # builds the launcher first if the sources changed
  ./pvn3d-ort --warmup 5 --runs 20 >/dev/null 2>&1  # and lets its start-up work finish before the timed rounds
  for r in 1 2 3; do
    for c in "$base" "$new"; do
      m=$(PVN3D_OPS_PATH=$(lib "$c") ./pvn3d-ort --warmup 5 --runs 100 2>&1 | grep -E '^  inference' \
        | sed -E 's/^  inference +([0-9.]+) ms.*median of 100 runs, min ([0-9.]+), p90 ([0-9.]+), max ([0-9.]+) ms.*/median \1 min \2 p90 \3 max \4 ms/')
      p=$(PVN3D_OPS_PATH=$(lib "$c") ./pvn3d-ort pointnet2 --warmup 5 --runs 100 2>&1 | grep 'latency over' \
        | sed 's/latency over 100 runs (after 5 warm-up): //')
      echo "round $r $c | tiny model inference: $m | pointnet2: $p"
    done
  done | tee "$out/pipeline.txt"
fi
