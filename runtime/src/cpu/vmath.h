// Vector clones, and branch-free exp, sigmoid and silu that the compiler
// vectorises inside the fused loops (libm's expf is a call per element, 5-10x slower there).
//
// f32: exp(x) = 2^n exp(r), n = round(x log2 e), r = x - n ln 2 (|r| <= ln2/2,
// ln 2 split in two so that r is exact to f32), exp(r) by its Taylor series to
// r^7 (truncation error 0.347^8/8! = 6e-9, below f32's 6e-8), and 2^n built
// from its exponent bits in two halves so that results down to the subnormal
// range (x >= -103.9) come out right. Max error about 2 ulp (tested against
// the f64 exp in runtime_kernels_test). NaN, +-inf and overflow as libm.
// f64 keeps libm: the f64 path is the reference, not the fast path.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

// Hot loops are compiled once per vector ISA and picked at load time (the
// runtime ships to machines it was not built on, so no -march): a function
// (or function template) marked HYMO_VECTOR_CLONES gets avx512f, avx2 and
// baseline clones, and the HYMO_ALWAYS_INLINE helpers it calls are compiled
// into each clone.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define HYMO_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define HYMO_VECTOR_CLONES
#endif
#if defined(__GNUC__)
#define HYMO_ALWAYS_INLINE __attribute__((always_inline)) inline
#else
#define HYMO_ALWAYS_INLINE inline
#endif

namespace hymo::rt {

inline float pow2i(int32_t n) {  // 2^n for -126 <= n <= 127
  const int32_t bits = (n + 127) << 23;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline float vexp(float x) {
  const float log2e = 1.44269504088896341f;
  const float ln2_hi = 0.693145751953125f;      // 12 significant bits: n * ln2_hi is exact
  const float ln2_lo = 1.42860682030941723e-6f;  // ln 2 - ln2_hi
  const float round_magic = 12582912.0f;         // 1.5 * 2^23: adding it rounds to an integer
  float xc = x < -104.0f ? -104.0f : x;
  xc = xc > 88.8f ? 88.8f : xc;
  const float n = (xc * log2e + round_magic) - round_magic;
  const float r = (xc - n * ln2_hi) - n * ln2_lo;
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const int32_t ni = int32_t(n), n1 = ni / 2, n2 = ni - n1;  // each in [-75, 64]
  float y = p * pow2i(n1) * pow2i(n2);
  y = x > 88.72283935546875f ? std::numeric_limits<float>::infinity() : y;
  y = x < -103.97208f ? 0.0f : y;
  return x != x ? x : y;
}

inline double vexp(double x) { return std::exp(x); }

// sum_{i < n} term(i) in double with eight partial sums in a fixed order (one
// AVX-512 vector of doubles), so every vector clone and every thread count
// gives the same bits.
template <class F>
HYMO_ALWAYS_INLINE double sum8(int64_t n, F term) {
  double p[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int q = 0; q < 8; ++q) p[q] += term(i + q);
  for (int q = 0; i < n; ++i, ++q) p[q] += term(i);
  return ((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7]));
}

// exp(x) at the precision of the tensors' type T (the GDN decays exp(g_t a_s),
// one per token and state row): the f32 path takes the vector exp, the f64
// path libm's.
template <class T>
inline double decay_factor(double x) {
  if constexpr (sizeof(T) == sizeof(float))
    return double(vexp(float(x)));
  else
    return std::exp(x);
}

// 1 / (1 + e^-x) without overflow: e = exp(-|x|) <= 1.
template <class T>
inline T vsigmoid(T x) {
  const T e = vexp(-std::fabs(x));
  const T s = T(1) / (T(1) + e);
  return x >= T(0) ? s : e * s;
}

template <class T>
inline T vsilu(T x) {
  return x * vsigmoid(x);
}

// log(1 + e^x) = max(x, 0) + log1p(e^-|x|), without overflow.
template <class T>
inline T vsoftplus(T x) {
  return std::max(x, T(0)) + std::log1p(vexp(-std::fabs(x)));
}

}  // namespace hymo::rt
