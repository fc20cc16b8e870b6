// CUDA entry points of a CPU-only library (built only without CUDA, see CMakeLists.txt).
#include "pose_solve.h"

#include "../common/nocuda.h"

extern "C" size_t pvn3d_pose_solve_cuda_workspace_bytes(int64_t, int64_t, int64_t) { return 0; }

extern "C" pvn3d_status pvn3d_pose_solve_cuda(const float*, const void*, int, int64_t, int64_t, int64_t, const float*,
                                              int64_t, int64_t, float, int64_t, int, float*, float*, float*,
                                              int64_t*, int64_t*, void*, size_t, void*) {
  return PVN3D_NO_CUDA();
}
