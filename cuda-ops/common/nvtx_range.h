/*
 * NVTX ranges around the CUDA launches (internal; for launchers).
 *
 *   PVN3D_NVTX_RANGE("PVN3D_BallQuery");   at the top of a launcher: a push/pop range in the NVTX domain
 *                                          "pvn3d", named after the ONNX operator, from here to the end
 *                                          of the enclosing scope (RAII), so Nsight Systems shows each
 *                                          launch and Nsight Compute filters its kernels
 *                                          (ncu --nvtx --nvtx-include "pvn3d@PVN3D_BallQuery/").
 *
 * Built in when the library is built with CUDA and CUDA's header-only NVTX v3 (<nvtx3/nvToolsExt.h>) is
 * found (CMake option PVN3D_WITH_NVTX, PVN3D_HAVE_NVTX=1); compiled out otherwise. The name is registered
 * once per call site; without a tool attached every NVTX call returns at once.
 */
#ifndef PVN3D_COMMON_NVTX_RANGE_H
#define PVN3D_COMMON_NVTX_RANGE_H

#if defined(PVN3D_HAVE_NVTX) && PVN3D_HAVE_NVTX

#include <nvtx3/nvToolsExt.h>

#include <cstdint>

namespace pvn3d {
namespace nvtx {

/** The "pvn3d" domain, created on first use (the Java side's ranges use the same name). */
inline nvtxDomainHandle_t domain() {
  static const nvtxDomainHandle_t d = nvtxDomainCreateA("pvn3d");
  return d;
}

/** An opaque colour that stays the same for a name (FNV-1a). */
inline uint32_t colour(const char* name) {
  uint32_t h = 2166136261u;
  for (const char* p = name; *p != '\0'; ++p) h = (h ^ static_cast<unsigned char>(*p)) * 16777619u;
  return 0xFF000000u | (0x40u + ((h >> 16) & 0x7Fu)) << 16 | (0x40u + ((h >> 8) & 0x7Fu)) << 8 | (0x40u + (h & 0x7Fu));
}

/** The attributes of one range name: a registered string and its colour. */
struct Name {
  nvtxEventAttributes_t attributes;

  explicit Name(const char* name) : attributes() {
    attributes.version = NVTX_VERSION;
    attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attributes.colorType = NVTX_COLOR_ARGB;
    attributes.color = colour(name);
    attributes.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    attributes.message.registered = nvtxDomainRegisterStringA(domain(), name);
  }
};

/** Pushes the range on construction, pops it on destruction. */
class Range {
 public:
  explicit Range(const Name& name) { nvtxDomainRangePushEx(domain(), &name.attributes); }
  ~Range() { nvtxDomainRangePop(domain()); }
  Range(const Range&) = delete;
  Range& operator=(const Range&) = delete;
};

}  // namespace nvtx
}  // namespace pvn3d

#define PVN3D_NVTX_CONCAT2(a, b) a##b
#define PVN3D_NVTX_CONCAT(a, b) PVN3D_NVTX_CONCAT2(a, b)
#define PVN3D_NVTX_RANGE(name)                                                                     \
  static const ::pvn3d::nvtx::Name PVN3D_NVTX_CONCAT(pvn3d_nvtx_name_, __LINE__)(name);         \
  const ::pvn3d::nvtx::Range PVN3D_NVTX_CONCAT(pvn3d_nvtx_range_, __LINE__)(                     \
      PVN3D_NVTX_CONCAT(pvn3d_nvtx_name_, __LINE__))

#else

#define PVN3D_NVTX_RANGE(name) static_cast<void>(0)

#endif

#endif /* PVN3D_COMMON_NVTX_RANGE_H */
