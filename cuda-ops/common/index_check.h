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
 * returned. So each such launcher takes `int64_t* index_error`, a caller-owned buffer of
 * PVN3D_INDEX_ERROR_WORDS (2) int64 words that the device can write (device memory, or the device
 * alias of mapped pinned host memory), 16-byte aligned is enough (cudaMalloc gives 256).
 *
 * Protocol (the launcher adds no stream operation of its own: no reset, no second kernel):
 *   1. the CALLER makes the buffer hold {-1, -1} (every byte 0xFF) before the launch runs: once when it
 *      allocates it, and again after it has read a report (a mapped buffer: two host stores; a device
 *      buffer: cudaMemsetAsync(0xFF) on the stream before the next launch);
 *   2. the kernel never reads out of bounds (an output that depends on a bad index is 0) and leaves the
 *      buffer untouched when every index is in range; for each bad index v at flat position p it does
 *          atomicMin(word 0, (p' << 32) | (high 32 bits of v))
 *          atomicMin(word 1, (p' << 32) | (low 32 bits of v))        (unsigned 64-bit)
 *      with p' = min(p, 0xFFFFFFFE). The position sits in the high half of both words, so both minima
 *      belong to the lowest bad position, and together they carry its whole 64-bit index.
 * After the stream's work is done the words read
 *   {-1, -1}                   every index was in range (PVN3D_INDEX_ERROR_NONE);
 *   anything else              PVN3D_INDEX_ERROR_POSITION(w0) is the lowest flat position of a bad index
 *                              (the position the CPU path reports; positions from 0xFFFFFFFE on read as
 *                              0xFFFFFFFE) and PVN3D_INDEX_ERROR_VALUE(w0, w1) the bad index found there.
 * Several launches may share one buffer between two reads (the report is then the lowest bad position of
 * any of them); launches in flight on different streams that are read separately need separate buffers.
 *
 * Reading it without a device-wide sync (either way only waits for this stream's work):
 *   a) cudaMemcpyAsync (pvn3d_cuda_memcpy_d2h_async) the 16 bytes into PINNED host memory
 *      (pvn3d_cuda_malloc_host) on the same stream right after the launch, record an event
 *      (pvn3d_cuda_event_record), and read the host copy after pvn3d_cuda_event_synchronize or
 *      pvn3d_cuda_stream_synchronize on that stream; or
 *   b) pass a MAPPED pinned buffer's device alias (pvn3d_cuda_malloc_host(..., mapped=1) and
 *      pvn3d_cuda_host_device_pointer) as index_error and read the host side after the stream
 *      synchronises (no copy at all; resetting it is two host stores).
 * Then pvn3d_index_error_describe(op, input, PVN3D_INDEX_ERROR_POSITION(w0), PVN3D_INDEX_ERROR_VALUE(w0,
 * w1), limit) turns the two words into the CPU path's status and message.
 *
 * Passing index_error == NULL skips the report: bad indices still read nothing out of bounds and give
 * 0, but nobody is told. Use it only for benchmarking.
 */
#ifndef PVN3D_COMMON_INDEX_CHECK_H
#define PVN3D_COMMON_INDEX_CHECK_H

#include "status.h"

#define PVN3D_INDEX_ERROR_WORDS 2
#define PVN3D_INDEX_ERROR_BYTES 16
#define PVN3D_INDEX_ERROR_NONE (-1)
/* Decoding the two report words (w0 == PVN3D_INDEX_ERROR_NONE: no bad index). */
#define PVN3D_INDEX_ERROR_POSITION(w0) \
  ((w0) == PVN3D_INDEX_ERROR_NONE ? (int64_t)PVN3D_INDEX_ERROR_NONE : (int64_t)((uint64_t)(w0) >> 32))
#define PVN3D_INDEX_ERROR_VALUE(w0, w1) \
  ((int64_t)(((uint64_t)(w0) << 32) | ((uint64_t)(w1) & 0xFFFFFFFFu)))

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
