/*
 * The parallel loop of the CPU gathers (internal): GatherPoints, GroupPoints (gather_cpu.h) and
 * ThreeInterpolate read, for every output point, an index (or three, with weights) that all C channels
 * share. Their loops are bound by their loads, so they take K channels at a time: the point's index is
 * loaded once for K outputs. K = 4 when a row of features holds at most 1024 points, else 2 (K rows must stay
 * in L1 for the random reads; K = 8 spilled x86-64's 16 registers and was slower everywhere; measured in
 * benchmarks/results/2026-12-05-cpu-gather).
 *
 *   for_channel_groups(B, C, row_len, len, min_piece, ops_per_point, body) calls
 *   body(std::integral_constant<int, K>{}, b, c0, begin, count) for every batch item b, every group of K
 *   consecutive channels from c0 (leftover channels one at a time, K = 1) and every piece [begin, begin +
 *   count) of the len output points, in parallel. Few groups of long rows are cut into pieces of at least
 *   min_piece points (pieces_for), so that B = 1 with a handful of channels still uses every thread.
 */
#ifndef PVN3D_COMMON_CHANNEL_GROUPS_CPU_H
#define PVN3D_COMMON_CHANNEL_GROUPS_CPU_H

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "threads.h"

namespace pvn3d {

template <class Body>
void for_channel_groups(int64_t B, int64_t C, int64_t row_len, int64_t len, int64_t min_piece, int64_t ops_per_point,
                        const Body& body) {
  const int K = row_len <= 1024 ? 4 : 2;
  const int64_t groups = (C + K - 1) / K;
  const int64_t pieces = pieces_for(B * groups, len, min_piece);
  const int64_t grain = grain_for(ops_per_point * K * std::max<int64_t>(1, len / pieces));
  parallel_for(B * groups * pieces, grain, [&](int64_t first, int64_t last) {
    for (int64_t r = first; r < last; ++r) {
      const int64_t g = r / pieces, piece = r % pieces;
      const int64_t b = g / groups, c0 = g % groups * K, rows = std::min<int64_t>(C - c0, K);
      const int64_t begin = len * piece / pieces, count = len * (piece + 1) / pieces - begin;
      if (rows == 4) {
        body(std::integral_constant<int, 4>{}, b, c0, begin, count);
      } else if (rows == 2) {
        body(std::integral_constant<int, 2>{}, b, c0, begin, count);
      } else {
        for (int64_t c = c0; c < c0 + rows; ++c) body(std::integral_constant<int, 1>{}, b, c, begin, count);
      }
    }
  });
}

}  // namespace pvn3d

#endif /* PVN3D_COMMON_CHANNEL_GROUPS_CPU_H */
