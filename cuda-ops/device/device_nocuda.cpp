// The device API of a library built without CUDA: everything returns PVN3D_ERR_NO_CUDA, except the
// device count, which is 0.
#include "device.h"

#include "../common/nocuda.h"

extern "C" {

pvn3d_status pvn3d_cuda_device_count(int* count) {
  if (count == nullptr) return pvn3d::fail(PVN3D_ERR_INVALID_ARGUMENT, "pvn3d_cuda_device_count: count is NULL");
  *count = 0;
  return PVN3D_OK;
}
pvn3d_status pvn3d_cuda_get_device_properties(int, char*, size_t, int*, int*, int64_t*, int*) { return PVN3D_NO_CUDA(); }
pvn3d_status pvn3d_cuda_set_device(int) { return PVN3D_NO_CUDA(); }
pvn3d_status pvn3d_cuda_get_device(int*) { return PVN3D_NO_CUDA(); }
pvn3d_status pvn3d_cuda_mem_get_info(size_t*, size_t*) { return PVN3D_NO_CUDA(); }
pvn3d_status pvn3d_cuda_device_synchronize(void) { return PVN3D_NO_CUDA(); }
pvn3d_status pvn3d_cuda_malloc(void**, size_t) { return PVN3D_NO_CUDA(); }
pvn3d_status pvn3d_cuda_free(void*) { return PVN3D_NO_CUDA(); }
pvn3d_status pvn3d_cuda_malloc_host(void**, size_t, int) { return PVN3D_NO_CUDA(); }
pvn3d_status pvn3d_cuda_free_host(void*) { return PVN3D_NO_CUDA(); }
pvn3d_status pvn3d_cuda_host_device_pointer(void**, void*) { return PVN3D_NO_CUDA(); }
pvn3d_status pvn3d_cuda_memset_async(void*, int, size_t, void*) { return PVN3D_NO_CUDA(); }
pvn3d_status pvn3d_cuda_memcpy_h2d_async(void*, const void*, size_t, void*) { return PVN3D_NO_CUDA(); }
pvn3d_status pvn3d_cuda_memcpy_d2h_async(void*, const void*, size_t, void*) { return PVN3D_NO_CUDA(); }
pvn3d_status pvn3d_cuda_memcpy_d2d_async(void*, const void*, size_t, void*) { return PVN3D_NO_CUDA(); }
pvn3d_status pvn3d_cuda_stream_create(void**, int) { return PVN3D_NO_CUDA(); }
pvn3d_status pvn3d_cuda_stream_destroy(void*) { return PVN3D_NO_CUDA(); }
pvn3d_status pvn3d_cuda_stream_synchronize(void*) { return PVN3D_NO_CUDA(); }
pvn3d_status pvn3d_cuda_event_create(void**) { return PVN3D_NO_CUDA(); }
pvn3d_status pvn3d_cuda_event_destroy(void*) { return PVN3D_NO_CUDA(); }
pvn3d_status pvn3d_cuda_event_record(void*, void*) { return PVN3D_NO_CUDA(); }
pvn3d_status pvn3d_cuda_event_synchronize(void*) { return PVN3D_NO_CUDA(); }
pvn3d_status pvn3d_cuda_event_elapsed_ms(float*, void*, void*) { return PVN3D_NO_CUDA(); }

}  // extern "C"
