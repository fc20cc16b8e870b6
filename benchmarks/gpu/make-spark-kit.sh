#!/usr/bin/env bash
# Packs what the Spark job needs on the GPU machine, which has no Maven and no network, and whose GPU kit
# runtime lacks modules Spark and Hadoop load (java.desktop's java.beans, jdk.security.auth): a Java 25
# runtime of java.se plus the JDK modules Spark uses, and the pvn3d-spark job's class path (Spark 4.2 and
# its dependencies, the project's jars), without ONNX Runtime (the GPU kit's build is used there) and
# without what the job never loads (rocksdbjni: 72 MB, Spark's disk-backed UI store). Writes
# .sparkkit/p0 ... pN (ignored by git), PART_MB (default 34) MB each, for device calls of at most 64 MiB
# beside the tree:
#   bash benchmarks/gpu/install-spark-kit.sh .sparkkit/p0            (one call each, p0 ... pN-1)
#   bash benchmarks/gpu/install-spark-kit.sh --finish .sparkkit/pN   -> /opt/sparkkit/{jre,jars}
# Run from the repository root (builds the project through the pvn3d-spark launcher when needed).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
JDK=${JDK:-/usr/lib/jvm/temurin-25-jdk-amd64}
out=$top/.sparkkit
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
exclude=$(git rev-parse --git-path info/exclude)
grep -qxF "/.sparkkit/" "$exclude" 2>/dev/null || echo "/.sparkkit/" >> "$exclude"
# the launcher builds the project and writes the job's class path (Spark included) when sources changed
JAVA_HOME=$JDK pvn3d-spark/bin/pvn3d-spark --help > /dev/null
app=$(ls pvn3d-spark/target/pvn3d-spark-*.jar | grep -v -- '-tests\.jar$' | head -1)
mkdir -p "$stage/sparkkit/jars"
for j in $app $(tr ':' ' ' < pvn3d-spark/target/launcher.classpath); do
  case "$(basename "$j")" in
    onnxruntime*|rocksdbjni-*|junit-*|opentest4j-*|apiguardian-*|*-tests.jar) ;;
    *.jar) cp "$j" "$stage/sparkkit/jars/" ;;
  esac
done
# jdk.incubator.vector: Spark 4 starts every standalone / local-cluster executor JVM with
# --add-modules=jdk.incubator.vector (JavaModuleOptions); a runtime without it fails at boot ("Module
# jdk.incubator.vector not found"), the worker relaunches the executor at once, and the job waits forever
"$JDK/bin/jlink" --add-modules java.se,jdk.unsupported,jdk.security.auth,jdk.crypto.ec,jdk.zipfs,jdk.management,jdk.jfr,jdk.management.jfr,jdk.incubator.vector \
  --strip-debug --no-header-files --no-man-pages --output "$stage/sparkkit/jre"
git rev-parse --short HEAD > "$stage/sparkkit/REVISION"
echo "make-spark-kit: $(ls "$stage/sparkkit/jars" | wc -l) jars ($(du -sh "$stage/sparkkit/jars" | cut -f1)), runtime $(du -sh "$stage/sparkkit/jre" | cut -f1); packing (xz)"
rm -rf "$out"; mkdir -p "$out/split"
tar -C "$stage" -cf - sparkkit | xz -T0 -6 | split -b "$(( ${PART_MB:-34} * 1000000 ))" -d -a 2 - "$out/split/sparkkit.part"
i=0
for part in "$out"/split/sparkkit.part*; do mkdir -p "$out/p$i"; mv "$part" "$out/p$i/"; i=$((i + 1)); done
rmdir "$out/split"
echo "make-spark-kit: $i parts: $(cd "$out" && ls -d p[0-9]* | tr '\n' ' ')(the last with --finish)"
