/*
 * Points [B, P, 3] (x, y, z interleaved) copied to structure-of-arrays [B][3][P] (per batch item all x,
 * then all y, then all z), so that a scan over the points reads three unit-stride streams and its
 * distance loop vectorises. Shared by the CPU kernels of BallQuery (over xyz) and ThreeNN (over the
 * known points) (internal).
 */
#ifndef PVN3D_COMMON_POINTS_SOA_CPU_H
#define PVN3D_COMMON_POINTS_SOA_CPU_H

#include <cstdint>
#include <new>
#include <vector>

#include "status_internal.h"
#include "threads.h"

namespace pvn3d {

/* Fills `soa` (resized to B*P*3). Out of host memory: PVN3D_ERR_OUT_OF_MEMORY, "<op>: out of host
 * memory for <count_name> = <B*P>". */
inline pvn3d_status points_soa_cpu(const char* op, const char* count_name, const float* xyz, int64_t B, int64_t P,
                                   std::vector<float>& soa) {
  try {
    soa.resize(static_cast<size_t>(B * P * 3));
  } catch (const std::bad_alloc&) {
    return fail(PVN3D_ERR_OUT_OF_MEMORY, "%s: out of host memory for %s = %lld", op, count_name, (long long)(B * P));
  }
  float* const out = soa.data();
  parallel_for(B * P, grain_for(3), [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t b = i / P, p = i - b * P;
      float* base = out + b * P * 3;
      base[p] = xyz[3 * i];
      base[P + p] = xyz[3 * i + 1];
      base[2 * P + p] = xyz[3 * i + 2];
    }
  });
  return PVN3D_OK;
}

}  // namespace pvn3d

#endif
