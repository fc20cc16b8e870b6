/* Host-side helpers shared by the VoteAggregate and PoseSolve entry points (internal). */
#ifndef PVN3D_VOTE_AGGREGATE_INTERNAL_H
#define PVN3D_VOTE_AGGREGATE_INTERNAL_H

#include <cstdint>

#include "status.h"

namespace pvn3d {
namespace vote {

/* Every size, attribute and pointer check of vote_aggregate.h (op names the operator). */
pvn3d_status check_args(const char* op, const float* votes, const void* mask, int mask_dtype, int64_t B, int64_t K,
                        int64_t N, float bandwidth, int64_t max_iter, int center_filter, const void* kps,
                        const void* inliers);

/* The CPU kernel behind pvn3d_vote_aggregate_cpu, without the checks. */
void aggregate_cpu(const float* votes, const void* mask, int mask_dtype, int64_t B, int64_t K, int64_t N,
                   float bandwidth, int64_t max_iter, int center_filter, float* kps, int64_t* inliers);

/* Constants both devices derive identically from the bandwidth. */
struct Consts {
  float bw2;           // bandwidth * bandwidth: the strict "within bandwidth" bound on d2
  float neg_half_inv;  // -0.5f / bw2: weight = exp(d2 * neg_half_inv)
  float tol2;          // (bandwidth * 1e-3f)^2: a mode "moved" when its squared shift > tol2
};
inline Consts make_consts(float bandwidth) {
  Consts c;
  c.bw2 = bandwidth * bandwidth;
  c.neg_half_inv = -0.5f / c.bw2;
  const float tol = bandwidth * 1e-3f;
  c.tol2 = tol * tol;
  return c;
}
/* Weights whose exponent is below this count as 0: ln(2^-126), where exp leaves the normal floats
 * (the GPU's ex2.approx.ftz flushes there too); any result below FLT_MIN is flushed as well. */
constexpr float kMinExponent = -87.33654475f;

}  // namespace vote
}  // namespace pvn3d

#endif
