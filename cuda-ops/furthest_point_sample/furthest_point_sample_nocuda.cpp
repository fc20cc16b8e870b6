// PVN3D_FurthestPointSample CUDA entry points of a CPU-only library.
#include "furthest_point_sample.h"

#include "../common/nocuda.h"

extern "C" size_t pvn3d_furthest_point_sample_cuda_workspace_bytes(int64_t, int64_t, int64_t) { return 0; }

extern "C" pvn3d_status pvn3d_furthest_point_sample_cuda(int64_t, int64_t, int64_t, const float*, int64_t*, void*,
                                                          size_t, void*) {
  return PVN3D_NO_CUDA();
}
