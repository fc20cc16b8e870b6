/*
 * A small CUDA device API for callers that have no CUDA runtime of their own (the Java side):
 * devices, device and pinned host memory, asynchronous copies, streams, events.
 *
 * Every function returns a pvn3d_status; a CUDA error comes back as PVN3D_ERR_CUDA with the CUDA
 * error name and string in pvn3d_last_error(), never as an abort. Out-pointers must not be NULL
 * unless a function says otherwise. Streams and events are opaque `void*` handles (cudaStream_t /
 * cudaEvent_t); a NULL stream is the legacy default stream. Handles created by another CUDA runtime
 * in the same process (for example ORT's compute stream) can be passed as streams too.
 *
 * In a library built without CUDA every function returns PVN3D_ERR_NO_CUDA ("built without CUDA"),
 * except pvn3d_cuda_device_count, which returns PVN3D_OK with *count = 0.
 */
#ifndef PVN3D_DEVICE_DEVICE_H
#define PVN3D_DEVICE_DEVICE_H

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- devices ---- */

/* Number of CUDA devices. No device, or no usable driver (cudaErrorNoDevice,
 * cudaErrorInsufficientDriver), gives PVN3D_OK with *count = 0; other CUDA errors are errors. */
PVN3D_API pvn3d_status pvn3d_cuda_device_count(int* count);

/* Properties of `device`. Every out-pointer may be NULL (not filled):
 *   name            UTF-8, NUL-terminated, truncated to name_capacity-1 bytes (cudaDeviceProp.name)
 *   cc_major/minor  compute capability (9, 0 on an H100/H200)
 *   total_memory    bytes of global memory
 *   sm_count        number of multiprocessors */
PVN3D_API pvn3d_status pvn3d_cuda_get_device_properties(int device, char* name, size_t name_capacity,
                                                        int* cc_major, int* cc_minor, int64_t* total_memory,
                                                        int* sm_count);

/* The calling thread's current device (cudaSetDevice / cudaGetDevice). */
PVN3D_API pvn3d_status pvn3d_cuda_set_device(int device);
PVN3D_API pvn3d_status pvn3d_cuda_get_device(int* device);

/* Free and total bytes of the current device (cudaMemGetInfo). */
PVN3D_API pvn3d_status pvn3d_cuda_mem_get_info(size_t* free_bytes, size_t* total_bytes);

/* Waits for all work on the current device (cudaDeviceSynchronize). */
PVN3D_API pvn3d_status pvn3d_cuda_device_synchronize(void);

/* ---- memory ---- */

/* Device memory on the current device (cudaMalloc; 256-byte aligned). bytes == 0 gives *ptr = NULL. */
PVN3D_API pvn3d_status pvn3d_cuda_malloc(void** ptr, size_t bytes);
/* Frees device memory; NULL is a no-op. */
PVN3D_API pvn3d_status pvn3d_cuda_free(void* ptr);

/* Page-locked host memory (cudaHostAlloc, portable). mapped != 0 also maps it into the device's
 * address space (cudaHostAllocMapped); pvn3d_cuda_host_device_pointer gives the device alias.
 * bytes == 0 gives *ptr = NULL. */
PVN3D_API pvn3d_status pvn3d_cuda_malloc_host(void** ptr, size_t bytes, int mapped);
/* Frees pinned host memory; NULL is a no-op. */
PVN3D_API pvn3d_status pvn3d_cuda_free_host(void* ptr);
/* Device pointer of mapped pinned memory (cudaHostGetDevicePointer). */
PVN3D_API pvn3d_status pvn3d_cuda_host_device_pointer(void** device_ptr, void* host_ptr);

/* ---- asynchronous memory operations on a stream (return once enqueued) ---- */

/* Sets `bytes` bytes at device address dst to (unsigned char)value (cudaMemsetAsync). */
PVN3D_API pvn3d_status pvn3d_cuda_memset_async(void* dst, int value, size_t bytes, void* stream);
/* Copies (cudaMemcpyAsync). For a truly asynchronous host side, use pinned host memory; with pageable
 * memory CUDA may copy synchronously. bytes == 0 is a no-op. */
PVN3D_API pvn3d_status pvn3d_cuda_memcpy_h2d_async(void* dst_device, const void* src_host, size_t bytes, void* stream);
PVN3D_API pvn3d_status pvn3d_cuda_memcpy_d2h_async(void* dst_host, const void* src_device, size_t bytes, void* stream);
PVN3D_API pvn3d_status pvn3d_cuda_memcpy_d2d_async(void* dst_device, const void* src_device, size_t bytes, void* stream);

/* ---- streams ---- */

/* A new stream (cudaStreamCreateWithFlags); non_blocking != 0: cudaStreamNonBlocking (does not
 * synchronise with the legacy default stream). */
PVN3D_API pvn3d_status pvn3d_cuda_stream_create(void** stream, int non_blocking);
/* Destroys a stream (work already queued still completes); NULL is a no-op. */
PVN3D_API pvn3d_status pvn3d_cuda_stream_destroy(void* stream);
/* Waits until all work queued on `stream` is done. */
PVN3D_API pvn3d_status pvn3d_cuda_stream_synchronize(void* stream);

/* ---- events ---- */

/* A new event with timing enabled (cudaEventCreate). */
PVN3D_API pvn3d_status pvn3d_cuda_event_create(void** event);
/* Destroys an event; NULL is a no-op. */
PVN3D_API pvn3d_status pvn3d_cuda_event_destroy(void* event);
/* Records `event` on `stream` (cudaEventRecord). */
PVN3D_API pvn3d_status pvn3d_cuda_event_record(void* event, void* stream);
/* Waits until `event` has completed (cudaEventSynchronize). */
PVN3D_API pvn3d_status pvn3d_cuda_event_synchronize(void* event);
/* Milliseconds between two completed events (cudaEventElapsedTime, about 0.5 us resolution). */
PVN3D_API pvn3d_status pvn3d_cuda_event_elapsed_ms(float* ms, void* start, void* end);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PVN3D_DEVICE_DEVICE_H */
