/*
 * libpvn3d_ops: the PVN3D custom operators as plain C functions, CPU and CUDA.
 *
 * The one public header of the library. It knows nothing about ONNX Runtime: every operator is a
 * CPU function `pvn3d_<op>_cpu(...)` and a CUDA launcher `pvn3d_<op>_cuda(..., void* stream)` over
 * raw pointers and sizes, returning a pvn3d_status (common/status.h). What each one computes is
 * documented in its own header, beside its kernels, and specified in spec/ops.md.
 *
 * Conventions shared by every operator:
 *  - float tensors are float32, indices are int64, all tensors dense and row-major (C order);
 *  - B >= 1; every other size may be 0 where the spec allows (empty work returns PVN3D_OK at once);
 *  - CUDA launchers take device pointers, run on the stream they are given (NULL = legacy default
 *    stream), never synchronise the device or the stream, never allocate device memory (scratch
 *    comes from the caller, sized by a `..._workspace_bytes` function), and check the launch error;
 *  - a CUDA-side input-index error cannot be known when the launcher returns (the kernel has not run
 *    yet): such launchers take a caller-owned device flag (see common/index_check.h) that the caller
 *    reads once its stream work is done.
 */
#ifndef PVN3D_OPS_H
#define PVN3D_OPS_H

#include "../common/status.h"
#include "../common/index_check.h"
#include "../device/device.h"

#include "../furthest_point_sample/furthest_point_sample.h"
#include "../gather_points/gather_points.h"
#include "../ball_query/ball_query.h"
#include "../group_points/group_points.h"
#include "../three_nn/three_nn.h"
#include "../three_interpolate/three_interpolate.h"

#include "../vote_aggregate/vote_aggregate.h"
#include "../kabsch_solver/kabsch_solver.h"
#include "../pose_solve/pose_solve.h"

#endif /* PVN3D_OPS_H */
