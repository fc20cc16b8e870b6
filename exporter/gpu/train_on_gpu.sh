#!/usr/bin/env bash
# Trains the PVN3D model on a GPU machine in one call of the device tool (at most ~10 minutes), from
# the repository root. The call carries .gpuwork/ (ignored by git): libpvn3d_ops.so (the pvn3d-ops
# build, CUDA kernels for sm_80/sm_90, from pvn3d-ops/target/cmake/jar/), bunny.json
# (exporter/fetch_bunny.sh) and, to continue a run, last.pt. What comes back in $OUT: train.log,
# native-ops-cuda.txt (the binding's tests with their CUDA cases), log.jsonl, val.jsonl, curves.png,
# state_dict.pt + state_dict.json (the best model by validation), last.pt (to resume).
#
#   BUDGET=540 BATCH=64 STEPS=8000 bash exporter/gpu/train_on_gpu.sh
#   WIDTH=full BUDGET=530 BATCH=16 STEPS=1500 AMP=bf16 VAL_EVERY=250 bash exporter/gpu/train_on_gpu.sh
#
# WIDTH (default tiny) picks the network; full trains the paper-sized network on 480x640 frames with
# 12288 points (H, W, POINTS override the image size and point count). Its weights (148 MB) are over
# what a device call brings back (16 MiB a file): they stay in RUN (default /tmp/pvn3d-run-WIDTH) for
# the next call on the same warm machine (benchmarks/gpu/run-frame-to-pose.sh FULL_CKPT=...), and only
# the logs, the curves and state_dict.json come back.
#
# Falls back to the plain-PyTorch operators if libpvn3d_ops cannot be used. (No `wait` and no
# background job here: the output goes through a process substitution that a bare `wait` would
# wait for forever.)
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
OUT=${OUT:-/tmp/train-out}; mkdir -p "$OUT"
BUDGET=${BUDGET:-540}; BATCH=${BATCH:-64}; STEPS=${STEPS:-8000}; LR=${LR:-1e-3}; WIDTH=${WIDTH:-tiny}; AMP=${AMP:-off}
RUN=${RUN:-/tmp/pvn3d-run-$WIDTH}
size=()
if [ "$WIDTH" = full ]; then size=(--height "${H:-480}" --width-px "${W:-640}" --points "${POINTS:-12288}"); fi
work=$top/.gpuwork
t0=$(date +%s)
left() { echo $((BUDGET - ($(date +%s) - t0))); }
export PYTHONUNBUFFERED=1
exec > >(tee "$OUT/train.log") 2>&1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null
python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.cuda.is_available())'
[ -f "$work/libpvn3d_ops.so" ] && export PVN3D_OPS_PATH=$work/libpvn3d_ops.so
OPS=native
if ! (cd exporter && python3 -c 'from pvn3d_export import native_ops as n; print("libpvn3d_ops", n.version(), "CUDA", n.built_with_cuda())'); then
  echo "the carried libpvn3d_ops does not load here: building it"
  cmake -S . -B /tmp/ops-build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DPVN3D_BUILD_TESTS=OFF >/dev/null \
    && cmake --build /tmp/ops-build -j16 >/dev/null && export PVN3D_OPS_PATH=/tmp/ops-build/libpvn3d_ops.so || OPS=reference
fi
common=(--width "$WIDTH" "${size[@]}" --bunny-json "$work/bunny.json" --batch-size "$BATCH" --lr "$LR" --ops "$OPS" --amp "$AMP")
mkdir -p "$RUN"
# The whole training is STEPS steps (cosine over all of them), made in as many calls as it takes:
# each call resumes from a carried last.pt (weights, optimiser, schedule) and stops cleanly
# (checkpoint saved) when its time is up; without one it warm-starts from the committed state dict
# (INIT; weights and step only, a fresh optimiser) when there is one.
INIT=${INIT-exporter/checkpoints/pvn3d_${WIDTH}_bunny.pt}
start=()
if [ -f "$work/last.pt" ]; then
  cp "$work/last.pt" "$RUN/last.pt"
elif [ -n "$INIT" ] && [ -f "$INIT" ]; then
  start=(--init "$INIT")
fi
echo "== training for $(left) s (${start[*]:-resumes from last.pt when one was carried})"
python3 exporter/train_pvn3d.py --out "$RUN" --resume auto --steps "$STEPS" --warmup 300 --val-every "${VAL_EVERY:-500}" \
  --ckpt-every 500 --log-every 100 --n-val 128 --time-limit $(( $(left) - 15 )) "${start[@]}" "${common[@]}"
for f in log.jsonl val.jsonl curves.png state_dict.pt state_dict.json last.pt; do
  if [ ! -f "$RUN/$f" ]; then echo "no $f"
  elif [ "$(stat -c %s "$RUN/$f")" -gt $((16 << 20)) ]; then echo "$f stays in $RUN ($(du -h "$RUN/$f" | cut -f1): over what a call brings back)"
  else cp "$RUN/$f" "$OUT/"; fi
done
ls -la "$OUT"; echo "done in $(( $(date +%s) - t0 )) s"
