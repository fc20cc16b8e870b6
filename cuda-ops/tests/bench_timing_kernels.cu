// Two kernels the bench times the operators with (pvn3d_bench_cuda), not operators themselves:
//
// - hold_stream: keeps a stream busy for a given time. Launched before a timed call's event pair, it lets
//   the host queue the start event, the operator's launch and the stop event while the GPU is still busy,
//   so the pair measures the kernel on the GPU alone. Without it the start event fires at once on an idle
//   GPU and the pair also counts the 2.5-4 us (H200) the host spends launching the kernel (the same technique as
//   NVBench's blocking kernel). The bench prints both: the per-call pair of perf-targets.md and this one.
// - gather_rows_reference: GatherPoints the textbook way, one thread block per (batch, channel) row and
//   its threads striding over the M picks with 32-bit indices: the launch shape of the original pointnet2
//   kernel, which the issue says ours must never be slower than. Written here to be timed beside ours at
//   every size in one process (it checks nothing: its inputs are the bench's valid indices).
#include <cuda_runtime.h>

#include <cstdint>

namespace {

__global__ void hold_stream_kernel(unsigned long long ns) {
  unsigned long long start;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  unsigned long long now = start;
  while (now - start < ns) asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
}

__global__ void gather_rows_reference_kernel(int N, int M, const float* __restrict__ features,
                                             const int* __restrict__ idx, float* __restrict__ out) {
  const int64_t b = blockIdx.x, C = gridDim.y, c = blockIdx.y;
  const float* row = features + (b * C + c) * N;
  const int* picks = idx + b * M;
  float* o = out + (b * C + c) * M;
  for (int j = threadIdx.x; j < M; j += blockDim.x) o[j] = row[picks[j]];
}

}  // namespace

extern "C" int pvn3d_bench_hold_stream(void* stream, double microseconds) {
  hold_stream_kernel<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(
      static_cast<unsigned long long>(microseconds * 1000.0));
  return static_cast<int>(cudaPeekAtLastError());
}

extern "C" int pvn3d_bench_gather_rows_reference(int64_t B, int64_t C, int64_t N, int64_t M, const float* features,
                                                 const int* idx, float* out, void* stream) {
  int threads = 1;
  while (threads * 2 <= M && threads < 512) threads *= 2;  // the largest power of two <= M, at most 512
  gather_rows_reference_kernel<<<dim3(static_cast<unsigned>(B), static_cast<unsigned>(C)), threads, 0,
                                 static_cast<cudaStream_t>(stream)>>>(static_cast<int>(N), static_cast<int>(M), features,
                                                                      idx, out);
  return static_cast<int>(cudaPeekAtLastError());
}
