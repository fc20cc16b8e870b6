#!/usr/bin/env bash
# One call, no kit, 2-4 minutes. Two libpvn3d_ops builds of the native tests and bench (nvcc 13.0, sm_90):
#   main/  main at c03d5c3 (kernels as 4f8adcc)
#   new/   ThreeNN: the group's merges as reduce-scatters, no refresh after the last step, the tile staged with 4
#          points' loads in flight a thread, one branch a step for the four inserts; the direct gather with 4
#          positions a thread (16-byte index loads, float4 stores) where P % 4 == 0 and aligned, and the rule
#          staging only for N <= P/4 then
# Every native test of new (each gather kernel, ThreeInterpolate kernel and ThreeNN's plain kernel forced),
# sanitizers on three_nn and gather_points, new's full bench (the kernel table), two interleaved rounds of
# ThreeNN, GatherPoints and GroupPoints, main against new.
set -u
mkdir -p .gpuwork "$OUT" && tar -C .gpuwork -xJf .gpunative3/native.tar.xz
n=.gpuwork/new; b=.gpuwork/main
export PVN3D_BUNNY_FILE=$n/bunny_positions.txt PVN3D_BASELINE_LIBRARY=$n/libpvn3d_ops_baseline.so PVN3D_V3_LIBRARY=$n/libpvn3d_ops_x86_64_v3.so PVN3D_REQUIRE_BUNNY=1
run() { local lib=$1; shift; LD_LIBRARY_PATH=$lib:/usr/local/cuda/lib64 "$@"; }
{
nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap,clocks.max.sm --format=csv,noheader
for x in $n/pvn3d_test_*; do
  run $n $x > /tmp/t.txt 2>&1; echo "test $(basename $x) exit $? $(tail -1 /tmp/t.txt)"
done
for g in direct direct1 direct2 direct4 direct8 staged; do for x in gather_points group_points; do
  PVN3D_GATHER=$g run $n $n/pvn3d_test_$x > /tmp/t.txt 2>&1; echo "test PVN3D_GATHER=$g $x exit $? $(tail -1 /tmp/t.txt)"
done; done
for k in transposed staged; do
  PVN3D_THREE_INTERPOLATE=$k run $n $n/pvn3d_test_three_interpolate > /tmp/t.txt 2>&1; echo "test PVN3D_THREE_INTERPOLATE=$k exit $? $(tail -1 /tmp/t.txt)"
done
PVN3D_THREE_NN=plain run $n $n/pvn3d_test_three_nn > /tmp/t.txt 2>&1; echo "test PVN3D_THREE_NN=plain exit $? $(tail -1 /tmp/t.txt)"
run $n $n/pvn3d_bench_cuda > "$OUT/bench-cuda.txt" 2>&1; echo "full bench exit $?"
for r in 1 2; do
  for lib in $b $n; do
    echo "== $(basename $lib) round $r"
    for op in ThreeNN GatherPoints GroupPoints; do run $lib $n/pvn3d_bench_cuda --only $op | grep -v "no index" | sed 's/  */ /g'; done
    echo "-- PVN3D_GATHER=direct"; PVN3D_GATHER=direct run $lib $n/pvn3d_bench_cuda --only GatherPoints | grep "ours/reference" | sed 's/  */ /g'
  done
done
} > "$OUT/next7.txt" 2>&1
grep -E "exit [^0]" "$OUT/next7.txt"; echo "exit 0: $(grep -c "exit 0" "$OUT/next7.txt")"; grep -E "ThreeNN|ours/reference" "$OUT/next7.txt" | tail -16
cs=/usr/local/cuda/bin/compute-sanitizer
for t in three_nn gather_points; do for tool in memcheck racecheck; do
  [ $t = gather_points ] && [ $tool = racecheck ] && continue
  PVN3D_TEST_SMALL=1 run $n timeout 100 $cs --tool $tool --error-exitcode 9 $n/pvn3d_test_$t > "$OUT/san-$t-$tool.txt" 2>&1
  echo "sanitizer $t $tool exit $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/san-$t-$tool.txt" | tail -1)"
done; done
