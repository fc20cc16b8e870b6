#!/usr/bin/env bash
# On the GPU machine, from the checkout root: stages the parts of make-spark-kit.sh that a call carried;
# with --finish joins every staged part and unpacks them into $SPARK_KIT (default /opt/sparkkit): the
# runtime in jre/, the job's jars in jars/ (also what local-cluster executors load as SPARK_HOME/jars).
#   bash benchmarks/gpu/install-spark-kit.sh [--finish] PARTDIR...
set -euo pipefail
SPARK_KIT=${SPARK_KIT:-/opt/sparkkit}; stage=${SPARK_KIT}-stage
finish=0; [ "${1:-}" = "--finish" ] && { finish=1; shift; }
mkdir -p "$stage"
for d in "$@"; do cp "$d"/sparkkit.part* "$stage"/; done
ls "$stage"
if [ $finish = 1 ]; then
  tmp=$(mktemp -d)
  cat "$stage"/sparkkit.part* | xz -dc | tar -C "$tmp" -xf -
  rm -rf "$SPARK_KIT"; mkdir -p "$(dirname "$SPARK_KIT")"; mv "$tmp/sparkkit" "$SPARK_KIT"
  rm -rf "$stage" "$tmp"
  "$SPARK_KIT/jre/bin/java" -version 2>&1 | head -1
  echo "install-spark-kit: ready: $SPARK_KIT ($(ls "$SPARK_KIT/jars" | wc -l) jars, revision $(cat "$SPARK_KIT/REVISION"))"
fi
