#include "cuda_utils.cuh"
#include "index_check_cuda.cuh"

namespace pvn3d {
namespace cuda {

namespace {
__global__ void index_error_finish_kernel(int64_t* index_error, const int64_t* idx) {
  const int64_t p = index_error[0];
  if (p >= 0) index_error[1] = idx[p];  // p is a position that the kernel read, so in bounds
}
}  // namespace

pvn3d_status index_error_begin(const char* op, int64_t* index_error, cudaStream_t stream) {
  if (index_error == nullptr) return PVN3D_OK;
  return cuda_status(cudaMemsetAsync(index_error, 0xFF, PVN3D_INDEX_ERROR_BYTES, stream), op,
                     "cudaMemsetAsync(index_error)");
}

pvn3d_status index_error_finish(const char* op, int64_t* index_error, const int64_t* idx, cudaStream_t stream) {
  if (index_error == nullptr) return PVN3D_OK;
  index_error_finish_kernel<<<1, 1, 0, stream>>>(index_error, idx);
  return check_launch(op);
}

}  // namespace cuda
}  // namespace pvn3d
