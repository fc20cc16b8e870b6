/*
 * PVN3D_BallQuery (spec/ops.md): for each centre, the first nsample points (in index order) within
 * the ball.
 *
 * Inputs / outputs (dense, row-major):
 *   xyz      float32 [B, N, 3]        the points
 *   new_xyz  float32 [B, M, 3]        the centres
 *   idx      int64   [B, M, nsample]  OUTPUT, each value in [0, N) (0 when the ball is empty)
 * Sizes and attributes: B, N, M >= 0; radius > 0 (float32; +inf allowed, NaN is not); nsample >= 1.
 * When B*M == 0 there is nothing to do (PVN3D_OK). N == 0 gives all zeros.
 *
 * For each centre the points are scanned in index order and those with squared distance
 * (float32, (ax-bx)^2+(ay-by)^2+(az-bz)^2 left to right, no FMA) STRICTLY less than radius*radius
 * (float32) are kept, up to nsample of them. The first hit fills every slot and later hits
 * overwrite slots 1, 2, ... in order: with k hits, slots 0..k-1 hold the hits in index order and
 * slots k..nsample-1 the first hit. A centre without a hit gets all zeros.
 * Non-finite coordinates are not checked: a NaN distance is never < radius^2, so a NaN centre gets
 * all zeros and a NaN point is never a hit.
 *
 * Errors (PVN3D_ERR_INVALID_ARGUMENT, nothing written): a negative size, nsample < 1, radius not
 * > 0, element counts overflowing int64, a NULL pointer with non-empty work. CUDA only: N or M above
 * 2^31-1.
 */
#ifndef PVN3D_BALL_QUERY_H
#define PVN3D_BALL_QUERY_H

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* CPU kernel (host pointers), parallel over the B*M centres. */
PVN3D_API pvn3d_status pvn3d_ball_query_cpu(int64_t B, int64_t N, int64_t M, float radius, int64_t nsample,
                                             const float* xyz, const float* new_xyz, int64_t* idx);

/* CUDA launcher (device pointers) on `stream` (cudaStream_t, NULL = legacy default); no sync. One
 * warp per centre, the cloud streamed through shared memory in tiles. */
PVN3D_API pvn3d_status pvn3d_ball_query_cuda(int64_t B, int64_t N, int64_t M, float radius, int64_t nsample,
                                              const float* xyz, const float* new_xyz, int64_t* idx, void* stream);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PVN3D_BALL_QUERY_H */
