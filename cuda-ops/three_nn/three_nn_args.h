// Argument checks shared by the CPU kernel and the CUDA launcher (internal).
#ifndef PVN3D_THREE_NN_ARGS_H
#define PVN3D_THREE_NN_ARGS_H

#include "../common/checks.h"

namespace pvn3d {
namespace three_nn {

constexpr const char* kOp = "PVN3D_ThreeNN";

// OK and *work = B*n (0: nothing to do), or the error.
inline pvn3d_status check_args(int64_t B, int64_t n, int64_t m, const void* unknown, const void* known,
                               const void* dist2, const void* idx, int64_t* work) {
  PVN3D_TRY(check_at_least(kOp, "B", B, 0));
  PVN3D_TRY(check_at_least(kOp, "n", n, 0));
  PVN3D_TRY(check_at_least(kOp, "m (the number of known points)", m, 3));
  int64_t count = 0;
  PVN3D_TRY(checked_numel(kOp, "unknown", {B, n, 3}, &count));
  PVN3D_TRY(checked_numel(kOp, "known", {B, m, 3}, &count));
  *work = B * n;
  if (*work == 0) return PVN3D_OK;
  PVN3D_TRY(check_pointer(kOp, "unknown", unknown));
  PVN3D_TRY(check_pointer(kOp, "known", known));
  PVN3D_TRY(check_pointer(kOp, "dist2", dist2));
  PVN3D_TRY(check_pointer(kOp, "idx", idx));
  return PVN3D_OK;
}

}  // namespace three_nn
}  // namespace pvn3d

#endif
