/*
 * The library's side of status.h (internal; C++ only): how an entry point sets the thread's
 * last-error message. Not installed: callers see only status.h.
 */
#ifndef PVN3D_COMMON_STATUS_INTERNAL_H
#define PVN3D_COMMON_STATUS_INTERNAL_H

#include <new>
#include <stdexcept>

#include "status.h"

namespace pvn3d {
/* Sets the thread's last-error message (printf-style) and returns the status, for
 * `return fail(PVN3D_ERR_INVALID_ARGUMENT, "...", ...);` at the error site. */
pvn3d_status fail(pvn3d_status status, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Runs an entry point's body (a callable returning pvn3d_status) so that no C++ exception crosses the C
 * ABI, where it would terminate the process (a JVM calling in dies with it): allocation failures, a size
 * beyond what one std::vector may hold included, become PVN3D_ERR_OUT_OF_MEMORY. Every entry point that
 * allocates on the host goes through it. */
template <class Body>
pvn3d_status guarded(const char* op, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return fail(PVN3D_ERR_OUT_OF_MEMORY, "%s: out of host memory", op);
  } catch (const std::length_error&) {
    return fail(PVN3D_ERR_OUT_OF_MEMORY, "%s: out of host memory (more than one allocation can hold)", op);
  } catch (const std::exception& e) {
    return fail(PVN3D_ERR_INTERNAL, "%s: %s", op, e.what());
  } catch (...) {
    return fail(PVN3D_ERR_INTERNAL, "%s: an unknown C++ exception", op);
  }
}
}  // namespace pvn3d

#endif /* PVN3D_COMMON_STATUS_INTERNAL_H */
