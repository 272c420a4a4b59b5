// The split path of BF16 where S or D = 128 (gdn_impl.cuh, run_fwd_split and run_bwd_split):
// the staged forward passes, the staged adjoint pass and the generic backward main kernel run
// each head's state as NS x NV independent blocks (HeadMap in gdn.cuh), each writing its parts
// of o (forward) and of dv, dc, db and dgate (backward) in FP32; the kernels here do what couples
// the blocks: the parts' sums, the epilogue and its backward (the backward's parts' sums by
// default in the main kernel's last CTAs instead, HYMO_GDN_SPLIT_SUMS: split_sums in gdn.cuh).
#pragma once
#include "gdn_fwd_bf16.cuh"

namespace hymo::gdn::dev {

// The workspace the split path adds (gdn.cu's layout()): the blocks' segment states
// (p.sp_state, [B H NS NV][NSEG][S / NS][D / NV]), their gate sums (p.sp_gsum, [B H NS NV][NSEG]),
// their parts of o and then of dv (p.sp_o, [B,T,H NS NV,D / NV] FP32), of dc and db (p.sp_dc,
// p.sp_db, [B,T,H NS NV,S / NS]) and of dgate (p.sp_dg, [B,T,H NS NV]); and the per-block
// dApart and ddtpart (NS NV times the caller's). h0buf and dHseg hold the blocks' states at the
// kernels' own heads, in the caller's sizes.
__host__ __device__ constexpr bool split_variant(bool bf16, int S, int D) {
  return bf16 && (S == 128 || D == 128);
}
__host__ __device__ constexpr int split_ns(int S) { return S == 128 ? 2 : 1; }
__host__ __device__ constexpr int split_nv(int D) { return D == 128 ? 2 : 1; }

// o[0..3] += the NS row blocks' parts of o (p.sp_o; in the backward, of dv) at token tok, the caller's head h, columns
// d .. d + 3 (of column block dg = d / D2, at dc = d % D2 in it)
template <int NS, int NV, int D2>
__device__ __forceinline__ void add_o_parts(const KParams& p, size_t tok, int h, int dg, int dc,
                                            float (&o)[4]) {
  const size_t Hb = size_t(p.H) * NS * NV;  // the kernels' heads
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

// Four BF16 values at element `at` of x (8-byte aligned), as floats.
__device__ __forceinline__ void ld4_bf16(const void* x, size_t at, float (&y)[4]) {
  const uint2 r = __ldg(reinterpret_cast<const uint2*>(static_cast<const bf16*>(x) + at));
  const float2 a = bf16x2_f2(r.x), b = bf16x2_f2(r.y);
  y[0] = a.x; y[1] = a.y; y[2] = b.x; y[3] = b.y;
}

// The epilogue's yp = o + D_skip v, in place in o, and rsqrt(mean of yp^2 over the row + eps):
// the row's D / 4 threads (lanes of one warp) sum their squares by shuffles.
template <int D>
__device__ __forceinline__ float yp_rsqrt(float (&o)[4], const float (&v)[4], float dsk, float eps) {
  constexpr int TPR = D / 4;
  float ss = 0.f;
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    o[e] = fmaf(dsk, v[e], o[e]);
    ss = fmaf(o[e], o[e], ss);
  }
#pragma unroll
  for (int off = TPR / 2; off; off >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, off, TPR);
  return rsqrtf(ss * (1.f / D) + eps);
}

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
  float o[4] = {0.f, 0.f, 0.f, 0.f};
  if (live) add_o_parts<NS, NV, D2>(p, tok, h, dg, dc, o);
  const size_t at = row * D + d;  // [B,T,H,D]
  if constexpr (!FUSED) {
    if (live) st4_bf16(p.out, at, o);
  } else {
    float vz[4] = {0.f, 0.f, 0.f, 0.f}, zz[4] = {0.f, 0.f, 0.f, 0.f};
    if (live) {
      ld4_bf16(p.v, at, vz);
      ld4_bf16(p.z, at, zz);
    }
    const float r = yp_rsqrt<D>(o, vz, live ? p.D_skip[h] : 0.f, p.eps);
    if (live) {
      float y[4];
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        // silu(z) = z / (1 + 2^(-z log2 e)), as the staged passes' epilogue
        const float sz = __fdividef(zz[e], 1.f + ex2f(-1.4426950408889634f * zz[e]));
        y[e] = o[e] * (r * p.w_y[d + e]) * sz;
      }
      st4_bf16(p.out, at, y);
    }
  }
}

// The backward of the epilogue on whole rows (RMSNorm couples the blocks), per (segment, (b, h))
// CTA of the caller's heads (launch_bh's grid over p, the caller's): from the training forward's
// parts of o (p.sp_o) it forms o and writes dO = d(o + D_skip v) in FP32 into p.dObuf
// ([B,T,H,D], which the blocks' adjoint pass and main kernel read as v's view), dz, and the
// segment's dw_y and D_skip partials (p.dwpart, p.dDpart, as the adjoint pass leaves them);
// unfused, dO = dout. One thread a 4-column piece of a row, 256 threads a CTA.
template <int D, int NS, int NV, int C, bool FUSED>
__global__ void __launch_bounds__(256) split_dout_kernel(KParams p) {
  pdl_enter();
  constexpr int TPR = D / 4, RPB = 256 / TPR, D2 = D / NV;
  static_assert(TPR >= 4 && TPR <= 32 && D2 % 4 == 0, "whole pieces, a row within a warp");
  __shared__ float red[RPB][D];
  __shared__ double dred[8];
  const int seg = cta_seg(p), bh = cta_bh(p), bb = bh / p.H, h = bh % p.H;
  const int c0 = seg_c0(p, seg), c1 = seg_c1(p, c0);
  const int tb0 = c0 * C, tb1 = min(p.T, c1 * C);
  const int r = threadIdx.x / TPR, d = (threadIdx.x % TPR) * 4, dg = d / D2, dc = d % D2;
  const float dsk = FUSED ? p.D_skip[h] : 0.f;
  // HYMO_GDN_SPLIT_SUMS: the head-segment's count of finished main kernel CTAs starts at zero
  // (the main kernel runs after this one completes: the adjoint pass between waits for it)
  if (HYMO_GDN_SPLIT_SUMS && threadIdx.x == 0) p.sp_cnt[size_t(bh) * p.NSEG + seg] = 0u;
  float wv[4] = {0.f, 0.f, 0.f, 0.f}, dwa[4] = {0.f, 0.f, 0.f, 0.f};
  if constexpr (FUSED) {
#pragma unroll
    for (int e = 0; e < 4; ++e) wv[e] = p.w_y[d + e];
  }
  double dsum = 0.0;  // sum of dyp . v (FP64 across rows, as the adjoint pass)
  for (int tb = tb0; tb < tb1; tb += RPB) {
    const int t = tb + r;
    const bool live = t < tb1;
    const size_t tok = size_t(bb) * p.T + t, at = (tok * p.H + h) * D + d;
    float dy[4] = {0.f, 0.f, 0.f, 0.f}, x[4];
    if (live) ld4_bf16(p.dout, at, dy);
    if constexpr (!FUSED) {
#pragma unroll
      for (int e = 0; e < 4; ++e) x[e] = dy[e];
    } else {
      float o[4] = {0.f, 0.f, 0.f, 0.f}, vz[4] = {0.f, 0.f, 0.f, 0.f}, zz[4] = {0.f, 0.f, 0.f, 0.f};
      if (live) {
        add_o_parts<NS, NV, D2>(p, tok, h, dg, dc, o);
        ld4_bf16(p.v, at, vz);
        ld4_bf16(p.z, at, zz);
      }
      // yp = o + D_skip v, r = rsqrt(mean yp^2 + eps), n = yp r; dn = dy w silu(z);
      // dyp = r (dn - n mean(dn n)) (epi_bwd: dz, and dn, the dw_y term and dn n)
      const float rs = yp_rsqrt<D>(o, vz, dsk, p.eps);
      float dn[4], dz[4], m = 0.f;
#pragma unroll
      for (int e = 0; e < 4; ++e) dz[e] = epi_bwd(zz[e], dy[e], wv[e], o[e] * rs, dn[e], dwa[e], m);
#pragma unroll
      for (int off = TPR / 2; off; off >>= 1) m += __shfl_xor_sync(0xffffffffu, m, off, TPR);
      m *= 1.f / D;
      float dsc = 0.f;
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        x[e] = live ? rs * (dn[e] - o[e] * rs * m) : 0.f;
        dsc = fmaf(x[e], vz[e], dsc);
      }
      dsum += double(dsc);
      if (live) st4_bf16(p.dz, at, dz);
    }
    if (live) *reinterpret_cast<float4*>(p.dObuf + at) = make_float4(x[0], x[1], x[2], x[3]);
  }
  if constexpr (FUSED) {
    const size_t sgi = size_t(bh) * p.NSEG + seg;
#pragma unroll
    for (int e = 0; e < 4; ++e) red[r][d + e] = dwa[e];
#pragma unroll
    for (int off = 16; off; off >>= 1) dsum += __shfl_xor_sync(0xffffffffu, dsum, off);
    if ((threadIdx.x & 31) == 0) dred[threadIdx.x >> 5] = dsum;
    __syncthreads();
    for (int dd = threadIdx.x; dd < D; dd += 256) {
      float x = 0.f;
      for (int k = 0; k < RPB; ++k) x += red[k][dd];
      p.dwpart[sgi * D + dd] = x;
    }
    if (threadIdx.x == 0) {
      double x = 0.0;
      for (int k = 0; k < 8; ++k) x += dred[k];
      p.dDpart[sgi] = x;
    }
  }
}

// (-DHYMO_GDN_SPLIT_SUMS=0 only; by default seg_bwd_kernel's last block CTAs of a head-segment
// sum its parts, split_sums in gdn.cuh, in this kernel's order.)
// The blocks' parts of the input gradients summed (FP32) into the caller's BF16 tensors: dv over
// the NS row blocks (p.sp_o, [B,T,H NS NV,D / NV]; the sg = 0 blocks' parts carry the D_skip term
// D_skip dO), dc and db over the NV column blocks (p.sp_dc, p.sp_db, [B,T,H NS NV,S / NS]), dgate
// over all NS NV (p.sp_dg, [B,T,H NS NV]). p is the caller's (p.H = H); a grid-stride loop a
// tensor, one thread a 4-element piece.
template <int S, int D, int NS, int NV>
__global__ void __launch_bounds__(256) split_grad_kernel(KParams p) {
  pdl_enter();
  constexpr int S2 = S / NS, D2 = D / NV, NB = NS * NV;
  const size_t rows = size_t(p.B) * p.T * p.H, Hb = size_t(p.H) * NB;
  const size_t i0 = size_t(blockIdx.x) * 256 + threadIdx.x, step = size_t(gridDim.x) * 256;
  for (size_t i = i0; i < rows * (D / 4); i += step) {  // (dv's parts are in o's place, p.sp_o)
    const size_t row = i / (D / 4), tok = row / p.H;
    const int h = int(row % p.H), d = int(i % (D / 4)) * 4;
    float x[4] = {0.f, 0.f, 0.f, 0.f};
    add_o_parts<NS, NV, D2>(p, tok, h, d / D2, d % D2, x);
    st4_bf16(p.dv, row * D + d, x);
  }
  for (size_t i = i0; i < rows * (S / 4); i += step) {
    const size_t row = i / (S / 4), tok = row / p.H;
    const int h = int(row % p.H), s = int(i % (S / 4)) * 4, sg = s / S2, sc = s % S2;
    float xc[4] = {0.f, 0.f, 0.f, 0.f}, xb[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
    for (int dg = 0; dg < NV; ++dg) {
      const size_t at = (tok * Hb + (size_t(h) * NS + sg) * NV + dg) * S2 + sc;
      const float4 c = *reinterpret_cast<const float4*>(p.sp_dc + at), b = *reinterpret_cast<const float4*>(p.sp_db + at);
      xc[0] += c.x; xc[1] += c.y; xc[2] += c.z; xc[3] += c.w;
      xb[0] += b.x; xb[1] += b.y; xb[2] += b.z; xb[3] += b.w;
    }
    st4_bf16(p.dc, row * S + s, xc);
    st4_bf16(p.db, row * S + s, xb);
  }
  for (size_t i = i0; i < rows; i += step) {
    float x = 0.f;
#pragma unroll
    for (int j = 0; j < NB; ++j) x += p.sp_dg[i * NB + j];  // (tok Hb + h NB + j = row NB + j)
    static_cast<bf16*>(p.dgate)[i] = __float2bfloat16_rn(x);
  }
}

}  // namespace hymo::gdn::dev
