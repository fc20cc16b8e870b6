/*
 * Validation of indices read from inputs (GatherPoints, GroupPoints, ThreeInterpolate, and any
 * operator that reads an index tensor).
 *
 * CPU path: the kernel scans the index tensor before computing and reports the FIRST bad index (the
 * lowest flat position p, counted in elements of the index tensor, row-major) as
 * PVN3D_ERR_INDEX_OUT_OF_RANGE with the message
 *     "<op>: input <name> holds index <value> at flat position <p>, outside [0, <limit>)".
 * Nothing is written to the output in that case.
 *
 * CUDA path: whether an index is bad is known only once the kernel has run, after the launcher has
 * returned. So each such launcher takes `int64_t* index_error`, a caller-owned DEVICE buffer of
 * PVN3D_INDEX_ERROR_WORDS (2) int64 values, 16-byte aligned is enough (cudaMalloc gives 256):
 *
 *   index_error[0]  position: PVN3D_INDEX_ERROR_NONE (-1) when every index was in range, else the
 *                   lowest flat position of a bad index (the same position the CPU path reports);
 *   index_error[1]  value:    the bad index found at that position (-1 when none).
 *
 * Protocol, all on the launcher's stream, in stream order:
 *   1. the launcher resets the buffer (cudaMemsetAsync to 0xFF bytes, i.e. {-1, -1});
 *   2. the kernel records every bad index with an atomicMin on position (as unsigned 64-bit, so -1 is
 *      the largest value) and never reads out of bounds: an output that depends on a bad index is 0;
 *   3. a one-thread kernel copies idx[position] into index_error[1] when position >= 0.
 * The buffer may be reused by the next launch on the same stream (step 1 resets it); two launches in
 * flight on different streams need different buffers.
 *
 * Reading it without a device-wide sync (either way only waits for this stream's work):
 *   a) cudaMemcpyAsync (pvn3d_cuda_memcpy_d2h_async) the 16 bytes into PINNED host memory
 *      (pvn3d_cuda_malloc_host) on the same stream right after the launch, record an event
 *      (pvn3d_cuda_event_record), and read the host copy after pvn3d_cuda_event_synchronize or
 *      pvn3d_cuda_stream_synchronize on that stream (ORT's custom-op compute does this before it
 *      returns its status); or
 *   b) pass a MAPPED pinned buffer's device alias (pvn3d_cuda_malloc_host(..., mapped=1) and
 *      pvn3d_cuda_host_device_pointer) as index_error and read the host side after the stream
 *      synchronises (no copy at all).
 * Then pvn3d_index_error_describe turns the two words into the CPU path's status and message.
 *
 * Passing index_error == NULL skips the report (and the two extra stream operations): bad indices
 * still read nothing out of bounds and give 0, but nobody is told. Use it only for benchmarking.
 */
#ifndef PVN3D_COMMON_INDEX_CHECK_H
#define PVN3D_COMMON_INDEX_CHECK_H

#include "status.h"

#define PVN3D_INDEX_ERROR_WORDS 2
#define PVN3D_INDEX_ERROR_BYTES 16
#define PVN3D_INDEX_ERROR_NONE (-1)

#ifdef __cplusplus
extern "C" {
#endif

/* Turns an index-error report into a status: PVN3D_OK (message untouched) when position < 0, else
 * PVN3D_ERR_INDEX_OUT_OF_RANGE with the same message the CPU path gives:
 *   op     the operator ("PVN3D_GatherPoints"), input the index input's name ("idx"),
 *   limit  the exclusive upper bound of valid indices (N for Gather/Group, m for ThreeInterpolate).
 * op/input may be NULL (printed as "?"). */
PVN3D_API pvn3d_status pvn3d_index_error_describe(const char* op, const char* input, int64_t position,
                                                  int64_t value, int64_t limit);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PVN3D_COMMON_INDEX_CHECK_H */
