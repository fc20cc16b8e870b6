/*
 * Device side of the index-error protocol of index_check.h (internal; .cu files only).
 *
 * A launcher that validates indices does, on its stream:
 *   PVN3D_TRY(index_error_begin(op, index_error, stream));     // {-1,-1}; no-op when NULL
 *   kernel<<<...>>>(..., index_error);                         // record_bad_index(index_error, p)
 *   PVN3D_TRY(check_launch(op));
 *   PVN3D_TRY(index_error_finish(op, index_error, idx, stream)); // index_error[1] = idx[index_error[0]]
 */
#ifndef PVN3D_COMMON_INDEX_CHECK_CUDA_CUH
#define PVN3D_COMMON_INDEX_CHECK_CUDA_CUH

#include <cuda_runtime.h>

#include "index_check.h"

namespace pvn3d {
namespace cuda {

/* Records a bad index at flat position p (keeps the lowest position). index_error may be NULL. */
__device__ __forceinline__ void record_bad_index(int64_t* index_error, int64_t p) {
  if (index_error != nullptr)
    atomicMin(reinterpret_cast<unsigned long long*>(index_error), static_cast<unsigned long long>(p));
}

/* True when v is a valid index in [0, limit). */
__device__ __forceinline__ bool index_ok(int64_t v, int64_t limit) {
  return static_cast<uint64_t>(v) < static_cast<uint64_t>(limit);
}

pvn3d_status index_error_begin(const char* op, int64_t* index_error, cudaStream_t stream);
pvn3d_status index_error_finish(const char* op, int64_t* index_error, const int64_t* idx, cudaStream_t stream);

}  // namespace cuda
}  // namespace pvn3d

#endif /* PVN3D_COMMON_INDEX_CHECK_CUDA_CUH */
