// bf16 <-> f32 (storage only: bf16 kernels compute in f32).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace hymo::rt {

inline float bf16_to_f32(uint16_t h) {
  uint32_t u = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Round to nearest even; NaN stays a (quiet) NaN.
inline uint16_t f32_to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if (std::isnan(f)) return uint16_t((u >> 16) | 0x40);
  u += 0x7FFF + ((u >> 16) & 1);
  return uint16_t(u >> 16);
}

}  // namespace hymo::rt
