set -u
bash .gpukit/p0/install-kit.sh .gpukit/p0 > $OUT/kit-p0.txt 2>&1; echo "kit p0 exit $?"
mkdir -p .gpuwork && tar -C .gpuwork -xJf .gpunative/native.tar.xz
n=.gpuwork/native; export LD_LIBRARY_PATH=$n:/usr/local/cuda/lib64
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $OUT/machine.txt
OUT=$OUT/native bash benchmarks/gpu/run-native.sh 2>&1 | tail -30
for r in 1 2; do for k in staged transposed; do echo "== $k round $r"; PVN3D_THREE_INTERPOLATE=$k $n/pvn3d_bench_cuda --only ThreeInterpolate 2>&1 | grep ThreeInterp | grep -v "no index"; done; done > $OUT/fp-staged-transposed.txt
cat $OUT/fp-staged-transposed.txt
$n/pvn3d_bench_cuda --only GatherPoints > $OUT/gather-2.txt 2>&1; echo "gather again exit $?"
grep -E "GatherPoints|ThreeNN|ThreeInterpolate B=1 C=128|BallQuery B=1" $OUT/native/bench-cuda.txt | grep -v "no index"
export PVN3D_BUNNY_FILE=$n/bunny_positions.txt PVN3D_REQUIRE_BUNNY=1 PVN3D_TEST_SMALL=1
for t in three_interpolate; do for tool in memcheck racecheck; do for k in transposed staged; do
  PVN3D_THREE_INTERPOLATE=$k timeout 60 /usr/local/cuda/bin/compute-sanitizer --tool $tool --error-exitcode 9 $n/pvn3d_test_$t > $OUT/san-$t-$tool-$k.txt 2>&1
  echo "sanitizer $t $tool $k exit $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/san-$t-$tool-$k.txt | tail -1)"
done; done; done
