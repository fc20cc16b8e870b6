/*
 * The shared loop of GatherPoints and GroupPoints on the CPU (internal):
 *   out[b, c, p] = features[b, c, idx[b, p]]   for b < B, c < C, p < P,
 * features [B, C, N], idx [B, P] (GroupPoints: P = M*S), out [B, C, P]. Indices must already be
 * validated (check_indices). Parallel over groups of K rows of one batch item; the inner loop reads idx
 * once for the K rows and writes each row contiguously.
 */
#ifndef PVN3D_COMMON_GATHER_CPU_H
#define PVN3D_COMMON_GATHER_CPU_H

#include <algorithm>
#include <cstdint>

#include "threads.h"

namespace pvn3d {

namespace detail {
// out[k * P + p] = f[k * N + ix[p]] for K consecutive rows.
template <int K>
inline void gather_rows(const float* __restrict__ f, int64_t N, const int64_t* __restrict__ ix, int64_t P,
                        float* __restrict__ o) {
  for (int64_t p = 0; p < P; ++p) {
    const int64_t i = ix[p];
    for (int k = 0; k < K; ++k) o[k * P + p] = f[k * N + i];
  }
}
}  // namespace detail

inline void gather_rows_cpu(const float* features, const int64_t* idx, int64_t B, int64_t C, int64_t N, int64_t P,
                            float* out) {
  // K rows at a time share each index load (the loop is bound by its loads); K rows of features stay in L1
  // for the random reads: 4 up to N = 1024, else 2.
  const int K = N <= 1024 ? 4 : 2;
  const int64_t groups = (C + K - 1) / K;
  parallel_for(B * groups, grain_for(P * K), [=](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t b = r / groups, c0 = r % groups * K, rows = std::min<int64_t>(C - c0, K);
      const float* f = features + (b * C + c0) * N;
      const int64_t* ix = idx + b * P;
      float* o = out + (b * C + c0) * P;
      if (rows == 4) {
        detail::gather_rows<4>(f, N, ix, P, o);
      } else if (rows == 2) {
        detail::gather_rows<2>(f, N, ix, P, o);
      } else {
        for (int64_t k = 0; k < rows; ++k) detail::gather_rows<1>(f + k * N, N, ix, P, o + k * P);
      }
    }
  });
}

}  // namespace pvn3d

#endif /* PVN3D_COMMON_GATHER_CPU_H */
