/*
 * PVN3D_ThreeInterpolate (spec/ops.md): weighted sum of three features per target point,
 *   out[b, c, j] = f[b, c, idx[b,j,0]]*w[b,j,0] + f[b, c, idx[b,j,1]]*w[b,j,1] + f[b, c, idx[b,j,2]]*w[b,j,2]
 * evaluated in that order in float32 with every product and sum rounded (no FMA), so CPU and CUDA
 * give the same bits.
 *
 * Inputs / outputs (dense, row-major):
 *   features  float32 [B, C, m]
 *   idx       int64   [B, n, 3]  every value must lie in [0, m) (ThreeNN's output)
 *   weight    float32 [B, n, 3]
 *   out       float32 [B, C, n]  OUTPUT
 * Sizes: B, C, m, n >= 0. When B*C*n == 0 there is no output to compute, but idx is still validated
 * when it has elements (B*n > 0, e.g. C == 0): a bad index is the same error as below (with m == 0 every
 * index is bad); weight is not read. With B*n == 0 too, PVN3D_OK at once.
 * Pointers: idx must be non-NULL when B*n > 0; features, weight and out only when B*C*n > 0 and their
 * tensor has elements (so NULL is fine for an empty tensor).
 *
 * Errors:
 *   PVN3D_ERR_INVALID_ARGUMENT   a negative size, element counts overflowing int64, a NULL pointer
 *                                that the call needs (see Pointers; nothing written);
 *   PVN3D_ERR_INDEX_OUT_OF_RANGE an index outside [0, m). CPU: the first one (lowest flat position in
 *                                idx, i.e. (b*n + j)*3 + k) is reported, "PVN3D_ThreeInterpolate: input
 *                                idx holds index V at flat position P, outside [0, m)", and out is not
 *                                written. CUDA: see index_error below.
 */
#ifndef PVN3D_THREE_INTERPOLATE_H
#define PVN3D_THREE_INTERPOLATE_H

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* CPU kernel (host pointers): validates every index first, then interpolates (parallel over rows). */
PVN3D_API pvn3d_status pvn3d_three_interpolate_cpu(int64_t B, int64_t C, int64_t m, int64_t n, const float* features,
                                                    const int64_t* idx, const float* weight, float* out);

/* CUDA launcher (device pointers) on `stream` (cudaStream_t, NULL = legacy default); no sync.
 * index_error: caller-owned int64[2] the device can write, holding {-1, -1} when the launch runs (the
 * caller resets it after reading a report; index_check.h): after the stream work is done it still
 * holds {-1, -1}, or the report of the lowest flat position in idx of a bad index; out[b, :, j] is 0
 * wherever one of idx[b, j, :] was bad.
 * Turn it into the CPU path's status with pvn3d_index_error_describe("PVN3D_ThreeInterpolate", "idx",
 * PVN3D_INDEX_ERROR_POSITION(w0), PVN3D_INDEX_ERROR_VALUE(w0, w1), m). NULL: no report.
 * With B*C*n == 0 and B*n > 0 it launches only the check of idx (reported the same way, lowest bad flat
 * position; nothing is launched when index_error is NULL). */
PVN3D_API pvn3d_status pvn3d_three_interpolate_cuda(int64_t B, int64_t C, int64_t m, int64_t n, const float* features,
                                                     const int64_t* idx, const float* weight, float* out,
                                                     int64_t* index_error, void* stream);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PVN3D_THREE_INTERPOLATE_H */
