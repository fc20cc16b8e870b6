#!/usr/bin/env bash
# After the change (no switch): the pipelines' CPU sessions now set session.intra_op.allow_spinning=0 themselves.
cd /work/main
export JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64 PATH=/usr/lib/jvm/temurin-25-jdk-amd64/bin:$PATH
main() { ./pvn3d-ort --warmup 5 --runs 60 "$@" 2>&1 | grep '  inference' | sed 's/rgb \[.*median/median/; s/, after 5 untimed warm-up run(s))//'; }
pn2() { ./pvn3d-ort pointnet2 --warmup 5 --runs 60 "$@" 2>&1 | grep 'latency over'; }
for r in 1 2 3; do
  echo "== round $r"
  echo "main  new default                 $(main)"
  echo "pn2   new default                 $(pn2)"
done
