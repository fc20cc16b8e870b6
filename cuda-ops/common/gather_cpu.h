/*
 * The shared loop of GatherPoints and GroupPoints on the CPU (internal):
 *   out[b, c, p] = features[b, c, idx[b, p]]   for b < B, c < C, p < P,
 * features [B, C, N], idx [B, P] (GroupPoints: P = M*S), out [B, C, P]. Indices must already be
 * validated (check_indices). K rows at a time (channel_groups_cpu.h): the inner loop reads idx once for
 * the K rows and writes each row contiguously.
 */
#ifndef PVN3D_COMMON_GATHER_CPU_H
#define PVN3D_COMMON_GATHER_CPU_H

#include <cstdint>

#include "channel_groups_cpu.h"

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
  for_channel_groups(B, C, N, P, 4096, 1, [=](auto k, int64_t b, int64_t c0, int64_t p0, int64_t count) {
    detail::gather_rows<decltype(k)::value>(features + (b * C + c0) * N, N, idx + b * P + p0, count,
                                            out + (b * C + c0) * P + p0, P);
  });
}

}  // namespace pvn3d

#endif /* PVN3D_COMMON_GATHER_CPU_H */
