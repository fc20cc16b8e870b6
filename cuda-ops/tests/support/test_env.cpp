#include "test_env.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace testenv {
namespace {

std::string g_bunny_path;
bool g_small = false;
bool g_no_api_errors = false;
bool g_cuda_required = false;
std::string g_cuda_skip = "no CUDA device (the CUDA cases were not set up)";
void* g_stream = nullptr;

bool env_is_1(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && std::strcmp(v, "1") == 0;
}

const char* base_name(const char* path) {
  const char* slash = std::strrchr(path, '/');
  return slash ? slash + 1 : path;
}

}  // namespace

const std::string& bunny_path() { return g_bunny_path; }
bool small() { return g_small; }
bool no_api_errors() { return g_no_api_errors; }
bool cuda_required() { return g_cuda_required; }
const std::string& cuda_skip_reason() { return g_cuda_skip; }
void* stream() { return g_stream; }

bool ok(pvn3d_status s, const char* what) {
  return CHECK(s == PVN3D_OK, "%s: %s %s", what, pvn3d_status_name(s), pvn3d_last_error());
}

IndexError::IndexError() {
  void* h = nullptr;
  ok(pvn3d_cuda_malloc_host(&h, PVN3D_INDEX_ERROR_BYTES, 0), "malloc_host");
  host = static_cast<int64_t*>(h);
  ok(pvn3d_cuda_event_create(&event), "event_create");
  reset();
}

IndexError::~IndexError() {
  pvn3d_cuda_free_host(host);
  pvn3d_cuda_event_destroy(event);
}

void IndexError::read() {
  host[0] = host[1] = 12345;
  ok(pvn3d_cuda_memcpy_d2h_async(host, dev.p, PVN3D_INDEX_ERROR_BYTES, stream()), "index_error d2h");
  ok(pvn3d_cuda_event_record(event, stream()), "event_record");
  ok(pvn3d_cuda_event_synchronize(event), "event_synchronize");
  position = PVN3D_INDEX_ERROR_POSITION(host[0]);
  value = host[0] == PVN3D_INDEX_ERROR_NONE ? PVN3D_INDEX_ERROR_NONE : PVN3D_INDEX_ERROR_VALUE(host[0], host[1]);
}

void IndexError::reset() { dev.fill(0xFF); }

int run(int argc, char** argv) {
  const char* name = argc > 0 ? base_name(argv[0]) : "pvn3d_test";
  g_bunny_path = testdata::bunny_path(argc, argv);
  g_small = env_is_1("PVN3D_TEST_SMALL");
  g_no_api_errors = env_is_1("PVN3D_TEST_NO_API_ERRORS");
  g_cuda_required = env_is_1("PVN3D_REQUIRE_CUDA");

  int count = 0;
  if (!pvn3d_built_with_cuda()) {
    g_cuda_skip = "no CUDA device (libpvn3d_ops was built without CUDA)";
  } else {
    const pvn3d_status s = pvn3d_cuda_device_count(&count);
    if (s != PVN3D_OK) {
      g_cuda_skip = std::string("no CUDA device (") + pvn3d_last_error() + ")";
    } else if (count == 0) {
      g_cuda_skip = "no CUDA device (cudaGetDeviceCount returned 0)";
    } else if (pvn3d_cuda_stream_create(&g_stream, 1) != PVN3D_OK) {
      std::printf("%s: cannot create a stream: %s\n", name, pvn3d_last_error());
      return 1;
    } else {
      g_cuda_skip.clear();
    }
  }

  std::printf("%s: libpvn3d_ops %s, %d threads, bunny '%s'; CUDA: %s%s%s%s\n", name, pvn3d_version(),
              pvn3d_get_num_threads(), g_bunny_path.c_str(),
              g_cuda_skip.empty() ? (std::to_string(count) + " device(s)").c_str() : g_cuda_skip.c_str(),
              g_cuda_skip.empty() || !g_cuda_required ? "" : " (PVN3D_REQUIRE_CUDA=1: the CUDA cases fail)",
              g_small ? ", PVN3D_TEST_SMALL=1" : "",
              g_no_api_errors ? ", PVN3D_TEST_NO_API_ERRORS=1 (deliberate CUDA API failures left out)" : "");
  std::fflush(stdout);
  const int rc = harness::run_all();
  if (g_stream) pvn3d_cuda_stream_destroy(g_stream);
  g_stream = nullptr;
  return rc;
}

}  // namespace testenv
