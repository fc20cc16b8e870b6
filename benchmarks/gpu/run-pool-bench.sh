#!/usr/bin/env bash
# pvn3d-ort pool-bench on the GPU machine: frames/s and latency of a Pvn3dPool with 1, 2 and 3 sessions per
# GPU over every GPU there (does a second frame in flight help?), on the tiny model and, with FULL=1, on the
# full-size model (exported there with PyTorch, as run-gpu-checks.sh FULL=1 does; reused when present).
# Needs the bundle of benchmarks/gpu/make-bundle.sh and the GPU kit (a Java 22+ runtime, an ORT build for
# the machine's CUDA). Writes to $OUT (default ./gpu-results): pool-bench.txt (the tables),
# pool-bench-tiny.json and, with FULL=1, pool-bench-full.json; with FULL=1 and PRECISIONS (e.g.
# strict,tf32,fp16) also pool-bench-full-graph.json: one-graph sessions (the pose head in the graph, CUDA
# graphs) per precision, the fp16 model converted there. SKIP_TINY=1 leaves the tiny model out; REFINE=none
# turns the host's ICP off in every series.
#
#   bash benchmarks/gpu/run-pool-bench.sh [JAVA] [ORT_DIR]
#   FRAMES=500 SESSIONS=1,2,3 INFLIGHT= bash benchmarks/gpu/run-pool-bench.sh     (the defaults)
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
JAVA=${1:-${JAVA:-/opt/gpukit/jre/bin/java}}
ORT_DIR=${2:-${ORT_DIR:-/opt/gpukit/ort}}
OUT=${OUT:-$top/gpu-results}
bundle=$top/.gpubundle
mkdir -p "$OUT"
[ -x "$JAVA" ] || { echo "run-pool-bench: no java at $JAVA" >&2; exit 1; }
[ -d "$ORT_DIR" ] || { echo "run-pool-bench: no ORT build at $ORT_DIR" >&2; exit 1; }
[ -f "$bundle/pvn3d-pipeline.jar" ] || { echo "run-pool-bench: no bundle in $bundle (run make-bundle.sh)" >&2; exit 1; }
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
devices=${DEVICES:-$(nvidia-smi --query-gpu=index --format=csv,noheader | paste -sd, -)}   # DEVICES=0: one GPU of several
jars="$bundle/ffm-bindings.jar:$bundle/runtime.jar:$bundle/pvn3d-ops.jar:$bundle/pvn3d-pipeline.jar:$bundle/picocli.jar"
bench() { "$JAVA" --enable-native-access=ALL-UNNAMED -Dpvn3d.ort.path="$ORT_DIR" -Dpvn3d.cache.dir=/tmp/pvn3d-cache -Xmx8g \
  -cp "$jars" org.pvn3d.ort.cli.Main pool-bench --ep cuda --devices "$devices" --sessions "${SESSIONS:-1,2,3}" \
  --warmup 5 ${INFLIGHT:+--inflight $INFLIGHT} ${REFINE:+--refine $REFINE} "$@"; }
[ -n "${SKIP_TINY:-}" ] || {
  nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader
  echo "== tiny model (64x64, 1024 points), device-resident, pose stage on the GPU"
  bench --frames "${FRAMES:-500}" --json "$OUT/pool-bench-tiny.json"
  echo "== tiny model, one frame in flight per session (no queueing)"
  INFLIGHT=1 SESSIONS=1 bench --frames "${FRAMES:-500}"
} 2>&1 | tee "$OUT/pool-bench.txt"

if [ -n "${FULL:-}" ]; then
  full=/tmp/pvn3d-full
  if [ ! -f "$full/pvn3d_full.onnx" ]; then
    python3 exporter/export_pvn3d.py --width full --no-verify --bunny-json "$bundle/bunny.json" --out-dir "$full" \
      > /tmp/pvn3d-full-export.txt 2>&1 || { echo "full export failed:"; tail -20 /tmp/pvn3d-full-export.txt; exit 1; }
  fi
  {
    echo "== full-size model (480x640, 12288 points), device-resident, pose stage on the GPU"
    bench --frames "${FULL_FRAMES:-200}" --model "$full/pvn3d_full.onnx" --sample "$full/pvn3d_full_sample.bin" \
      --json "$OUT/pool-bench-full.json"
  } 2>&1 | tee -a "$OUT/pool-bench.txt"
  if [ -n "${PRECISIONS:-}" ]; then
    fp16=()
    if [[ ",$PRECISIONS," == *",fp16,"* ]]; then
      [ -f "$full/pvn3d_full_fp16.onnx" ] || python3 exporter/convert_fp16.py "$full/pvn3d_full.onnx" -o "$full/pvn3d_full_fp16.onnx" \
        > /tmp/pvn3d-full-fp16.txt 2>&1 || { echo "fp16 conversion failed:"; tail -20 /tmp/pvn3d-full-fp16.txt; }
      fp16=(--fp16-model "$full/pvn3d_full_fp16.onnx")
    fi
    {
      echo "== full-size model, one-graph sessions (pose head in the graph, CUDA graphs), $PRECISIONS"
      bench --frames "${FULL_FRAMES:-200}" --model "$full/pvn3d_full.onnx" --sample "$full/pvn3d_full_sample.bin" \
        --precision "$PRECISIONS" "${fp16[@]}" --cuda-graph --json "$OUT/pool-bench-full-graph.json"
    } 2>&1 | tee -a "$OUT/pool-bench.txt"
  fi
fi
