/*
 * The shared loop of GatherPoints and GroupPoints on the CPU (internal):
 *   out[b, c, p] = features[b, c, idx[b, p]]   for b < B, c < C, p < P,
 * features [B, C, N], idx [B, P] (GroupPoints: P = M*S), out [B, C, P]. Indices must already be
 * validated (check_indices). Parallel over the B*C rows; the inner loop reads idx and writes out
 * contiguously.
 */
#ifndef PVN3D_COMMON_GATHER_CPU_H
#define PVN3D_COMMON_GATHER_CPU_H

#include <cstdint>

#include "threads.h"

namespace pvn3d {

inline void gather_rows_cpu(const float* features, const int64_t* idx, int64_t B, int64_t C, int64_t N, int64_t P,
                            float* out) {
  (void)B;
  parallel_for(B * C, grain_for(P), [=](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t b = r / C;
      const float* __restrict__ f = features + r * N;
      const int64_t* __restrict__ ix = idx + b * P;
      float* __restrict__ o = out + r * P;
      for (int64_t p = 0; p < P; ++p) o[p] = f[ix[p]];
    }
  });
}

}  // namespace pvn3d

#endif /* PVN3D_COMMON_GATHER_CPU_H */
