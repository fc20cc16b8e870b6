#!/usr/bin/env bash
# Packs what the GPU machine needs to run the Java tests there (it has no Maven and no network):
# the compiled classes and test classes (without the bundled ORT 1.16 natives: the GPU machine uses
# its own ORT build), the JUnit console launcher, and the bunny test data. Writes .gpubundle/
# (ignored by git), which a device call carries. Run from the repository root after `mvn -DskipTests
# test-compile` (this script runs it).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
out=.gpubundle
JUNIT_CONSOLE=org.junit.platform:junit-platform-console-standalone:1.14.1
grep -qxF "/$out/" .git/info/exclude 2>/dev/null || echo "/$out/" >> .git/info/exclude
mvn -B -q -DskipTests test-compile -pl ffm-bindings,cuda-ops,runtime
mvn -B -q dependency:copy -Dartifact=$JUNIT_CONSOLE -DoutputDirectory="$top/$out" >/dev/null
mkdir -p "$out"
# the runtime's classes and resources, minus ORT's native libraries
( cd runtime/target/classes && find . -type f ! -path './org/pvn3d/ort/native/*' | sed 's|^\./||' > "$top/$out/runtime-files.txt" \
  && jar --create --file "$top/$out/runtime-classes.jar" @"$top/$out/runtime-files.txt" )
# test classes stay a folder: the tests open their fixtures as files
rm -rf "$out/test-classes" "$out/runtime-test-classes.jar"
cp -r runtime/target/test-classes "$out/test-classes"
( cd ffm-bindings/target/classes && jar --create --file "$top/$out/ffm-bindings.jar" . )
rm -f "$out/runtime-files.txt"
cp cuda-ops/target/cmake/bunny_positions.txt "$out/" 2>/dev/null || bash cuda-ops/tests/fetch_bunny.sh "$out"
# the bunny mesh for exporting the PVN3D model there (no npm on the GPU machine)
cp "$(bash exporter/fetch_bunny.sh)" "$out/bunny.json"
du -sh "$out"; ls -la "$out"
