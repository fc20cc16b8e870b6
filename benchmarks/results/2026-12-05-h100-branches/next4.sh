#!/usr/bin/env bash
# One call, no kit, about 4 minutes. Three libpvn3d_ops builds of the same native tests and bench:
#   native/        main at 2026-12-05 10:15 (CPU kernels: AVX2/AVX-512 clones, settled mean-shift modes, own helper
#                  pool; pvn3d_test_cpu_clones with libpvn3d_ops_baseline.so and _x86_64_v3.so beside it; CUDA
#                  kernels as at cf04b02)
#   native-nodiv/  pending/gather-no-division (the direct gather without a per-thread division)
#   native-tnn/    pending/three-nn-group-bound (ThreeNN's group-shared bound; PVN3D_THREE_NN=plain = main's kernel)
# Tests on each (every forced gather kernel; ThreeNN bound and plain), sanitizers on the new kernels, then three
# interleaved bench rounds of GatherPoints, GroupPoints and ThreeNN, and Nsight Compute on ThreeNN B=1 both ways.
set -u
mkdir -p .gpuwork && tar -C .gpuwork -xJf .gpunative/native.tar.xz
n=.gpuwork/native; m=.gpuwork/native-nodiv; t=.gpuwork/native-tnn
export PVN3D_BUNNY_FILE=$n/bunny_positions.txt PVN3D_BASELINE_LIBRARY=$n/libpvn3d_ops_baseline.so PVN3D_V3_LIBRARY=$n/libpvn3d_ops_x86_64_v3.so
run() { local lib=$1; shift; LD_LIBRARY_PATH=$lib:/usr/local/cuda/lib64 "$@"; }
for x in $n/pvn3d_test_*; do  # main's every native test (CPU and CUDA cases), the Kabsch fix among them
  PVN3D_REQUIRE_BUNNY=1 run $n $x > /tmp/t.txt 2>&1; echo "test native $(basename $x) exit $? $(tail -1 /tmp/t.txt)"
done
for lib in $n $m; do
  for g in "" direct direct1 direct2 direct4 direct8 staged; do
    for x in gather_points group_points; do
      PVN3D_GATHER=$g PVN3D_REQUIRE_BUNNY=1 run $lib $n/pvn3d_test_$x > /tmp/t.txt 2>&1
      echo "test $(basename $lib) ${g:-rule} $x exit $? $(tail -1 /tmp/t.txt)"
    done
  done
done
for v in "" plain; do
  PVN3D_THREE_NN=$v PVN3D_REQUIRE_BUNNY=1 run $t $t/pvn3d_test_three_nn > /tmp/t.txt 2>&1
  echo "test native-tnn ${v:-bound} three_nn exit $? $(tail -1 /tmp/t.txt)"; grep -E "FAIL|mismatch" /tmp/t.txt | head -5
done
san() { local lib=$1 bin=$2 tool=$3; PVN3D_TEST_SMALL=1 run $lib timeout 150 /usr/local/cuda/bin/compute-sanitizer --tool $tool \
  --error-exitcode 9 $bin > /tmp/s.txt 2>&1; echo "$tool $(basename $lib) $(basename $bin) exit $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/s.txt | tail -1)"; }
san $m $n/pvn3d_test_gather_points memcheck; san $m $n/pvn3d_test_group_points memcheck
san $t $t/pvn3d_test_three_nn memcheck; san $t $t/pvn3d_test_three_nn racecheck
for r in 1 2 3; do
  for lib in $n $m; do
    echo "== gather $(basename $lib) round $r"
    for op in GatherPoints GroupPoints; do run $lib $n/pvn3d_bench_cuda --only $op | grep -v "no index" | sed 's/  */ /g'; done
  done
  echo "== ThreeNN round $r"
  echo "main: $(run $n $n/pvn3d_bench_cuda --only ThreeNN | sed 's/  */ /g' | grep ThreeNN | tr '\n' '|')"
  echo "tnn bound: $(run $t $n/pvn3d_bench_cuda --only ThreeNN | sed 's/  */ /g' | grep ThreeNN | tr '\n' '|')"
  echo "tnn plain: $(PVN3D_THREE_NN=plain run $t $n/pvn3d_bench_cuda --only ThreeNN | sed 's/  */ /g' | grep ThreeNN | tr '\n' '|')"
done
ncu=$(ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
for v in bound plain; do
  echo "== ncu ThreeNN B=1 $v"
  PVN3D_THREE_NN=$v run $t timeout 90 ${ncu:-ncu} --section SpeedOfLight --section InstructionStats --section WarpStateStats \
    -k regex:three_nn --launch-skip 20 --launch-count 1 $n/pvn3d_bench_cuda --only ThreeNN --quick 2>&1 \
    | grep -E "three_nn_kernel|Duration|Executed Instructions  |Issue Slots|Avg. Active Threads|Elapsed Cycles" | head -8
done
