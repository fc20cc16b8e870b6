/*
 * Naive reference implementations of the operators, written straight from spec/ops.md: one thread,
 * array-of-structures input, the obvious loops, no blocking, no vectorisation tricks. They share no
 * code with the kernels (and never call them); the tests hold every kernel to them.
 *
 *  - the six PointNet++ operators, in float32 as the spec computes them;
 *  - vote_aggregate: the spec's mean shift written the textbook way, in double: modes move to
 *    sum_j w x_j / sum_j w, weights exp(-0.5 d^2/h^2) in double (0 below FLT_MIN, the library's
 *    documented flush), counts with the spec's float32 distance (the count is defined on float32
 *    distances, so it is computed the same way here), sequential;
 *  - kabsch_solver: Horn's closed-form quaternion method (the largest eigenvector of a 4x4 symmetric
 *    matrix, found by cyclic Jacobi in double), a different algorithm from the library's SVD; it
 *    always gives the optimal proper rotation, so it checks the reflection handling as well;
 *  - pointnet_chain: the PointNet++-like chain of the bunny tests, every stage by these references.
 */
#ifndef PVN3D_TESTS_REFERENCE_H
#define PVN3D_TESTS_REFERENCE_H

#include <cstdint>
#include <vector>

namespace ref {

std::vector<int64_t> furthest_point_sample(const std::vector<float>& xyz, int64_t B, int64_t N, int64_t npoint);
std::vector<float> gather_points(const std::vector<float>& features, const std::vector<int64_t>& idx, int64_t B,
                                 int64_t C, int64_t N, int64_t M);
std::vector<int64_t> ball_query(const std::vector<float>& xyz, const std::vector<float>& new_xyz, int64_t B, int64_t N,
                                int64_t M, float radius, int64_t nsample);
std::vector<float> group_points(const std::vector<float>& features, const std::vector<int64_t>& idx, int64_t B,
                                int64_t C, int64_t N, int64_t M, int64_t S);
void three_nn(const std::vector<float>& unknown, const std::vector<float>& known, int64_t B, int64_t n, int64_t m,
              std::vector<float>* dist2, std::vector<int64_t>* idx);
std::vector<float> three_interpolate(const std::vector<float>& features, const std::vector<int64_t>& idx,
                                     const std::vector<float>& weight, int64_t B, int64_t C, int64_t m, int64_t n);

// ---- pose operators ----------------------------------------------------------------------------

struct VoteAggregateResult {
  std::vector<double> kps;       // [B,K,3]
  std::vector<int64_t> inliers;  // [B]
  std::vector<int64_t> best;     // [B,K]: chosen index into the point list used (-1 if none)
};

// mask: float [B,N] (nonzero = masked) or nullptr.
VoteAggregateResult vote_aggregate(const std::vector<float>& votes, const float* mask, int64_t B, int64_t K, int64_t N,
                                   float bandwidth, int64_t max_iter, int center_filter);

// Horn's method. a, b: [K][3] (double). R row-major, t.
void kabsch_solver(const double* a, const double* b, int64_t K, double R[9], double t[3]);

// det R, and max |R R^T - I|, of a row-major 3x3 rotation.
double det3(const float* R);
double orth_err(const float* R);

// ---- the bunny tests' chain -------------------------------------------------------------------------

// FPS -> GatherPoints -> BallQuery -> GroupPoints, and ThreeNN from all points back to the centres ->
// PointNet++'s interpolation weights -> ThreeInterpolate, for one cloud (B = 1): xyz [1,N,3],
// features [1,C,N]. Each operator's bunny test takes the inputs of its stage from here.
struct Chain {
  std::vector<int64_t> centres_idx;  // [npoint]       FurthestPointSample(xyz)
  std::vector<float> gathered;       // [C, npoint]    GatherPoints(features, centres_idx)
  std::vector<float> centres;        // [npoint, 3]    the first three channels of gathered, as points
  std::vector<int64_t> nbr;          // [npoint, S]    BallQuery(xyz, centres)
  std::vector<float> grouped;        // [C, npoint, S] GroupPoints(features, nbr)
  std::vector<float> nn_dist2;       // [N, 3]         ThreeNN(xyz, centres)
  std::vector<int64_t> nn_idx;       // [N, 3]
  std::vector<float> weight;         // [N, 3]         (1/(sqrt(d)+1e-8)) / sum, from nn_dist2
  std::vector<float> interpolated;   // [C, N]         ThreeInterpolate(gathered, nn_idx, weight)
};
Chain pointnet_chain(const std::vector<float>& xyz, const std::vector<float>& features, int64_t N, int64_t C,
                     int64_t npoint, float radius, int64_t S);

}  // namespace ref

#endif
