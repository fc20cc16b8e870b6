#!/usr/bin/env bash
# One device call: native tests + sanitizers of this build (staged gather: indices one unit ahead), then
# base (c03d5c3), v1 (first unit's indices only) and this build interleaved: GroupPoints and GatherPoints
# (the rule, and staged forced), ThreeNN.
set -u
top=$(pwd); d=$top/.gpuwork/native
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader | tee $OUT/machine.txt
SAN="gather_points group_points" SAN_LIMIT=100 AB_ROUNDS=1 bash benchmarks/gpu/run-native.sh 2>&1 | tail -6
for r in 1 2 3 4; do
  for lib in "$d-base" "$d-v1" "$d"; do
    echo "== $(basename "$lib") round $r"
    for op in GroupPoints GatherPoints ThreeNN; do
      LD_LIBRARY_PATH=$lib:/usr/local/cuda/lib64 "$d/pvn3d_bench_cuda" --only $op | sed 's/  */ /g'
    done
    echo "-- staged forced"
    PVN3D_GATHER=staged LD_LIBRARY_PATH=$lib:/usr/local/cuda/lib64 "$d/pvn3d_bench_cuda" --only GatherPoints | sed 's/  */ /g'
  done
done > $OUT/ab3.txt 2>&1
grep -E "^==|^--|GroupPoints B=8.*held|ours/ref|ThreeNN" $OUT/ab3.txt | grep -v "no index" | sed 's/median.*held/held/' | head -120
grep -h -E "ERROR SUMMARY|RACECHECK SUMMARY" $OUT/sanitizer-*.txt
mkdir -p $OUT/san && mv $OUT/sanitizer-*.txt $OUT/san/ && tar czf $OUT/sanitizers.tgz -C $OUT san && rm -rf $OUT/san
