#!/usr/bin/env bash
# Profiling on the GPU machine, with the bundle of benchmarks/gpu/make-bundle.sh and the GPU kit (a Java 22+
# runtime, an ORT build for the machine's CUDA), as run-gpu-checks.sh uses them. Writes to $OUT (default
# ./gpu-results):
#   profile-full.txt       the full-size PVN3D model (exported here with PyTorch, or reused from /tmp/pvn3d-full)
#                          on the CUDA provider with --profile --device-timing --jfr: ORT's per-operator summary
#                          (host time per operator type and node, CUDA vs CPU provider, the PVN3D operators apart,
#                          their device time from CUDA events around each launch) and the device-time table
#   profile-full/          ORT's profile, its .summary.json and .summary.png; full.jfr (the JFR recording)
#   profile-tiny.txt, profile-tiny/   the same for the tiny shipped model
#   ncu-*.txt              Nsight Compute on short runs of the tiny model, filtering kernels by NVTX range:
#                          ncu-fps.txt    only the kernels inside libpvn3d_ops's range PVN3D_FurthestPointSample
#                          ncu-pvn3d.txt  the kernels of every range of the pvn3d domain (the custom operators')
#                          ncu-stage.txt  the kernels inside the Java range stage:inference (all of the network)
#                          each ends with the number of kernels ncu profiled; 0 would mean the ranges were not seen
#
#   bash benchmarks/gpu/run-profiling.sh [JAVA] [ORT_DIR]
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
JAVA=${1:-${JAVA:-/opt/gpukit/jre/bin/java}}
ORT_DIR=${2:-${ORT_DIR:-/opt/gpukit/ort}}
OUT=${OUT:-$top/gpu-results}
bundle=$top/.gpubundle
full=/tmp/pvn3d-full
mkdir -p "$OUT"
[ -x "$JAVA" ] || { echo "run-profiling: no java at $JAVA" >&2; exit 1; }
[ -d "$ORT_DIR" ] || { echo "run-profiling: no ORT build at $ORT_DIR" >&2; exit 1; }
[ -f "$bundle/pvn3d-pipeline.jar" ] || { echo "run-profiling: no bundle in $bundle (run make-bundle.sh)" >&2; exit 1; }
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
jars="$bundle/ffm-bindings.jar:$bundle/runtime.jar:$bundle/pvn3d-ops.jar:$bundle/pvn3d-pipeline.jar:$bundle/picocli.jar"
jvm=(--enable-native-access=ALL-UNNAMED -Dpvn3d.ort.path="$ORT_DIR" -Dpvn3d.cache.dir=/tmp/pvn3d-cache -Xmx8g -cp "$jars")
cli() { "$JAVA" "${jvm[@]}" org.pvn3d.ort.cli.Main "$@"; }
# --jfr needs the jdk.jfr module; a jlinked runtime may not have it (the rest runs without)
jfr_opt() { if "$JAVA" --list-modules 2>/dev/null | grep -q '^jdk\.jfr@'; then echo --jfr "$1"; fi; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/profiling-machine.txt"

if [ ! -f "$full/pvn3d_full.onnx" ]; then
  python3 exporter/export_pvn3d.py --width full --no-verify --bunny-json "$bundle/bunny.json" --out-dir "$full" \
    > /tmp/pvn3d-full-export.txt 2>&1 || { echo "full export failed:"; tail -20 /tmp/pvn3d-full-export.txt; exit 1; }
fi

echo "== the full-size model on CUDA: ORT's profile summarised, CUDA-event device times, JFR"
rm -rf "$OUT/profile-full"
cli --ep cuda --warmup 3 --runs 20 --model "$full/pvn3d_full.onnx" --sample "$full/pvn3d_full_sample.bin" \
  --expected "$full/pvn3d_full_expected.bin" --profile "$OUT/profile-full" --device-timing --nvtx \
  $(jfr_opt "$OUT/profile-full/full.jfr") > "$OUT/profile-full.txt" 2>&1
echo "exit $?"; sed -n '/^ORT profile/,$p' "$OUT/profile-full.txt"

echo "== the tiny model on CUDA, the same"
rm -rf "$OUT/profile-tiny"
cli --ep cuda --warmup 3 --runs 50 --profile "$OUT/profile-tiny" --device-timing --nvtx $(jfr_opt "$OUT/profile-tiny/tiny.jfr") \
  > "$OUT/profile-tiny.txt" 2>&1
echo "exit $?"; sed -n '/^by provider/,$p' "$OUT/profile-tiny.txt"

NCU=${NCU:-$(command -v ncu || echo /usr/local/cuda/bin/ncu)}
if [ ! -x "$NCU" ]; then
  echo "run-profiling: no Nsight Compute (ncu) here; the NVTX checks are skipped" | tee "$OUT/ncu-missing.txt"
  exit 0
fi
# one short run of the tiny model per filter: --nvtx turns the Java ranges on (run, stage:*); libpvn3d_ops's ranges
# (domain pvn3d, one per CUDA launch, named after the operator) are always there. Only the first N matching kernels
# are profiled, with one metric, so each run takes seconds.
ncu_run() {
  local name=$1 filter=$2
  "$NCU" --target-processes all --nvtx --nvtx-include "$filter" --launch-count "${NCU_LAUNCHES:-6}" \
    --metrics gpu__time_duration.sum "$JAVA" "${jvm[@]}" org.pvn3d.ort.cli.Main --ep cuda --warmup 0 --runs 1 --nvtx \
    > "$OUT/ncu-$name.txt" 2>&1
  echo "ncu exit $?; filter $filter: $(grep -c '==PROF== Profiling' "$OUT/ncu-$name.txt") kernel(s) profiled" \
    | tee -a "$OUT/ncu-$name.txt"
  grep '==PROF== Profiling' "$OUT/ncu-$name.txt" | head -4
}
echo "== Nsight Compute filtering on the NVTX ranges ($("$NCU" --version | tail -1))"
ncu_run fps "pvn3d@PVN3D_FurthestPointSample/"
ncu_run pvn3d "regex:pvn3d@PVN3D_.*/"
ncu_run stage "pvn3d@stage:inference/"
