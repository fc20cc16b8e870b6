#include "status_internal.h"

#include <cstdarg>
#include <cstdio>

namespace {
// One message per thread: concurrent callers (ORT runs kernels from its thread pool) never read
// each other's errors.
thread_local char last_error[1024] = "";
}  // namespace

namespace pvn3d {
pvn3d_status fail(pvn3d_status status, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(last_error, sizeof last_error, fmt, args);
  va_end(args);
  return status;
}
}  // namespace pvn3d

extern "C" {

const char* pvn3d_last_error(void) { return last_error; }

void pvn3d_clear_error(void) { last_error[0] = '\0'; }

const char* pvn3d_status_name(int status) {
  switch (status) {
    case PVN3D_OK: return "PVN3D_OK";
    case PVN3D_ERR_INVALID_ARGUMENT: return "PVN3D_ERR_INVALID_ARGUMENT";
    case PVN3D_ERR_INDEX_OUT_OF_RANGE: return "PVN3D_ERR_INDEX_OUT_OF_RANGE";
    case PVN3D_ERR_CUDA: return "PVN3D_ERR_CUDA";
    case PVN3D_ERR_NO_CUDA: return "PVN3D_ERR_NO_CUDA";
    case PVN3D_ERR_OUT_OF_MEMORY: return "PVN3D_ERR_OUT_OF_MEMORY";
    case PVN3D_ERR_INTERNAL: return "PVN3D_ERR_INTERNAL";
    default: return "PVN3D_ERR_UNKNOWN";
  }
}

}  // extern "C"
