// The split path of the BF16 forward where S or D = 128 (gdn_impl.cuh, run_fwd_split): the
// staged forward passes run each head's state as NS x NV independent blocks (HeadMap in
// gdn.cuh), each writing its part of o in FP32; the kernels here sum the parts and apply the
// epilogue, and hand the blocks' local segment states to the generic backward.
#pragma once
#include "gdn_fwd_bf16.cuh"

namespace hymo::gdn::dev {

// The workspace the split path adds (gdn.cu's layout()): the blocks' segment states
// (p.sp_state, [B H NS NV][NSEG][S / NS][D / NV]), their gate sums (p.sp_gsum, [B H NS NV][NSEG])
// and their parts of o (p.sp_o, [B,T,H NS NV,D / NV] FP32).
__host__ __device__ constexpr bool split_variant(bool bf16, int S, int D) {
  return bf16 && (S == 128 || D == 128);
}
__host__ __device__ constexpr int split_ns(int S) { return S == 128 ? 2 : 1; }
__host__ __device__ constexpr int split_nv(int D) { return D == 128 ? 2 : 1; }

// o = sum over the NS row blocks of the parts of o; out = o (unfused) or the epilogue's
// y = RMSNorm_D(o + D_skip v; w_y, eps) * silu(z) (fused), BF16. One thread a 4-column piece of
// a row (D / 4 threads a row, rows of D / NV columns: a piece never straddles two blocks),
// 256 threads a CTA; p is the caller's (p.H = H).
template <int D, int NS, int NV, bool FUSED>
__global__ void __launch_bounds__(256) split_out_kernel(KParams p) {
  pdl_enter();
  constexpr int TPR = D / 4, RPB = 256 / TPR, D2 = D / NV;
  static_assert(TPR >= 4 && TPR <= 32 && D2 % 4 == 0, "whole pieces, a row within a warp");
  const size_t rows = size_t(p.B) * p.T * p.H;
  const size_t row = size_t(blockIdx.x) * RPB + threadIdx.x / TPR;
  const int d = (threadIdx.x % TPR) * 4;
  const bool live = row < rows;
  const size_t tok = row / p.H;
  const int h = int(row % p.H), dg = d / D2, dc = d % D2;
  const size_t Hb = size_t(p.H) * NS * NV;  // the kernels' heads
  float o[4] = {0.f, 0.f, 0.f, 0.f};
  if (live) {
#pragma unroll
    for (int sg = 0; sg < NS; ++sg) {
      const float4 x = __ldg(reinterpret_cast<const float4*>(
          p.sp_o + ((tok * Hb + (size_t(h) * NS + sg) * NV + dg) * D2 + dc)));
      o[0] += x.x;
      o[1] += x.y;
      o[2] += x.z;
      o[3] += x.w;
    }
  }
  const size_t at = row * D + d;  // [B,T,H,D]
  if constexpr (!FUSED) {
    if (live) {
      uint2 u;
      u.x = pack_bf16(o[0], o[1]);
      u.y = pack_bf16(o[2], o[3]);
      *reinterpret_cast<uint2*>(reinterpret_cast<bf16*>(p.out) + at) = u;
    }
  } else {
    float vz[4] = {0.f, 0.f, 0.f, 0.f}, zz[4] = {0.f, 0.f, 0.f, 0.f};
    if (live) {
      const uint2 vr = __ldg(reinterpret_cast<const uint2*>(reinterpret_cast<const bf16*>(p.v) + at));
      const uint2 zr = __ldg(reinterpret_cast<const uint2*>(reinterpret_cast<const bf16*>(p.z) + at));
      const float2 v0 = bf16x2_f2(vr.x), v1 = bf16x2_f2(vr.y), z0 = bf16x2_f2(zr.x), z1 = bf16x2_f2(zr.y);
      vz[0] = v0.x; vz[1] = v0.y; vz[2] = v1.x; vz[3] = v1.y;
      zz[0] = z0.x; zz[1] = z0.y; zz[2] = z1.x; zz[3] = z1.y;
    }
    const float dsk = live ? p.D_skip[h] : 0.f;
    float ss = 0.f;
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      o[e] = fmaf(dsk, vz[e], o[e]);
      ss = fmaf(o[e], o[e], ss);
    }
#pragma unroll
    for (int off = TPR / 2; off; off >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, off, TPR);
    const float r = rsqrtf(ss * (1.f / D) + p.eps);
    if (live) {
      float y[4];
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        // silu(z) = z / (1 + 2^(-z log2 e)), as the staged passes' epilogue
        const float sz = __fdividef(zz[e], 1.f + ex2f(-1.4426950408889634f * zz[e]));
        y[e] = o[e] * (r * p.w_y[d + e]) * sz;
      }
      uint2 u;
      u.x = pack_bf16(y[0], y[1]);
      u.y = pack_bf16(y[2], y[3]);
      *reinterpret_cast<uint2*>(reinterpret_cast<bf16*>(p.out) + at) = u;
    }
  }
}

// The blocks' local segment states (p.sp_state, from the split state pass) into the generic
// kernels' layout (p.segstate, [B H][NSEG][S][D]), and their gate sums (every block of a head
// has its head's) into p.seggsum: what the generic state pass leaves for the generic backward.
// One thread a 4-column piece; the last segment's state is not needed (the kernels combine the
// segments before a CTA's own; the state pass skips it, HYMO_GDN_STATE_LAST).
template <int S, int D, int NS, int NV>
__global__ void __launch_bounds__(256) split_repack_kernel(KParams p) {
  pdl_enter();
  constexpr int S2 = S / NS, D2 = D / NV;
  const size_t BH = size_t(p.B) * p.H, n = BH * p.NSEG * S * (D / 4);
  for (size_t i = size_t(blockIdx.x) * 256 + threadIdx.x; i < n; i += size_t(gridDim.x) * 256) {
    const int d = int(i % (D / 4)) * 4, s = int((i / (D / 4)) % S);
    const size_t bs = i / (size_t(D / 4) * S);  // bh * NSEG + seg
    const int seg = int(bs % p.NSEG);
    const size_t bh = bs / p.NSEG;
    const size_t bk = (bh * NS + s / S2) * NV + d / D2;  // the block's (b, h)
    if (d == 0 && s == 0)
      p.seggsum[bs] = p.sp_gsum[(bh * NS * NV) * p.NSEG + seg];
    if (!HYMO_GDN_STATE_LAST && seg + 1 == p.NSEG) continue;
    const float4 x = *reinterpret_cast<const float4*>(
        p.sp_state + ((bk * p.NSEG + seg) * S2 + s % S2) * D2 + d % D2);
    *reinterpret_cast<float4*>(p.segstate + (bs * S + s) * D + d) = x;
  }
}

}  // namespace hymo::gdn::dev
