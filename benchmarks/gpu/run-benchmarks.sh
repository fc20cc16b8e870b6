#!/usr/bin/env bash
# Runs the benchmark suite on a machine with an NVIDIA GPU, given a Java 22+ runtime and an
# ORT build for that machine's CUDA, from the bundle that benchmarks/gpu/make-bench-bundle.sh made:
#
#   bash benchmarks/gpu/run-benchmarks.sh [JAVA] [ORT_DIR]
#        JAVA     default /opt/gpukit/jre/bin/java          ORT_DIR  default /opt/gpukit/ort
#   environment:
#     PROFILE       quick (default: every kernel at its main size, the pose operators at B = 1, forks
#                   1, short iterations; about 3.5-4 minutes on the H200 once libpvn3d_ops is built) or
#                   full (every size, the pose operators at B = 1 and 4, forks 1, 2 x 1 s warm-up and
#                   4 x 1 s measurement per case; about 13 minutes: 51 KernelBenchmark cases (cpu, cuda,
#                   cudaCopy) ~5.5 min, 51 OrtNodeBenchmark cases (cpu, cuda, cudaDevice) ~5.5 min, the
#                   rest ~2 min; split it over device calls of under 10 minutes with PARTS)
#     PARTS         what to run, default "machine kernels ortnode tiny floor pytorch render"
#     OUT           results folder, default benchmarks/results/<UTC date>-<profile>
#     OPS_LIB       a CUDA build of libpvn3d_ops.so; default: built here (sm_90) into BUILD unless
#                   BUILD/libpvn3d_ops.so exists (BUILD default /tmp/pvn3d-gpu-build, as run-gpu-checks.sh)
#     ORT_INCLUDE   ORT 1.16 C API header folder for the C floor, default .benchbundle/ort-include
#     PYTHON        Python with torch (CUDA) for the PyTorch comparison, default python3
#     JMH_ARGS      extra JMH arguments (e.g. "-f 2" to override the profile's forks)
#     KERNELS       the kernel cases of KernelBenchmark/OrtNodeBenchmark instead of the profile's
#                   (quick: the main sizes; full: every @Param): "pointnet" (the 13 PointNet++ sizes),
#                   "pose" (VoteAggregate and PoseSolve at B = 1 and 4) or a comma-separated list;
#                   to split the full profile over device calls of under 10 minutes each
#     SUFFIX        appended to the names jmh-kernels / jmh-ortnode, so that runs split with KERNELS
#                   into one OUT keep each other's results (render reads every jmh-*.json); default
#                   "-pointnet" / "-pose" for those KERNELS, else none
#
# Writes to OUT: machine.txt (GPU, driver, CUDA, CPU, Java, ORT versions), jmh-kernels.json and
# jmh-ortnode.json (KernelBenchmark, OrtNodeBenchmark: the GPU machine's ORT), jmh-tiny.json
# (TinyModelBenchmark: ours vs ORT's JNI API, both on the bundle's ORT 1.16.3; IoBindingBenchmark), floor.json (the C loop
# over the same ORT 1.16.3), pytorch.json, *.log, and results.md + chart.svg (render_results.py).
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
JAVA=${1:-${JAVA:-/opt/gpukit/jre/bin/java}}
ORT_DIR=${2:-${ORT_DIR:-/opt/gpukit/ort}}
PROFILE=${PROFILE:-quick}
PARTS=${PARTS:-machine kernels ortnode tiny floor pytorch render}
OUT=${OUT:-$top/benchmarks/results/$(date -u +%Y-%m-%d)-$PROFILE}
BUILD=${BUILD:-/tmp/pvn3d-gpu-build}
ORT_INCLUDE=${ORT_INCLUDE:-$top/.benchbundle/ort-include}
PYTHON=${PYTHON:-python3}
bundle=$top/.benchbundle
jar=$bundle/benchmarks.jar
ort116=$bundle/ort116
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
[ -x "$JAVA" ] || { echo "run-benchmarks: no java at $JAVA" >&2; exit 1; }
[ -f "$jar" ] || { echo "run-benchmarks: no $jar (run benchmarks/gpu/make-bench-bundle.sh)" >&2; exit 1; }
has() { [[ " $PARTS " == *" $1 "* ]]; }
t_start=$(date +%s)
phase() { echo "== $1 ($(( $(date +%s) - t_start )) s)"; }

MAIN="FPS_B1_N12288_np2048,BallQuery_B1_N12288_M2048_S16_r0.0175,GroupPoints_B8_C256_N1024_M512_S32"
MAIN+=",ThreeNN_B1_n12288_m2048,ThreeInterpolate_B1_C128_m2048_n12288,GatherPoints_B8_C256_N4096_M1024"
# the pose operators at B = 1 against PyTorch's MeanShift_K9_N3000; B = 4 (and the B = 8 sizes
# of the PointNet++ kernels) only in the full profile
MAIN+=",VoteAggregate_B1_K9_N3000,PoseSolve_B1_K9_N3000"
case "$PROFILE" in
  quick) ITER="-f 1 -wi 1 -w 1s -i 2 -r 1s"; SIZES=(-p kernel=$MAIN); FLOOR_RUNS=100000 ;;
  full)  ITER="-f 1 -wi 2 -w 1s -i 4 -r 1s"; SIZES=(); FLOOR_RUNS=500000 ;;
  *) echo "run-benchmarks: PROFILE must be quick or full" >&2; exit 1 ;;
esac
POINTNET="FPS_B1_N12288_np2048,FPS_B1_N16384_np4096,FPS_B8_N16384_np4096"
POINTNET+=",BallQuery_B1_N12288_M2048_S16_r0.0175,BallQuery_B1_N12288_M2048_S32_r0.025,BallQuery_B8_N16384_M4096_S32_r0.025"
POINTNET+=",GroupPoints_B8_C256_N1024_M512_S32,GroupPoints_B1_C99_N2048_M1024_S32"
POINTNET+=",ThreeNN_B1_n12288_m2048,ThreeNN_B8_n16384_m4096"
POINTNET+=",ThreeInterpolate_B1_C128_m2048_n12288,ThreeInterpolate_B8_C256_m4096_n16384,GatherPoints_B8_C256_N4096_M1024"
POSE="VoteAggregate_B1_K9_N3000,VoteAggregate_B4_K9_N3000,PoseSolve_B1_K9_N3000,PoseSolve_B4_K9_N3000"
case "${KERNELS:-}" in
  "") ;;
  pointnet) SIZES=(-p "kernel=$POINTNET"); SUFFIX=${SUFFIX--pointnet} ;;
  pose) SIZES=(-p "kernel=$POSE"); SUFFIX=${SUFFIX--pose} ;;
  *) SIZES=(-p "kernel=$KERNELS") ;;
esac
jmh() {  # jmh NAME REGEX JVM-PROPERTIES [more JMH args]
  local name=$1 regex=$2 props=$3; shift 3
  "$JAVA" --enable-native-access=ALL-UNNAMED -jar "$jar" "$regex" $ITER ${JMH_ARGS:-} "$@" \
    -prof org.pvn3d.ort.bench.CudaEventProfiler -jvmArgsAppend "$props -Dpvn3d.cache.dir=/tmp/pvn3d-cache" \
    -rf json -rff "$OUT/jmh-$name.json" > "$OUT/jmh-$name.log" 2>&1
  local rc=$?
  echo "jmh $name exit $rc"; grep -E "^(Benchmark|KernelBench|OrtNode|TinyModel|IoBinding)" "$OUT/jmh-$name.log" | grep -v ":p0\.\(0\|9\)\|:p1\.00" | tail -60
  return $rc
}

if has machine; then
  phase "machine"
  {
    echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "profile: $PROFILE"
    echo "gpu: $(nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader 2>&1 | head -1)"
    echo "cuda: $(nvcc --version 2>/dev/null | grep -o 'release [^,]*' | head -1)"
    echo "cpu: $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores online"
    echo "kernel: $(uname -r)"
    echo "java: $("$JAVA" -version 2>&1 | head -1)"
    echo "ort (kernels, ORT nodes): $(cat "$ORT_DIR/SOURCE" 2>/dev/null | head -1 || true) at $ORT_DIR ($(ls "$ORT_DIR"/lib*/libonnxruntime.so.* "$ORT_DIR"/libonnxruntime.so.* 2>/dev/null | head -1 | sed 's|.*/||'))"
    echo "ort (tiny model, C floor): $(cat "$ort116/VERSION" 2>/dev/null) from com.microsoft.onnxruntime:onnxruntime (CPU)"
    echo "torch: $("$PYTHON" -c 'import torch; print(torch.__version__, "CUDA", torch.version.cuda)' 2>&1 | tail -1)"
  } > "$OUT/machine.txt"
  cat "$OUT/machine.txt"
  "$JAVA" --list-modules 2>/dev/null | grep -q '^java.management' || echo "warning: $JAVA lacks java.management (JMH needs it)"
fi

ops_lib() {
  if [ -n "${OPS_LIB:-}" ]; then echo "$OPS_LIB"; return; fi
  if [ ! -f "$BUILD/libpvn3d_ops.so" ]; then
    phase "building libpvn3d_ops (CUDA, sm_90) into $BUILD" >&2
    cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DPVN3D_WITH_CUDA=ON > "$OUT/native-build.log" 2>&1 \
      && cmake --build "$BUILD" --parallel "$(nproc)" --target pvn3d_ops >> "$OUT/native-build.log" 2>&1 \
      || { tail -30 "$OUT/native-build.log" >&2; exit 1; }
  fi
  echo "$BUILD/libpvn3d_ops.so"
}

# the ORT lib folder: ORT_DIR itself or its lib/ (a build tree or an install)
ort_lib=$ORT_DIR
[ -d "$ORT_DIR/lib" ] && ls "$ORT_DIR"/lib/libonnxruntime.so* >/dev/null 2>&1 && ort_lib=$ORT_DIR/lib

if has kernels || has ortnode; then
  OPS=$(ops_lib)
  PROPS="-Dpvn3d.ort.path=$ort_lib -Dpvn3d.ops.path=$OPS"
  if has kernels; then
    phase "KernelBenchmark: CPU and CUDA kernels through the C ABI"
    jmh "kernels${SUFFIX:-}" KernelBenchmark "$PROPS" "${SIZES[@]}"
  fi
  if has ortnode; then
    phase "OrtNodeBenchmark: one-node models on ORT's CPU and CUDA providers"
    jmh "ortnode${SUFFIX:-}" OrtNodeBenchmark "$PROPS" "${SIZES[@]}"
  fi
fi

if has tiny; then
  phase "TinyModelBenchmark: this project's API vs ORT's JNI API, ORT $(cat "$ort116/VERSION" 2>/dev/null)"
  jmh tiny 'TinyModelBenchmark|IoBindingBenchmark' "-Dpvn3d.ort.path=$ort116 -Donnxruntime.native.path=$ort116"
fi

if has floor; then
  phase "C floor: add16 over ORT's C API"
  if [ -f "$ORT_INCLUDE/onnxruntime_c_api.h" ]; then
    fb=/tmp/pvn3d-add16-floor
    mkdir -p "$fb"
    # the library's SONAME is libonnxruntime.so.<version>: a link beside the program finds it
    ln -sf "$ort116/libonnxruntime.so" "$fb/libonnxruntime.so.$(cat "$ort116/VERSION")"
    gcc -O2 -std=c11 -I"$ORT_INCLUDE" benchmarks/native/add16_floor.c "$ort116/libonnxruntime.so" \
        -Wl,-rpath,"$fb" -o "$fb/add16_floor" > "$OUT/floor.log" 2>&1 \
      && "$fb/add16_floor" benchmarks/src/main/resources/add16.onnx "$FLOOR_RUNS" 20000 > "$OUT/floor.json" 2>> "$OUT/floor.log"
    echo "floor exit $?"; cat "$OUT/floor.json" "$OUT/floor.log"
  else
    echo "no ORT C header in $ORT_INCLUDE (make-bench-bundle.sh /path/to/ort-1.16-include, or ORT_INCLUDE=): C floor skipped" \
      | tee "$OUT/floor.log"
  fi
fi

if has pytorch; then
  phase "PyTorch: the same operators in plain PyTorch"
  "$PYTHON" benchmarks/scripts/pytorch_ops_bench.py --profile "$PROFILE" --out "$OUT/pytorch.json" > "$OUT/pytorch.log" 2>&1
  echo "pytorch exit $?"; cat "$OUT/pytorch.log" | tail -20
fi

if has render; then
  phase "render"
  "${RENDER_PYTHON:-$PYTHON}" benchmarks/scripts/render_results.py "$OUT" && echo "wrote $OUT/results.md and $OUT/chart.svg"
fi
phase "done"
