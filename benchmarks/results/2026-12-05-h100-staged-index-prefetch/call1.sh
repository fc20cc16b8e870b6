#!/usr/bin/env bash
# One device call: native tests + sanitizers of this build, the bench, base vs this build interleaved,
# and GatherPoints with each kernel forced, base vs this build interleaved.
set -u
top=$(pwd); d=$top/.gpuwork/native
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader | tee $OUT/machine.txt
SAN="gather_points group_points three_nn" SAN_LIMIT=100 AB_ROUNDS=3 bash benchmarks/gpu/run-native.sh 2>&1 | tail -8
for r in 1 2 3; do
  for lib in "$d-base" "$d"; do
    for k in staged direct; do
      echo "== $(basename "$lib") PVN3D_GATHER=$k round $r"
      PVN3D_GATHER=$k LD_LIBRARY_PATH=$lib:/usr/local/cuda/lib64 "$d/pvn3d_bench_cuda" --only GatherPoints | sed 's/  */ /g'
    done
  done
done > $OUT/ab-forced.txt 2>&1
grep -E "^==|ours/ref" $OUT/ab-forced.txt | grep -E "^==|B=1 C=128|B=8 C=256" | head -60
grep -E "^==|ThreeNN|GroupPoints B" $OUT/ab-rounds.txt | head -40
grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $OUT/sanitizer-*.txt
# a candidate rule (v2: also stage where four positions a thread and N <= 2P, C >= 16), rule against rule
for r in 1 2 3; do
  for lib in "$d" "$d-v2"; do
    echo "== $(basename "$lib") rule round $r"
    LD_LIBRARY_PATH=$lib:/usr/local/cuda/lib64 "$d/pvn3d_bench_cuda" --only GatherPoints | sed 's/  */ /g'
  done
done > $OUT/ab-rule-v2.txt 2>&1
grep -E "^==|ours/ref" $OUT/ab-rule-v2.txt | head -40
