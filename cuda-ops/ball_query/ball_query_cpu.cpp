// PVN3D_BallQuery, CPU kernel. See ball_query.h.
//
// The clouds are first copied to structure-of-arrays; each centre then computes squared distances
// for a block of points at a time (a vectorised loop that also counts the block's hits) and scans only
// a block with hits for them in index order, stopping after the block in which the nsample-th hit is
// found. A ball holds few of the cloud's points, so most blocks are never scanned.
#include "ball_query.h"

#include <algorithm>
#include <vector>

#include "../common/cpu_clones.h"
#include "../common/points_soa_cpu.h"
#include "../common/threads.h"
#include "ball_query_args.h"

namespace {

// The first nsample points (xs, ys, zs; N of them) strictly within r2 of (cx, cy, cz), in index order, into
// out; the rest of out repeats the first hit (0 when none). Cloned for AVX2 and AVX-512 (cpu_clones.h).
PVN3D_CPU_CLONES void query_ball(const float* __restrict__ xs, const float* __restrict__ ys, const float* __restrict__ zs,
                                 int64_t N, float cx, float cy, float cz, float r2, int64_t nsample,
                                 int64_t* __restrict__ out) {
  constexpr int64_t kBlock = 64;
  float d[kBlock];
  int64_t count = 0;
  for (int64_t base = 0; base < N && count < nsample; base += kBlock) {
    const int64_t len = std::min(kBlock, N - base);
    int32_t hits = 0;
    for (int64_t k = 0; k < len; ++k) {
      const float dx = xs[base + k] - cx, dy = ys[base + k] - cy, dz = zs[base + k] - cz;
      const float dk = dx * dx + dy * dy + dz * dz;
      d[k] = dk;
      hits += dk < r2;
    }
    if (hits == 0) continue;
    for (int64_t k = 0; k < len; ++k)
      if (d[k] < r2) {
        out[count++] = base + k;
        if (count == nsample) break;
      }
  }
  const int64_t fill = count > 0 ? out[0] : 0;
  for (int64_t s = count; s < nsample; ++s) out[s] = fill;
}

}  // namespace

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
    pvn3d::parallel_for(B * M, pvn3d::grain_for(N), [=](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) {
        const float* xs = soa_data + (c / M) * N * 3;
        query_ball(xs, xs + N, xs + 2 * N, N, new_xyz[3 * c], new_xyz[3 * c + 1], new_xyz[3 * c + 2], r2, nsample,
                   idx + c * nsample);
      }
    });
    return PVN3D_OK;
  });
}
