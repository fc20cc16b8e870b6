#!/usr/bin/env bash
# Frame to pose on the GPU: the one-graph path (network + pose head, FrameToPose) measured by
# `pvn3d-ort frame-to-pose` on the full-size PVN3D model (480x640, 12288 points; exported here with this
# machine's PyTorch, random weights) and scored on the shipped tiny model's 200 held-out scenes, for each
# precision (strict, tf32, fp16), batch 1 and 8, CUDA graphs off and on, and two runs in flight. Needs the
# GPU kit (/opt/gpukit) and .gpubundle (make-bundle.sh). Writes to $OUT:
#   machine.txt                 the GPU, driver, CUDA, Java, ORT
#   frame-to-pose.json          full model: a list of {mode, batch, cuda_graph, inflight, p50_ms, p99_ms, frames_per_s, ...}
#   frame-to-pose-full.txt      the same as a table, with the two-in-flight rows, and the export and conversion logs
#                               BRANCHES=off|on|both (default off): also the network's two branches side by side
#                               (FrameToPose.Config.concurrentBranches, `--branches`); rows carry "branches"
#   accuracy-tiny.json, frame-to-pose-tiny.txt   the tiny model per precision: held-out ADD/ADD-S and its latency
#
#   frame-to-pose-nhwc.json     full model, B1 and B8, with the CUDA provider's prefer_nhwc=1 (cuDNN's channels-last
#                               convolutions; ORT transposes around them); CUDA graph off: with prefer_nhwc ORT 1.24
#                               adds Memcpy nodes and refuses the capture
#   ncu-kernels.csv, ncu-summary.txt  (part ncu, not in the default parts: minutes) one fp16 frame's kernels, each
#                               one's GPU time from Nsight Compute, summed per kernel name (benchmarks/scripts/ncu_frame.py)
#   frame-to-pose-breakdown.json  full model, B1: the pose head with the mean shift stopped at once (--max-iter 0)
#                               beside the full run, and (with nsys) the kernels of 50 fp16 frames in nsys-kernels.txt
#
#   frame-to-pose-options.json  (part options, not in the default parts) full model, B1 and B8, CUDA graph on, once per
#                               CUDA-provider option in OPTIONS (default "fuse_conv_bias=1 cudnn_conv_algo_search=HEURISTIC"),
#                               each alone (a failing option leaves its rows out). Measured 2026-12-02: fuse_conv_bias
#                               fails for fp16 (cuDNN: no engine for the fused fp16 1x1 convolutions) and breaks B8 capture
#   frame-to-pose-trunk.json    (part trunk, not in the default parts) full model, B1 and B8, CUDA graph on, each mode,
#                               exported twice: layer3/layer4 as dilated convolutions (the default) and as sub-image
#                               batches (--trunk-as-batches); rows carry "trunk". 2026-12-02: no difference
#   frame-to-pose-pointwise.json  (part pointwise, not in the default parts) the same for the per-point 1x1
#                               convolutions exported as MatMul + Add (the default) and as Conv (--pointwise conv); rows
#                               carry "pointwise" (matmul or conv). The comparisons stop the mean shift at once with random
#                               weights
#   frame-to-pose-variants.json (part variants, not in the default parts) the same weights exported once per entry of
#                               VARIANTS ("name:flag+flag ...", flags joined by "+", "base:" the exporter's defaults), each
#                               measured B1 and B8, CUDA graph on, every mode; rows carry "export" (the name) and
#                               "export_flags". Default: the decoder rewrites (--conv-before-upsample, --cnn-at-points)
#                               each left out. Measured 2026-12-02 (results/2026-12-02-decoder-rewrites/variants/)
#   accuracy-full.json, frame-to-pose-heldout.txt  (part heldout, with FULL_CKPT) the trained full-size model per
#                               precision on HELDOUT (default 200) unseen 480x640 test scenes, made here on the GPU
#
#   PARTS="export full inflight nhwc breakdown tiny" FRAMES=500 bash benchmarks/gpu/run-frame-to-pose.sh [JAVA] [ORT_DIR]
#
# FULL_CKPT=/tmp/pvn3d-run-full/state_dict.pt (exporter/gpu/train_on_gpu.sh WIDTH=full, an earlier call on the same
# warm machine): the full-size model is that trained network (its state_dict.json gives the configuration; the sample
# is the test split's scene 0) instead of random weights, exported into /tmp/pvn3d-full-trained.
# EXPORT_FLAGS: exporter options for that default export (part export), e.g. "--cnn-at-points none".
set -uo pipefail
PARTS=${PARTS:-export full inflight nhwc breakdown tiny}
part() { [[ " $PARTS " == *" $1 "* ]]; }
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
JAVA=${1:-${JAVA:-/opt/gpukit/jre/bin/java}}
ORT_DIR=${2:-${ORT_DIR:-/opt/gpukit/ort}}
OUT=${OUT:-$top/gpu-results}
FRAMES=${FRAMES:-500}
bundle=$top/.gpubundle
full=/tmp/pvn3d-full
FULL_CKPT=${FULL_CKPT:-}
[ -n "$FULL_CKPT" ] && full=/tmp/pvn3d-full-trained
mkdir -p "$OUT"
[ -x "$JAVA" ] || { echo "run-frame-to-pose: no java at $JAVA" >&2; exit 1; }
[ -f "$bundle/runtime.jar" ] || { echo "run-frame-to-pose: no bundle in $bundle (run make-bundle.sh)" >&2; exit 1; }
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv
  nvcc --version | tail -2
  "$JAVA" -version 2>&1 | head -1
  echo "ORT: $(cat "$ORT_DIR/SOURCE" 2>/dev/null || echo "$ORT_DIR")"
  nproc; uname -r; git rev-parse HEAD 2>/dev/null
} > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"
java_run() { "$JAVA" --enable-native-access=ALL-UNNAMED -Dpvn3d.ort.path="$ORT_DIR" \
  -Dpvn3d.cache.dir=/tmp/pvn3d-cache -XX:ErrorFile="$OUT/hs_err_pid%p.log" -Xmx8g "$@"; }  # a crash log comes back with $OUT
jars="$bundle/ffm-bindings.jar:$bundle/runtime.jar:$bundle/pvn3d-ops.jar:$bundle/pvn3d-pipeline.jar:$bundle/picocli.jar"
f2p() { java_run -cp "$jars" org.pvn3d.ort.cli.Main frame-to-pose --ep cuda "$@"; }
log=$OUT/frame-to-pose-full.txt

export_args=()
[ -n "$FULL_CKPT" ] && export_args=(--checkpoint "$FULL_CKPT" --dataset-sample test:0)
if part export; then
  if [ -n "$FULL_CKPT" ]; then
    echo "== the full-size model trained here ($FULL_CKPT) and the fp16 conversions" | tee "$log"
  else
    echo "== the full-size model (random weights) and the fp16 conversions" | tee "$log"
  fi
  if [ ! -f "$full/pvn3d_full.onnx" ]; then
    # shellcheck disable=SC2086
    python3 exporter/export_pvn3d.py --width full --no-verify ${EXPORT_FLAGS:-} "${export_args[@]}" --bunny-json "$bundle/bunny.json" \
      --out-dir "$full" > /tmp/pvn3d-full-export.txt 2>&1 || { echo "full export failed:"; tail -20 /tmp/pvn3d-full-export.txt; }
    grep -E "checkpoint|model config|network|mask|torch.onnx.export" /tmp/pvn3d-full-export.txt | tee -a "$log"
  fi
  python3 exporter/convert_fp16.py "$full/pvn3d_full.onnx" -o "$full/pvn3d_full_fp16.onnx" 2>&1 | tail -12 | tee -a "$log"
  python3 exporter/convert_fp16.py pvn3d-pipeline/src/main/resources/pvn3d/pvn3d_tiny.onnx -o /tmp/pvn3d_tiny_fp16.onnx 2>&1 \
    | tail -12 | tee -a "$log"
fi

full_args=(--model "$full/pvn3d_full.onnx" --sample "$full/pvn3d_full_sample.bin")
modes=strict,tf32
[ -f "$full/pvn3d_full_fp16.onnx" ] && { full_args+=(--fp16-model "$full/pvn3d_full_fp16.onnx"); modes=strict,tf32,fp16; }
if part full; then
  echo "== full-size model, one frame and batches of 8, CUDA graphs off and on ($modes)" | tee -a "$log"
  # FULL_GRAPH=on|off runs one side only, into frame-to-pose-graph-on|off.json (two calls, two frame counts)
  f2p "${full_args[@]}" --precision "$modes" --batch 1,8 --cuda-graph "${FULL_GRAPH:-both}" --branches "${BRANCHES:-off}" \
    --frames "$FRAMES" --warmup 20 --json "$OUT/frame-to-pose${FULL_GRAPH:+-graph-$FULL_GRAPH}.json" 2>&1 | tee -a "$log"
fi
if part inflight; then
  # batch 8 too: one batch's serial FPS chain can overlap the other's convolutions (B1 gained 33% in fp16 on 12-01)
  echo "== full-size model, two calls in flight (two sessions, two streams, two threads), batch 1 and 8" | tee -a "$log"
  f2p "${full_args[@]}" --precision "${INFLIGHT_MODES:-$modes}" --batch "${INFLIGHT_BATCH:-1,8}" \
    --cuda-graph "${INFLIGHT_GRAPH:-both}" --branches "${BRANCHES:-off}" --inflight 2 --frames "$FRAMES" --warmup 20 \
    --json "$OUT/frame-to-pose-inflight.json" 2>&1 | tee -a "$log"
fi
# Two exports of the same weights and sample, measured side by side (B1 and B8, CUDA graph on, every mode):
# the default graph and one made with an exporter option. Rows carry "$key" = the label of their export.
# With random weights the mean shift stops at once (--max-iter 0): its length follows the votes, which
# differ between the two graphs by rounding, and would drown a network difference.
compare_exports() {  # name flag(s, split on spaces) key label-with label-without
  local name=$1 flag=$2 key=$3 with=$4 without=$5 alt=$full-$1 it=()
  [ -z "$FULL_CKPT" ] && it=(--max-iter 0)
  if [ ! -f "$alt/pvn3d_full.onnx" ]; then
    python3 exporter/export_pvn3d.py --width full --no-verify $flag "${export_args[@]}" \
      --bunny-json "$bundle/bunny.json" --out-dir "$alt" > "/tmp/pvn3d-$name-export.txt" 2>&1 \
      || { echo "$flag export failed:"; tail -20 "/tmp/pvn3d-$name-export.txt"; }
    python3 exporter/convert_fp16.py "$alt/pvn3d_full.onnx" -o "$alt/pvn3d_full_fp16.onnx" 2>&1 | tail -2 | tee -a "$log"
  fi
  rm -f "/tmp/f2p-$name-"*.json
  for v in with without; do
    local d=$full label=$without
    [ $v = with ] && { d=$alt; label=$with; }
    echo "== full-size model, $key: $label, CUDA graph on ($modes) ${it[*]}" | tee -a "$log"
    f2p --model "$d/pvn3d_full.onnx" --sample "$full/pvn3d_full_sample.bin" --fp16-model "$d/pvn3d_full_fp16.onnx" \
      --precision "$modes" --batch 1,8 --cuda-graph on --frames "${COMPARE_FRAMES:-$FRAMES}" --warmup 20 "${it[@]}" \
      --json "/tmp/f2p-$name-$v.json" 2>&1 | tee -a "$log"
  done
  python3 -c 'import json, sys
key, labels, files = sys.argv[1], sys.argv[2:4], sys.argv[4:]
rows = []
for f, t in zip(files, labels):
    rows += [dict(r, **{key: t}) for r in json.load(open(f))]
print(json.dumps(rows, indent=1))' "$key" "$with" "$without" "/tmp/f2p-$name-with.json" "/tmp/f2p-$name-without.json" \
    > "$OUT/frame-to-pose-$name.json"
}
part trunk && compare_exports trunk --trunk-as-batches trunk "sub-image batches" dilated
part pointwise && compare_exports pointwise "--pointwise conv" pointwise conv matmul
if part variants; then
  # (base: the exporter's defaults, --conv-before-upsample 1 --cnn-at-points up_3 since 2026-12-02)
  VARIANTS=${VARIANTS:-base: plain:--conv-before-upsample=none+--cnn-at-points=none up1:--cnn-at-points=none pts:--conv-before-upsample=none}
  it=(); [ -z "$FULL_CKPT" ] && it=(--max-iter 0)
  rm -f /tmp/f2p-variant-*.json
  for v in $VARIANTS; do
    name=${v%%:*}; flags=${v#*:}; flags=${flags//+/ }; d=$full-v-$name
    if [ ! -f "$d/pvn3d_full.onnx" ]; then
      # shellcheck disable=SC2086
      python3 exporter/export_pvn3d.py --width full --no-verify $flags "${export_args[@]}" \
        --bunny-json "$bundle/bunny.json" --out-dir "$d" > "/tmp/pvn3d-v-$name-export.txt" 2>&1 \
        || { echo "export $name ($flags) failed:"; tail -20 "/tmp/pvn3d-v-$name-export.txt"; continue; }
      python3 exporter/convert_fp16.py "$d/pvn3d_full.onnx" -o "$d/pvn3d_full_fp16.onnx" 2>&1 | tail -2 | tee -a "$log"
    fi
    echo "== full-size model, export $name (${flags:-defaults}), CUDA graph on ($modes) ${it[*]}" | tee -a "$log"
    f2p --model "$d/pvn3d_full.onnx" --sample "$d/pvn3d_full_sample.bin" --fp16-model "$d/pvn3d_full_fp16.onnx" \
      --precision "$modes" --batch "${VARIANT_BATCH:-1,8}" --cuda-graph on --frames "${COMPARE_FRAMES:-$FRAMES}" --warmup 20 \
      "${it[@]}" --json "/tmp/f2p-variant-$name.json" 2>&1 | tee -a "$log"
    python3 -c 'import json, sys
rows = [dict(r, export=sys.argv[2], export_flags=sys.argv[3]) for r in json.load(open(sys.argv[1]))]
json.dump(rows, open(sys.argv[1], "w"))' "/tmp/f2p-variant-$name.json" "$name" "$flags"
  done
  python3 -c 'import json, sys; print(json.dumps([r for f in sys.argv[1:] for r in json.load(open(f))], indent=1))' \
    /tmp/f2p-variant-*.json > "$OUT/frame-to-pose-variants.json"
fi
if part nhwc; then
  echo "== full-size model, CUDA graph off, prefer_nhwc=1 ($modes)" | tee -a "$log"
  f2p "${full_args[@]}" --precision "$modes" --batch 1,8 --cuda-graph off --cuda-option prefer_nhwc=1 --frames "$FRAMES" \
    --warmup 20 --json "$OUT/frame-to-pose-nhwc.json" 2>&1 | tee -a "$log"
fi
if part options; then
  OPTIONS=${OPTIONS:-fuse_conv_bias=1 cudnn_conv_algo_search=HEURISTIC}
  rm -f /tmp/f2p-options-*.json
  for opt in $OPTIONS; do
    echo "== full-size model, CUDA graph on, --cuda-option $opt ($modes)" | tee -a "$log"
    f2p "${full_args[@]}" --precision "$modes" --batch 1,8 --cuda-graph on --cuda-option "$opt" --frames "$FRAMES" \
      --warmup 20 --json "/tmp/f2p-options-${opt%%=*}.json" 2>&1 | tee -a "$log"
  done
  python3 -c 'import json, sys; print(json.dumps([r for f in sys.argv[1:] for r in json.load(open(f))], indent=1))' \
    /tmp/f2p-options-*.json > "$OUT/frame-to-pose-options.json"
fi
if part ncu; then
  # One fp16 frame's kernels and their GPU times: Nsight Compute replays each kernel of three runs (the
  # first with cuDNN's algorithm search); ncu_frame.py keeps the last run, found as the repeating tail.
  NCU_MODE=${NCU_MODE:-fp16}
  if command -v ncu > /dev/null && [ -f "$full/pvn3d_full_fp16.onnx" ]; then
    ncu --metrics gpu__time_duration.sum --csv --print-units base --launch-count "${NCU_LAUNCHES:-4000}" "$JAVA" --enable-native-access=ALL-UNNAMED \
      -Dpvn3d.ort.path="$ORT_DIR" -Dpvn3d.cache.dir=/tmp/pvn3d-cache -Xmx8g -cp "$jars" org.pvn3d.ort.cli.Main frame-to-pose \
      --ep cuda "${full_args[@]}" --precision "$NCU_MODE" --batch 1 --cuda-graph off --frames 1 --warmup 2 \
      > /tmp/ncu-raw.csv 2> /tmp/ncu-err.txt
    echo "ncu exit $?"; tail -3 /tmp/ncu-err.txt
    python3 benchmarks/scripts/ncu_frame.py /tmp/ncu-raw.csv --runs 3 --csv "$OUT/ncu-kernels.csv" | tee "$OUT/ncu-summary.txt"
  else
    echo "no ncu on this machine (or no fp16 model): no kernel times" | tee -a "$log"
  fi
fi
if part breakdown; then
  echo "== full-size model, B1, CUDA graph on: mean shift at PVN3D's 300 iterations at most and at 0 (the rest of the pose head)" | tee -a "$log"
  for it in 300 0; do
    f2p "${full_args[@]}" --precision "$modes" --batch 1 --cuda-graph on --max-iter $it --frames "$FRAMES" --warmup 20 \
      --json "/tmp/f2p-breakdown-$it.json" 2>&1 | tee -a "$log"
  done
  python3 -c 'import json, sys; print(json.dumps([r for f in sys.argv[1:] for r in json.load(open(f))], indent=1))' \
    /tmp/f2p-breakdown-300.json /tmp/f2p-breakdown-0.json > "$OUT/frame-to-pose-breakdown.json"
  if command -v nsys > /dev/null && [ -f "$full/pvn3d_full_fp16.onnx" ]; then
    nsys profile -o /tmp/f2p-nsys --force-overwrite true -t cuda "$JAVA" --enable-native-access=ALL-UNNAMED \
      -Dpvn3d.ort.path="$ORT_DIR" -Dpvn3d.cache.dir=/tmp/pvn3d-cache -Xmx8g -cp "$jars" org.pvn3d.ort.cli.Main frame-to-pose \
      --ep cuda "${full_args[@]}" --precision fp16 --batch 1 --cuda-graph off --frames 50 --warmup 5 > /tmp/nsys-run.txt 2>&1
    nsys stats -q -r cuda_gpu_kern_sum -f csv /tmp/f2p-nsys.nsys-rep 2>/dev/null | head -40 > "$OUT/nsys-kernels.txt"
  else
    echo "no nsys on this machine (or no fp16 model): no kernel breakdown" | tee -a "$log"
  fi
fi
if part heldout && [ -n "$FULL_CKPT" ]; then
  HELDOUT=${HELDOUT:-200}
  echo "== the trained full-size model: $HELDOUT held-out 480x640 scenes per precision ($modes), B1, CUDA graph on" | tee -a "$log"
  heldout=/tmp/pvn3d-heldout-full
  [ -f "$heldout/index.json" ] || python3 exporter/make_dataset.py --split test --start 0 --count "$HELDOUT" --h 480 --w 640 \
    --points 12288 --device cuda --batch 50 --bunny-json "$bundle/bunny.json" --out "$heldout" 2>&1 | tail -2 | tee -a "$log"
  f2p "${full_args[@]}" --precision "$modes" --batch 1 --cuda-graph on --frames "$FRAMES" --warmup 20 \
    --eval "$heldout" --eval-json "$OUT/accuracy-full.json" --json "$OUT/frame-to-pose-heldout.json" \
    > "$OUT/frame-to-pose-heldout.txt" 2>&1
  echo "heldout exit $?"; grep -E "^(strict|tf32|fp16|==|mean|voting)" "$OUT/frame-to-pose-heldout.txt"
fi
if part tiny; then
  tiny_modes=strict,tf32; tiny_args=()
  [ -f /tmp/pvn3d_tiny_fp16.onnx ] && { tiny_modes=strict,tf32,fp16; tiny_args=(--fp16-model /tmp/pvn3d_tiny_fp16.onnx); }
  echo "== tiny trained model: latency and the 200 held-out scenes per precision ($tiny_modes)"
  f2p "${tiny_args[@]}" --precision "$tiny_modes" --batch 1,8 --cuda-graph both --frames "$FRAMES" \
    --eval "$bundle/heldout-200" --eval-json "$OUT/accuracy-tiny.json" --json "$OUT/frame-to-pose-tiny.json" \
    > "$OUT/frame-to-pose-tiny.txt" 2>&1
  echo "tiny exit $?"; grep -E "^(strict|tf32|fp16|==|mean|voting)" "$OUT/frame-to-pose-tiny.txt"
fi
ls -la "$OUT"
