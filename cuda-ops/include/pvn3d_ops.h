/*
 * libpvn3d_ops: the PVN3D custom operators as plain C functions, CPU and CUDA.
 *
 * The one header a caller includes (the library's other public headers come with it). It knows
 * nothing about ONNX Runtime: every operator is a CPU function `pvn3d_<op>_cpu(...)` and a CUDA
 * launcher `pvn3d_<op>_cuda(..., void* stream)` over raw pointers and sizes, returning a pvn3d_status
 * (status.h). What each one computes is documented in its own header, beside its kernels, and
 * specified in spec/ops.md.
 *
 * Conventions shared by every operator:
 *  - float tensors are float32, indices are int64, all tensors dense and row-major (C order);
 *  - B >= 1; every other size may be 0 where the spec allows (empty work returns PVN3D_OK at once);
 *  - CUDA launchers take device pointers, run on the stream they are given (NULL = legacy default
 *    stream), never synchronise the device or the stream, never allocate device memory (scratch
 *    comes from the caller, sized by a `..._workspace_bytes` function), and check the launch error;
 *  - a CUDA-side input-index error cannot be known when the launcher returns (the kernel has not run
 *    yet): such launchers take a caller-owned device flag (see index_check.h) that the caller
 *    reads once its stream work is done.
 *
 * Valid C (C99 and later) and C++. Installed (cmake --install) as <prefix>/include/pvn3d/pvn3d_ops.h
 * beside the headers it includes, which it names without a path: a consumer compiles with
 * -I<prefix>/include, writes `#include <pvn3d/pvn3d_ops.h>` and links -lpvn3d_ops from <prefix>/lib.
 * This one header declares every function the library exports.
 */
#ifndef PVN3D_OPS_H
#define PVN3D_OPS_H

#include "status.h"
#include "index_check.h"
#include "device.h"

#include "furthest_point_sample.h"
#include "gather_points.h"
#include "ball_query.h"
#include "group_points.h"
#include "three_nn.h"
#include "three_interpolate.h"

#include "vote_aggregate.h"
#include "kabsch_solver.h"
#include "pose_solve.h"

#endif /* PVN3D_OPS_H */
