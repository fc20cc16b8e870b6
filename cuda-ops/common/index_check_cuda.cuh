/*
 * Device side of the index-error protocol of index_check.h (internal; .cu files only).
 *
 * A launcher that validates indices passes the caller's buffer to its kernel and adds nothing to the
 * stream: the caller has reset the buffer to {-1, -1}; the kernel calls
 *   if (!index_ok(v, limit)) record_bad_index(index_error, p, v);
 * for a bad index v at flat position p of the index tensor, and reads nothing out of bounds.
 * A launcher with an empty output but a non-empty index tensor (C == 0) launches check_indices_cuda
 * instead: the indices are still validated (spec/ops.md), and it is still one kernel on the stream.
 */
#ifndef PVN3D_COMMON_INDEX_CHECK_CUDA_CUH
#define PVN3D_COMMON_INDEX_CHECK_CUDA_CUH

#include <cuda_runtime.h>

#include "index_check.h"

namespace pvn3d {
namespace cuda {

/* Records bad index v at flat position p (index_check.h step 2): both words keep the lowest position's
 * pair, so no second pass has to look the value up. index_error may be NULL. */
__device__ __forceinline__ void record_bad_index(int64_t* index_error, int64_t p, int64_t v) {
  if (index_error == nullptr) return;
  const unsigned long long pos = p < 0xFFFFFFFELL ? static_cast<unsigned long long>(p) : 0xFFFFFFFEull;
  const unsigned long long bits = static_cast<unsigned long long>(v);
  auto* words = reinterpret_cast<unsigned long long*>(index_error);
  atomicMin(words, (pos << 32) | (bits >> 32));
  atomicMin(words + 1, (pos << 32) | (bits & 0xFFFFFFFFull));
}

/* True when v is a valid index in [0, limit). */
__device__ __forceinline__ bool index_ok(int64_t v, int64_t limit) {
  return static_cast<uint64_t>(v) < static_cast<uint64_t>(limit);
}

/* Launches a kernel on `stream` that only validates idx[0, count) against [0, limit) and reports the
 * lowest bad flat position into index_error as the gather kernels do (no sync, no host allocation).
 * PVN3D_OK without a launch when count == 0 or index_error is NULL (nobody to tell); a launch failure
 * is PVN3D_ERR_CUDA naming op. For launchers whose output is empty while their index input is not. */
pvn3d_status check_indices_cuda(const char* op, const int64_t* idx, int64_t count, int64_t limit,
                                int64_t* index_error, cudaStream_t stream);

}  // namespace cuda
}  // namespace pvn3d

#endif /* PVN3D_COMMON_INDEX_CHECK_CUDA_CUH */
