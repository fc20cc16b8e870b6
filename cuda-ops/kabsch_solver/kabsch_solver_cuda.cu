// PVN3D_KabschSolver on CUDA: one thread per batch item running kabsch_core.h, the same double-precision
// code as the CPU kernel (bit-identical results: the library is built with --fmad=false).
#include "kabsch_solver.h"

#include "../common/checks.h"
#include "../common/cuda_utils.cuh"
#include "index_check.h"
#include "kabsch_core.h"
#include "kabsch_internal.h"
#include "kabsch_solver_cuda.cuh"
#include "../common/nvtx_range.h"

namespace pvn3d {
namespace kabsch {
namespace {

__device__ __forceinline__ void record(int64_t* input_error, int64_t position) {
  if (input_error != nullptr)
    atomicMin(reinterpret_cast<unsigned long long*>(input_error), static_cast<unsigned long long>(position));
}

__global__ void kabsch_kernel(const float* model, int64_t model_B, const float* pred, int64_t B, int64_t K, float* R,
                              float* t, int64_t* input_error, int pred_is_error) {
  const int64_t b = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (b >= B) return;
  const int64_t model_off = model_B == 0 ? 0 : b * K * 3;
  const int64_t model_numel = (model_B == 0 ? 1 : B) * K * 3;
  const float* a = model + model_off;
  const float* p = pred + b * K * 3;
  bool bad = false;
  for (int64_t i = 0; i < K * 3; ++i)
    if (!k_finite(a[i])) {
      bad = true;
      record(input_error, model_off + i);
      break;
    }
  for (int64_t i = 0; i < K * 3; ++i)
    if (!k_finite(p[i])) {
      bad = true;
      // all NaN: an empty mask's keypoints, no pose but no error (as on the CPU)
      if (pred_is_error && !k_all_nan(p, K * 3)) record(input_error, model_numel + b * K * 3 + i);
      break;
    }
  if (bad) {
    const float nan = __int_as_float(0x7FC00000);
    for (int i = 0; i < 9; ++i) R[b * 9 + i] = nan;
    for (int i = 0; i < 3; ++i) t[b * 3 + i] = nan;
    return;
  }
  solve(a, p, K, R + b * 9, t + b * 3);
}

__global__ void finish_kernel(int64_t* input_error, const float* model, int64_t model_numel, const float* pred) {
  const int64_t pos = input_error[0];
  if (pos < 0) return;
  const float v = pos < model_numel ? model[pos] : pred[pos - model_numel];
  input_error[1] = static_cast<int64_t>(static_cast<uint32_t>(__float_as_uint(v)));
}

}  // namespace

pvn3d_status launch_cuda(const char* op, const float* model_kps, int64_t model_B, const float* pred_kps, int64_t B,
                         int64_t K, float* R, float* t, int64_t* input_error, int pred_is_error, cudaStream_t stream) {
  using pvn3d::cuda::cuda_status;
  if (input_error != nullptr)
    PVN3D_TRY(cuda_status(cudaMemsetAsync(input_error, 0xFF, PVN3D_INDEX_ERROR_BYTES, stream), op,
                          "cudaMemsetAsync(input_error)"));
  constexpr int kThreads = 64;
  kabsch_kernel<<<pvn3d::cuda::grid_for(B, kThreads, INT32_MAX), kThreads, 0, stream>>>(model_kps, model_B, pred_kps, B,
                                                                                       K, R, t, input_error,
                                                                                       pred_is_error);
  PVN3D_TRY(pvn3d::cuda::check_launch(op));
  if (input_error != nullptr) {
    finish_kernel<<<1, 1, 0, stream>>>(input_error, model_kps, (model_B == 0 ? 1 : B) * K * 3, pred_kps);
    PVN3D_TRY(pvn3d::cuda::check_launch(op));
  }
  return PVN3D_OK;
}

}  // namespace kabsch
}  // namespace pvn3d

extern "C" pvn3d_status pvn3d_kabsch_solver_cuda(const float* model_kps, int64_t model_B, int64_t model_K,
                                                 const float* pred_kps, int64_t B, int64_t K, float* R, float* t,
                                                 int64_t* input_error, void* stream) {
  PVN3D_NVTX_RANGE("PVN3D_KabschSolver");
  static const char* op = "PVN3D_KabschSolver";
  using namespace pvn3d;
  PVN3D_TRY(kabsch::check_shapes(op, model_B, model_K, B, K));
  PVN3D_TRY(check_pointer(op, "model_kps", model_kps));
  PVN3D_TRY(check_pointer(op, "pred_kps", pred_kps));
  PVN3D_TRY(check_pointer(op, "R", R));
  PVN3D_TRY(check_pointer(op, "t", t));
  return kabsch::launch_cuda(op, model_kps, model_B, pred_kps, B, K, R, t, input_error, 1,
                             pvn3d::cuda::as_stream(stream));
}
