#!/usr/bin/env bash
# Build + GPU tests + timings + compute-sanitizer on the device machine; results under $OUT.
# Run from the repository root on the H200 machine (no network there): .pvn3d-carry/ held this
# script and bunny_positions.txt, written beforehand by `bash cuda-ops/tests/fetch_bunny.sh .pvn3d-carry`
# on a machine with npm, and carried along. Results land in $OUT.
set -u
R="${OUT:?}"; B=/tmp/b
export PVN3D_REQUIRE_BUNNY=1
{ echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"; nvidia-smi --query-gpu=name,driver_version --format=csv; nvcc --version | tail -2; cmake --version | head -1; } > "$R/gpu-test.txt" 2>&1
t0=$(date +%s)
{ cmake -S . -B "$B" -DCMAKE_CUDA_ARCHITECTURES=90 -DPVN3D_WITH_CUDA=ON && cmake --build "$B" -j16; } > "$R/build.txt" 2>&1 || { tail -60 "$R/build.txt"; exit 1; }
echo "build: $(( $(date +%s) - t0 )) s"
cp .pvn3d-carry/bunny_positions.txt "$B/"
T="$B/pvn3d_test_cuda --bunny $B/bunny_positions.txt"
{ echo; echo "\$ cmake -S . -B $B -DCMAKE_CUDA_ARCHITECTURES=90 -DPVN3D_WITH_CUDA=ON && cmake --build $B -j16"
  echo "\$ PVN3D_REQUIRE_BUNNY=1 ctest --test-dir $B --output-on-failure -V"; } >> "$R/gpu-test.txt"
ctest --test-dir "$B" --output-on-failure -V >> "$R/gpu-test.txt" 2>&1; echo "ctest exit status: $?" >> "$R/gpu-test.txt"
echo "tests done: $(( $(date +%s) - t0 )) s"
timeout 150 "$B/pvn3d_bench_cuda" > "$R/kernel-timings.txt" 2>&1; echo "bench exit status: $?" >> "$R/kernel-timings.txt"
echo "bench done: $(( $(date +%s) - t0 )) s"
{ echo "\$ PVN3D_TEST_NO_API_ERRORS=1 compute-sanitizer --tool memcheck --leak-check full $T"; PVN3D_TEST_NO_API_ERRORS=1 timeout 200 compute-sanitizer --tool memcheck --leak-check full $T; echo "exit status: $?"; } > "$R/sanitizer-memcheck.txt" 2>&1
echo "memcheck done: $(( $(date +%s) - t0 )) s"
{ echo "\$ PVN3D_TEST_SMALL=1 compute-sanitizer --tool racecheck --racecheck-report all $T"; PVN3D_TEST_SMALL=1 timeout 170 compute-sanitizer --tool racecheck --racecheck-report all $T; echo "exit status: $?"; } > "$R/sanitizer-racecheck.txt" 2>&1
echo "racecheck done: $(( $(date +%s) - t0 )) s"
grep -E "passed|FAIL|SKIP|exit status" "$R/gpu-test.txt"; cat "$R/kernel-timings.txt"; tail -n 4 "$R/sanitizer-memcheck.txt" "$R/sanitizer-racecheck.txt"
