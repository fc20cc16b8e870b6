#!/usr/bin/env bash
# One call, no kit, about a minute. Two libpvn3d_ops builds of the native tests and bench (nvcc 13.0, sm_90):
#   native/       main at 4f8adcc: the merged ThreeNN group bound and the gather without division, the CPU
#                 gathers sharing index loads (068ee64)
#   native-base/  main at de4c2a1 (the kernels before both merges)
# Every native test of main (each gather kernel, ThreeInterpolate kernel and ThreeNN's plain kernel forced),
# main's full bench once (the kernel table), then three interleaved rounds of ThreeNN, GatherPoints and
# GroupPoints, base against main. Writes $OUT/next5.txt and $OUT/bench-cuda.txt.
set -u
mkdir -p .gpuwork "$OUT" && tar -C .gpuwork -xJf .gpunative/native.tar.xz
n=.gpuwork/native; b=.gpuwork/native-base
export PVN3D_BUNNY_FILE=$n/bunny_positions.txt PVN3D_BASELINE_LIBRARY=$n/libpvn3d_ops_baseline.so PVN3D_V3_LIBRARY=$n/libpvn3d_ops_x86_64_v3.so PVN3D_REQUIRE_BUNNY=1
run() { local lib=$1; shift; LD_LIBRARY_PATH=$lib:/usr/local/cuda/lib64 "$@"; }
{
nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader
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
for r in 1 2 3; do
  for lib in $b $n; do
    echo "== $(basename $lib) round $r"
    for op in ThreeNN GatherPoints GroupPoints; do run $lib $n/pvn3d_bench_cuda --only $op | grep -v "no index" | sed 's/  */ /g'; done
  done
done
} > "$OUT/next5.txt" 2>&1
grep -E "exit [^0]" "$OUT/next5.txt"; grep -c "exit 0" "$OUT/next5.txt"; grep -E "ThreeNN|ours/reference" "$OUT/next5.txt" | tail -8
