// CUDA entry points of a CPU-only library (built only without CUDA, see CMakeLists.txt).
#include "vote_aggregate.h"

#include "../common/nocuda.h"
#include "vote_aggregate_internal.h"

extern "C" size_t pvn3d_vote_aggregate_cuda_workspace_bytes(int64_t, int64_t, int64_t) { return 0; }

extern "C" pvn3d_status pvn3d_vote_aggregate_cuda(const float*, const void*, int, int64_t, int64_t, int64_t, float,
                                                  int64_t, int, float*, int64_t*, void*, size_t, void*) {
  return PVN3D_NO_CUDA();
}
