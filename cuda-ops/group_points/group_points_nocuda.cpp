// PVN3D_GroupPoints CUDA entry point of a CPU-only library.
#include "group_points.h"

#include "../common/nocuda.h"

extern "C" pvn3d_status pvn3d_group_points_cuda(int64_t, int64_t, int64_t, int64_t, int64_t, const float*,
                                                 const int64_t*, float*, int64_t*, void*) {
  return PVN3D_NO_CUDA();
}
