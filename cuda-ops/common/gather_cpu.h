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
// o[k * stride + p] = f[k * N + ix[p]] for K consecutive rows, p in [0, count).
template <int K>
inline void gather_rows(const float* __restrict__ f, int64_t N, const int64_t* __restrict__ ix, int64_t count,
                        float* __restrict__ o, int64_t stride) {
  for (int64_t p = 0; p < count; ++p) {
    const int64_t i = ix[p];
    for (int k = 0; k < K; ++k) o[k * stride + p] = f[k * N + i];
  }
}
}  // namespace detail

inline void gather_rows_cpu(const float* features, const int64_t* idx, int64_t B, int64_t C, int64_t N, int64_t P,
                            float* out) {
  // K rows at a time share each index load (the loop is bound by its loads); K rows of features stay in L1
  // for the random reads: 4 up to N = 1024, else 2. Few groups of long rows are also cut along P.
  const int K = N <= 1024 ? 4 : 2;
  const int64_t groups = (C + K - 1) / K;
  const int64_t pieces = pieces_for(B * groups, P, 4096);
  parallel_for(B * groups * pieces, grain_for(K * std::max<int64_t>(1, P / pieces)), [=](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t g = r / pieces, piece = r % pieces;
      const int64_t b = g / groups, c0 = g % groups * K, rows = std::min<int64_t>(C - c0, K);
      const int64_t p0 = P * piece / pieces, count = P * (piece + 1) / pieces - p0;
      const float* f = features + (b * C + c0) * N;
      const int64_t* ix = idx + b * P + p0;
      float* o = out + (b * C + c0) * P + p0;
      if (rows == 4) {
        detail::gather_rows<4>(f, N, ix, count, o, P);
      } else if (rows == 2) {
        detail::gather_rows<2>(f, N, ix, count, o, P);
      } else {
        for (int64_t k = 0; k < rows; ++k) detail::gather_rows<1>(f + k * N, N, ix, count, o + k * P, P);
      }
    }
  });
}

}  // namespace pvn3d

#endif /* PVN3D_COMMON_GATHER_CPU_H */
