// PVN3D_ThreeNN, CPU kernel. See three_nn.h.
//
// Known points are copied to structure-of-arrays; each unknown point computes the squared distances to a
// chunk of known points (vectorised, with each block of 32's smallest), bounds the third nearest from the
// blocks' minima, and then inserts, in index order with strict `<`, only the points at or below that bound
// (nearest3).
#include "three_nn.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "../common/cpu_clones.h"
#include "../common/float_bits.h"
#include "../common/points_soa_cpu.h"
#include "../common/threads.h"
#include "three_nn_args.h"

namespace {

using pvn3d::float_bits;

// Inserts (dk, k) into the sorted three (b, i) if it beats the third (strict `<`: a later index never displaces
// an equal distance).
inline void insert3(float dk, int64_t k, float (&b)[3], int64_t (&i)[3]) {
  if (dk < b[2]) {
    if (dk < b[0]) {
      b[2] = b[1]; i[2] = i[1];
      b[1] = b[0]; i[1] = i[0];
      b[0] = dk; i[0] = k;
    } else if (dk < b[1]) {
      b[2] = b[1]; i[2] = i[1];
      b[1] = dk; i[1] = k;
    } else {
      b[2] = dk; i[2] = k;
    }
  }
}

// A float's bit pattern as uint32: squared distances are +0, positive, +inf or NaN of either sign, and as
// uint32 the non-NaN ones order like their floats with every NaN above +inf (an integer min vectorises where a
// float one does not without -ffast-math).
inline uint32_t distance_bits(float f) { return static_cast<uint32_t>(float_bits(f)); }

constexpr int64_t kBlock = 32, kChunk = 4096;

// The caller's scratch, kept across the points of a range (16.5 KB: on the stack once a range, not once a
// point, which paid the stack's page probes every call).
struct Scratch {
  float d[kChunk];
  uint32_t low[kChunk / kBlock];
};

// The three nearest of the m known points (xs, ys, zs) to (ux, uy, uz): squared distances in dist2[0..3),
// indices in idx[0..3), nearest first, the lowest index on ties (the result of scanning in index order with
// strict `<`, which keeps the three lexicographically smallest (distance, index) pairs; NaN never enters).
// Chunks of up to kChunk known points, each in two passes:
//  1. every squared distance of the chunk (vectorised) and each block's smallest; t, the smaller of the third
//     best so far and the third smallest of the blocks' minima, bounds the chunk's points that can still enter
//     (three distinct points are at or below a block minimum's third smallest);
//  2. the strict-`<` insertion in index order of only the points at or below t, found a block at a time as a
//     bit mask: the same three as inserting every point.
// The one-pass scan before spent most of its time on branches it could not predict (whether a block held a
// candidate, which point entered). Cloned for AVX2 and AVX-512 (cpu_clones.h).
PVN3D_CPU_CLONES void nearest3(const float* __restrict__ xs, const float* __restrict__ ys, const float* __restrict__ zs,
                               int64_t m, float ux, float uy, float uz, Scratch& scratch, float* dist2, int64_t* idx) {
  float* __restrict__ d = scratch.d;
  uint32_t* __restrict__ low = scratch.low;
  const float inf = std::numeric_limits<float>::infinity();
  float b[3] = {inf, inf, inf};
  int64_t i[3] = {0, 0, 0};
  for (int64_t c0 = 0; c0 < m; c0 += kChunk) {
    const int64_t cm = std::min(kChunk, m - c0), blocks = (cm + kBlock - 1) / kBlock;
    uint32_t t1 = UINT32_MAX, t2 = UINT32_MAX, t3 = UINT32_MAX;
    for (int64_t blk = 0; blk < blocks; ++blk) {
      const int64_t base = blk * kBlock, len = std::min(kBlock, cm - base);
      uint32_t lo = UINT32_MAX;
      for (int64_t k = base; k < base + len; ++k) {
        const float dx = xs[c0 + k] - ux, dy = ys[c0 + k] - uy, dz = zs[c0 + k] - uz;
        const float dk = dx * dx + dy * dy + dz * dz;
        d[k] = dk;
        const uint32_t bits = distance_bits(dk);
        lo = bits < lo ? bits : lo;
      }
      low[blk] = lo;
      t3 = std::min(t3, std::max(t2, lo));  // the three smallest minima, without branches
      t2 = std::min(t2, std::max(t1, lo));
      t1 = std::min(t1, lo);
    }
    if (blocks < 3) {  // no third block minimum to bound with: every point, as a plain scan (no masks)
      for (int64_t k = 0; k < cm; ++k) insert3(d[k], c0 + k, b, i);
      continue;
    }
    const uint32_t t = std::min(distance_bits(b[2]), t3);  // +inf's bits or below: never a NaN
    float tf;
    std::memcpy(&tf, &t, sizeof tf);
    for (int64_t blk = 0; blk < blocks; ++blk) {
      if (low[blk] > t) continue;
      const int64_t base = blk * kBlock, len = std::min(kBlock, cm - base);
      uint32_t cand = 0;
      for (int64_t k = 0; k < len; ++k) cand |= static_cast<uint32_t>(d[base + k] <= tf) << k;
      while (cand != 0) {
        const int k = __builtin_ctz(cand);
        cand &= cand - 1;
        insert3(d[base + k], c0 + base + k, b, i);
      }
    }
  }
  for (int s = 0; s < 3; ++s) {
    dist2[s] = b[s];
    idx[s] = i[s];
  }
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
      Scratch scratch;
      for (int64_t u = begin; u < end; ++u) {
        const float* xs = soa_data + (u / n) * m * 3;
        nearest3(xs, xs + m, xs + 2 * m, m, unknown[3 * u], unknown[3 * u + 1], unknown[3 * u + 2], scratch,
                 dist2 + 3 * u, idx + 3 * u);
      }
    });
    return PVN3D_OK;
  });
}
