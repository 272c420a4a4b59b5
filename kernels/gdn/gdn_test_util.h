// Host helpers shared by the GPU test and the benchmark (C++ standard library + cudart only).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <cuda_runtime_api.h>

#include "gdn_diag.h"

namespace hymo::gdn::util {

inline uint16_t f2bf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;
  x += 0x7fffu + ((x >> 16) & 1u);
  return uint16_t(x >> 16);
}
inline float bf2f(uint16_t b) {
  uint32_t x = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

#define GDN_CUDA(x)                                                                  \
  do {                                                                               \
    cudaError_t _e = (x);                                                            \
    if (_e != cudaSuccess) {                                                         \
      std::fprintf(stderr, "%s:%d: CUDA error %s: %s\n", __FILE__, __LINE__, #x,     \
                   cudaGetErrorString(_e));                                          \
      std::exit(2);                                                                  \
    }                                                                                \
  } while (0)

// Device buffer holding a tensor in the io dtype (bf16 or f32).
struct DevBuf {
  void* p = nullptr;
  size_t n = 0;
  bool bf16 = true;
  DevBuf() = default;
  DevBuf(size_t n_, bool bf) : n(n_), bf16(bf) { GDN_CUDA(cudaMalloc(&p, bytes() ? bytes() : 16)); }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
  DevBuf(DevBuf&& o) noexcept { *this = std::move(o); }
  DevBuf& operator=(DevBuf&& o) noexcept {
    std::swap(p, o.p); std::swap(n, o.n); std::swap(bf16, o.bf16);
    return *this;
  }
  ~DevBuf() { if (p) cudaFree(p); }
  size_t bytes() const { return n * (bf16 ? 2 : 4); }
  void upload(const std::vector<double>& x) {
    if (bf16) {
      std::vector<uint16_t> h(n);
      for (size_t i = 0; i < n; ++i) h[i] = f2bf(float(x[i]));
      GDN_CUDA(cudaMemcpy(p, h.data(), bytes(), cudaMemcpyHostToDevice));
    } else {
      std::vector<float> h(n);
      for (size_t i = 0; i < n; ++i) h[i] = float(x[i]);
      GDN_CUDA(cudaMemcpy(p, h.data(), bytes(), cudaMemcpyHostToDevice));
    }
  }
  std::vector<double> download() const {
    std::vector<double> x(n);
    if (bf16) {
      std::vector<uint16_t> h(n);
      GDN_CUDA(cudaMemcpy(h.data(), p, bytes(), cudaMemcpyDeviceToHost));
      for (size_t i = 0; i < n; ++i) x[i] = bf2f(h[i]);
    } else {
      std::vector<float> h(n);
      GDN_CUDA(cudaMemcpy(h.data(), p, bytes(), cudaMemcpyDeviceToHost));
      for (size_t i = 0; i < n; ++i) x[i] = h[i];
    }
    return x;
  }
  void poison() { GDN_CUDA(cudaMemset(p, 0xff, bytes())); }  // NaN in bf16 and f32
};

// Round values to what the io dtype stores (so the twin sees the kernel's inputs).
inline void round_io(std::vector<double>& x, bool bf16) {
  for (auto& e : x) e = bf16 ? bf2f(f2bf(float(e))) : double(float(e));
}

// The shares of 16-row diagonal blocks (chunks of C tokens) whose gate spans pass the
// diagonal blocks' one-product tests (gdn.cuh), from one pass over the host's copy of the
// inputs, with the kernels' tests (gdn_diag.h): diagmm, the 16-row one-product test
// (session 16's diag_fast, or with HYMO_GDN_DIAG8_MID HYMO_GDN_DIAG16_TRAIN's diag16_fast);
// diag8, HYMO_GDN_DIAG8's diag8_fast; G the inclusive cumulative gate inside the chunk. What
// the fast paths can take, for the test's and the benchmark's reports (in double, so a block at
// the limit may count differently from the kernel's FP32; the limit is gdn_diag.h's default,
// not a -D given to the CUDA build).
// gate: [B][T][H] (the pre-sigmoid input when fused), A_log: [H][S].
struct DiagShares {
  double diagmm = 0, diag8 = 0;
};
inline DiagShares diag_fast_shares(const std::vector<double>& gate, bool fused, const std::vector<double>& dt_bias,
                                   const std::vector<double>& A_log, int B, int T, int H, int S, int C = 64) {
  long pass16 = 0, pass4 = 0, all = 0;
  std::vector<double> G(static_cast<size_t>(C));  // one chunk's inclusive gate cumsum (0 past T)
  for (int h = 0; h < H; ++h) {
    double amax = 0;
    for (int s = 0; s < S; ++s) amax = std::max(amax, std::exp(A_log[size_t(h) * S + s]) * 1.4426950408889634);
    for (int b = 0; b < B; ++b)
      for (int t0 = 0; t0 < T; t0 += C) {
        double acc = 0;
        for (int t = 0; t < C; ++t) {
          if (t0 + t < T) {
            const double x = gate[(size_t(b) * T + t0 + t) * H + h];
            acc += fused ? 1 / (1 + std::exp(-(x + dt_bias[h]))) : x;
          }
          G[t] = acc;
        }
        for (int r0 = 0; r0 < C && t0 + r0 < T; r0 += 16) {  // the kernels' tests (gdn_diag.h)
          // (with HYMO_GDN_DIAG8_MID, the 16-row test is HYMO_GDN_DIAG16_TRAIN's: the block's span)
          pass16 += HYMO_GDN_DIAG8_MID ? diag16_fast(G.data(), r0, amax) : diag_fast(G.data(), r0, amax);
          pass4 += diag8_fast(G.data(), r0, amax);
          ++all;
        }
      }
  }
  DiagShares r;
  if (all) {
    r.diagmm = double(pass16) / double(all);
    r.diag8 = double(pass4) / double(all);
  }
  return r;
}

}  // namespace hymo::gdn::util
