#!/usr/bin/env bash
# parallel_for on OpenMP regions (BASE) against the library's own pool of sleeping helpers (NEW), side by
# side on this machine: both commits' libpvn3d_ops built CPU-only (Release), the command line of this tree
# with the library chosen by PVN3D_OPS_PATH. Writes here: pipeline.txt (the tiny model's inference and the
# embedded PointNet++ model, 100 timed runs each, three interleaved rounds), profile.txt (ORT's profile of the
# tiny model: host time per call of each PVN3D node, two rounds), jmh-<commit>-<round>.txt and medians.txt
# (KernelBenchmark on the CPU at the single-item sizes, two interleaved rounds).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(git -C "$here" rev-parse --show-toplevel)
base=${BASE:-2743630} new=${NEW:-adf346f}
export JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64} PATH=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin:$PATH
work=$(mktemp -d)
for c in "$base" "$new"; do
  git -C "$repo" worktree add -q --detach "$work/src-$c" "$c"
  cmake -S "$work/src-$c" -B "$work/build-$c" -DPVN3D_WITH_CUDA=OFF -DPVN3D_BUILD_TESTS=OFF >/dev/null
  cmake --build "$work/build-$c" -j2 >/dev/null
done
cd "$repo"
./pvn3d-ort --help >/dev/null  # builds the launcher first if the sources changed
lib() { echo "$work/build-$1/libpvn3d_ops.so"; }
for r in 1 2 3; do
  for c in "$base" "$new"; do
    m=$(PVN3D_OPS_PATH=$(lib $c) ./pvn3d-ort --warmup 5 --runs 100 2>&1 | grep -E '^  inference' \
      | sed -E 's/^  inference +([0-9.]+) ms.*median of 100 runs, min ([0-9.]+), p90 ([0-9.]+), max ([0-9.]+) ms.*/median \1 min \2 p90 \3 max \4 ms/')
    p=$(PVN3D_OPS_PATH=$(lib $c) ./pvn3d-ort pointnet2 --warmup 5 --runs 100 2>&1 | grep 'latency over' | sed 's/latency over 100 runs (after 5 warm-up): //')
    echo "round $r $c | tiny model inference: $m | pointnet2: $p"
  done
done | tee "$here/pipeline.txt"
for r in 1 2; do
  for c in "$base" "$new"; do
    rm -rf "$work/prof"
    echo "== round $r $c: $(PVN3D_OPS_PATH=$(lib $c) ./pvn3d-ort --warmup 5 --runs 60 --profile "$work/prof" 2>&1 \
      | grep -E 'ORT profile|^  PVN3D_|^custom operators' \
      | awk '{ if ($1=="ORT") printf "%s ms a run; ", $6; else if ($1=="custom") printf "PVN3D nodes %s ms in all", $6; else printf "%s %s us; ", substr($1,7), $8 }')"
  done
done | tee "$here/profile.txt"
jar="$repo/benchmarks/target/benchmarks.jar"
k=FPS_B1_N12288_np2048,BallQuery_B1_N12288_M2048_S32_r0.025,GroupPoints_B1_C99_N2048_M1024_S32,GroupPoints_B8_C256_N1024_M512_S32,ThreeNN_B1_n12288_m2048,ThreeInterpolate_B1_C128_m2048_n12288,GatherPoints_B8_C256_N4096_M1024,PoseSolve_B1_K9_N3000
for r in 1 2; do
  for c in "$base" "$new"; do
    PVN3D_OPS_PATH=$(lib $c) java --enable-native-access=ALL-UNNAMED -jar "$jar" KernelBenchmark -p device=cpu -p kernel=$k \
      -wi 2 -w 1 -i 3 -r 1 -f 1 > "$here/jmh-$c-$r.txt" 2>&1
  done
done
for c in "$base" "$new"; do git -C "$repo" worktree remove --force "$work/src-$c"; done
rm -rf "$work"
for f in "$here"/jmh-*.txt; do
  grep -E 'call:p0.50 ' "$f" | awk -v f="$(basename "$f" .txt)" '{printf "%-16s %-40s %12.1f us\n", f, $3, $5}'
done | sort -k2,2 -k1,1 | tee "$here/medians.txt"
