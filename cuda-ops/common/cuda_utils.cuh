/*
 * CUDA helpers for launchers (internal; include only from .cu files).
 *
 *   cuda_status(err, op, what)   PVN3D_OK for cudaSuccess, else PVN3D_ERR_CUDA with
 *                                "<op>: <what> failed: <cudaErrorName>: <cudaErrorString>".
 *   clear_stale_error()          call before a launch: drops a non-sticky error that an earlier,
 *                                unrelated runtime call left behind (it was returned to its caller),
 *                                so that check_launch reports only this launch.
 *   check_launch(op)             cuda_status(cudaGetLastError(), op, "kernel launch"): call right
 *                                after every <<<...>>> (it never synchronises).
 *   as_stream(void*)             the ABI's `void* stream` as a cudaStream_t (NULL = legacy default).
 *   grid_for(total, threads)     a 1-D grid size for a grid-stride loop over `total` items.
 *   dist2(ax,ay,az,bx,by,bz)     the spec's squared distance, (ax-bx)^2+(ay-by)^2+(az-bz)^2 left to
 *                                right with explicitly rounded operations (no FMA, whatever flags).
 */
#ifndef PVN3D_COMMON_CUDA_UTILS_CUH
#define PVN3D_COMMON_CUDA_UTILS_CUH

#include <cuda_runtime.h>

#include <cstdint>

#include "status_internal.h"

namespace pvn3d {
namespace cuda {

inline pvn3d_status cuda_status(cudaError_t err, const char* op, const char* what) {
  if (err == cudaSuccess) return PVN3D_OK;
  cudaGetLastError();  // the error is reported here; do not leave it for the next launch check
  return fail(PVN3D_ERR_CUDA, "%s: %s failed: %s: %s", op, what, cudaGetErrorName(err), cudaGetErrorString(err));
}

inline void clear_stale_error() { cudaGetLastError(); }

inline pvn3d_status check_launch(const char* op) { return cuda_status(cudaGetLastError(), op, "kernel launch"); }

inline cudaStream_t as_stream(void* stream) { return static_cast<cudaStream_t>(stream); }

inline unsigned grid_for(int64_t total, int threads, int64_t max_blocks = 65536LL * 16) {
  int64_t blocks = (total + threads - 1) / threads;
  if (blocks > max_blocks) blocks = max_blocks;
  if (blocks < 1) blocks = 1;
  return static_cast<unsigned>(blocks);
}

__device__ __forceinline__ float dist2(float ax, float ay, float az, float bx, float by, float bz) {
  const float dx = __fsub_rn(ax, bx), dy = __fsub_rn(ay, by), dz = __fsub_rn(az, bz);
  return __fadd_rn(__fadd_rn(__fmul_rn(dx, dx), __fmul_rn(dy, dy)), __fmul_rn(dz, dz));
}

}  // namespace cuda
}  // namespace pvn3d

#endif /* PVN3D_COMMON_CUDA_UTILS_CUH */
