#!/usr/bin/env bash
# The Spark job on the GPU machine: standalone executors in local-cluster mode, one GPU each, assigned by
# Spark's resource scheduling (each worker's discovery script hands it the next device), on held-out
# scenes made here; then the session pool on the same devices for comparison, and a run in which one
# worker is handed a device that does not exist. Needs the Spark kit (make-spark-kit.sh, then
# install-spark-kit.sh: /opt/sparkkit), the GPU kit's ORT (/opt/gpukit/ort) and, for the rows and the
# pool, .gpubundle (make-bundle.sh). Writes to $OUT (default ./gpu-results):
#   spark-gpus.txt    the runs' output        spark-gpus.json  [{run, gpus, executors, cores, rows, seconds, rows_per_s, failed}]
#   pool-*.txt/json   (part pool) run-pool-bench.sh on the same devices, tiny model
#
#   PARTS="rows one two fail pool" ROWS=2000 CORES=4 bash benchmarks/gpu/run-spark-gpus.sh
#   environment: DEVICES (default: every GPU nvidia-smi lists, e.g. "0 1"), CORES per executor (4), MEM_MB per
#   executor (8192), EP (auto: the assigned GPU), SPARK_KIT (/opt/sparkkit), ORT_DIR (/opt/gpukit/ort)
# With EP=cpu it runs on a machine without a GPU (the resources are still assigned), to check the setup.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
PARTS=${PARTS:-rows one two fail pool}
part() { [[ " $PARTS " == *" $1 "* ]]; }
SPARK_KIT=${SPARK_KIT:-/opt/sparkkit}; ORT_DIR=${ORT_DIR:-/opt/gpukit/ort}
OUT=${OUT:-$top/gpu-results}; ROWS=${ROWS:-2000}; CORES=${CORES:-4}; MEM_MB=${MEM_MB:-8192}; EP=${EP:-auto}
DEVICES=${DEVICES:-$(nvidia-smi -L 2>/dev/null | awk -F'[ :]' '/^GPU/ {printf "%s ", $2}')}
DEVICES=${DEVICES:-0}
rows_dir=${ROWS_DIR:-/tmp/pvn3d-spark-rows}
mkdir -p "$OUT"
[ -x "$SPARK_KIT/jre/bin/java" ] || { echo "run-spark-gpus: no Spark kit at $SPARK_KIT (make-spark-kit.sh, install-spark-kit.sh)" >&2; exit 1; }
export SPARK_HOME=$SPARK_KIT SPARK_SCALA_VERSION=2.13 JAVA_HOME=$SPARK_KIT/jre
# Spark 4 starts each executor JVM with --add-modules=jdk.incubator.vector: a runtime without it (a kit made
# before make-spark-kit.sh added it) lets no executor boot, and the job would wait forever
"$JAVA_HOME/bin/java" --list-modules | grep -q '^jdk\.incubator\.vector@' || {
  echo "run-spark-gpus: $JAVA_HOME lacks jdk.incubator.vector, which Spark's executors need: make the kit again (make-spark-kit.sh)" >&2; exit 1; }
# the executors are processes of their own: they find ORT and CUDA through the environment they inherit
export PVN3D_ORT_PATH=$ORT_DIR LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
log=$OUT/spark-gpus.txt
json=$OUT/spark-gpus.json
: > "$log"; echo "[]" > "$json"

if part rows && [ ! -f "$rows_dir/index.json" ]; then
  echo "== $ROWS held-out scenes (test split) for the tiny model" | tee -a "$log"
  "${PYTHON:-python3}" exporter/make_dataset.py --split test --start 0 --count "$ROWS" --device "$([ "$EP" = cpu ] && echo cpu || echo cuda)" \
    --bunny-json .gpubundle/bunny.json --out "$rows_dir" 2>&1 | tail -1 | tee -a "$log"
fi

# spark_run NAME ADDRESSES...: one worker (one executor of CORES cores) per address, each address handed out by the
# discovery script in the order the workers start
spark_run() {
  local name=$1; shift
  local n=$# disc=/tmp/pvn3d-gpu-discover-$name.sh
  printf '%s\n' "$@" > "/tmp/pvn3d-gpu-discover-$name.list"
  rm -f "/tmp/pvn3d-gpu-discover-$name.next"
  cat > "$disc" <<SCRIPT
#!/usr/bin/env bash
# Spark worker GPU discovery: the next address of the list, once each (a lock, as the workers start together)
exec 9> /tmp/pvn3d-gpu-discover-$name.lock; flock 9
i=\$(cat /tmp/pvn3d-gpu-discover-$name.next 2>/dev/null || echo 0)
echo \$((i + 1)) > /tmp/pvn3d-gpu-discover-$name.next
addr=\$(sed -n "\$((i % $n + 1))p" /tmp/pvn3d-gpu-discover-$name.list)
echo "{\"name\": \"gpu\", \"addresses\": [\"\$addr\"]}"
SCRIPT
  chmod +x "$disc"
  echo "== spark $name: local-cluster[$n,$CORES,$MEM_MB], GPUs $*, ep $EP, $ROWS rows" | tee -a "$log"
  local out=/tmp/pvn3d-spark-out-$name t0 rc
  rm -rf "$out"; t0=$(date +%s)
  "$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -Xmx8g \
    -Dspark.worker.resource.gpu.amount=1 -Dspark.worker.resource.gpu.discoveryScript="$disc" \
    -Dspark.executor.resource.gpu.amount=1 -Dspark.task.resource.gpu.amount="$(awk "BEGIN {print 1 / $CORES}")" \
    -Dspark.executor.memory="$((MEM_MB * 3 / 4))m" -Dspark.task.maxFailures=4 -Dspark.excludeOnFailure.enabled=true \
    -cp "$SPARK_KIT/jars/*" org.pvn3d.ort.spark.Pvn3dSparkMain --input "$rows_dir" --output "$out" --ep "$EP" \
    --master "local-cluster[$n,$CORES,$MEM_MB]" --partitions $((n * CORES * 4)) --no-table > "/tmp/pvn3d-spark-$name.txt" 2>&1 &
  local pid=$! app
  # an executor JVM that exits at once is relaunched by its worker without end while the job waits for
  # resources: stop after n + 8 executor launches and show why the first one ended
  while kill -0 "$pid" 2>/dev/null; do
    sleep 2
    app=$(ls -d "$SPARK_KIT"/work/app-* 2>/dev/null | tail -1)
    if [ -n "$app" ] && [ "$app" -nt "$disc" ] && [ "$(ls "$app" | wc -l)" -gt $((n + 8)) ]; then
      echo "run-spark-gpus: the executors keep exiting ($(ls "$app" | wc -l) launched); the first one's stdout and stderr ($app/0) end:" | tee -a "$log"
      { tail -5 "$app/0/stdout"; grep -vE "^\s+at |^Spark Executor Command|^=+$|^$" "$app/0/stderr" | tail -5; } 2>/dev/null | cut -c1-300 | tee -a "$log"
      kill "$pid"
      break
    fi
  done
  wait "$pid"
  rc=$?
  grep -vE "^\s+at |^[0-9/: ]+(INFO|WARN)|WARNING" "/tmp/pvn3d-spark-$name.txt" | tail -15 | tee -a "$log"
  echo "exit $rc, $(( $(date +%s) - t0 )) s with start-up; executors' stderr: $(ls -d "$SPARK_KIT"/work/app-* 2>/dev/null | tail -1)" | tee -a "$log"
  # the job's summary line: "N row(s) in S s: R rows/s (F failed); poses: ..."
  python3 - "$json" "$name" "$n" "$CORES" "/tmp/pvn3d-spark-$name.txt" "$*" <<'PY'
import json, re, sys
path, name, n, cores, txt, gpus = sys.argv[1:]
m = re.search(r"(\d+) row\(s\) in ([0-9.]+) s: ([0-9.]+) rows/s \((\d+) failed\)", open(txt, errors="replace").read())
rows = json.load(open(path))
rows.append(dict(run=name, gpus=gpus.split(), executors=int(n), cores=int(cores),
                 rows=int(m.group(1)) if m else None, seconds=float(m.group(2)) if m else None,
                 rows_per_s=float(m.group(3)) if m else None, failed=int(m.group(4)) if m else None))
json.dump(rows, open(path, "w"), indent=1)
PY
}

if { part one || part two || part fail; } && [ ! -f "$rows_dir/index.json" ]; then
  echo "run-spark-gpus: no scenes in $rows_dir (part rows makes them: torch, .gpubundle/bunny.json)" | tee -a "$log" >&2; exit 1
fi
read -r -a devs <<< "$DEVICES"
part one && spark_run one "${devs[0]}"
part two && [ "${#devs[@]}" -ge 2 ] && spark_run two "${devs[0]}" "${devs[1]}"
# one worker is handed a device this process cannot open: its tasks fail and Spark retries them on the other
part fail && spark_run fail "${devs[0]}" 97
if part pool && [ "$EP" != cpu ]; then
  for d in "${devs[0]}" "$(IFS=,; echo "${devs[*]:0:2}")"; do
    OUT=$OUT/pool-$d DEVICES=$d SESSIONS=1 FRAMES=$ROWS bash benchmarks/gpu/run-pool-bench.sh 2>&1 | tail -8 | tee -a "$log"
  done
fi
cat "$json"
