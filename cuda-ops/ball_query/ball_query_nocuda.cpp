// PVN3D_BallQuery CUDA entry point of a CPU-only library.
#include "ball_query.h"

#include "../common/nocuda.h"

extern "C" pvn3d_status pvn3d_ball_query_cuda(int64_t, int64_t, int64_t, float, int64_t, const float*, const float*,
                                               int64_t*, void*) {
  return PVN3D_NO_CUDA();
}
