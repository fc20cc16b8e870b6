// The device API of device.h over the CUDA runtime.
#include "device.h"

#include <cstring>

#include "../common/checks.h"
#include "../common/cuda_utils.cuh"

using pvn3d::check_pointer;
using pvn3d::cuda::cuda_status;


extern "C" {

pvn3d_status pvn3d_cuda_device_count(int* count) {
  PVN3D_TRY(check_pointer("pvn3d_cuda_device_count", "count", count));
  *count = 0;
  int n = 0;
  const cudaError_t err = cudaGetDeviceCount(&n);
  if (err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver) {
    cudaGetLastError();  // not an error here: do not leave it for the next launch check
    return PVN3D_OK;
  }
  PVN3D_TRY(cuda_status(err, "pvn3d_cuda_device_count", "cudaGetDeviceCount"));
  *count = n;
  return PVN3D_OK;
}

pvn3d_status pvn3d_cuda_get_device_properties(int device, char* name, size_t name_capacity, int* cc_major,
                                              int* cc_minor, int64_t* total_memory, int* sm_count) {
  cudaDeviceProp prop;
  PVN3D_TRY(cuda_status(cudaGetDeviceProperties(&prop, device), "pvn3d_cuda_get_device_properties",
                        "cudaGetDeviceProperties"));
  if (name != nullptr && name_capacity > 0) {
    std::strncpy(name, prop.name, name_capacity - 1);
    name[name_capacity - 1] = '\0';
  }
  if (cc_major) *cc_major = prop.major;
  if (cc_minor) *cc_minor = prop.minor;
  if (total_memory) *total_memory = static_cast<int64_t>(prop.totalGlobalMem);
  if (sm_count) *sm_count = prop.multiProcessorCount;
  return PVN3D_OK;
}

pvn3d_status pvn3d_cuda_set_device(int device) {
  return cuda_status(cudaSetDevice(device), "pvn3d_cuda_set_device", "cudaSetDevice");
}

pvn3d_status pvn3d_cuda_get_device(int* device) {
  PVN3D_TRY(check_pointer("pvn3d_cuda_get_device", "device", device));
  return cuda_status(cudaGetDevice(device), "pvn3d_cuda_get_device", "cudaGetDevice");
}

pvn3d_status pvn3d_cuda_mem_get_info(size_t* free_bytes, size_t* total_bytes) {
  PVN3D_TRY(check_pointer("pvn3d_cuda_mem_get_info", "free_bytes", free_bytes));
  PVN3D_TRY(check_pointer("pvn3d_cuda_mem_get_info", "total_bytes", total_bytes));
  return cuda_status(cudaMemGetInfo(free_bytes, total_bytes), "pvn3d_cuda_mem_get_info", "cudaMemGetInfo");
}

pvn3d_status pvn3d_cuda_device_synchronize(void) {
  return cuda_status(cudaDeviceSynchronize(), "pvn3d_cuda_device_synchronize", "cudaDeviceSynchronize");
}

pvn3d_status pvn3d_cuda_malloc(void** ptr, size_t bytes) {
  PVN3D_TRY(check_pointer("pvn3d_cuda_malloc", "ptr", ptr));
  *ptr = nullptr;
  if (bytes == 0) return PVN3D_OK;
  const cudaError_t err = cudaMalloc(ptr, bytes);
  if (err != cudaSuccess) {
    *ptr = nullptr;
    cudaGetLastError();
    return pvn3d::fail(PVN3D_ERR_CUDA, "pvn3d_cuda_malloc: cudaMalloc(%zu bytes) failed: %s: %s", bytes,
                       cudaGetErrorName(err), cudaGetErrorString(err));
  }
  return PVN3D_OK;
}

pvn3d_status pvn3d_cuda_free(void* ptr) {
  if (ptr == nullptr) return PVN3D_OK;
  return cuda_status(cudaFree(ptr), "pvn3d_cuda_free", "cudaFree");
}

pvn3d_status pvn3d_cuda_malloc_host(void** ptr, size_t bytes, int mapped) {
  PVN3D_TRY(check_pointer("pvn3d_cuda_malloc_host", "ptr", ptr));
  *ptr = nullptr;
  if (bytes == 0) return PVN3D_OK;
  const unsigned flags = cudaHostAllocPortable | (mapped ? cudaHostAllocMapped : 0u);
  const cudaError_t err = cudaHostAlloc(ptr, bytes, flags);
  if (err != cudaSuccess) {
    *ptr = nullptr;
    cudaGetLastError();
    return pvn3d::fail(PVN3D_ERR_CUDA, "pvn3d_cuda_malloc_host: cudaHostAlloc(%zu bytes) failed: %s: %s", bytes,
                       cudaGetErrorName(err), cudaGetErrorString(err));
  }
  return PVN3D_OK;
}

pvn3d_status pvn3d_cuda_free_host(void* ptr) {
  if (ptr == nullptr) return PVN3D_OK;
  return cuda_status(cudaFreeHost(ptr), "pvn3d_cuda_free_host", "cudaFreeHost");
}

pvn3d_status pvn3d_cuda_host_device_pointer(void** device_ptr, void* host_ptr) {
  PVN3D_TRY(check_pointer("pvn3d_cuda_host_device_pointer", "device_ptr", device_ptr));
  PVN3D_TRY(check_pointer("pvn3d_cuda_host_device_pointer", "host_ptr", host_ptr));
  return cuda_status(cudaHostGetDevicePointer(device_ptr, host_ptr, 0), "pvn3d_cuda_host_device_pointer",
                     "cudaHostGetDevicePointer");
}

pvn3d_status pvn3d_cuda_memset_async(void* dst, int value, size_t bytes, void* stream) {
  if (bytes == 0) return PVN3D_OK;
  PVN3D_TRY(check_pointer("pvn3d_cuda_memset_async", "dst", dst));
  return cuda_status(cudaMemsetAsync(dst, value, bytes, pvn3d::cuda::as_stream(stream)), "pvn3d_cuda_memset_async",
                     "cudaMemsetAsync");
}

static pvn3d_status copy_async(const char* fn, void* dst, const void* src, size_t bytes, cudaMemcpyKind kind,
                               void* stream) {
  if (bytes == 0) return PVN3D_OK;
  PVN3D_TRY(check_pointer(fn, "dst", dst));
  PVN3D_TRY(check_pointer(fn, "src", src));
  return cuda_status(cudaMemcpyAsync(dst, src, bytes, kind, pvn3d::cuda::as_stream(stream)), fn, "cudaMemcpyAsync");
}

pvn3d_status pvn3d_cuda_memcpy_h2d_async(void* dst_device, const void* src_host, size_t bytes, void* stream) {
  return copy_async("pvn3d_cuda_memcpy_h2d_async", dst_device, src_host, bytes, cudaMemcpyHostToDevice, stream);
}

pvn3d_status pvn3d_cuda_memcpy_d2h_async(void* dst_host, const void* src_device, size_t bytes, void* stream) {
  return copy_async("pvn3d_cuda_memcpy_d2h_async", dst_host, src_device, bytes, cudaMemcpyDeviceToHost, stream);
}

pvn3d_status pvn3d_cuda_memcpy_d2d_async(void* dst_device, const void* src_device, size_t bytes, void* stream) {
  return copy_async("pvn3d_cuda_memcpy_d2d_async", dst_device, src_device, bytes, cudaMemcpyDeviceToDevice, stream);
}

pvn3d_status pvn3d_cuda_stream_create(void** stream, int non_blocking) {
  PVN3D_TRY(check_pointer("pvn3d_cuda_stream_create", "stream", stream));
  cudaStream_t s = nullptr;
  PVN3D_TRY(cuda_status(cudaStreamCreateWithFlags(&s, non_blocking ? cudaStreamNonBlocking : cudaStreamDefault),
                        "pvn3d_cuda_stream_create", "cudaStreamCreateWithFlags"));
  *stream = s;
  return PVN3D_OK;
}

pvn3d_status pvn3d_cuda_stream_destroy(void* stream) {
  if (stream == nullptr) return PVN3D_OK;
  return cuda_status(cudaStreamDestroy(pvn3d::cuda::as_stream(stream)), "pvn3d_cuda_stream_destroy", "cudaStreamDestroy");
}

pvn3d_status pvn3d_cuda_stream_synchronize(void* stream) {
  return cuda_status(cudaStreamSynchronize(pvn3d::cuda::as_stream(stream)), "pvn3d_cuda_stream_synchronize",
                     "cudaStreamSynchronize");
}

pvn3d_status pvn3d_cuda_event_create(void** event) {
  PVN3D_TRY(check_pointer("pvn3d_cuda_event_create", "event", event));
  cudaEvent_t e = nullptr;
  PVN3D_TRY(cuda_status(cudaEventCreate(&e), "pvn3d_cuda_event_create", "cudaEventCreate"));
  *event = e;
  return PVN3D_OK;
}

pvn3d_status pvn3d_cuda_event_destroy(void* event) {
  if (event == nullptr) return PVN3D_OK;
  return cuda_status(cudaEventDestroy(static_cast<cudaEvent_t>(event)), "pvn3d_cuda_event_destroy", "cudaEventDestroy");
}

pvn3d_status pvn3d_cuda_event_record(void* event, void* stream) {
  PVN3D_TRY(check_pointer("pvn3d_cuda_event_record", "event", event));
  return cuda_status(cudaEventRecord(static_cast<cudaEvent_t>(event), pvn3d::cuda::as_stream(stream)),
                     "pvn3d_cuda_event_record", "cudaEventRecord");
}

pvn3d_status pvn3d_cuda_event_synchronize(void* event) {
  PVN3D_TRY(check_pointer("pvn3d_cuda_event_synchronize", "event", event));
  return cuda_status(cudaEventSynchronize(static_cast<cudaEvent_t>(event)), "pvn3d_cuda_event_synchronize",
                     "cudaEventSynchronize");
}

pvn3d_status pvn3d_cuda_event_elapsed_ms(float* ms, void* start, void* end) {
  PVN3D_TRY(check_pointer("pvn3d_cuda_event_elapsed_ms", "ms", ms));
  PVN3D_TRY(check_pointer("pvn3d_cuda_event_elapsed_ms", "start", start));
  PVN3D_TRY(check_pointer("pvn3d_cuda_event_elapsed_ms", "end", end));
  return cuda_status(cudaEventElapsedTime(ms, static_cast<cudaEvent_t>(start), static_cast<cudaEvent_t>(end)),
                     "pvn3d_cuda_event_elapsed_ms", "cudaEventElapsedTime");
}

}  // extern "C"
