#include "pose_solve.h"

#include <cmath>
#include <limits>
#include <vector>

#include "../common/checks.h"
#include "../common/threads.h"
#include "../kabsch_solver/kabsch_core.h"
#include "../kabsch_solver/kabsch_internal.h"
#include "vote_aggregate.h"
#include "../vote_aggregate/vote_aggregate_internal.h"
#include "pose_solve_internal.h"

extern "C" pvn3d_status pvn3d_pose_solve_cpu(const float* votes, const void* mask, int mask_dtype, int64_t B,
                                             int64_t K, int64_t N, const float* model_kps, int64_t model_B,
                                             int64_t model_K, float bandwidth, int64_t max_iter, int center_filter,
                                             float* R, float* t, float* kps, int64_t* inliers) {
  return pvn3d::guarded("PVN3D_PoseSolve", [&]() -> pvn3d_status {
    static const char* op = "PVN3D_PoseSolve";
    using namespace pvn3d;
    PVN3D_TRY(pose_solve::check_args(op, votes, mask, mask_dtype, B, K, N, model_kps, model_B, model_K, bandwidth, max_iter,
                                     center_filter, R, t, kps, inliers));
    const int64_t model_numel = (model_B == 0 ? 1 : B) * K * 3;
    const int64_t p = kabsch::first_nonfinite(model_kps, model_numel);
    if (p >= 0) return kabsch::fail_nonfinite(op, "model_kps", p, model_kps[p]);
    std::vector<int64_t> own_inliers;
    if (inliers == nullptr) {
      own_inliers.resize(B);
      inliers = own_inliers.data();
    }
    vote::aggregate_cpu(votes, mask, mask_dtype, B, K, N, bandwidth, max_iter, center_filter, kps, inliers);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (int64_t b = 0; b < B; ++b) {
      if (kabsch::first_nonfinite(kps + b * K * 3, K * 3) >= 0) {  // empty mask: NaN pose, not an error
        for (int i = 0; i < 9; ++i) R[b * 9 + i] = nan;
        for (int i = 0; i < 3; ++i) t[b * 3 + i] = nan;
        continue;
      }
      kabsch::solve(model_kps + (model_B == 0 ? 0 : b * K * 3), kps + b * K * 3, K, R + b * 9, t + b * 3);
    }
    return PVN3D_OK;
  });
}
