/*
 * PVN3D_KabschSolver: the rigid transform (R, t) minimising sum_i |R a_i + t - b_i|^2 (spec/ops.md).
 *
 * Inputs
 *   model_kps  float32 [K,3] (model_B = 0: shared by every batch item) or [model_B,K,3] with
 *              model_B == B (one model per batch item). model_K is its keypoint count.
 *   pred_kps   float32 [B,K,3]
 * Outputs
 *   R  float32 [B,3,3] row-major, always a proper rotation (det +1)
 *   t  float32 [B,3]
 *
 * Computation: kabsch_core.h (double precision throughout, one-sided Jacobi SVD, reflection fixed by
 * negating the last column of V, U's last column = U0 x U1). CPU and CUDA run the same code with
 * the same rounding and give bit-identical R and t for identical inputs.
 * Degenerate inputs (documented, not errors): collinear keypoints give a proper R that maps the
 * model line onto the predicted line, with a deterministic but arbitrary rotation about it;
 * coincident keypoints (all a_i equal, or all b_i equal) give R = I, t = mean b - mean a; a batch
 * item whose pred_kps are all NaN (VoteAggregate's answer for an empty mask) gets NaN R and t, as
 * PoseSolve gives it, so one frame without the object does not fail a batch.
 *
 * Errors (PVN3D_ERR_INVALID_ARGUMENT, the message names the operator, the input and the value):
 *   K < 3; model_K != K ("mismatched K"); model_B not 0 and != B ("mismatched B"); B < 1;
 *   NULL pointers; the element count overflowing int64;
 *   a NaN or infinite coordinate in model_kps, or in a pred_kps item that is not all NaN: CPU: the status, with the message
 *     "PVN3D_KabschSolver: input <model_kps|pred_kps> holds a non-finite value (<v>) at flat
 *      position <p>" (the lowest position in model_kps, else in pred_kps), nothing written.
 *     CUDA: known only after the kernel ran. The batch items concerned get NaN in R and t, and if
 *     `input_error` is not NULL it receives the report, with the protocol of index_check.h
 *     (a caller-owned DEVICE buffer of 2 int64, reset by the launcher, read after the stream
 *     synchronised):
 *       input_error[0]  -1 when every value was finite, else the lowest flat position of a
 *                       non-finite value counted over model_kps then pred_kps
 *                       (p < model_numel: model_kps[p]; else pred_kps[p - model_numel]);
 *       input_error[1]  the 32 bits of that float value (as an unsigned number), -1 when none.
 *     pvn3d_kabsch_error_describe turns it into the CPU path's status and message.
 *   CUDA failures: PVN3D_ERR_CUDA; a CPU-only library: PVN3D_ERR_NO_CUDA.
 *
 * CUDA: device pointers, runs on `stream` (NULL = legacy default), never synchronises, needs no
 * workspace (one thread per batch item).
 */
#ifndef PVN3D_KABSCH_SOLVER_H
#define PVN3D_KABSCH_SOLVER_H

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

PVN3D_API pvn3d_status pvn3d_kabsch_solver_cpu(const float* model_kps, int64_t model_B,
                                               int64_t model_K, const float* pred_kps, int64_t B,
                                               int64_t K, float* R, float* t);

PVN3D_API pvn3d_status pvn3d_kabsch_solver_cuda(const float* model_kps, int64_t model_B,
                                                int64_t model_K, const float* pred_kps, int64_t B,
                                                int64_t K, float* R, float* t,
                                                int64_t* input_error, void* stream);

/* Status and message for a CUDA non-finite report (see above). op names the operator in the
 * message (NULL: "PVN3D_KabschSolver"); model_numel = element count of model_kps (K*3 or B*K*3);
 * second_input names the input after model_kps (NULL: "pred_kps"). PVN3D_OK when position < 0. */
PVN3D_API pvn3d_status pvn3d_kabsch_error_describe(const char* op, int64_t position, int64_t value_bits,
                                                   int64_t model_numel, const char* second_input);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PVN3D_KABSCH_SOLVER_H */
