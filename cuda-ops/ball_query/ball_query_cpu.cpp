// PVN3D_BallQuery, CPU kernel. See ball_query.h.
//
// The clouds are first copied to structure-of-arrays; each centre then computes squared distances
// for a block of points at a time (a vectorisable loop) and scans the block for hits in index order,
// stopping after the block in which the nsample-th hit is found.
#include "ball_query.h"

#include <algorithm>
#include <vector>

#include "../common/points_soa_cpu.h"
#include "../common/threads.h"
#include "ball_query_args.h"

extern "C" pvn3d_status pvn3d_ball_query_cpu(int64_t B, int64_t N, int64_t M, float radius, int64_t nsample,
                                              const float* xyz, const float* new_xyz, int64_t* idx) {
  return pvn3d::guarded("PVN3D_BallQuery", [&]() -> pvn3d_status {
    using namespace pvn3d::ball_query;
    int64_t work = 0;
    PVN3D_TRY(check_args(B, N, M, radius, nsample, xyz, new_xyz, idx, &work));
    if (work == 0) return PVN3D_OK;
    const float r2 = radius * radius;
    std::vector<float> soa;
    PVN3D_TRY(pvn3d::points_soa_cpu(kOp, "B*N", xyz, B, N, soa));
    const float* const soa_data = soa.data();
    const int64_t grain = std::max<int64_t>(1, (1 << 16) / std::max<int64_t>(N, 1));
    pvn3d::parallel_for(B * M, grain, [=](int64_t begin, int64_t end) {
      constexpr int64_t kBlock = 64;
      float d[kBlock];
      for (int64_t c = begin; c < end; ++c) {
        const int64_t b = c / M;
        const float* __restrict__ xs = soa_data + b * N * 3;
        const float* __restrict__ ys = xs + N;
        const float* __restrict__ zs = ys + N;
        const float cx = new_xyz[3 * c], cy = new_xyz[3 * c + 1], cz = new_xyz[3 * c + 2];
        int64_t* __restrict__ out = idx + c * nsample;
        int64_t count = 0;
        for (int64_t base = 0; base < N && count < nsample; base += kBlock) {
          const int64_t len = std::min(kBlock, N - base);
          for (int64_t k = 0; k < len; ++k) {
            const float dx = xs[base + k] - cx, dy = ys[base + k] - cy, dz = zs[base + k] - cz;
            d[k] = dx * dx + dy * dy + dz * dz;
          }
          for (int64_t k = 0; k < len; ++k)
            if (d[k] < r2) {
              out[count++] = base + k;
              if (count == nsample) break;
            }
        }
        const int64_t fill = count > 0 ? out[0] : 0;
        for (int64_t s = count; s < nsample; ++s) out[s] = fill;
      }
    });
    return PVN3D_OK;
  });
}
