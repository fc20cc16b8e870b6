// Tests of what common/ declares for callers (status.h): the version, whether CUDA is compiled in,
// status names, the last-error message and the CPU kernels' thread count. (common/index_check.h's
// pvn3d_index_error_describe is tested with the operators that read indices: test_gather_points.cpp,
// test_group_points.cpp, test_three_interpolate.cpp.)
//
//   pvn3d_test_common   (support/test_env.h)
#include <cstring>

#include "harness.h"
#include "pvn3d_ops.h"
#include "test_env.h"

TEST(library_info) {
  CHECK(std::strlen(pvn3d_version()) >= 5, "version '%s'", pvn3d_version());
  CHECK(pvn3d_built_with_cuda() == 0 || pvn3d_built_with_cuda() == 1, "built_with_cuda %d", pvn3d_built_with_cuda());
  CHECK(std::strcmp(pvn3d_status_name(PVN3D_ERR_INDEX_OUT_OF_RANGE), "PVN3D_ERR_INDEX_OUT_OF_RANGE") == 0, "name");
  pvn3d_set_num_threads(3);
  CHECK(pvn3d_get_num_threads() == 3, "threads %d", pvn3d_get_num_threads());
  pvn3d_set_num_threads(100000);  // an OpenMP team that large overflowed the caller's stack
  CHECK(pvn3d_get_num_threads() == PVN3D_MAX_THREADS, "threads capped: %d", pvn3d_get_num_threads());
  pvn3d_set_num_threads(0);
  CHECK(pvn3d_get_num_threads() >= 1, "default threads %d", pvn3d_get_num_threads());
  pvn3d_clear_error();
  CHECK(pvn3d_last_error()[0] == '\0', "cleared error '%s'", pvn3d_last_error());
}

int main(int argc, char** argv) { return testenv::run(argc, argv); }
