#!/usr/bin/env bash
# Runs the project's GPU checks on a machine with an NVIDIA GPU, CUDA, a Java 22+ runtime and an ORT
# build for that machine's CUDA (e.g. the GPU kit's /opt/gpukit/jre and /opt/gpukit/ort), given the
# bundle made by benchmarks/gpu/make-bundle.sh. Writes its logs to $OUT (default ./gpu-results):
#   machine.txt   GPU, driver, CUDA, date          native-ctest.txt  ctest of the native library (GPU tests included)
#   junit.txt     the Java suite on this GPU (CUDA provider tests included)
#
#   bash benchmarks/gpu/run-gpu-checks.sh [JAVA] [ORT_DIR]
set -uo pipefail
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
[ -f "$bundle/runtime-classes.jar" ] || { echo "run-gpu-checks: no bundle in $bundle (run make-bundle.sh)" >&2; exit 1; }
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

echo "== native library (sm_90) and its tests"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DPVN3D_WITH_CUDA=ON > "$OUT/native-build.txt" 2>&1 \
  && cmake --build "$build" --parallel 16 >> "$OUT/native-build.txt" 2>&1 || { tail -30 "$OUT/native-build.txt"; exit 1; }
cp "$bundle/bunny_positions.txt" "$build/"
PVN3D_REQUIRE_BUNNY=1 ctest --test-dir "$build" --output-on-failure > "$OUT/native-ctest.txt" 2>&1
echo "ctest exit $?"; tail -15 "$OUT/native-ctest.txt"

echo "== Java suite on the GPU (CUDA provider)"
cp="$bundle/runtime-classes.jar:$bundle/test-classes:$bundle/ffm-bindings.jar"
"$JAVA" --enable-native-access=ALL-UNNAMED -Dpvn3d.ort.path="$ORT_DIR" -Dpvn3d.ops.path="$build/libpvn3d_ops.so" \
  -Dpvn3d.cache.dir=/tmp/pvn3d-cache -Xmx4g -jar "$bundle"/junit-platform-console-standalone-*.jar execute \
  --class-path "$cp" --scan-class-path "$bundle/test-classes" --details=tree --disable-banner \
  ${JUNIT_ARGS:-} > "$OUT/junit.txt" 2>&1
echo "junit exit $?"
grep -E "CudaProviderTest:|PointNet2DefaultTest:|NativeMemoryTest:" "$OUT/junit.txt"
tail -25 "$OUT/junit.txt"
