#!/usr/bin/env bash
# FurthestPointSample's CPU kernel at B8 16384 -> 4096, called directly (pvn3d_bench_cuda --cpu) and as a
# one-node ORT model on the CPU provider (pvn3d-ort pointnet2 --model), with ORT's intra-op pool and the
# kernel's OpenMP threads as they come, with idle OpenMP threads sleeping (OMP_WAIT_POLICY=PASSIVE), with
# ORT's pool not spinning, and with one intra-op thread: where the 582 ms inside ORT (230 ms direct) of
# 2026-11-30 went. Needs the GPU kit (its Java and ORT; ORT's CPU provider only), .gpubundle and numpy;
# writes the input cloud into .gpubundle when missing. Writes $OUT/cpu-fps.txt.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
JAVA=${JAVA:-/opt/gpukit/jre/bin/java}
ORT_DIR=${ORT_DIR:-/opt/gpukit/ort}
OUT=${OUT:-$top/gpu-results}
build=${BUILD:-/tmp/pvn3d-gpu-build}
b=$top/.gpubundle
mkdir -p "$OUT"
cp benchmarks/src/main/resources/bench-models/furthest_point_sample_np4096.onnx "$b/"
[ -f "$b/fps-b8.bin" ] || python3 -c 'import sys; sys.path.insert(0, "exporter")
import numpy as np
from pvn3d_export import pvt
x = np.random.default_rng(7).random((8, 16384, 3), dtype=np.float32)
open(sys.argv[1], "wb").write(pvt.dumps({"xyz": x}))' "$b/fps-b8.bin"
log=$OUT/cpu-fps.txt
{ nproc; lscpu | grep -E "Model name|^CPU\(s\)|Thread|Socket"; } > "$log"
if [ ! -x "$build/pvn3d_bench_cuda" ]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DPVN3D_WITH_CUDA=ON > /tmp/cpu-fps-build.txt 2>&1 \
    && cmake --build "$build" --parallel 16 --target pvn3d_bench_cuda >> /tmp/cpu-fps-build.txt 2>&1 || tail -20 /tmp/cpu-fps-build.txt
fi
echo "== direct: pvn3d_bench_cuda --cpu" | tee -a "$log"
"$build/pvn3d_bench_cuda" --cpu 2>&1 | grep -E "B=8 N=16384|B=1 N=12288|threads" | tee -a "$log"
jars="$b/ffm-bindings.jar:$b/runtime.jar:$b/pvn3d-ops.jar:$b/pvn3d-pipeline.jar:$b/picocli.jar"
fps() { "$JAVA" --enable-native-access=ALL-UNNAMED -Dpvn3d.ort.path="$ORT_DIR" -Dpvn3d.cache.dir=/tmp/pvn3d-cache -cp "$jars" \
  org.pvn3d.ort.cli.Main pointnet2 --model "$b/furthest_point_sample_np4096.onnx" --input "$b/fps-b8.bin" --warmup 3 --runs 15 "$@" \
  2>&1 | grep -E "^latency|^session"; }
echo "== in ORT (CPU provider), one PVN3D_FurthestPointSample node, B8 16384 -> 4096" | tee -a "$log"
echo "-- as they come (ORT's intra-op pool: its default; OpenMP: every core, libgomp's default wait policy)" | tee -a "$log"
fps | tee -a "$log"
echo "-- OMP_WAIT_POLICY=PASSIVE" | tee -a "$log"
OMP_WAIT_POLICY=PASSIVE fps | tee -a "$log"
echo "-- --threads 1 (one intra-op thread: ORT's pool has nothing to spin)" | tee -a "$log"
fps --threads 1 | tee -a "$log"
echo "-- OMP_NUM_THREADS=8" | tee -a "$log"
OMP_NUM_THREADS=8 fps | tee -a "$log"
