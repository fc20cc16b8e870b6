/*
 * Naive reference implementations of the six operators, written straight from spec/ops.md: one
 * thread, array-of-structures input, the obvious loops, no blocking, no vectorisation tricks. They
 * share no code with the kernels; the tests hold every kernel to them.
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

}  // namespace ref

#endif
