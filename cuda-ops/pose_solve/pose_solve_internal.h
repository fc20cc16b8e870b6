/* The argument checks PoseSolve's CPU and CUDA entry points share (internal). */
#ifndef PVN3D_POSE_SOLVE_INTERNAL_H
#define PVN3D_POSE_SOLVE_INTERNAL_H

#include <cstdint>

#include "../common/checks.h"
#include "../kabsch_solver/kabsch_internal.h"
#include "../vote_aggregate/vote_aggregate_internal.h"

namespace pvn3d {
namespace pose_solve {

/* Kabsch's shape rules, VoteAggregate's argument rules, and the pointers of the fit. `inliers` is
 * optional (NULL: not wanted); check_args wants a pointer, so kps stands in for it then. */
inline pvn3d_status check_args(const char* op, const float* votes, const void* mask, int mask_dtype, int64_t B, int64_t K,
                               int64_t N, const float* model_kps, int64_t model_B, int64_t model_K, float bandwidth,
                               int64_t max_iter, int center_filter, const float* R, const float* t, const float* kps,
                               const int64_t* inliers) {
  PVN3D_TRY(kabsch::check_shapes(op, model_B, model_K, B, K));
  PVN3D_TRY(vote::check_args(op, votes, mask, mask_dtype, B, K, N, bandwidth, max_iter, center_filter, kps,
                             inliers ? static_cast<const void*>(inliers) : static_cast<const void*>(kps)));
  PVN3D_TRY(check_pointer(op, "model_kps", model_kps));
  PVN3D_TRY(check_pointer(op, "R", R));
  PVN3D_TRY(check_pointer(op, "t", t));
  return PVN3D_OK;
}

}  // namespace pose_solve
}  // namespace pvn3d

#endif
