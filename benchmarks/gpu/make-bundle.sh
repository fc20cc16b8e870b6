#!/usr/bin/env bash
# Packs what the GPU machine needs to run the Java tests there (it has no Maven and no network): the
# module jars as a user gets them (pvn3d-ops with libpvn3d_ops inside, built here with nvcc for sm_80
# and sm_90 when nvcc is installed), the command line's picocli jar, each module's test classes, the
# JUnit console launcher, and the bunny test data. No ORT inside: the GPU machine uses its own ORT
# build (the GPU kit). Writes .gpubundle/ (ignored by git), which a device call carries. Run from the
# repository root.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
out=.gpubundle
modules=(ffm-bindings runtime pvn3d-ops pvn3d-pipeline)
JUNIT_CONSOLE=org.junit.platform:junit-platform-console-standalone:1.14.1
exclude=$(git rev-parse --git-path info/exclude)   # also right in a git worktree, where .git is a file
mkdir -p "$(dirname "$exclude")"; grep -qxF "/$out/" "$exclude" 2>/dev/null || echo "/$out/" >> "$exclude"
export PATH="$PATH:/usr/local/cuda/bin"
rm -rf "$out"; mkdir -p "$out"
# the modules, and the command line's third-party dependency (picocli) as picocli.jar
mvn -B -q -DskipTests package dependency:copy-dependencies -pl "$(IFS=,; echo "${modules[*]}")" \
  -DincludeGroupIds=info.picocli -Dmdep.stripVersion=true -DoutputDirectory="$top/$out"
mvn -B -q dependency:copy -Dartifact=$JUNIT_CONSOLE -DoutputDirectory="$top/$out" >/dev/null
# the test helpers of the ops module's test jar are needed by the pipeline's tests
for m in "${modules[@]}"; do
  cp "$m/target/$m-0.1.0-SNAPSHOT.jar" "$out/$m.jar"
  # test classes stay folders: the tests open their fixtures as files
  [ -d "$m/target/test-classes" ] && cp -r "$m/target/test-classes" "$out/test-classes-$m"
done
# the native custom-op library the runtime's tests register: onnxruntime-extensions' linux-x64 library
# only (its jar also carries the macOS and Windows builds), at the version the runtime's pom names
# (dependency:copy of the pom's version: resolving the runtime module's dependencies would need ffm-bindings in ~/.m2)
ext_version=$(mvn -B -q help:evaluate -Dexpression=ort.extensions.version -DforceStdout -N | sed 's/\x1b\[[0-9;]*m//g')
mvn -B -q dependency:copy -Dartifact="com.microsoft.onnxruntime:onnxruntime-extensions:$ext_version" \
  -DoutputDirectory="$top/$out/deps" >/dev/null
unzip -q -o "$out"/deps/onnxruntime-extensions-*.jar 'ai/onnxruntime/extensions/native/linux-x64/*' -d "$out/onnxruntime-extensions"
rm -rf "$out/deps"
cp pvn3d-ops/target/cmake/bunny_positions.txt "$out/" 2>/dev/null || bash cuda-ops/tests/fetch_bunny.sh "$out"
# the bunny mesh for exporting the PVN3D model there (no npm on the GPU machine)
cp "$(bash exporter/fetch_bunny.sh)" "$out/bunny.json"
# the 200 held-out scenes of the shipped model's accuracy report (MODEL.md), made here so that the GPU
# machine evaluates the same files (about 12 MB; needs Debian's python3-torch)
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  (cd exporter && OMP_WAIT_POLICY=PASSIVE /usr/bin/python3 make_dataset.py --split test --start 0 --count 200 \
    --out "$top/$out/heldout-200" --bunny-json "$top/$out/bunny.json" | tail -1)
fi
du -sh "$out"; ls -la "$out"
