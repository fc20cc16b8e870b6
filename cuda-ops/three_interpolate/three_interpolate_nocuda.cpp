// PVN3D_ThreeInterpolate CUDA entry point of a CPU-only library.
#include "three_interpolate.h"

#include "../common/nocuda.h"

extern "C" pvn3d_status pvn3d_three_interpolate_cuda(int64_t, int64_t, int64_t, int64_t, const float*, const int64_t*,
                                                      const float*, float*, int64_t*, void*) {
  return PVN3D_NO_CUDA();
}
