// PVN3D_ThreeInterpolate, CPU kernel. See three_interpolate.h.
#include "three_interpolate.h"

#include <algorithm>

#include "../common/index_check_internal.h"
#include "../common/threads.h"
#include "three_interpolate_args.h"

namespace {

// o[k * stride + j] for K consecutive channels (features rows f + k * m), points j in [0, count).
template <int K>
void interpolate(const float* __restrict__ f, int64_t m, const int64_t* __restrict__ ix, const float* __restrict__ w,
                 int64_t count, float* __restrict__ o, int64_t stride) {
  for (int64_t j = 0; j < count; ++j) {
    const int64_t i0 = ix[3 * j], i1 = ix[3 * j + 1], i2 = ix[3 * j + 2];
    const float w0 = w[3 * j], w1 = w[3 * j + 1], w2 = w[3 * j + 2];
    for (int k = 0; k < K; ++k) {
      const float* fk = f + k * m;
      o[k * stride + j] = fk[i0] * w0 + fk[i1] * w1 + fk[i2] * w2;
    }
  }
}

}  // namespace

extern "C" pvn3d_status pvn3d_three_interpolate_cpu(int64_t B, int64_t C, int64_t m, int64_t n, const float* features,
                                                     const int64_t* idx, const float* weight, float* out) {
  using namespace pvn3d::three_interpolate;
  int64_t work = 0;
  PVN3D_TRY(check_args(B, C, m, n, features, idx, weight, out, &work));
  // Before the empty-output return: an index outside [0, m) is an error even when C == 0 (spec/ops.md).
  PVN3D_TRY(pvn3d::check_indices(kOp, "idx", idx, B * n * 3, m));
  if (work == 0) return PVN3D_OK;
  // K channels at a time share each point's three indices and weights: the loop is bound by its loads (the
  // CPU's load ports), and channel by channel a point's six of them were loaded again for every channel. K
  // rows of features stay in L1 for their random reads: 4 up to m = 1024, else 2 (x86-64 has 16 registers:
  // K = 8 spilled and was slower at every size; this machine, 2026-12-05: B=1 C=128 m=2048 n=12288 1.78 ->
  // 1.28 ms on one thread, B=8 C=256 m=4096 n=16384 51.8 -> 36.5 ms, B=1 C=256 m=512 n=2048 541 -> 333 us).
  // Few groups of long rows are also cut along n, so that every thread gets ranges.
  const int K = m <= 1024 ? 4 : 2;
  const int64_t groups = (C + K - 1) / K;
  const int64_t pieces = pvn3d::pieces_for(B * groups, n, 2048);
  pvn3d::parallel_for(B * groups * pieces, pvn3d::grain_for(3 * K * std::max<int64_t>(1, n / pieces)),
                      [=](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t g = r / pieces, piece = r % pieces;
      const int64_t b = g / groups, c0 = g % groups * K, c1 = std::min(C, c0 + K);
      const int64_t j0 = n * piece / pieces, count = n * (piece + 1) / pieces - j0;
      const int64_t* ix = idx + (b * n + j0) * 3;
      const float* w = weight + (b * n + j0) * 3;
      const float* f = features + (b * C + c0) * m;
      float* o = out + (b * C + c0) * n + j0;
      if (c1 - c0 == 4) {
        interpolate<4>(f, m, ix, w, count, o, n);
      } else if (c1 - c0 == 2) {
        interpolate<2>(f, m, ix, w, count, o, n);
      } else {
        for (int64_t c = 0; c < c1 - c0; ++c) interpolate<1>(f + c * m, m, ix, w, count, o + c * n, n);
      }
    }
  });
  return PVN3D_OK;
}
