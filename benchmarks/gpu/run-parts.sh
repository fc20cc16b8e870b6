#!/usr/bin/env bash
# Several of the GPU scripts in one device call, each in its own results folder and under its own time
# limit, everything packed at the end into $OUT/results.tar.gz (the device tool brings back at most 8
# files). For a session whose device time is short: the parts run in the order given, and a part that
# outruns its limit is stopped without taking the others with it.
#
#   PARTS="heldout:150 pool:100 profiling:200 dispatch:150 junit:90" bash benchmarks/gpu/run-parts.sh
#
# Parts (NAME:SECONDS):
#   heldout    run-gpu-checks.sh PARTS="cli heldout": the main job and the 200 held-out scenes, CUDA provider
#   pool       run-pool-bench.sh with SESSIONS=1,2 (tiny model)
#   profiling  run-profiling.sh (the full-size model's profile summary, the tiny model's, Nsight Compute on NVTX)
#   dispatch   run-overhead.sh PARTS="machine dispatch profile", CUDA only, after only: custom-op dispatch on
#              the CUDA provider and the full model's per-node host times (needs .benchbundle/benchmarks.jar)
#   junit      run-gpu-checks.sh PARTS=junit: the Java suite on the GPU
#   native     run-gpu-checks.sh PARTS="native bench": the native library built there, its ctest, the kernel timings
#   sanitizer  run-gpu-checks.sh PARTS=sanitizer: compute-sanitizer memcheck and racecheck over the CUDA tests (after native)
#   f2p        run-frame-to-pose.sh: frame to pose per precision, batch, CUDA graph, in flight; held-out accuracy per precision
#              (its own parts from F2P_PARTS: PARTS here names run-parts' parts)
# Needs the GPU kit (/opt/gpukit) and .gpubundle (make-bundle.sh); a call carries .gpubundle and, for
# dispatch, .benchbundle.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
OUT=${OUT:-$top/gpu-results}
PARTS=${PARTS:-heldout:150 pool:100 profiling:200 dispatch:150 junit:90}
work=/tmp/pvn3d-parts
rm -rf "$work"; mkdir -p "$work" "$OUT"
# libpvn3d_ops as the pvn3d-ops jar carries it (CUDA, sm_80/sm_90, NVTX ranges): the overhead script's
# OPS_LIB, so that it does not build its own
ops=$work/ops; mkdir -p "$ops"
python3 -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); [z.extract(n, sys.argv[2]) for n in z.namelist() if n.endswith("libpvn3d_ops.so")]' \
  "$top/.gpubundle/pvn3d-ops.jar" "$ops"
ops_lib=$(find "$ops" -name libpvn3d_ops.so | head -1)
t0=$(date +%s)
for p in $PARTS; do
  name=${p%%:*}; limit=${p#*:}
  [ "$limit" = "$p" ] && limit=120
  dir=$work/$name; mkdir -p "$dir"
  echo "=== $name (limit $limit s, at $(( $(date +%s) - t0 )) s)"
  case $name in
    heldout)   cmd=(env OUT="$dir" PARTS="cli heldout" bash benchmarks/gpu/run-gpu-checks.sh) ;;
    junit)     cmd=(env OUT="$dir" PARTS="junit" bash benchmarks/gpu/run-gpu-checks.sh) ;;
    native)    cmd=(env OUT="$dir" PARTS="native bench" bash benchmarks/gpu/run-gpu-checks.sh) ;;
    sanitizer) cmd=(env OUT="$dir" PARTS="sanitizer" bash benchmarks/gpu/run-gpu-checks.sh) ;;
    f2p)       cmd=(env OUT="$dir" FRAMES="${FRAMES:-500}" PARTS="${F2P_PARTS:-export full inflight nhwc breakdown tiny}"
                   bash benchmarks/gpu/run-frame-to-pose.sh) ;;
    pool)      cmd=(env OUT="$dir" SESSIONS="${SESSIONS:-1,2}" bash benchmarks/gpu/run-pool-bench.sh) ;;
    profiling) cmd=(env OUT="$dir" bash benchmarks/gpu/run-profiling.sh) ;;
    dispatch)  cmd=(env OUT="$dir" PARTS="machine dispatch profile" DISPATCH_CPU=0 OPS_LIB="$ops_lib"
                    DISPATCH_ITER="${DISPATCH_ITER:--f 2 -wi 3 -w 1s -i 5 -r 1s}"
                    BUNNY_JSON="$top/.gpubundle/bunny.json" bash benchmarks/gpu/run-overhead.sh) ;;
    *) echo "run-parts: no part $name"; continue ;;
  esac
  timeout --kill-after=10 "$limit" "${cmd[@]}" > "$dir/console.txt" 2>&1
  rc=$?
  [ $rc = 124 ] && echo "(stopped at its time limit)" >> "$dir/console.txt"
  echo "$name exit $rc after $(( $(date +%s) - t0 )) s"
  tail -25 "$dir/console.txt"
done
tar -C "$work" -czf "$OUT/results.tar.gz" --exclude=ops .
ls -la "$OUT"
