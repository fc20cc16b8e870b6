// pvn3d_version and pvn3d_built_with_cuda (declared in status.h).
#include "status.h"

#ifndef PVN3D_VERSION_STRING
#define PVN3D_VERSION_STRING "0.0.0"
#endif
#ifndef PVN3D_HAVE_CUDA
#define PVN3D_HAVE_CUDA 0
#endif

extern "C" {

const char* pvn3d_version(void) { return PVN3D_VERSION_STRING; }

int pvn3d_built_with_cuda(void) { return PVN3D_HAVE_CUDA ? 1 : 0; }

}  // extern "C"
