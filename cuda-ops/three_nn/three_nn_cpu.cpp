// PVN3D_ThreeNN, CPU kernel. See three_nn.h.
//
// Known points are copied to structure-of-arrays; each unknown point computes squared distances for
// a block of known points at a time (vectorised, with the block's smallest distance) and then, only
// when that smallest distance beats the third best so far, inserts them in index order with strict
// `<`. Once the three slots hold near points most blocks are skipped whole.
#include "three_nn.h"

#include <algorithm>
#include <climits>
#include <limits>
#include <vector>

#include "../common/cpu_clones.h"
#include "../common/float_bits.h"
#include "../common/points_soa_cpu.h"
#include "../common/threads.h"
#include "three_nn_args.h"

namespace {

using pvn3d::float_bits;

// The three nearest of the m known points (xs, ys, zs) to (ux, uy, uz): squared distances in dist2[0..3),
// indices in idx[0..3), nearest first, the lowest index on ties. The block's smallest distance is taken on
// the float bit patterns as int32 (a squared distance is +0, positive, +inf or NaN; the non-negative ones
// order like their floats, and an integer min vectorises where a float one does not without -ffast-math):
// a block is skipped only when no distance in it is below the third best, which is exactly when the
// insertion below would change nothing (a NaN is never inserted; a NaN with its sign bit set only costs a
// scan). Cloned for AVX2 and AVX-512 (cpu_clones.h).
PVN3D_CPU_CLONES void nearest3(const float* __restrict__ xs, const float* __restrict__ ys, const float* __restrict__ zs,
                               int64_t m, float ux, float uy, float uz, float* dist2, int64_t* idx) {
  // 32: once the three slots fill, the cost is the scalar scan of each block that holds a candidate (about 22
  // inserts a point over 2048 uniform known points); shorter blocks scan less for one more horizontal minimum
  // each (32 against 128: 12.8 -> 11.4 ms on one thread at B=1 n=12288 m=2048, the same outputs; 64 slower
  // than 32, 16 within the noise of it)
  constexpr int64_t kBlock = 32;
  float d[kBlock];
  float b1 = std::numeric_limits<float>::infinity(), b2 = b1, b3 = b1;
  int64_t i1 = 0, i2 = 0, i3 = 0;
  for (int64_t base = 0; base < m; base += kBlock) {
    const int64_t len = std::min(kBlock, m - base);
    int32_t low = INT32_MAX;
    for (int64_t k = 0; k < len; ++k) {
      const float dx = xs[base + k] - ux, dy = ys[base + k] - uy, dz = zs[base + k] - uz;
      const float dk = dx * dx + dy * dy + dz * dz;
      d[k] = dk;
      const int32_t bits = float_bits(dk);
      low = bits < low ? bits : low;
    }
    if (low >= float_bits(b3)) continue;
    for (int64_t k = 0; k < len; ++k) {
      const float dk = d[k];
      if (dk < b3) {
        if (dk < b1) {
          b3 = b2; i3 = i2;
          b2 = b1; i2 = i1;
          b1 = dk; i1 = base + k;
        } else if (dk < b2) {
          b3 = b2; i3 = i2;
          b2 = dk; i2 = base + k;
        } else {
          b3 = dk; i3 = base + k;
        }
      }
    }
  }
  dist2[0] = b1;
  dist2[1] = b2;
  dist2[2] = b3;
  idx[0] = i1;
  idx[1] = i2;
  idx[2] = i3;
}

}  // namespace

extern "C" pvn3d_status pvn3d_three_nn_cpu(int64_t B, int64_t n, int64_t m, const float* unknown, const float* known,
                                            float* dist2, int64_t* idx) {
  return pvn3d::guarded("PVN3D_ThreeNN", [&]() -> pvn3d_status {
    using namespace pvn3d::three_nn;
    int64_t work = 0;
    PVN3D_TRY(check_args(B, n, m, unknown, known, dist2, idx, &work));
    if (work == 0) return PVN3D_OK;
    std::vector<float> soa;
    PVN3D_TRY(pvn3d::points_soa_cpu(kOp, "B*m", known, B, m, soa));
    const float* const soa_data = soa.data();
    pvn3d::parallel_for(B * n, pvn3d::grain_for(m), [=](int64_t begin, int64_t end) {
      for (int64_t u = begin; u < end; ++u) {
        const float* xs = soa_data + (u / n) * m * 3;
        nearest3(xs, xs + m, xs + 2 * m, m, unknown[3 * u], unknown[3 * u + 1], unknown[3 * u + 2], dist2 + 3 * u,
                 idx + 3 * u);
      }
    });
    return PVN3D_OK;
  });
}
