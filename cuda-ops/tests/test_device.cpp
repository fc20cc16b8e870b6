// Tests of the device API (device/device.h): devices, device and pinned memory, asynchronous copies,
// streams and events on a CUDA device, its error and zero-size conventions; and the same API in a
// CPU-only library (no device, PVN3D_ERR_NO_CUDA "built without CUDA").
//
//   pvn3d_test_device   (support/test_env.h; PVN3D_TEST_NO_API_ERRORS=1 leaves out the calls that
//   fail on purpose)
#include <cstdio>
#include <cstring>
#include <vector>

#include "harness.h"
#include "pvn3d_ops.h"
#include "test_env.h"

using harness::contains;
using harness::same_values;
using testenv::Dev;
using testenv::ok;

TEST(device_api) {
  REQUIRE_CUDA();
  void* stream = testenv::stream();
  int count = 0;
  ok(pvn3d_cuda_device_count(&count), "device_count");
  CHECK(count >= 1, "count %d", count);
  char name[256] = {0};
  int major = 0, minor = 0, sms = 0;
  int64_t total = 0;
  ok(pvn3d_cuda_get_device_properties(0, name, sizeof name, &major, &minor, &total, &sms), "properties");
  std::printf("    device 0: %s, cc %d.%d, %lld MiB, %d SMs\n", name, major, minor, (long long)(total >> 20), sms);
  CHECK(std::strlen(name) > 0 && major >= 7 && total > 0 && sms > 0, "properties look wrong");
  ok(pvn3d_cuda_get_device_properties(0, nullptr, 0, nullptr, nullptr, nullptr, nullptr), "properties, no outputs");
  if (!testenv::no_api_errors()) {
    CHECK(pvn3d_cuda_get_device_properties(count + 5, name, sizeof name, &major, &minor, &total, &sms) == PVN3D_ERR_CUDA &&
              std::strstr(pvn3d_last_error(), "cudaGetDeviceProperties") != nullptr,
          "bad device: '%s'", pvn3d_last_error());
    CHECK(pvn3d_cuda_set_device(count + 5) == PVN3D_ERR_CUDA, "set bad device");
  }
  ok(pvn3d_cuda_set_device(0), "set_device");
  int dev = -1;
  ok(pvn3d_cuda_get_device(&dev), "get_device");
  CHECK(dev == 0, "device %d", dev);
  size_t fr = 0, tot = 0;
  ok(pvn3d_cuda_mem_get_info(&fr, &tot), "mem_get_info");
  CHECK(fr > 0 && tot >= fr, "free %zu total %zu", fr, tot);

  // memset + h2d + d2d + d2h round trip through pinned memory, timed with events on our stream.
  const size_t n = 1 << 20;
  void *a = nullptr, *b = nullptr, *h = nullptr, *e0 = nullptr, *e1 = nullptr;
  ok(pvn3d_cuda_malloc(&a, n), "malloc a");
  ok(pvn3d_cuda_malloc(&b, n), "malloc b");
  ok(pvn3d_cuda_malloc_host(&h, n, 0), "malloc_host");
  ok(pvn3d_cuda_event_create(&e0), "event0");
  ok(pvn3d_cuda_event_create(&e1), "event1");
  auto* hb = static_cast<unsigned char*>(h);
  for (size_t i = 0; i < n; ++i) hb[i] = static_cast<unsigned char>(i * 7);
  ok(pvn3d_cuda_event_record(e0, stream), "record0");
  ok(pvn3d_cuda_memcpy_h2d_async(a, h, n, stream), "h2d");
  ok(pvn3d_cuda_memset_async(b, 0x5A, n, stream), "memset");
  ok(pvn3d_cuda_memcpy_d2d_async(b, a, n / 2, stream), "d2d");
  ok(pvn3d_cuda_memcpy_d2h_async(h, b, n, stream), "d2h");
  ok(pvn3d_cuda_event_record(e1, stream), "record1");
  ok(pvn3d_cuda_event_synchronize(e1), "event sync");
  float ms = -1.f;
  ok(pvn3d_cuda_event_elapsed_ms(&ms, e0, e1), "elapsed");
  CHECK(ms >= 0.f, "elapsed %f", ms);
  bool round_trip = true;
  for (size_t i = 0; i < n; ++i)
    round_trip &= hb[i] == (i < n / 2 ? static_cast<unsigned char>(i * 7) : 0x5A);
  CHECK(round_trip, "memset/memcpy round trip mismatch");
  // Mapped pinned memory: a device alias exists.
  void *mh = nullptr, *md = nullptr;
  ok(pvn3d_cuda_malloc_host(&mh, 64, 1), "malloc_host mapped");
  ok(pvn3d_cuda_host_device_pointer(&md, mh), "host_device_pointer");
  CHECK(md != nullptr, "no device alias");
  // A stream of our own with the legacy default semantics, then destroyed.
  void* s2 = nullptr;
  ok(pvn3d_cuda_stream_create(&s2, 0), "stream_create");
  ok(pvn3d_cuda_stream_synchronize(s2), "stream_sync");
  ok(pvn3d_cuda_stream_destroy(s2), "stream_destroy");
  ok(pvn3d_cuda_device_synchronize(), "device_synchronize");
  // Zero-size and NULL conventions.
  void* z = reinterpret_cast<void*>(1);
  ok(pvn3d_cuda_malloc(&z, 0), "malloc 0");
  CHECK(z == nullptr, "malloc 0 gives NULL");
  ok(pvn3d_cuda_free(nullptr), "free NULL");
  CHECK(pvn3d_cuda_malloc(nullptr, 8) == PVN3D_ERR_INVALID_ARGUMENT, "malloc NULL out");
  if (!testenv::no_api_errors()) {
    CHECK(pvn3d_cuda_malloc(&z, static_cast<size_t>(1) << 62) == PVN3D_ERR_CUDA &&
              std::strstr(pvn3d_last_error(), "cudaMalloc") != nullptr,
          "huge malloc: '%s'", pvn3d_last_error());
    // A failed runtime call must not make the next launch report its error.
    Dev<float> x(std::vector<float>{1, 1, 1, 2, 2, 2});
    Dev<int64_t> i(2);
    ok(pvn3d_furthest_point_sample_cuda(1, 2, 2, x.p, i.p, nullptr, 0, stream), "launch after a failed cudaMalloc");
    same_values("launch after a failed cudaMalloc", i.get(), std::vector<int64_t>{0, 1});
  }
  pvn3d_cuda_free_host(mh);
  pvn3d_cuda_event_destroy(e0);
  pvn3d_cuda_event_destroy(e1);
  pvn3d_cuda_free_host(h);
  pvn3d_cuda_free(a);
  pvn3d_cuda_free(b);
}

// A CUDA library on a machine without a usable device (a CPU-only CI machine with nvcc): no device,
// and the calls that need one fail with PVN3D_ERR_CUDA and the CUDA error's text, never abort.
TEST(device_api_without_device) {
  if (!pvn3d_built_with_cuda()) SKIP("CPU-only library (device_api_in_cpu_only_build covers it)");
  if (testenv::cuda_skip_reason().empty()) SKIP("a CUDA device is present (device_api covers it)");
  int count = -1;
  const pvn3d_status s = pvn3d_cuda_device_count(&count);
  if (s != PVN3D_OK) {  // a driver error other than "no device" / "insufficient driver": still a status
    CHECK(s == PVN3D_ERR_CUDA && contains(pvn3d_last_error(), "cuda"), "device_count: %s '%s'",
          pvn3d_status_name(s), pvn3d_last_error());
    return;
  }
  CHECK(count == 0, "device count %d", count);
  void* p = nullptr;
  CHECK(pvn3d_cuda_malloc(&p, 16) == PVN3D_ERR_CUDA && contains(pvn3d_last_error(), "cudaMalloc"),
        "malloc without a device: '%s'", pvn3d_last_error());
  void* stream = nullptr;
  CHECK(pvn3d_cuda_stream_create(&stream, 1) == PVN3D_ERR_CUDA, "stream_create without a device: '%s'",
        pvn3d_last_error());
}

TEST(device_api_in_cpu_only_build) {
  if (pvn3d_built_with_cuda()) SKIP("library built with CUDA (device_api covers the API)");
  int count = -1;
  CHECK(pvn3d_cuda_device_count(&count) == PVN3D_OK && count == 0, "device count %d", count);
  void* p = nullptr;
  CHECK(pvn3d_cuda_malloc(&p, 16) == PVN3D_ERR_NO_CUDA, "malloc status");
  CHECK(contains(pvn3d_last_error(), "built without CUDA"), "message '%s'", pvn3d_last_error());
  CHECK(pvn3d_cuda_stream_create(&p, 1) == PVN3D_ERR_NO_CUDA, "stream");
}

int main(int argc, char** argv) { return testenv::run(argc, argv); }
