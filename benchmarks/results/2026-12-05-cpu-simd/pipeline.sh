#!/usr/bin/env bash
# The main job (the tiny PVN3D model on its sample, CPU provider) with every stage a median of 60 warm runs
# (the command line since this change), on the base commit's library and on this one's, two rounds each,
# interleaved. BASE_LIB: libpvn3d_ops.so built from f549901 (ab.sh builds one; CPU-only, Release).
set -euo pipefail
repo=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
cd "$repo"
export JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64} PATH=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin:$PATH
./pvn3d-ort --help >/dev/null  # builds the launcher first if the sources changed
stages() { ./pvn3d-ort --warmup 5 --runs 60 2>&1 | grep -E '^  (inference|voting|clustering|fit|refinement|metrics) ' | cut -c1-80; }
for r in 1 2; do
  echo "== round $r, library of f549901"; PVN3D_OPS_PATH="$BASE_LIB" stages
  echo "== round $r, library of this commit"; stages
done
