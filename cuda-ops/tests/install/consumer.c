/*
 * A C consumer of the installed library (check_install.sh): compiled as C99 against
 * <prefix>/include only, linked against <prefix>/lib/libpvn3d_ops.so.
 *
 *   consumer <expected version>
 */
#include <pvn3d/pvn3d_ops.h>

#include <stdio.h>
#include <string.h>

int main(int argc, char** argv) {
  const char* version = pvn3d_version();
  float xyz[12] = {1, 1, 1, 2, 1, 1, 0, 1, 1, 1, 1, 1};
  int64_t idx[5] = {-1, -1, -1, -1, -1};
  int64_t index_error_words = PVN3D_INDEX_ERROR_WORDS;
  pvn3d_status s;
  int count = -1;

  printf("consumer: libpvn3d_ops %s, CUDA kernels %s\n", version, pvn3d_built_with_cuda() ? "on" : "off");
  if (argc > 1 && strcmp(version, argv[1]) != 0) {
    printf("FAIL: pvn3d_version() is '%s', expected '%s'\n", version, argv[1]);
    return 1;
  }
  /* An operator: FPS of four points (the tests' tie case). */
  s = pvn3d_furthest_point_sample_cpu(1, 4, 4, xyz, idx);
  if (s != PVN3D_OK || idx[0] != 0 || idx[1] != 1 || idx[2] != 2 || idx[3] != 0) {
    printf("FAIL: pvn3d_furthest_point_sample_cpu: %s %s, idx %lld %lld %lld %lld\n", pvn3d_status_name(s),
           pvn3d_last_error(), (long long)idx[0], (long long)idx[1], (long long)idx[2], (long long)idx[3]);
    return 1;
  }
  /* An error: status, name and message. */
  s = pvn3d_furthest_point_sample_cpu(1, 4, 5, xyz, idx);
  if (s != PVN3D_ERR_INVALID_ARGUMENT || strcmp(pvn3d_status_name(s), "PVN3D_ERR_INVALID_ARGUMENT") != 0 ||
      strstr(pvn3d_last_error(), "npoint (5)") == NULL) {
    printf("FAIL: npoint > N gave %s '%s'\n", pvn3d_status_name(s), pvn3d_last_error());
    return 1;
  }
  printf("consumer: npoint > N -> %s: %s\n", pvn3d_status_name(s), pvn3d_last_error());
  /* The device API answers in every build (0 devices without CUDA or without a GPU). */
  s = pvn3d_cuda_device_count(&count);
  printf("consumer: pvn3d_cuda_device_count -> %s, %d device(s); PVN3D_INDEX_ERROR_WORDS %lld, mask dtypes %d/%d\n",
         pvn3d_status_name(s), count, (long long)index_error_words, PVN3D_MASK_FLOAT32, PVN3D_MASK_BOOL);
  return 0;
}
