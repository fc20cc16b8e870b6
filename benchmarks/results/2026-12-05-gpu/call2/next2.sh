#!/usr/bin/env bash
# 2026-12-05 (seventh session): main's native build (F2 check-only kernel, the direct gather's channels a
# thread) on the H200: tests (forced kernels too), host launch times, the bench, and the gather A/B.
set -u
mkdir -p .gpuwork && tar -C .gpuwork -xJf .gpunative/native.tar.xz
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/machine.txt
SAN="gather_points group_points" SAN_LIMIT=60 OUT=$R/main bash benchmarks/gpu/run-native.sh 2>&1 | tail -12
n=.gpuwork/native
for r in 1 2; do for v in default staged direct direct8 direct4 direct2 direct1; do
  echo "== gather $v round $r"
  for op in GatherPoints GroupPoints; do
    env PVN3D_GATHER=$([ $v = default ] && echo "" || echo $v) LD_LIBRARY_PATH=$n:/usr/local/cuda/lib64 $n/pvn3d_bench_cuda --only $op | grep -v "no index"
  done
done; done > $R/ab-gather-direct.txt 2>&1
grep -E "^==|ours/reference|GroupPoints B=" $R/ab-gather-direct.txt | sed 's/  */ /g'
tar -C $OUT -czf $OUT/all.tar.gz r && rm -rf $R
