/*
 * PVN3D_GatherPoints (spec/ops.md): out[b, c, m] = features[b, c, idx[b, m]].
 *
 * Inputs / outputs (dense, row-major):
 *   features  float32 [B, C, N]
 *   idx       int64   [B, M]     every value must lie in [0, N)
 *   out       float32 [B, C, M]  OUTPUT
 * Sizes: B, C, N, M >= 0. When B*C*M == 0 there is no output to compute, but idx is still validated
 * when it has elements (B*M > 0, e.g. C == 0): a bad index is the same error as below (with N == 0
 * every index is bad). With B*M == 0 too, PVN3D_OK at once.
 * Pointers: idx must be non-NULL when B*M > 0; features and out only when B*C*M > 0 and their tensor has
 * elements (so NULL is fine for an empty tensor).
 *
 * Errors:
 *   PVN3D_ERR_INVALID_ARGUMENT   a negative size, element counts overflowing int64, a NULL pointer
 *                                that the call needs (see Pointers; nothing written);
 *   PVN3D_ERR_INDEX_OUT_OF_RANGE an index outside [0, N). CPU: the first one (lowest flat position
 *                                in idx) is reported, "PVN3D_GatherPoints: input idx holds index V at
 *                                flat position P, outside [0, N)", and out is not written. CUDA: see
 *                                index_error below.
 */
#ifndef PVN3D_GATHER_POINTS_H
#define PVN3D_GATHER_POINTS_H

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* CPU kernel (host pointers): validates every index first, then gathers (parallel over B*C rows). */
PVN3D_API pvn3d_status pvn3d_gather_points_cpu(int64_t B, int64_t C, int64_t N, int64_t M, const float* features,
                                                const int64_t* idx, float* out);

/* CUDA launcher (device pointers) on `stream` (cudaStream_t, NULL = legacy default); no sync.
 * index_error: caller-owned int64[2] the device can write, holding {-1, -1} when the launch runs (the
 * caller resets it after reading a report; index_check.h): after the stream work is done it still
 * holds {-1, -1}, or the report of the lowest flat position in idx of a bad index; out is 0 wherever the
 * index was bad.
 * Turn it into the CPU path's status with pvn3d_index_error_describe("PVN3D_GatherPoints", "idx",
 * PVN3D_INDEX_ERROR_POSITION(w0), PVN3D_INDEX_ERROR_VALUE(w0, w1), N). NULL: no report.
 * With B*C*M == 0 and B*M > 0 it launches only the check of idx (reported the same way; nothing is
 * launched when index_error is NULL). */
PVN3D_API pvn3d_status pvn3d_gather_points_cuda(int64_t B, int64_t C, int64_t N, int64_t M, const float* features,
                                                 const int64_t* idx, float* out, int64_t* index_error,
                                                 void* stream);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PVN3D_GATHER_POINTS_H */
