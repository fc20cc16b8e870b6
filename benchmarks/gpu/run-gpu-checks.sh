#!/usr/bin/env bash
# Runs the project's GPU checks on a machine with an NVIDIA GPU, CUDA, a Java 22+ runtime and an ORT
# build for that machine's CUDA (e.g. the GPU kit's /opt/gpukit/jre and /opt/gpukit/ort), given the
# bundle made by benchmarks/gpu/make-bundle.sh. Writes its logs to $OUT (default ./gpu-results):
#   machine.txt   GPU, driver, CUDA, date          native-ctest.txt  ctest of the native library (GPU tests included)
#   bench-cuda.txt, host-launch.txt  (part bench) the kernels' device times; each launcher's host time per call
#   junit.txt     the Java suite on this GPU (CUDA provider tests included; the PVN3D model with the pose
#                 head, exported here with this machine's PyTorch, runs through PoseHeadModelTest)
#   memory-probe.txt  NativeMemoryProbe: the C heap's floor per window of runs on this machine's ORT
#   cli-cuda.txt, pvn3d-report-cuda.json, pvn3d-pose-cuda.png  ./pvn3d-ort's main job on the CUDA provider
#   heldout-200-cuda.{txt,json}  the shipped model's accuracy on the 200 held-out scenes, CUDA provider
#   with FULL=1 also cli-full-cuda.txt, pvn3d-report-full-cuda.json: the full-size PVN3D model (the
#   paper's widths, 480x640, N=12288), exported there with PyTorch, end to end on the CUDA provider
#   (the exported graph is ~150 MB and stays in /tmp there)
#
#   bash benchmarks/gpu/run-gpu-checks.sh [JAVA] [ORT_DIR]
#   PARTS="native cli heldout junit probe" (the default; FULL=1 adds full) picks the parts, in that order:
#   a device call with other work to do leaves out native (the jar's libpvn3d_ops is used either way).
# The device tool brings back at most 8 files from $OUT: leave out probe (or SKIP_PROBE=1) to stay at 8.
set -uo pipefail
PARTS=${PARTS:-native cli heldout junit probe${FULL:+ full}}
[ -n "${SKIP_PROBE:-}" ] && PARTS=${PARTS/probe/}
part() { [[ " $PARTS " == *" $1 "* ]]; }
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
JAVA=${1:-${JAVA:-/opt/gpukit/jre/bin/java}}
ORT_DIR=${2:-${ORT_DIR:-/opt/gpukit/ort}}
OUT=${OUT:-$top/gpu-results}
bundle=$top/.gpubundle
build=${BUILD:-/tmp/pvn3d-gpu-build}
mkdir -p "$OUT"
[ -x "$JAVA" ] || { echo "run-gpu-checks: no java at $JAVA" >&2; exit 1; }
[ -d "$ORT_DIR" ] || { echo "run-gpu-checks: no ORT build at $ORT_DIR" >&2; exit 1; }
[ -f "$bundle/runtime.jar" ] || { echo "run-gpu-checks: no bundle in $bundle (run make-bundle.sh)" >&2; exit 1; }
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64

{
  date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv
  nvcc --version | tail -2
  "$JAVA" -version 2>&1 | head -1
  echo "ORT: $(cat "$ORT_DIR/SOURCE" 2>/dev/null || echo "$ORT_DIR")"
  nproc; uname -r
} > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"

if part native; then
  echo "== native library (sm_90) and its tests"
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DPVN3D_WITH_CUDA=ON > "$OUT/native-build.txt" 2>&1 \
    && cmake --build "$build" --parallel 16 >> "$OUT/native-build.txt" 2>&1 || { tail -30 "$OUT/native-build.txt"; exit 1; }
  mv "$OUT/native-build.txt" "$build/native-build.txt"   # kept there: $OUT brings back only a few files
  cp "$bundle/bunny_positions.txt" "$build/"
  PVN3D_REQUIRE_BUNNY=1 ctest --test-dir "$build" --output-on-failure > "$OUT/native-ctest.txt" 2>&1
  echo "ctest exit $?"; tail -15 "$OUT/native-ctest.txt"
fi

if part bench; then
  echo "== kernel timings (CUDA events, median per call): PointNet++ operators, then the pose operators"
  "$build/pvn3d_bench_cuda" > "$OUT/bench-cuda.txt" 2>&1; echo "bench exit $?"
  "$build/pvn3d_bench_cuda" --pose >> "$OUT/bench-cuda.txt" 2>&1; echo "bench --pose exit $?"
  "$build/pvn3d_bench_cuda" --host "$OUT/host-launch.txt" > /tmp/host-launch.log 2>&1; echo "bench --host exit $?"
  grep -E "^(ERROR|SKIPPED)" /tmp/host-launch.log; cat "$OUT/host-launch.txt" 2>/dev/null
  cat "$OUT/bench-cuda.txt"
fi

if part sanitizer; then
  echo "== compute-sanitizer memcheck and racecheck over the CUDA operators' tests"
  # PVN3D_TEST_SMALL: the tests' largest shapes left out (every kernel variant still runs), so that a
  # sanitized run takes seconds; PVN3D_TEST_NO_API_ERRORS: the cases that provoke CUDA API errors on
  # purpose left out (memcheck reports those as errors). SAN_OPS picks operators, SAN_LIMIT bounds each run.
  for t in ${SAN_OPS:-furthest_point_sample gather_points group_points three_interpolate three_nn ball_query vote_aggregate pose_solve}; do
    for tool in memcheck racecheck; do
      [ -x "$build/pvn3d_test_$t" ] || continue
      PVN3D_TEST_SMALL=1 PVN3D_TEST_NO_API_ERRORS=1 timeout "${SAN_LIMIT:-120}" \
        compute-sanitizer --tool $tool --error-exitcode 9 "$build/pvn3d_test_$t" --bunny "$build/bunny_positions.txt" \
        > "/tmp/san-$t-$tool.txt" 2>&1
      echo "$t $tool exit $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "/tmp/san-$t-$tool.txt" | tail -1)" | tee -a "$OUT/sanitizer.txt"
    done
  done
fi

# libpvn3d_ops comes from the pvn3d-ops jar (as a user gets it); ORT from the machine's build
java_run() { "$JAVA" --enable-native-access=ALL-UNNAMED -Dpvn3d.ort.path="$ORT_DIR" \
  -Dpvn3d.cache.dir=/tmp/pvn3d-cache -XX:ErrorFile="$OUT/hs_err_pid%p.log" -Xmx4g "$@"; }  # a crash log comes back with $OUT
jars="$bundle/ffm-bindings.jar:$bundle/runtime.jar:$bundle/pvn3d-ops.jar:$bundle/pvn3d-pipeline.jar:$bundle/picocli.jar"
tests="$bundle/test-classes-runtime:$bundle/test-classes-pvn3d-ops:$bundle/test-classes-pvn3d-pipeline"
if part cli; then
  echo "== ./pvn3d-ort's main job on the CUDA provider"
  java_run -cp "$jars" org.pvn3d.ort.cli.Main --ep cuda --warmup 3 --runs 50 \
    --report "$OUT/pvn3d-report-cuda.json" --png "$OUT/pvn3d-pose-cuda.png" > "$OUT/cli-cuda.txt" 2>&1
  echo "cli exit $?"; cat "$OUT/cli-cuda.txt"
  echo "-- the same through a plain run with host tensors (--no-io-binding)" >> "$OUT/cli-cuda.txt"
  java_run -cp "$jars" org.pvn3d.ort.cli.Main --ep cuda --warmup 3 --runs 50 \
    --no-io-binding 2>&1 | grep -E "^  (inference|verdict)|^  [a-z_]+ +\[" >> "$OUT/cli-cuda.txt"
  tail -8 "$OUT/cli-cuda.txt"
fi

if part heldout && [ -d "$bundle/heldout-200" ]; then
  echo "== the shipped model's held-out accuracy on the CUDA provider (the 200 scenes of MODEL.md)"
  java_run -cp "$jars" org.pvn3d.ort.cli.Main eval "$bundle/heldout-200" --ep cuda --json "$OUT/heldout-200-cuda.json" \
    > "$OUT/heldout-200-cuda.txt" 2>&1
  echo "eval exit $?"; tail -12 "$OUT/heldout-200-cuda.txt"
fi

if part full; then
  echo "== the full-size PVN3D model, exported with this machine's PyTorch, end to end on CUDA"
  if python3 exporter/export_pvn3d.py --width full --no-verify --time-cuda 10 --bunny-json "$bundle/bunny.json" \
      --out-dir /tmp/pvn3d-full > /tmp/pvn3d-full-export.txt 2>&1; then
    full_args=(--ep cuda --warmup 3 --runs 20 --model /tmp/pvn3d-full/pvn3d_full.onnx
      --sample /tmp/pvn3d-full/pvn3d_full_sample.bin --expected /tmp/pvn3d-full/pvn3d_full_expected.bin)
    java_run -cp "$jars" org.pvn3d.ort.cli.Main "${full_args[@]}" \
      --report "$OUT/pvn3d-report-full-cuda.json" > "$OUT/cli-full-cuda.txt" 2>&1
    echo "cli (full) exit $?"; cat "$OUT/cli-full-cuda.txt"
    echo "-- the same through a plain run with host tensors (--no-io-binding)" >> "$OUT/cli-full-cuda.txt"
    java_run -cp "$jars" org.pvn3d.ort.cli.Main "${full_args[@]}" \
      --no-io-binding 2>&1 | grep -E "^  (inference|verdict)|^  [a-z_]+ +\[" >> "$OUT/cli-full-cuda.txt"
    tail -9 "$OUT/cli-full-cuda.txt"
    # the PyTorch side of the same sample on this GPU, for the latency comparison
    grep -E "^(sample|network|PyTorch|torch.onnx)" /tmp/pvn3d-full-export.txt > "$OUT/export-full.txt"
  else
    echo "full export failed:"; tail -20 /tmp/pvn3d-full-export.txt
  fi
fi

cp="$jars:$tests:$bundle/onnxruntime-extensions"
if part junit; then
  pose_props=()
  if [ -f "$bundle/bunny.json" ] && python3 -c 'import torch, onnx' 2>/dev/null; then
    echo "== the tiny PVN3D model with the pose head, exported with this machine's PyTorch"
    if python3 exporter/export_pvn3d.py --pose-head --no-verify --checkpoint exporter/checkpoints/pvn3d_tiny_bunny.pt \
        --dataset-sample test:0 --bunny-json "$bundle/bunny.json" --out-dir /tmp/pvn3d-pose \
        > /tmp/pvn3d-pose-export.txt 2>&1; then
      pose_props=(-Dpvn3d.pose.model=/tmp/pvn3d-pose/pvn3d_tiny_pose.onnx)
    else
      echo "pose-head export failed:"; tail -20 /tmp/pvn3d-pose-export.txt
    fi
  fi
  echo "== Java suite on the GPU (CUDA provider)"
  # The launcher and the tests on -cp (not the console's --class-path): tests that start a child JVM
  # (ExitTest) hand it java.class.path. LauncherTest is left out: it runs the repository's ./pvn3d-ort
  # script, which the bundle does not hold (CI runs it).
  # make-bundle.sh puts one console jar in the bundle; should a hand-made bundle hold several, the newest
  junit_jar=$(ls "$bundle"/junit-platform-console-standalone-*.jar 2>/dev/null | sort -V | tail -1)
  [ -n "$junit_jar" ] || echo "run-gpu-checks: no junit-platform-console-standalone jar in $bundle (make-bundle.sh puts it there)"
  java_run "${pose_props[@]}" -Dpvn3d.test.memoryWarmup=40000 -cp "$junit_jar:$cp" \
    org.junit.platform.console.ConsoleLauncher execute ${JUNIT_SELECT:---scan-class-path $tests} \
    --exclude-classname '.*LauncherTest' --details=tree --disable-banner ${JUNIT_ARGS:-} > "$OUT/junit.txt" 2>&1
  echo "junit exit $?"
  grep -E "^[A-Za-z]+Test: |IoBindingGpuTest|PoseOpsTest|PoseHeadModelTest" "$OUT/junit.txt" | head -40
  tail -16 "$OUT/junit.txt"
fi

if part probe; then
  echo "== native memory over many runs on this runtime"
  java_run -cp "$cp" org.pvn3d.ort.NativeMemoryProbe 10 5000 > "$OUT/memory-probe.txt" 2>&1
  cat "$OUT/memory-probe.txt"
fi

