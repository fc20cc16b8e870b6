/*
 * PVN3D_VoteAggregate: mean-shift clustering of per-point keypoint votes (spec/ops.md).
 *
 * Inputs
 *   votes   float32 [B,K,N,3]  votes[b,k,n] is point n's vote for keypoint k of batch item b.
 *   mask    [B,N], dtype given by `mask_dtype`:
 *             PVN3D_MASK_FLOAT32: float32, a point is masked (used) iff its value != 0.0f;
 *             PVN3D_MASK_BOOL:    uint8 (ONNX bool), a point is masked iff its byte != 0.
 *           NULL means every point is masked.
 * Attributes
 *   bandwidth      float, finite and > 0 (PVN3D: 0.08 m)
 *   max_iter       int64 >= 0 (PVN3D: 300); 0 means the answer is the chosen vote itself
 *   center_filter  0 or 1 (PVN3D: 1)
 * Outputs
 *   kps      float32 [B,K,3]
 *   inliers  int64 [B]
 *
 * What is computed, for each batch item b (all sizes and indices below are per item):
 *   1. The candidate points are the masked points all of whose K votes are finite. A point with
 *      any NaN or infinite vote coordinate is treated as unmasked (it votes for nothing). This is
 *      this library's reading of "NaN in votes": one broken prediction does not destroy the pose.
 *      Finite votes whose coordinate differences overflow float32 (magnitudes near 1.7e38, far
 *      outside any scene) give a NaN keypoint: the weight underflows to 0 and 0 * inf is NaN.
 *   2. If there is no candidate: kps[b,:,:] = NaN, inliers[b] = 0 (not an error).
 *   3. cluster(k, P) over a list P of points (in index order), with x_i = votes[b,k,P[i]]:
 *      a) count_i = #{ j in P : d2(x_i, x_j) < bandwidth^2 } over the ORIGINAL votes (as
 *         PVN3D's MeanShiftTorch does: "the vote that has the most votes within bandwidth of
 *         it" counts around the vote, not around its converged mode). "Within" is strict (<),
 *         as in PVN3D. d2 is the float32 squared distance of spec/ops.md, left to right,
 *         without contraction, so the count is exact and identical on CPU and CUDA.
 *         best = argmax count_i, ties: the lowest i.
 *      b) Mean shift (non-blurring): every mode starts at its vote, m_i = x_i. One iteration
 *         moves every mode to the Gaussian-weighted mean of ALL votes of P,
 *           m_i <- sum_j w_ij x_j / sum_j w_ij,  w_ij = exp(-0.5 * |m_i - x_j|^2 / bandwidth^2),
 *         computed as m_i + sum_j w_ij (x_j - m_i) / sum_j w_ij. Weights are float32; a weight
 *         below FLT_MIN (exponent below ln(2^-126) = -87.34, a vote more than ~13.2 bandwidths
 *         away) counts as 0 (flushed, as the GPU's ex2.approx.ftz does), and a mode whose weights
 *         are all 0 stays where it is. Iterations stop after the first iteration in which no mode moved
 *         more than bandwidth*1e-3 (Euclidean, "more than" = strictly greater), or after
 *         max_iter iterations. Convergence is decided for all modes of the keypoint together.
 *      c) The answer is m_best.
 *   4. center_filter = 0: every keypoint k uses all candidates; inliers[b] = #candidates.
 *      center_filter = 1: row K-1 is the object centre and is clustered over all candidates,
 *      giving the chosen centre vote c = votes[b,K-1,P[best]] (the vote whose mode became the
 *      centre answer). The other rows k < K-1 use only the candidates whose centre vote lies
 *      strictly within bandwidth of c (d2 < bandwidth^2, the same exact d2); if that set were
 *      empty, all candidates. inliers[b] = the size of the set the rows k < K-1 used (also for
 *      K = 1, where no such row exists).
 *
 * CPU and CUDA agree exactly on the counts, the chosen votes and inliers, and within 1e-5 on kps
 * (the mean-shift sums are accumulated in double on the CPU, in float partial sums on the GPU).
 * The CPU kernel stops computing a mode once an iteration left it where it was, bit for bit: its shift
 * depends on its position alone, so every later iteration would repeat exactly that. This is 3b
 * exactly (PVN3D_MEAN_SHIFT=every-mode computes every mode anyway, for tests and A/B timing).
 * The CUDA kernel computes the mean shift relative to the chosen vote, with the exponent expanded
 * (c2|y|^2 + c2|m|^2 - 2 c2 m.y) and the new mode as sum(w y) / sum(w), which changes only the
 * rounding. It also stops shifting a mode once its step was at most bandwidth*1e-3/16 (it then counts
 * as not moving); the chosen mode, whose position is the answer, is shifted until the keypoint stops.
 * This is 3b exactly unless such a mode would later have sped up again to a step above
 * bandwidth*1e-3 (leaving a saddle of the vote density) at an iteration where every other mode had
 * settled; then the keypoint stops earlier, at an iteration in which its chosen mode moved at most
 * bandwidth*1e-3 as well. Its answer
 * is the same run to run (the order of the work does not enter the sums).
 *
 * Errors (PVN3D_ERR_INVALID_ARGUMENT, message names the operator, argument and value):
 *   B < 1, K < 1, N < 0, N > 2^31-1, B*K*N*3 overflowing int64, bandwidth not finite or <= 0,
 *   max_iter < 0, center_filter not 0/1, unknown mask_dtype, NULL votes/kps/inliers (votes may be
 *   NULL only when N = 0). The CUDA launcher also fails with PVN3D_ERR_INVALID_ARGUMENT when the
 *   workspace is NULL or smaller than pvn3d_vote_aggregate_cuda_workspace_bytes(B,K,N), and with
 *   PVN3D_ERR_CUDA when a CUDA call fails; a library built without CUDA returns PVN3D_ERR_NO_CUDA.
 *
 * CUDA: all pointers are device pointers (kps, inliers and the workspace too); the launcher runs
 * on `stream` (a cudaStream_t, NULL = legacy default stream), never synchronises and never
 * allocates, so a call can be captured into a CUDA graph. The mean shift runs as one cooperative
 * (grid-synchronised) kernel that iterates on the device: no host round trip per iteration and no
 * N x N matrix anywhere. After a call the workspace starts with a debug record (iterations per
 * keypoint, ...: vote_aggregate_debug.h, not part of this API).
 */
#ifndef PVN3D_VOTE_AGGREGATE_H
#define PVN3D_VOTE_AGGREGATE_H

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* dtype of the mask input of VoteAggregate / PoseSolve. */
typedef enum pvn3d_mask_dtype {
  PVN3D_MASK_FLOAT32 = 0, /* float32, nonzero = masked */
  PVN3D_MASK_BOOL = 1     /* uint8 / ONNX bool, nonzero = masked */
} pvn3d_mask_dtype;

PVN3D_API pvn3d_status pvn3d_vote_aggregate_cpu(const float* votes, const void* mask,
                                                int mask_dtype, int64_t B, int64_t K, int64_t N,
                                                float bandwidth, int64_t max_iter,
                                                int center_filter, float* kps, int64_t* inliers);

/* Bytes of device scratch pvn3d_vote_aggregate_cuda needs for these sizes (0 if the sizes are
 * invalid). Alignment: the workspace pointer must be 16-byte aligned (cudaMalloc's is). */
PVN3D_API size_t pvn3d_vote_aggregate_cuda_workspace_bytes(int64_t B, int64_t K, int64_t N);

PVN3D_API pvn3d_status pvn3d_vote_aggregate_cuda(const float* votes, const void* mask,
                                                 int mask_dtype, int64_t B, int64_t K, int64_t N,
                                                 float bandwidth, int64_t max_iter,
                                                 int center_filter, float* kps, int64_t* inliers,
                                                 void* workspace, size_t workspace_bytes,
                                                 void* stream);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PVN3D_VOTE_AGGREGATE_H */
