/* The Kabsch CUDA launch, shared with PoseSolve (internal; .cu files only). */
#ifndef PVN3D_KABSCH_SOLVER_CUDA_CUH
#define PVN3D_KABSCH_SOLVER_CUDA_CUH

#include <cuda_runtime.h>

#include <cstdint>

#include "status.h"

namespace pvn3d {
namespace kabsch {

/* One thread per batch item. pred_is_error: 1 = a non-finite pred value is reported through
 * input_error (KabschSolver), 0 = it silently gives a NaN pose (PoseSolve: an empty mask).
 * Arguments already checked. */
pvn3d_status launch_cuda(const char* op, const float* model_kps, int64_t model_B, const float* pred_kps, int64_t B,
                         int64_t K, float* R, float* t, int64_t* input_error, int pred_is_error, cudaStream_t stream);

}  // namespace kabsch
}  // namespace pvn3d

#endif
