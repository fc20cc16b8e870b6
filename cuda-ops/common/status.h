/*
 * Status codes and the last-error message shared by every entry point of libpvn3d_ops.
 *
 * Every public function returns a pvn3d_status. On anything but PVN3D_OK the calling thread's
 * last-error message (pvn3d_last_error) says what went wrong, naming the operator, the argument and
 * the offending value. The message is thread-local, so concurrent callers never see each other's.
 */
#ifndef PVN3D_COMMON_STATUS_H
#define PVN3D_COMMON_STATUS_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32) && defined(PVN3D_BUILDING_LIBRARY)
#define PVN3D_API __declspec(dllexport)
#elif defined(_WIN32)
#define PVN3D_API __declspec(dllimport)
#else
#define PVN3D_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum pvn3d_status {
  PVN3D_OK = 0,
  /* A size, attribute or pointer argument is invalid (e.g. npoint > N, radius <= 0, m < 3). */
  PVN3D_ERR_INVALID_ARGUMENT = 1,
  /* An index read from an input lies outside its valid range. */
  PVN3D_ERR_INDEX_OUT_OF_RANGE = 2,
  /* A CUDA runtime call or kernel launch failed; the message carries cudaGetErrorString. */
  PVN3D_ERR_CUDA = 3,
  /* A CUDA entry point was called on a library built without a CUDA compiler. */
  PVN3D_ERR_NO_CUDA = 4,
  /* A host allocation failed. */
  PVN3D_ERR_OUT_OF_MEMORY = 5,
  /* Anything else (an internal invariant broke). */
  PVN3D_ERR_INTERNAL = 6
} pvn3d_status;

/* The calling thread's message for the last non-OK status ("" if none). Valid until the thread's
 * next failing call into the library. */
PVN3D_API const char* pvn3d_last_error(void);

/* Clears the calling thread's last-error message. */
PVN3D_API void pvn3d_clear_error(void);

/* A short, static name for a status code ("PVN3D_OK", "PVN3D_ERR_CUDA", ...). */
PVN3D_API const char* pvn3d_status_name(int status);

/* The library's version string ("MAJOR.MINOR.PATCH") and whether CUDA kernels were compiled in. */
PVN3D_API const char* pvn3d_version(void);
PVN3D_API int pvn3d_built_with_cuda(void);

/* Threads the CPU kernels may use: n >= 1 sets it (at most PVN3D_MAX_THREADS; more is taken as that), n <= 0
 * restores the default (all cores). */
#define PVN3D_MAX_THREADS 1024
PVN3D_API void pvn3d_set_num_threads(int n);
PVN3D_API int pvn3d_get_num_threads(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PVN3D_COMMON_STATUS_H */
