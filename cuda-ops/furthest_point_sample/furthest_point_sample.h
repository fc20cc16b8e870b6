/*
 * PVN3D_FurthestPointSample (spec/ops.md): iterative furthest point sampling with padding points.
 *
 * Inputs / outputs (dense, row-major):
 *   xyz  float32 [B, N, 3]   point clouds; a point whose squared norm x*x+y*y+z*z (float32, left to
 *                            right, no FMA) is <= 1e-3 (compared in double, as the original CUDA
 *                            code does) is PADDING: it is never picked after the first step.
 *   idx  int64 [B, npoint]   OUTPUT: the picked indices, in pick order, each in [0, N).
 * Sizes and attributes:
 *   B >= 0 (0: nothing to do), N >= 0, 1 <= npoint <= N.
 *
 * Per batch element: the first pick is index 0 (padding or not). Every point keeps a running
 * distance, starting at 1e10. At each later step the running distance of every candidate becomes
 * min(itself, squared distance to the last pick), and the pick is the candidate with the largest
 * running distance, ties to the lowest index. Candidates are the non-padding points (already picked
 * ones included: their running distance is 0). If no candidate exists, the pick is 0.
 *
 * Non-finite coordinates are not checked (the check would cost the CUDA kernel a pass; the PVN3D
 * pipelines refuse such clouds on the host): a NaN point's running distance never drops below
 * 1e10, so it is picked again at every step; with NaN at index 0 every pick is 0. CPU and CUDA agree.
 *
 * Errors (PVN3D_ERR_INVALID_ARGUMENT, nothing written): npoint < 1, npoint > N, a negative size,
 * element counts overflowing int64, xyz/idx NULL while B > 0. CUDA only: N > 2^31-1, a workspace
 * smaller than pvn3d_furthest_point_sample_cuda_workspace_bytes(B, N, npoint), or NULL while that
 * is > 0.
 */
#ifndef PVN3D_FURTHEST_POINT_SAMPLE_H
#define PVN3D_FURTHEST_POINT_SAMPLE_H

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* CPU kernel (host pointers), on pvn3d_get_num_threads() threads. Parallel over the batch: one thread
 * per element when B >= threads; when B < threads and N is large (>= 8192), all elements at once, each
 * on a team of threads that splits its points (OpenMP builds). The indices never depend on the thread
 * count. */
PVN3D_API pvn3d_status pvn3d_furthest_point_sample_cpu(int64_t B, int64_t N, int64_t npoint, const float* xyz,
                                                        int64_t* idx);

/* Bytes of device scratch the CUDA launcher needs for these sizes: 0 when the points fit on chip
 * (N <= 16384: registers, plus up to 96 KB of shared memory above N = 12288), else B*N*4 for the
 * running distances. 0 for invalid sizes and in CPU-only builds. */
PVN3D_API size_t pvn3d_furthest_point_sample_cuda_workspace_bytes(int64_t B, int64_t N, int64_t npoint);

/* CUDA launcher (device pointers). On sm_90 and later, 4096 < N <= 32768: one thread-block cluster of 8, 4
 * or 2 blocks (1024 threads in all, one block per SM) per batch element; otherwise one thread block of up
 * to 1024 threads per batch element. The environment variable PVN3D_FPS_CLUSTER, read at every launch,
 * overrides the choice for tests and tuning: "0" never uses clusters, "2", "4" or "8" uses clusters of
 * at most that size at every N <= 32768 where the device allows them. workspace: device memory of
 * at least the bytes above (may be NULL when that is 0); its contents need no initialisation and are
 * garbage afterwards. Runs on `stream` (cudaStream_t, NULL = legacy default) and does not sync. */
PVN3D_API pvn3d_status pvn3d_furthest_point_sample_cuda(int64_t B, int64_t N, int64_t npoint, const float* xyz,
                                                         int64_t* idx, void* workspace, size_t workspace_bytes,
                                                         void* stream);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PVN3D_FURTHEST_POINT_SAMPLE_H */
