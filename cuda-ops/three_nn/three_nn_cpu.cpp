// PVN3D_ThreeNN, CPU kernel. See three_nn.h.
//
// Known points are copied to structure-of-arrays; each unknown point computes squared distances for
// a block of known points at a time (vectorisable) and then inserts them in index order with strict
// `<` (a branch that is rarely taken once the three slots are filled).
#include "three_nn.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "../common/points_soa_cpu.h"
#include "../common/threads.h"
#include "three_nn_args.h"

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
    const int64_t grain = std::max<int64_t>(1, (1 << 16) / m);
    pvn3d::parallel_for(B * n, grain, [=](int64_t begin, int64_t end) {
      constexpr int64_t kBlock = 128;
      float d[kBlock];
      for (int64_t u = begin; u < end; ++u) {
        const int64_t b = u / n;
        const float* __restrict__ xs = soa_data + b * m * 3;
        const float* __restrict__ ys = xs + m;
        const float* __restrict__ zs = ys + m;
        const float ux = unknown[3 * u], uy = unknown[3 * u + 1], uz = unknown[3 * u + 2];
        float b1 = std::numeric_limits<float>::infinity(), b2 = b1, b3 = b1;
        int64_t i1 = 0, i2 = 0, i3 = 0;
        for (int64_t base = 0; base < m; base += kBlock) {
          const int64_t len = std::min(kBlock, m - base);
          for (int64_t k = 0; k < len; ++k) {
            const float dx = xs[base + k] - ux, dy = ys[base + k] - uy, dz = zs[base + k] - uz;
            d[k] = dx * dx + dy * dy + dz * dz;
          }
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
        dist2[3 * u] = b1;
        dist2[3 * u + 1] = b2;
        dist2[3 * u + 2] = b3;
        idx[3 * u] = i1;
        idx[3 * u + 1] = i2;
        idx[3 * u + 2] = i3;
      }
    });
    return PVN3D_OK;
  });
}
