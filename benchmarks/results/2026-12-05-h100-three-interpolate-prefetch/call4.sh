#!/usr/bin/env bash
# One device call: native tests + sanitizers (three_interpolate), base (main) vs this build (ThreeInterpolate's
# staged kernel loads its first unit's indices and weights while its rows are in flight) interleaved: the
# rule's kernels, and the staged kernel forced at every size.
set -u
top=$(pwd); d=$top/.gpuwork/native
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader | tee $OUT/machine.txt
SAN="three_interpolate" SAN_LIMIT=100 AB_ROUNDS=4 AB_OPS="ThreeInterpolate GroupPoints" bash benchmarks/gpu/run-native.sh 2>&1 | grep -E "native tests|bench exit|ab rounds|sanitizer"
for r in 1 2 3; do
  for lib in "$d-base" "$d"; do
    echo "== $(basename "$lib") staged forced round $r"
    PVN3D_THREE_INTERPOLATE=staged LD_LIBRARY_PATH=$lib:/usr/local/cuda/lib64 "$d/pvn3d_bench_cuda" --only ThreeInterpolate | sed 's/  */ /g'
  done
done > $OUT/ab-staged-forced.txt 2>&1
for f in ab-rounds ab-staged-forced; do
  echo "### $f (held)"
  awk '/^== /{h=$2" "$NF; next} /ThreeInterpolate|GroupPoints/ && !/no index/ {for(i=1;i<=NF;i++) if($i=="held") v=$(i+1); sub(/ median.*/,""); print h" | "$0" | "v}' $OUT/$f.txt | sort -t'|' -k2,2 -s
done
grep -h -E "ERROR SUMMARY|RACECHECK SUMMARY" $OUT/sanitizer-*.txt
mkdir -p $OUT/san && mv $OUT/sanitizer-*.txt $OUT/san/ && tar czf $OUT/sanitizers.tgz -C $OUT san && rm -rf $OUT/san
