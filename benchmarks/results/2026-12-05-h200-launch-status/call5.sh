#!/usr/bin/env bash
# One device call: native tests of this build (the shared gather launched through cudaLaunchKernelEx's return
# value, no cudaGetLastError around it), then base (main) and this build interleaved: host time of a launch
# (--host) and GatherPoints / GroupPoints per call beside the reference.
set -u
top=$(pwd); d=$top/.gpuwork/native
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader | tee $OUT/machine.txt
AB_ROUNDS=1 AB_OPS="GatherPoints" bash benchmarks/gpu/run-native.sh 2>&1 | grep -E "native tests|bench exit|ab rounds"
for r in 1 2 3 4; do
  for lib in "$d-base" "$d"; do
    echo "== $(basename "$lib") round $r"
    LD_LIBRARY_PATH=$lib:/usr/local/cuda/lib64 "$d/pvn3d_bench_cuda" --host /tmp/h.txt > /dev/null 2>&1
    grep -E "^empty kernel <<<1, 32>>>, no|^empty kernel <<<264, 512>>>,|^GatherPoints|^GroupPoints B=1 C=6 N=12288 M=2048 S=16, index report +host|^ThreeNN" /tmp/h.txt | sed 's/  */ /g'
    for op in GatherPoints GroupPoints; do
      LD_LIBRARY_PATH=$lib:/usr/local/cuda/lib64 "$d/pvn3d_bench_cuda" --only $op | sed 's/  */ /g'
    done
  done
done > $OUT/ab-launch.txt 2>&1
awk '/^== /{h=$2; next} /host us/{sub(/ host us median/," |"); sub(/ p90.*/,""); print h" | "$0}' $OUT/ab-launch.txt | sort -t'|' -k2,2 -s
awk '/^== /{h=$2; next} /ours\/reference/{print h" | "$0}' $OUT/ab-launch.txt | sed 's/ outputs.*//' | sort -t'|' -k2,2 -s
awk '/^== /{h=$2; next} /^GroupPoints B=8 C=256 N=1024 M=512 S=32 median/{print h, $7, $NF}' $OUT/ab-launch.txt
