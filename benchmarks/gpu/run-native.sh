#!/usr/bin/env bash
# On the GPU machine: libpvn3d_ops's native tests and CUDA benchmarks built HERE (nvcc needs no GPU), without
# the GPU kit, Java or a build there: one call, a few seconds. Carry the folder this script fills:
#   here:  bash benchmarks/gpu/run-native.sh --pack [BUILD_DIR]      (default /tmp/ops-cuda, a CMake build with
#          -DPVN3D_WITH_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90) -> .gpuwork/native/
#   there: SAN="gather_points three_interpolate" bash benchmarks/gpu/run-native.sh
# Two builds side by side: also pack the one to compare against (its library only; the tests and the bench of
# the first build run over it) with
#   here:  bash benchmarks/gpu/run-native.sh --pack-base BASE_BUILD_DIR            -> .gpuwork/native-base/
# and the run adds AB_ROUNDS (default 3) interleaved rounds of AB_OPS (default "ThreeNN GatherPoints
# GroupPoints"), base then this build, in $OUT/ab-rounds.txt. Carry .gpuwork (about 5 MB a build).
# The native tests also run with each kernel choice forced (PVN3D_THREE_INTERPOLATE, PVN3D_GATHER).
# Writes to $OUT: native-ctest.txt (each test binary's summary), host-launch.txt (pvn3d_bench_cuda --host: the
# launchers' host time per call, beside empty kernels' launch floor, also as inside a model's run), bench-cuda.txt
# (kernel timings), bench-gather-forced.txt (GatherPoints and GroupPoints with PVN3D_GATHER=direct and =staged),
# and with SAN="op ..." sanitizers.tgz (sanitizer-OP-TOOL.txt: compute-sanitizer memcheck and racecheck of
# pvn3d_test_OP, SAN_LIMIT seconds each, default 150) and sanitizer-summary.txt (their summary lines).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
d=$top/.gpuwork/native
if [ "${1:-}" = "--pack" ]; then
  set -e
  build=${2:-/tmp/ops-cuda}
  exclude=$(git -C "$top" rev-parse --git-path info/exclude)
  grep -qxF "/.gpuwork/" "$exclude" 2>/dev/null || echo "/.gpuwork/" >> "$exclude"
  rm -rf "$d"; mkdir -p "$d"
  cp "$build"/pvn3d_test_* "$build"/pvn3d_bench_cuda "$d"/
  cp -L "$build"/libpvn3d_ops.so.0 "$build"/libpvn3d_ops_baseline.so "$build"/libpvn3d_ops_x86_64_v3.so "$d"/
  bash "$top/cuda-ops/tests/fetch_bunny.sh" "$d" > /dev/null
  du -sh "$d"; exit 0
fi
if [ "${1:-}" = "--pack-base" ]; then
  set -e
  [ -f "${2:-}/libpvn3d_ops.so.0" ] || { echo "run-native: --pack-base needs a build folder with libpvn3d_ops.so.0" >&2; exit 1; }
  rm -rf "$d-base"; mkdir -p "$d-base"
  cp -L "$2/libpvn3d_ops.so.0" "$d-base/"
  echo "$d-base: the library of $2"; exit 0
fi
[ -x "$d/pvn3d_bench_cuda" ] || { echo "run-native: nothing in $d (run --pack here and carry .gpuwork/native)" >&2; exit 1; }
export LD_LIBRARY_PATH=$d:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PVN3D_BUNNY_FILE=$d/bunny_positions.txt PVN3D_REQUIRE_BUNNY=1 PVN3D_BASELINE_LIBRARY=$d/libpvn3d_ops_baseline.so \
  PVN3D_V3_LIBRARY=$d/libpvn3d_ops_x86_64_v3.so
OUT=${OUT:-$top/gpu-results}; mkdir -p "$OUT"
: > "$OUT/native-ctest.txt"
fails=0
for t in "$d"/pvn3d_test_*; do
  "$t" > /tmp/pvn3d-native-test.txt 2>&1; rc=$?
  [ $rc = 0 ] || fails=$((fails + 1))
  { echo "== $(basename "$t") exit $rc"; tail -3 /tmp/pvn3d-native-test.txt; } >> "$OUT/native-ctest.txt"
done
# The kernel choices forced each way (the size rules alone leave some paths to few shapes): ThreeInterpolate's,
# and the shared gather's (GatherPoints, GroupPoints)
forced() {  # VAR VALUE TEST
  env "$1=$2" "$d/pvn3d_test_$3" > /tmp/pvn3d-native-test.txt 2>&1; rc=$?
  [ $rc = 0 ] || fails=$((fails + 1))
  { echo "== pvn3d_test_$3 ($1=$2) exit $rc"; tail -3 /tmp/pvn3d-native-test.txt; } >> "$OUT/native-ctest.txt"
}
for k in transposed staged; do forced PVN3D_THREE_INTERPOLATE $k three_interpolate; done
forced PVN3D_THREE_NN plain three_nn
for k in direct staged direct1 direct2 direct4 direct8; do forced PVN3D_GATHER $k gather_points; forced PVN3D_GATHER $k group_points; done
echo "native tests: $(grep -c '^== .* exit 0$' "$OUT/native-ctest.txt") passed, $fails failed"
"$d/pvn3d_bench_cuda" --host "$OUT/host-launch.txt" > /dev/null 2>&1; echo "host exit $?"; cat "$OUT/host-launch.txt"
"$d/pvn3d_bench_cuda" > "$OUT/bench-cuda.txt" 2>&1; echo "bench exit $? (1 also when GatherPoints is slower than its reference somewhere)"
# the shared gather's choice forced each way, beside the rule's (in bench-cuda.txt): GatherPoints, GroupPoints
for k in direct staged direct1 direct2 direct4 direct8; do
  echo "== PVN3D_GATHER=$k"; PVN3D_GATHER=$k "$d/pvn3d_bench_cuda" --only GatherPoints; PVN3D_GATHER=$k "$d/pvn3d_bench_cuda" --only GroupPoints
done > "$OUT/bench-gather-forced.txt" 2>&1
# base against this build, interleaved (the same bench binary over each library)
if [ -f "$d-base/libpvn3d_ops.so.0" ]; then
  for r in $(seq "${AB_ROUNDS:-3}"); do
    for lib in "$d-base" "$d"; do
      echo "== $(basename "$lib") round $r"
      for op in ${AB_OPS:-ThreeNN GatherPoints GroupPoints}; do
        LD_LIBRARY_PATH=$lib:/usr/local/cuda/lib64 "$d/pvn3d_bench_cuda" --only "$op" | sed 's/  */ /g'
      done
    done
  done > "$OUT/ab-rounds.txt" 2>&1
  echo "ab rounds: $(grep -c '^== ' "$OUT/ab-rounds.txt") in $OUT/ab-rounds.txt"
fi
if [ -n "${SAN:-}" ]; then
  for t in $SAN; do
    for tool in memcheck racecheck; do
      timeout "${SAN_LIMIT:-150}" /usr/local/cuda/bin/compute-sanitizer --tool $tool --error-exitcode 9 "$d/pvn3d_test_$t" \
        > "$OUT/sanitizer-$t-$tool.txt" 2>&1
      echo "sanitizer $t $tool exit $? (124: out of time): $(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/sanitizer-$t-$tool.txt" | tail -1)"
    done
  done | tee "$OUT/sanitizer-summary.txt"
  # The device tool brings back at most 8 files from $OUT: the sanitizers' reports go back as one archive.
  (cd "$OUT" && tar czf sanitizers.tgz sanitizer-*-memcheck.txt sanitizer-*-racecheck.txt &&
    rm -f sanitizer-*-memcheck.txt sanitizer-*-racecheck.txt)
fi
[ $fails = 0 ]
