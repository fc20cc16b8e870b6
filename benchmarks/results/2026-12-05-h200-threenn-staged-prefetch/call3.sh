#!/usr/bin/env bash
# One device call: native tests, the full bench, base (c03d5c3) vs this build interleaved (3 rounds).
set -u
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader | tee $OUT/machine.txt
AB_ROUNDS=3 AB_OPS="ThreeNN GatherPoints GroupPoints ThreeInterpolate" bash benchmarks/gpu/run-native.sh 2>&1 | tail -4
grep -E "^==|ThreeNN|GroupPoints B=8.*S=32 median|ours/ref|ThreeInterpolate B" $OUT/ab-rounds.txt | grep -v "no index" | sed 's/median.*held/held/' | head -80
grep -E "MISS|SLOWER|ThreeNN" $OUT/bench-cuda.txt
