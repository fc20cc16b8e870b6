/*
 * pvn3d::float_bits(f) (internal): a float's bit pattern as int32. For values >= 0 (and +inf) the patterns
 * order like the floats, and integer min/max reductions vectorise where float ones do not without -ffast-math
 * (FurthestPointSample's argmax, ThreeNN's block minimum); equal patterns are the same float bit for bit,
 * -0.0 and 0.0 apart (the mean shift's settled modes).
 */
#ifndef PVN3D_COMMON_FLOAT_BITS_H
#define PVN3D_COMMON_FLOAT_BITS_H

#include <cstdint>
#include <cstring>

namespace pvn3d {

inline int32_t float_bits(float f) {
  int32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

}  // namespace pvn3d

#endif /* PVN3D_COMMON_FLOAT_BITS_H */
