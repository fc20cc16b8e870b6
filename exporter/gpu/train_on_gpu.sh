#!/usr/bin/env bash
# Trains the PVN3D model on a GPU machine in one call of the device tool (at most ~10 minutes), from
# the repository root. The call carries .gpuwork/ (ignored by git): libpvn3d_ops.so (the pvn3d-ops
# build, CUDA kernels for sm_80/sm_90, from pvn3d-ops/target/cmake/jar/), bunny.json
# (exporter/fetch_bunny.sh) and, to continue a run, last.pt. What comes back in $OUT: train.log,
# native-ops-cuda.txt (the binding's tests with their CUDA cases), log.jsonl, val.jsonl, curves.png,
# state_dict.pt + state_dict.json (the best model by validation), last.pt (to resume).
#
#   BUDGET=540 BATCH=64 bash exporter/gpu/train_on_gpu.sh
#
# The schedule (warm-up, cosine decay) is fitted to the time this call has: a short probe measures
# steps/s first, and the run's total steps are set from it, so the learning rate has decayed when
# the time is up. Falls back to the plain-PyTorch operators if libpvn3d_ops cannot be used.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
OUT=${OUT:-/tmp/train-out}; mkdir -p "$OUT"
BUDGET=${BUDGET:-540}; BATCH=${BATCH:-64}; LR=${LR:-1e-3}; RUN=${RUN:-/tmp/pvn3d-run}
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
# the binding's tests, CUDA cases included, beside the training (they are small)
(cd exporter && timeout 150 python3 -m unittest test_native_ops > "$OUT/native-ops-cuda.txt" 2>&1; echo "exit $?" >> "$OUT/native-ops-cuda.txt") &
common=(--bunny-json "$work/bunny.json" --batch-size "$BATCH" --lr "$LR" --ops "$OPS" --amp off)
mkdir -p "$RUN"
if [ -f "$work/last.pt" ]; then
  cp "$work/last.pt" "$RUN/last.pt"
  echo "== resuming from the carried last.pt for $(left) s"
  python3 exporter/train_pvn3d.py --out "$RUN" --resume auto --time-limit $(( $(left) - 20 )) "${common[@]}"
else
  echo "== probe: steps/s of this configuration"
  python3 exporter/train_pvn3d.py --out /tmp/probe --steps 160 --warmup 20 --log-every 40 --val-every 100000 \
    --ckpt-every 100000 --n-val 8 --time-limit 90 "${common[@]}" | grep -E "^step|Error|error" | tail -3
  if [ "$OPS" = native ] && [ ! -s /tmp/probe/log.jsonl ]; then
    echo "the native operators failed in training: falling back to the reference operators"; OPS=reference
    common=(--bunny-json "$work/bunny.json" --batch-size "$BATCH" --lr "$LR" --ops "$OPS" --amp off)
    python3 exporter/train_pvn3d.py --out /tmp/probe2 --steps 40 --warmup 5 --log-every 20 --val-every 100000 \
      --ckpt-every 100000 --n-val 8 --time-limit 60 "${common[@]}" | tail -3
    cp /tmp/probe2/log.jsonl /tmp/probe/log.jsonl 2>/dev/null
  fi
  rate=$(python3 -c 'import json; r=[json.loads(l) for l in open("/tmp/probe/log.jsonl")]; print(r[-1]["steps_per_s"])' 2>/dev/null || echo 5)
  # validation (about 6 times a run) and the final save take their share of the time
  total=$(python3 -c "print(max(200, int($rate * ($(left) - 45) * 0.85)))")
  every=$(( total / 6 > 100 ? total / 6 : 100 ))
  echo "== training: $rate steps/s measured, $total steps in $(left) s (validation every $every steps)"
  python3 exporter/train_pvn3d.py --out "$RUN" --steps "$total" --warmup $(( total / 20 )) --val-every "$every" \
    --ckpt-every "$every" --log-every 100 --n-val 256 --time-limit $(( $(left) - 20 )) "${common[@]}"
fi
wait
for f in log.jsonl val.jsonl curves.png state_dict.pt state_dict.json last.pt; do cp "$RUN/$f" "$OUT/" 2>/dev/null || echo "no $f"; done
ls -la "$OUT"; echo "done in $(( $(date +%s) - t0 )) s"
