#!/usr/bin/env bash
# Packs what the GPU machine needs to run the benchmark suite (it has no Maven and no network) into
# .benchbundle/ (ignored by git; about 25 MB), which a device call carries:
#   benchmarks.jar   the JMH benchmarks as one runnable jar (no native libraries inside)
#   ort116/          ORT 1.16.3's libonnxruntime.so and libonnxruntime4j_jni.so (linux-x64), from the
#                    official com.microsoft.onnxruntime:onnxruntime jar: the tiny-model comparison
#                    points both Java APIs at this one library, and the C floor links against it
#   ort-include/     ORT's C API header folder, copied from ORT_INCLUDE (the first argument) when
#                    given: the C floor (benchmarks/native/add16_floor.c) is compiled from it there.
#                    It must be a 1.16 header (API version 16). Never committed.
#   base/            with BASE_REV=<git revision>: the "before" benchmarks jar for run-overhead.sh, built
#                    from that revision (git archive into a temporary folder) with this checkout's
#                    overhead benchmarks (DispatchBenchmark, StartupProbe, NodeProfile and their models,
#                    which use only API both have), and base/REVISION
# Run from anywhere in the checkout, on the build machine:
#   bash benchmarks/gpu/make-bench-bundle.sh [ORT_INCLUDE]     a folder holding ORT 1.16's onnxruntime_c_api.h
#   BASE_REV=143afc7 bash benchmarks/gpu/make-bench-bundle.sh [ORT_INCLUDE]
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
out=.benchbundle
ORT_INCLUDE=${1:-${ORT_INCLUDE:-}}
# Maven needs a JDK 22+: JAVA_HOME, else this machine's Temurin 25 if the default java is older
if [ -z "${JAVA_HOME:-}" ] && [ -d /usr/lib/jvm/temurin-25-jdk-amd64 ]; then
  export JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64
fi
exclude=$(git rev-parse --git-path info/exclude)   # also right in a git worktree, where .git is a file
mkdir -p "$(dirname "$exclude")"; grep -qxF "/$out/" "$exclude" 2>/dev/null || echo "/$out/" >> "$exclude"
mvn -B -q -DskipTests package -pl benchmarks -am
# the ORT version of the runtime's default (and of the benchmarks' JNI dependency)
ver=$(sed -n 's|.*<ort.version>\(.*\)</ort.version>.*|\1|p' pom.xml | head -1)
jar=$HOME/.m2/repository/com/microsoft/onnxruntime/onnxruntime/$ver/onnxruntime-$ver.jar
[ -f "$jar" ] || mvn -B -q dependency:get -Dartifact=com.microsoft.onnxruntime:onnxruntime:$ver
rm -rf "$out/ort116" "$out/ort-include"
mkdir -p "$out/ort116"
cp benchmarks/target/benchmarks.jar "$out/"
tmp=$(mktemp -d)
unzip -q -o "$jar" 'ai/onnxruntime/native/linux-x64/*' -d "$tmp"
cp "$tmp"/ai/onnxruntime/native/linux-x64/libonnxruntime.so "$tmp"/ai/onnxruntime/native/linux-x64/libonnxruntime4j_jni.so "$out/ort116/"
rm -rf "$tmp"
echo "$ver" > "$out/ort116/VERSION"
if [ -n "$ORT_INCLUDE" ]; then
  [ -f "$ORT_INCLUDE/onnxruntime_c_api.h" ] || { echo "make-bench-bundle: no onnxruntime_c_api.h in $ORT_INCLUDE" >&2; exit 1; }
  mkdir -p "$out/ort-include" && cp -r "$ORT_INCLUDE"/. "$out/ort-include/"
fi
rm -rf "$out/base"
if [ -n "${BASE_REV:-}" ]; then
  src=$(mktemp -d)
  git archive "$BASE_REV" | tar -x -C "$src"
  for f in DispatchBenchmark StartupProbe NodeProfile; do
    cp benchmarks/src/main/java/org/pvn3d/ort/bench/$f.java "$src/benchmarks/src/main/java/org/pvn3d/ort/bench/"
  done
  cp benchmarks/src/main/resources/bench-models/dispatch_*.onnx "$src/benchmarks/src/main/resources/bench-models/"
  (cd "$src" && mvn -B -q -DskipTests package -pl benchmarks -am)
  mkdir -p "$out/base"
  cp "$src/benchmarks/target/benchmarks.jar" "$out/base/"
  git rev-parse --short "$BASE_REV" > "$out/base/REVISION"
  rm -rf "$src"
fi
du -sh "$out"; ls -la "$out" "$out/ort116"
