/*
 * PVN3D_PoseSolve: VoteAggregate followed by KabschSolver, fused (spec/ops.md).
 *
 * Inputs
 *   votes      float32 [B,K,N,3], mask [B,N] (mask_dtype, NULL = all points): as vote_aggregate.h
 *   model_kps  float32 [K,3] (model_B = 0) or [B,K,3] (model_B = B): as kabsch_solver.h
 * Attributes   bandwidth, max_iter, center_filter: as vote_aggregate.h
 * Outputs
 *   R        float32 [B,3,3], t float32 [B,3]: the Kabsch fit of model_kps onto kps
 *   kps      float32 [B,K,3]: the clustered keypoints (exactly VoteAggregate's output)
 *   inliers  int64 [B] or NULL when not wanted: VoteAggregate's inliers
 *
 * A batch item with no candidate point (empty mask) gets NaN kps, inliers 0 and NaN R and t: like
 * VoteAggregate, not an error. Every other item's keypoints are finite, so its R is proper.
 *
 * Errors (PVN3D_ERR_INVALID_ARGUMENT): every VoteAggregate argument error; K < 3, model_K != K,
 * model_B not 0 and != B (Kabsch's rules); NULL R/t/kps/model_kps. A non-finite model_kps value:
 *   CPU: "PVN3D_PoseSolve: input model_kps holds a non-finite value (<v>) at flat position <p>";
 *   CUDA: R and t of the items concerned (all, for a shared model) are NaN and `input_error` (nullable, device, 2 int64, protocol of
 *   kabsch_solver.h; positions count over model_kps only) reports it; decode it with
 *   pvn3d_kabsch_error_describe("PVN3D_PoseSolve", pos, bits, model_numel, "kps").
 *
 * CUDA: device pointers; everything (clustering, the fit) runs on `stream` as a sequence of kernels,
 * the keypoints never leave the device, nothing synchronises or allocates; the scratch memory is the
 * caller's `workspace` of at least pvn3d_pose_solve_cuda_workspace_bytes(B,K,N) bytes (16-byte
 * aligned).
 */
#ifndef PVN3D_POSE_SOLVE_H
#define PVN3D_POSE_SOLVE_H

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

PVN3D_API pvn3d_status pvn3d_pose_solve_cpu(const float* votes, const void* mask, int mask_dtype, int64_t B,
                                            int64_t K, int64_t N, const float* model_kps, int64_t model_B,
                                            int64_t model_K, float bandwidth, int64_t max_iter,
                                            int center_filter, float* R, float* t, float* kps,
                                            int64_t* inliers);

PVN3D_API size_t pvn3d_pose_solve_cuda_workspace_bytes(int64_t B, int64_t K, int64_t N);

PVN3D_API pvn3d_status pvn3d_pose_solve_cuda(const float* votes, const void* mask, int mask_dtype, int64_t B,
                                             int64_t K, int64_t N, const float* model_kps, int64_t model_B,
                                             int64_t model_K, float bandwidth, int64_t max_iter,
                                             int center_filter, float* R, float* t, float* kps,
                                             int64_t* inliers, int64_t* input_error, void* workspace,
                                             size_t workspace_bytes, void* stream);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PVN3D_POSE_SOLVE_H */
