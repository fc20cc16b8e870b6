// PVN3D_ThreeInterpolate, CPU kernel. See three_interpolate.h.
#include "three_interpolate.h"

#include <algorithm>

#include "../common/index_check_internal.h"
#include "../common/threads.h"
#include "three_interpolate_args.h"

extern "C" pvn3d_status pvn3d_three_interpolate_cpu(int64_t B, int64_t C, int64_t m, int64_t n, const float* features,
                                                     const int64_t* idx, const float* weight, float* out) {
  using namespace pvn3d::three_interpolate;
  int64_t work = 0;
  PVN3D_TRY(check_args(B, C, m, n, features, idx, weight, out, &work));
  // Before the empty-output return: an index outside [0, m) is an error even when C == 0 (spec/ops.md).
  PVN3D_TRY(pvn3d::check_indices(kOp, "idx", idx, B * n * 3, m));
  if (work == 0) return PVN3D_OK;
  pvn3d::parallel_for(B * C, pvn3d::grain_for(3 * n), [=](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t b = r / C;
      const float* __restrict__ f = features + r * m;
      const int64_t* __restrict__ ix = idx + b * n * 3;
      const float* __restrict__ w = weight + b * n * 3;
      float* __restrict__ o = out + r * n;
      for (int64_t j = 0; j < n; ++j)
        o[j] = f[ix[3 * j]] * w[3 * j] + f[ix[3 * j + 1]] * w[3 * j + 1] + f[ix[3 * j + 2]] * w[3 * j + 2];
    }
  });
  return PVN3D_OK;
}
