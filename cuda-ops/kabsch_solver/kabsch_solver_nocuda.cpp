// CUDA entry point of a CPU-only library (built only without CUDA, see CMakeLists.txt).
#include "kabsch_solver.h"

#include "../common/nocuda.h"

extern "C" pvn3d_status pvn3d_kabsch_solver_cuda(const float*, int64_t, int64_t, const float*, int64_t, int64_t,
                                                 float*, float*, int64_t*, void*) {
  return PVN3D_NO_CUDA();
}
