/*
 * PVN3D_ThreeNN (spec/ops.md): the three nearest known points of every unknown point.
 *
 * Inputs / outputs (dense, row-major):
 *   unknown  float32 [B, n, 3]
 *   known    float32 [B, m, 3]
 *   dist2    float32 [B, n, 3]  OUTPUT: squared distances, ascending (the graph applies Sqrt after)
 *   idx      int64   [B, n, 3]  OUTPUT: the matching indices into known, each in [0, m)
 * Sizes: B, n >= 0, m >= 3. When B*n == 0 there is nothing to do (PVN3D_OK; m is still checked).
 *
 * Squared distances are float32 (ax-bx)^2+(ay-by)^2+(az-bz)^2, left to right, no FMA. Known points
 * are scanned in index order and inserted with strict `<`, so on equal distances the earlier index
 * wins; the result is the three smallest (distance, index) pairs in lexicographic order. A known
 * point at distance +inf or NaN is never inserted: a slot no point reached keeps dist2 = +inf and
 * index 0.
 *
 * Errors (PVN3D_ERR_INVALID_ARGUMENT, nothing written): m < 3, a negative size, element counts
 * overflowing int64, a NULL pointer with non-empty work. CUDA only: n or m above 2^31-1.
 */
#ifndef PVN3D_THREE_NN_H
#define PVN3D_THREE_NN_H

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* CPU kernel (host pointers), parallel over the B*n unknown points. */
PVN3D_API pvn3d_status pvn3d_three_nn_cpu(int64_t B, int64_t n, int64_t m, const float* unknown, const float* known,
                                           float* dist2, int64_t* idx);

/* CUDA launcher (device pointers) on `stream` (cudaStream_t, NULL = legacy default); no sync. A group
 * of 8 threads per unknown point, known points streamed through shared memory. */
PVN3D_API pvn3d_status pvn3d_three_nn_cuda(int64_t B, int64_t n, int64_t m, const float* unknown, const float* known,
                                            float* dist2, int64_t* idx, void* stream);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PVN3D_THREE_NN_H */
