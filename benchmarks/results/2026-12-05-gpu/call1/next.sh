#!/usr/bin/env bash
# (branch pending/staged-index-preload only) Here: pack main's CUDA build as .gpuwork/native and this
# branch's as .gpuwork/native-preload (run-native.sh --pack each, renaming the first), then
#   tar -C .gpuwork -cJf .gpunative/native.tar.xz native native-preload
# and carry .gpunative with this script copied into it as .gpunative/next.sh.
# Next device call (one call, no kit needed): main's native build against the pending/staged-index-preload
# branch's. Carry .gpunative only. Everything lands in $OUT/all.tar.gz plus a summary on stdout.
set -u
mkdir -p .gpuwork && tar -C .gpuwork -xJf .gpunative/native.tar.xz
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/machine.txt
OUT=$R/main bash benchmarks/gpu/run-native.sh 2>&1 | tail -4
grep -E "SLOWER|MISS" $R/main/bench-cuda.txt | head -20
p=.gpuwork/native-preload
fails=0
for t in $p/pvn3d_test_*; do
  LD_LIBRARY_PATH=$p:/usr/local/cuda/lib64 PVN3D_BUNNY_FILE=$p/bunny_positions.txt PVN3D_REQUIRE_BUNNY=1 $t > /tmp/t.txt 2>&1 || { fails=$((fails+1)); echo "FAIL $t"; tail -5 /tmp/t.txt; }
done
for f in "PVN3D_GATHER=staged gather_points" "PVN3D_GATHER=staged group_points" "PVN3D_THREE_INTERPOLATE=staged three_interpolate" \
         "PVN3D_GATHER=rows gather_points" "PVN3D_GATHER=rows group_points" \
         "PVN3D_THREE_NN=plain three_nn" "PVN3D_THREE_NN=bound4 three_nn" "PVN3D_THREE_NN=bound16 three_nn" \
         "PVN3D_THREE_NN=plain-select three_nn" "PVN3D_THREE_NN=bound8-select three_nn"; do
  set -- $f
  env "$1" LD_LIBRARY_PATH=$p:/usr/local/cuda/lib64 PVN3D_BUNNY_FILE=$p/bunny_positions.txt PVN3D_REQUIRE_BUNNY=1 $p/pvn3d_test_$2 > /tmp/t.txt 2>&1 || { fails=$((fails+1)); echo "FAIL $f"; tail -5 /tmp/t.txt; }
done
# main's new check-only kernel (C = 0 with a non-empty index tensor) under memcheck, small sizes
for t in gather_points group_points three_interpolate; do
  LD_LIBRARY_PATH=.gpuwork/native:/usr/local/cuda/lib64 PVN3D_TEST_SMALL=1 timeout 40 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --error-exitcode 9 .gpuwork/native/pvn3d_test_$t > $R/san-main-$t-memcheck.txt 2>&1
  echo "sanitizer main $t memcheck exit $? $(grep -E 'ERROR SUMMARY' $R/san-main-$t-memcheck.txt | tail -1)"
done
echo "branch tests (11 binaries, 3 forced to the staged kernels, 2 to the row gather, three_nn with its 5 other scans): $fails failed"
for r in 1 2; do for v in native native-preload; do for op in GatherPoints ThreeInterpolate GroupPoints; do
  echo "== $v $op round $r"; LD_LIBRARY_PATH=.gpuwork/$v:/usr/local/cuda/lib64 .gpuwork/$v/pvn3d_bench_cuda --only $op | grep -v "no index"
done; done; done > $R/ab-preload.txt 2>&1
grep -E "B=1 C=128 N=2048|ThreeInterpolate B=1 C=128|ours/reference" $R/ab-preload.txt | head -40
# the row gather (branch only) against the rule's choice and the forced ones, two rounds
for r in 1 2; do for v in default rows direct staged; do for op in GatherPoints GroupPoints; do
  echo "== gather $v $op round $r"; env PVN3D_GATHER=$v LD_LIBRARY_PATH=.gpuwork/native-preload:/usr/local/cuda/lib64 .gpuwork/native-preload/pvn3d_bench_cuda --only $op | grep -v "no index"
done; done; done > $R/ab-gather-rows.txt 2>&1
grep -E "^==|ours/reference|GroupPoints B=" $R/ab-gather-rows.txt | sed 's/  */ /g' | head -60
# ThreeNN's scans (branch only: main's kernel is the branch's "plain"), two rounds, interleaved
for r in 1 2; do for v in plain bound8 bound4 bound16 plain-select bound8-select; do
  echo "== ThreeNN $v round $r"; PVN3D_THREE_NN=$v LD_LIBRARY_PATH=.gpuwork/native-preload:/usr/local/cuda/lib64 .gpuwork/native-preload/pvn3d_bench_cuda --only ThreeNN
done; done > $R/ab-three-nn.txt 2>&1
grep -E "^==|ThreeNN B=" $R/ab-three-nn.txt | sed 's/  */ /g' | head -40
export LD_LIBRARY_PATH=$p:/usr/local/cuda/lib64 PVN3D_BUNNY_FILE=$p/bunny_positions.txt PVN3D_REQUIRE_BUNNY=1 PVN3D_TEST_SMALL=1
for t in gather_points three_interpolate group_points three_nn; do for tool in memcheck racecheck; do
  timeout 60 /usr/local/cuda/bin/compute-sanitizer --tool $tool --error-exitcode 9 $p/pvn3d_test_$t > $R/san-$t-$tool.txt 2>&1
  echo "sanitizer preload $t $tool exit $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $R/san-$t-$tool.txt | tail -1)"
done; done
for t in gather_points group_points; do
  PVN3D_GATHER=rows timeout 60 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --error-exitcode 9 $p/pvn3d_test_$t > $R/san-$t-memcheck-rows.txt 2>&1
  echo "sanitizer preload $t memcheck (rows) exit $? $(grep -E 'ERROR SUMMARY' $R/san-$t-memcheck-rows.txt | tail -1)"
done
tar -C $OUT -czf $OUT/all.tar.gz r && rm -rf $R
