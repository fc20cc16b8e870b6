// PVN3D_ThreeNN CUDA entry point of a CPU-only library.
#include "three_nn.h"

#include "../common/nocuda.h"

extern "C" pvn3d_status pvn3d_three_nn_cuda(int64_t, int64_t, int64_t, const float*, const float*, float*, int64_t*,
                                             void*) {
  return PVN3D_NO_CUDA();
}
