/*
 * For `<op>_nocuda.cpp` files (built only in a CPU-only library, see CMakeLists.txt): every CUDA entry
 * point still exists there and returns PVN3D_ERR_NO_CUDA with "<function>: built without CUDA".
 *
 *   pvn3d_status pvn3d_foo_cuda(...) { return PVN3D_NO_CUDA(); }
 */
#ifndef PVN3D_COMMON_NOCUDA_H
#define PVN3D_COMMON_NOCUDA_H

#include "status_internal.h"

#define PVN3D_NO_CUDA() pvn3d::fail(PVN3D_ERR_NO_CUDA, "%s: built without CUDA", __func__)

#endif /* PVN3D_COMMON_NOCUDA_H */
