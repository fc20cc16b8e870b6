// The floor under a launcher's host cost (pvn3d_bench_cuda --host): kernels that do nothing, launched
// the way the operators launch theirs (a small grid and no arguments; a full grid with an argument block
// of the operators' size; the same with 100 KB of dynamic shared memory, as the staged gathers). What a
// launcher costs above these lines is ours; what they cost is the CUDA runtime and driver's.
#include <cuda_runtime.h>

namespace {

struct Args {  // about what the staged gather passes: pointers, sizes, a plan
  const void* p[5];
  long long n[6];
  int k[2];
};

__global__ void empty_kernel() {}

__global__ void empty_args_kernel(Args a) {
  if (a.k[0] == 123456789) asm volatile("trap;");  // never: keeps the argument block alive
}

__global__ void empty_smem_kernel(Args a) {
  extern __shared__ float smem[];
  if (a.k[0] == 123456789) smem[threadIdx.x] = 1.f;
}

}  // namespace

extern "C" int pvn3d_bench_launch_baseline(int which, void* stream) {
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  const Args a{};
  constexpr int kSmem = 100 * 1024;
  switch (which) {
    case 0:
      empty_kernel<<<1, 32, 0, s>>>();
      break;
    case 1:
      empty_args_kernel<<<264, 512, 0, s>>>(a);
      break;
    default: {
      static const cudaError_t set = cudaFuncSetAttribute(empty_smem_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
      if (set != cudaSuccess) return static_cast<int>(set);
      empty_smem_kernel<<<264, 512, kSmem, s>>>(a);
    }
  }
  return static_cast<int>(cudaPeekAtLastError());
}
