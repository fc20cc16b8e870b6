/*
 * The library's side of status.h (internal; C++ only): how an entry point sets the thread's
 * last-error message. Not installed: callers see only status.h.
 */
#ifndef PVN3D_COMMON_STATUS_INTERNAL_H
#define PVN3D_COMMON_STATUS_INTERNAL_H

#include "status.h"

namespace pvn3d {
/* Sets the thread's last-error message (printf-style) and returns the status, for
 * `return fail(PVN3D_ERR_INVALID_ARGUMENT, "...", ...);` at the error site. */
pvn3d_status fail(pvn3d_status status, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
}  // namespace pvn3d

#endif /* PVN3D_COMMON_STATUS_INTERNAL_H */
