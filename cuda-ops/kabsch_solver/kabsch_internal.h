/* Host-side helpers shared by the Kabsch and PoseSolve entry points (internal). */
#ifndef PVN3D_KABSCH_INTERNAL_H
#define PVN3D_KABSCH_INTERNAL_H

#include <cstdint>

#include "status.h"

namespace pvn3d {
namespace kabsch {

/* Size checks of model_kps [K,3] / [model_B,K,3] against pred [B,K,3] (op names the operator). */
pvn3d_status check_shapes(const char* op, int64_t model_B, int64_t model_K, int64_t B, int64_t K);

/* Lowest flat position of a non-finite value in x[0..count), or -1. */
int64_t first_nonfinite(const float* x, int64_t count);

/* PVN3D_ERR_INVALID_ARGUMENT "<op>: input <name> holds a non-finite value (<v>) at flat position <p>". */
pvn3d_status fail_nonfinite(const char* op, const char* input, int64_t position, float value);

}  // namespace kabsch
}  // namespace pvn3d

#endif
