#!/usr/bin/env bash
# A/B on this machine: the CPU pipeline's inference with ORT's intra-op threads spinning (ORT's default) or not
# (session.intra_op.allow_spinning=0, set here through a temporary -Dhack.spin switch in the same build), beside
# one intra-op thread and OpenMP's passive wait policy. Interleaved rounds, one process per line.
cd /work/main
export JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64 PATH=/usr/lib/jvm/temurin-25-jdk-amd64/bin:$PATH
main() { ./pvn3d-ort --warmup 5 --runs 60 "$@" 2>&1 | grep '  inference' | sed 's/rgb \[.*median/median/; s/, after 5 untimed warm-up run(s))//'; }
pn2() { ./pvn3d-ort pointnet2 --warmup 5 --runs 60 "$@" 2>&1 | grep 'latency over'; }
for r in 1 2 3 4 5; do
  echo "== round $r"
  echo "main  spinning (ORT default)      $(main)"
  echo "main  allow_spinning=0            $(JAVA_OPTS=-Dhack.spin=0 main)"
  echo "main  --threads 1                 $(main --threads 1)"
  echo "main  OMP_WAIT_POLICY=PASSIVE     $(OMP_WAIT_POLICY=PASSIVE main)"
  echo "pn2   spinning (ORT default)      $(pn2)"
  echo "pn2   allow_spinning=0            $(JAVA_OPTS=-Dhack.spin=0 pn2)"
  echo "pn2   --threads 1                 $(pn2 --threads 1)"
  echo "pn2   OMP_WAIT_POLICY=PASSIVE     $(OMP_WAIT_POLICY=PASSIVE pn2)"
done
