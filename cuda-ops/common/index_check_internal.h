/*
 * The CPU side of index_check.h (internal; C++ only): the scan that CPU kernels run over an index
 * input before computing. Not installed.
 */
#ifndef PVN3D_COMMON_INDEX_CHECK_INTERNAL_H
#define PVN3D_COMMON_INDEX_CHECK_INTERNAL_H

#include <cstdint>

#include "index_check.h"
#include "status_internal.h"

namespace pvn3d {
/* Lowest flat position p in [0, count) with idx[p] outside [0, limit), or -1 if none. Parallel
 * (pvn3d::parallel_for) for large counts; deterministic. */
int64_t find_first_bad_index(const int64_t* idx, int64_t count, int64_t limit);

/* find_first_bad_index + the message: PVN3D_OK or PVN3D_ERR_INDEX_OUT_OF_RANGE. */
pvn3d_status check_indices(const char* op, const char* input, const int64_t* idx, int64_t count, int64_t limit);
}  // namespace pvn3d

#endif /* PVN3D_COMMON_INDEX_CHECK_INTERNAL_H */
