#!/usr/bin/env bash
# How these figures were made (on the 2-core build machine, nothing else of ours running):
#   before: git archive 143afc7 into /tmp/before; there: mvn -o -DskipTests -Dpvn3d.cuda=OFF package -pl benchmarks -am
#   after:  the same in the checkout at a50e45d; each benchmarks.jar copied to /tmp/bench-{before,after}/
#   ORT:    libonnxruntime.so and libonnxruntime4j_jni.so of com.microsoft.onnxruntime:onnxruntime:1.16.3 in /tmp/ort116
# Three rounds, before and after alternating (one fork each), then one fork of "after" with a JFR recording of
# the JDK's default settings running (the project's events are on in it).
set -u
J=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
ORT=/tmp/ort116
B='TinyModelBenchmark.(oursPreallocated|oursReuseInputs)$'
for round in 1 2 3; do
  for which in before after; do
    $J -jar /tmp/bench-$which/benchmarks.jar "$B" -f 1 -prof gc -jvmArgsPrepend "-Dpvn3d.ort.path=$ORT -Donnxruntime.native.path=$ORT" \
      -rf json -rff jmh-$which-$round.json
  done
done
$J -jar /tmp/bench-after/benchmarks.jar "$B" -f 1 -prof gc \
  -jvmArgsPrepend "-Dpvn3d.ort.path=$ORT -Donnxruntime.native.path=$ORT -XX:StartFlightRecording=settings=default,filename=recording.jfr" \
  -rf json -rff jmh-after-recording.json
