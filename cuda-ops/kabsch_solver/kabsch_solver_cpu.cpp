#include "kabsch_solver.h"

#include <cmath>
#include <cstring>

#include "../common/checks.h"
#include "../common/threads.h"
#include "kabsch_core.h"
#include "kabsch_internal.h"

namespace pvn3d {
namespace kabsch {

pvn3d_status check_shapes(const char* op, int64_t model_B, int64_t model_K, int64_t B, int64_t K) {
  PVN3D_TRY(check_at_least(op, "B", B, 1));
  if (K < 3)
    return fail(PVN3D_ERR_INVALID_ARGUMENT, "%s: K (%lld keypoints) must be >= 3 for a rigid fit", op, (long long)K);
  if (model_K != K)
    return fail(PVN3D_ERR_INVALID_ARGUMENT,
                "%s: mismatched K: model_kps has %lld keypoints but the predicted keypoints have %lld", op,
                (long long)model_K, (long long)K);
  if (model_B != 0 && model_B != B)
    return fail(PVN3D_ERR_INVALID_ARGUMENT,
                "%s: mismatched B: model_kps has batch %lld but the predicted keypoints have batch %lld "
                "(use a [K,3] model_kps, model_B = 0, to share one model)",
                op, (long long)model_B, (long long)B);
  if (model_B < 0)
    return fail(PVN3D_ERR_INVALID_ARGUMENT, "%s: model_B must be >= 0, got %lld", op, (long long)model_B);
  int64_t numel = 0;
  PVN3D_TRY(checked_numel(op, "pred_kps", {B, K, 3}, &numel));
  return PVN3D_OK;
}

int64_t first_nonfinite(const float* x, int64_t count) {
  for (int64_t i = 0; i < count; ++i)
    if (!std::isfinite(x[i])) return i;
  return -1;
}

pvn3d_status fail_nonfinite(const char* op, const char* input, int64_t position, float value) {
  return fail(PVN3D_ERR_INVALID_ARGUMENT, "%s: input %s holds a non-finite value (%g) at flat position %lld", op,
              input, (double)value, (long long)position);
}

}  // namespace kabsch
}  // namespace pvn3d

extern "C" {

pvn3d_status pvn3d_kabsch_solver_cpu(const float* model_kps, int64_t model_B, int64_t model_K, const float* pred_kps,
                                     int64_t B, int64_t K, float* R, float* t) {
  static const char* op = "PVN3D_KabschSolver";
  using namespace pvn3d;
  PVN3D_TRY(kabsch::check_shapes(op, model_B, model_K, B, K));
  PVN3D_TRY(check_pointer(op, "model_kps", model_kps));
  PVN3D_TRY(check_pointer(op, "pred_kps", pred_kps));
  PVN3D_TRY(check_pointer(op, "R", R));
  PVN3D_TRY(check_pointer(op, "t", t));
  const int64_t model_numel = (model_B == 0 ? 1 : B) * K * 3;
  int64_t p = kabsch::first_nonfinite(model_kps, model_numel);
  if (p >= 0) return kabsch::fail_nonfinite(op, "model_kps", p, model_kps[p]);
  // An item whose keypoints are all NaN (an empty mask's) gets no pose; any other non-finite value is an error.
  for (int64_t b = 0; b < B; ++b) {
    const float* item = pred_kps + b * K * 3;
    if (kabsch::k_all_nan(item, K * 3)) continue;
    p = kabsch::first_nonfinite(item, K * 3);
    if (p >= 0) return kabsch::fail_nonfinite(op, "pred_kps", b * K * 3 + p, item[p]);
  }
  parallel_for(B, 64, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      if (kabsch::k_all_nan(pred_kps + b * K * 3, K * 3)) {
        for (int i = 0; i < 9; ++i) R[b * 9 + i] = NAN;
        for (int i = 0; i < 3; ++i) t[b * 3 + i] = NAN;
        continue;
      }
      kabsch::solve(model_kps + (model_B == 0 ? 0 : b * K * 3), pred_kps + b * K * 3, K, R + b * 9, t + b * 3);
    }
  });
  return PVN3D_OK;
}

pvn3d_status pvn3d_kabsch_error_describe(const char* op, int64_t position, int64_t value_bits, int64_t model_numel,
                                         const char* second_input) {
  if (position < 0) return PVN3D_OK;
  const uint32_t bits = static_cast<uint32_t>(value_bits);
  float v;
  std::memcpy(&v, &bits, sizeof v);
  if (op == nullptr) op = "PVN3D_KabschSolver";
  if (position < model_numel) return pvn3d::kabsch::fail_nonfinite(op, "model_kps", position, v);
  return pvn3d::kabsch::fail_nonfinite(op, second_input ? second_input : "pred_kps", position - model_numel, v);
}

}  // extern "C"
