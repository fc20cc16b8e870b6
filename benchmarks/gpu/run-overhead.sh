#!/usr/bin/env bash
# The binding's own cost on the GPU machine, before and after, from the bundle that
# benchmarks/gpu/make-bench-bundle.sh made (with BASE_REV set, it also holds the "before" benchmarks
# jar, .benchbundle/base/benchmarks.jar, built from that revision with today's overhead benchmarks):
#
#   bash benchmarks/gpu/run-overhead.sh [JAVA] [ORT_DIR]
#        JAVA     default /opt/gpukit/jre/bin/java          ORT_DIR  default /opt/gpukit/ort
#   environment:
#     PARTS    what to run, default "machine tiny gc dispatch profile hosttime startup"; split it over
#              device calls of under 10 minutes: "machine tiny" (~5 min with ROUNDS=2), "gc startup" (~2 min,
#              plus building libpvn3d_ops the first time), "dispatch" (~8 min), "profile hosttime" (~3 min,
#              plus the full model's export the first time)
#     OUT      results folder, default benchmarks/results/<UTC date>-overhead-h200
#     ROUNDS   rounds of the interleaved before/after runs of the tiny model, default 2
#     DISPATCH_CPU  0: the dispatch part measures the CUDA provider only (the CPU cases have their own run)
#     DISPATCH_ITER JMH's fork/iteration options for the dispatch part, default "-f 3 -wi 3 -w 1s -i 5 -r 1s"
#     CUDA     0: leave out the CUDA cases (to run the CPU parts on a machine without a GPU, with OPS_LIB
#              a CPU build of libpvn3d_ops), default 1
#     OPS_LIB  a CUDA build of libpvn3d_ops.so; default: built here (sm_90) into BUILD unless
#              BUILD/libpvn3d_ops.so exists (BUILD default /tmp/pvn3d-gpu-build, as run-benchmarks.sh)
#     FULL_DIR the full-size PVN3D model and its sample (pvn3d_full.onnx, pvn3d_full_sample.bin), default
#              /tmp/pvn3d-full; exported there when missing (exporter/export_pvn3d.py --width full, as
#              run-gpu-checks.sh FULL=1 does; needs BUNNY_JSON, default .gpubundle/bunny.json)
#
# Parts (ORT 1.16.3 CPU from the bundle for the CPU-provider cases, as the issue's reference; the GPU
# machine's ORT_DIR for the CUDA cases):
#   tiny      TinyModelBenchmark + IoBindingBenchmark (add16, CPU provider) with -prof gc, before and
#             after interleaved ROUNDS times, the C floor (benchmarks/native/add16_floor.c, its
#             preallocated and bound loops) after each round: jmh-tiny-{base,after}-N.json, floor-N.json
#   gc        bytes per call of the allocation-free paths in JMH's average-time mode (sample-time mode
#             adds JMH's own bookkeeping, ~0.5 B/op): jmh-gc.json
#   dispatch  DispatchBenchmark (JavaNop vs Identity, PVN3D_GatherPoints vs Gather; 3 forks each) on the CPU provider
#             (OMP_NUM_THREADS=1) and device-resident on the CUDA provider, before and after:
#             jmh-dispatch-{base,after}.json
#   profile   the full-size PVN3D model device-resident on the CUDA provider with ORT's profiler
#             (NodeProfile: 300 warm-up runs, enough for the JIT to settle the compute path, then
#             100 profiled), before and after: each custom node's host
#             time at steady state, profile-{base,after}.txt/.json (benchmarks/scripts/profile_nodes.py)
#   hosttime  the same model, sample and binding without ORT's profiler (it inflates every node's time):
#             NodeHostTime, each custom node's host time from the runtime's JFR CustomOpCompute event (the
#             time inside our compute upcall; 300 warm-up runs, 300 more with the event on, 100 recorded)
#             and the run time of 100 runs with no recording, before and after:
#             hosttime-{base,after}.txt/.json (a jar without NodeHostTime is skipped; a JVM without
#             jdk.jfr: exit 3, said in the .txt)
#   startup   StartupProbe (process start to the first add16 result; new sessions in a warm process)
#             without and with the JDK's ahead-of-time cache: startup.txt
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
JAVA=${1:-${JAVA:-/opt/gpukit/jre/bin/java}}
ORT_DIR=${2:-${ORT_DIR:-/opt/gpukit/ort}}
PARTS=${PARTS:-machine tiny gc dispatch profile hosttime startup}
OUT=${OUT:-$top/benchmarks/results/$(date -u +%Y-%m-%d)-overhead-h200}
ROUNDS=${ROUNDS:-2}
BUILD=${BUILD:-/tmp/pvn3d-gpu-build}
FULL_DIR=${FULL_DIR:-/tmp/pvn3d-full}
BUNNY_JSON=${BUNNY_JSON:-$top/.gpubundle/bunny.json}
ORT_INCLUDE=${ORT_INCLUDE:-$top/.benchbundle/ort-include}
bundle=$top/.benchbundle
after=$bundle/benchmarks.jar
base=$bundle/base/benchmarks.jar
ort116=$bundle/ort116
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
[ -x "$JAVA" ] || { echo "run-overhead: no java at $JAVA" >&2; exit 1; }
[ -f "$after" ] || { echo "run-overhead: no $after (run benchmarks/gpu/make-bench-bundle.sh)" >&2; exit 1; }
has() { [[ " $PARTS " == *" $1 "* ]]; }
jars=(after)
[ -f "$base" ] && jars=(base after) || echo "run-overhead: no $base (make-bench-bundle.sh with BASE_REV=...): after only"
jar_of() { [ "$1" = base ] && echo "$base" || echo "$after"; }
t_start=$(date +%s)
phase() { echo "== $1 ($(( $(date +%s) - t_start )) s)"; }
# -jvmArgsPrepend, not -jvmArgsAppend: see run-benchmarks.sh
jmh() {  # jmh JAR NAME REGEX JVM-PROPERTIES [more JMH args]
  local jar=$1 name=$2 regex=$3 props=$4; shift 4
  "$JAVA" --enable-native-access=ALL-UNNAMED -jar "$jar" "$regex" "$@" \
    -jvmArgsPrepend "$props -Dpvn3d.cache.dir=/tmp/pvn3d-cache" -rf json -rff "$OUT/jmh-$name.json" > "$OUT/jmh-$name.log" 2>&1
  local rc=$?
  echo "jmh $name exit $rc"
  grep -E "^[A-Za-z]+Benchmark\." "$OUT/jmh-$name.log" | grep -E "alloc.rate.norm|p0.50|avgt" | grep -v "alloc.rate.norm.*avgt *$" | tail -40
  return $rc
}
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
ort_lib=$ORT_DIR
[ -d "$ORT_DIR/lib" ] && ls "$ORT_DIR"/lib/libonnxruntime.so* >/dev/null 2>&1 && ort_lib=$ORT_DIR/lib
TINY_ITER="-f 1 -wi 3 -w 1s -i 5 -r 1s"
# dispatch: three forks per case (a single fork's median moves by a few hundred ns from fork to fork,
# as much as the difference measured), merged by JMH
DISPATCH_ITER=${DISPATCH_ITER:-"-f 3 -wi 3 -w 1s -i 5 -r 1s"}

if has machine; then
  phase "machine"
  {
    echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "gpu: $(command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap \
      --format=csv,noheader 2>&1 | head -1 || echo none)"
    echo "cpu: $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores online"
    echo "java: $("$JAVA" -version 2>&1 | head -1)"
    echo "ort (CPU-provider cases, C floor): $(cat "$ort116/VERSION" 2>/dev/null) from com.microsoft.onnxruntime:onnxruntime (CPU)"
    [ "${CUDA:-1}" = 0 ] && echo "ort (CUDA cases): none (CUDA=0)" \
      || echo "ort (CUDA cases): $(cat "$ORT_DIR/SOURCE" 2>/dev/null | head -1 || true) at $ORT_DIR"
    echo "before: $(cat "$bundle/base/REVISION" 2>/dev/null || echo none); after: $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
  } | tee "$OUT/machine.txt"
fi

if has tiny; then
  fb=/tmp/pvn3d-add16-floor
  if [ -f "$ORT_INCLUDE/onnxruntime_c_api.h" ]; then
    mkdir -p "$fb"
    ln -sf "$ort116/libonnxruntime.so" "$fb/libonnxruntime.so.$(cat "$ort116/VERSION")"
    gcc -O2 -std=c11 -I"$ORT_INCLUDE" benchmarks/native/add16_floor.c "$ort116/libonnxruntime.so" \
        -Wl,-rpath,"$fb" -o "$fb/add16_floor" > "$OUT/floor.log" 2>&1 || { cat "$OUT/floor.log"; rm -f "$fb/add16_floor"; }
  else
    echo "no ORT C header in $ORT_INCLUDE: the C floor is skipped" | tee "$OUT/floor.log"
  fi
  for round in $(seq 1 "$ROUNDS"); do
    for which in "${jars[@]}"; do
      phase "tiny model, $which, round $round"
      jmh "$(jar_of "$which")" "tiny-$which-$round" 'TinyModelBenchmark|IoBindingBenchmark' \
        "-Dpvn3d.ort.path=$ort116 -Donnxruntime.native.path=$ort116" $TINY_ITER -prof gc
    done
    if [ -x "$fb/add16_floor" ]; then
      "$fb/add16_floor" benchmarks/src/main/resources/add16.onnx 200000 20000 > "$OUT/floor-$round.json" 2>> "$OUT/floor.log"
      cat "$OUT/floor-$round.json"
    fi
  done
fi

if has gc; then
  phase "bytes per call, average-time mode"
  OMP_NUM_THREADS=1 jmh "$after" gc 'TinyModelBenchmark.oursPreallocated|IoBindingBenchmark|DispatchBenchmark' \
    "-Dpvn3d.ort.path=$ort116 -Donnxruntime.native.path=$ort116 -Dpvn3d.ops.path=$(ops_lib)" \
    -p provider=cpu -p node=javaNop,gatherPoints -bm avgt -f 1 -wi 3 -w 1s -i 5 -r 1s -prof gc
fi

if has dispatch; then
  OPS=$(ops_lib)
  for which in "${jars[@]}"; do
    if [ "${DISPATCH_CPU:-1}" != 0 ]; then
      phase "custom-op dispatch, $which: CPU provider (ORT $(cat "$ort116/VERSION"), OMP_NUM_THREADS=1)"
      OMP_NUM_THREADS=1 jmh "$(jar_of "$which")" "dispatch-cpu-$which" DispatchBenchmark \
        "-Dpvn3d.ort.path=$ort116 -Dpvn3d.ops.path=$OPS" -p provider=cpu $DISPATCH_ITER -prof gc
    fi
    [ "${CUDA:-1}" = 0 ] && continue
    phase "custom-op dispatch, $which: CUDA provider, device-resident ($ORT_DIR)"
    jmh "$(jar_of "$which")" "dispatch-cuda-$which" DispatchBenchmark \
      "-Dpvn3d.ort.path=$ort_lib -Dpvn3d.ops.path=$OPS" -p provider=cudaDevice $DISPATCH_ITER -prof gc
  done
fi

full_model() {  # exports the full-size model into FULL_DIR when it is missing
  if [ ! -f "$FULL_DIR/pvn3d_full.onnx" ]; then
    phase "exporting the full-size PVN3D model into $FULL_DIR"
    python3 exporter/export_pvn3d.py --width full --no-verify --bunny-json "$BUNNY_JSON" --out-dir "$FULL_DIR" \
      > "$OUT/export-full.txt" 2>&1 || { tail -20 "$OUT/export-full.txt"; echo "run-overhead: export failed"; }
  fi
}

if has profile && [ "${CUDA:-1}" != 0 ]; then
  OPS=$(ops_lib)
  full_model
  if [ -f "$FULL_DIR/pvn3d_full.onnx" ]; then
    for which in "${jars[@]}"; do
      phase "full model, ORT profile, $which"
      prof=/tmp/pvn3d-node-profile-$which
      "$JAVA" --enable-native-access=ALL-UNNAMED -Dpvn3d.ort.path="$ort_lib" -Dpvn3d.ops.path="$OPS" \
        -Dpvn3d.cache.dir=/tmp/pvn3d-cache -cp "$(jar_of "$which")" org.pvn3d.ort.bench.NodeProfile \
        "$FULL_DIR/pvn3d_full.onnx" "$FULL_DIR/pvn3d_full_sample.bin" cuda 300 100 "$prof" > "$OUT/profile-run-$which.txt" 2>&1
      cat "$OUT/profile-run-$which.txt" | grep -vE "WARNING|session_state"
      file=$(sed -n 's/^profile: //p' "$OUT/profile-run-$which.txt")
      [ -f "$file" ] && python3 benchmarks/scripts/profile_nodes.py "$file" --runs 100 --expect-runs 400 --json "$OUT/profile-$which.json" \
        | tee "$OUT/profile-$which.txt"
    done
  fi
fi

if has hosttime && [ "${CUDA:-1}" != 0 ]; then
  OPS=$(ops_lib)
  full_model
  if [ -f "$FULL_DIR/pvn3d_full.onnx" ]; then
    for which in "${jars[@]}"; do
      # the "before" jar holds NodeHostTime only if make-bench-bundle.sh copied it into that build
      if ! grep -qa 'org/pvn3d/ort/bench/NodeHostTime.class' "$(jar_of "$which")"; then
        echo "run-overhead: $(jar_of "$which") has no NodeHostTime: hosttime $which skipped" | tee "$OUT/hosttime-$which.txt"
        continue
      fi
      phase "full model, custom nodes' host time from JFR, $which"
      "$JAVA" --enable-native-access=ALL-UNNAMED -Dpvn3d.ort.path="$ort_lib" -Dpvn3d.ops.path="$OPS" \
        -Dpvn3d.cache.dir=/tmp/pvn3d-cache -cp "$(jar_of "$which")" org.pvn3d.ort.bench.NodeHostTime \
        "$FULL_DIR/pvn3d_full.onnx" "$FULL_DIR/pvn3d_full_sample.bin" cuda 300 100 "$OUT/hosttime-$which.json" \
        > "$OUT/hosttime-$which.txt" 2>&1
      echo "NodeHostTime $which exit $?"
      grep -vE "WARNING|session_state" "$OUT/hosttime-$which.txt" | tail -25
    done
  fi
fi

if has startup; then
  phase "start-up: process start to the first result (CPU provider, add16), without and with the AOT cache"
  probe=("$JAVA" --enable-native-access=ALL-UNNAMED -Dpvn3d.ort.path="$ort116" -Dpvn3d.cache.dir=/tmp/pvn3d-cache
    -cp "$after" org.pvn3d.ort.bench.StartupProbe 10)
  aot=/tmp/pvn3d-startup.aot
  rm -f "$aot"
  {
    echo "# without a cache (5 processes)"
    for i in 1 2 3 4 5; do s=$(date +%s%N); "${probe[@]}" 2>/dev/null; echo "wall_ms $(( ($(date +%s%N) - s) / 1000000 ))"; done
    echo "# recording the AOT cache (-XX:AOTCacheOutput)"
    "${probe[0]}" -XX:AOTCacheOutput="$aot" -Xlog:aot*=off,cds*=off "${probe[@]:1}" 2>&1 | tail -1
    echo "# with -XX:AOTCache (5 processes)"
    for i in 1 2 3 4 5; do s=$(date +%s%N); "${probe[0]}" -XX:AOTCache="$aot" "${probe[@]:1}" 2>/dev/null
      echo "wall_ms $(( ($(date +%s%N) - s) / 1000000 ))"; done
  } | tee "$OUT/startup.txt"
fi
phase "done"
