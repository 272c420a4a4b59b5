// hymo GDN: the BF16 forward passes with staged operands (S, D <= 64).
//
// The generic kernels in gdn.cuh build every mma fragment element by element (a
// shared load, an exp, a multiply and a pack per element, repeated by every warp
// that needs it). Here each chunk's decay-scaled operands are computed once, by
// all threads together, into BF16 tiles in shared memory, and every product reads
// its fragments with ldmatrix:
//   Qs[t]      = c_t exp(G_t A)                  (queries against the entering state)
//   Qi[t]      = c_t exp((G_t - G_{16i-1}) A)    (row block i = t/16: referenced to
//                                                  the end of the previous block)
//   Kref_i[tau] = b_tau exp((G_{16i-1} - G_tau) A), tau < 16 i, i = 1..NW
//                (keys of the blocks before row block i, referenced to that same point;
//                 Kref_NW are the state update's keys, referenced to the chunk end)
// so that an off-diagonal block P[i][j] = Qi_i Kref_i[j]^T and the state update
// h' = exp(G_last A) h + Kref_NW^T V. Every exponent is (G_hi - G_lo) A with
// G_hi >= G_lo: <= 0. The diagonal blocks keep the generic kernel's split (an 8x8
// square by mma with both sides referenced to the middle, two 8x8 triangles from
// products of per-step decays). The state crosses chunks in FP32 and enters the
// products as a BF16 high part plus a BF16 remainder.
#pragma once
#include "gdn.cuh"

namespace hymo::gdn::dev {

using bf16 = __nv_bfloat16;

// The staged backward main kernel (gdn_bwd_bf16.cuh) serves S, D <= 32 (C = 64); at
// S or D = 64 (C = 32, one CTA an SM) it was slower than the generic one (run 33), which
// keeps those. The training forward and the adjoint pass leave the states and dO in
// the layout the chosen backward reads.
__host__ __device__ constexpr bool staged_bwd(int S, int D) { return S <= 32 && D <= 32; }

// HYMO_GDN_OUT_RUNS (session 22, run 128: the output passes as one wave of CTAs each walking
// runs of segments; forward +5..+9%) was removed in session 24; commit fec08ba has it.

// acc (16 x 8*NT) += A (16 x K, row-major) * Bt^T, Bt (8*NT x K) row-major: the
// B operand read from its transpose with ldmatrix (no .trans). NT even.
template <int NT>
__device__ __forceinline__ void warp_mm_nt(float (&acc)[NT][4], int K, const bf16* A, int lda,
                                           const bf16* Bt, int ldb) {
  const int lane = threadIdx.x & 31;
  for (int k0 = 0; k0 < K; k0 += 16) {
    uint32_t a[4];
    ldsm_x4(a, A + ldsm_row(lane) * lda + k0 + ldsm_col(lane));
#pragma unroll
    for (int np = 0; np < NT / 2; ++np) {
      uint32_t b[4];
      ldsm_x4(b, Bt + (np * 16 + ldsm_row_t(lane)) * ldb + k0 + ldsm_col_t(lane));
      mma_bf16(acc[2 * np], a, b[0], b[1]);
      mma_bf16(acc[2 * np + 1], a, b[2], b[3]);
    }
  }
}

// A packed BF16 pair times (f0, f1), rounded again (operand scaling in registers). PK
// (HYMO_GDN_PK2, the plain forward): the factors rounded to BF16, one packed multiply.
template <bool PK = false>
__device__ __forceinline__ uint32_t scale_bf16x2(uint32_t x, float f0, float f1) {
  if constexpr (PK) {
    return mul_bf16x2(x, pack_bf16(f0, f1));
  } else {
    const float2 v = bf16x2_f2(x);
    return pack_bf16(v.x * f0, v.y * f1);
  }
}

// The ldmatrix address of this lane for the mma A fragment of the 16 x 16 tile at rows
// A.., columns k0.., and the factors exp(dg A_k) = ex2(dg A2[k]) of the fragment's columns
// k = k0 + 2 (lane & 3) + {0, 1, 8, 9} (registers 0, 1 hold the first two, 2, 3 the last).
__device__ __forceinline__ const bf16* frag_a_addr(const bf16* A, int lda, int k0) {
  const int lane = threadIdx.x & 31;
  return A + ldsm_row(lane) * lda + k0 + ldsm_col(lane);
}
__device__ __forceinline__ void frag_a_colfactors(float (&f)[4], int k0, float dg, const float* A2) {
  const int kc = k0 + 2 * (threadIdx.x & 3);
  f[0] = ex2f(dg * A2[kc]);
  f[1] = ex2f(dg * A2[kc + 1]);
  f[2] = ex2f(dg * A2[kc + 8]);
  f[3] = ex2f(dg * A2[kc + 9]);
}

// The mma A fragment of the 16 x 16 tile at rows A.., columns k0.. (ldmatrix), with column
// k scaled by exp(dg A_k) = ex2(dg A2[k]) in registers (dg >= 0; 0: unscaled; PK: scale_bf16x2's).
template <bool PK = false>
__device__ __forceinline__ void ldsm_a_colscaled(uint32_t (&a4)[4], const bf16* A, int lda, int k0,
                                                 float dg, const float* A2) {
  ldsm_x4(a4, frag_a_addr(A, lda, k0));
  if (dg != 0.f) {
    float f[4];
    frag_a_colfactors(f, k0, dg, A2);
#pragma unroll
    for (int r = 0; r < 4; ++r) a4[r] = scale_bf16x2<PK>(a4[r], f[(r >> 1) * 2], f[(r >> 1) * 2 + 1]);
  }
}

// ldsm_a_colscaled for an operand kept as BF16 high and low tiles (the low tile LO
// elements after the high one): (high + low) scaled in FP32 and split again, so that the
// scaled operand stays FP32-accurate as high + low.
__device__ __forceinline__ void ldsm_a_colscaled_split(uint32_t (&ah)[4], uint32_t (&al)[4], const bf16* A,
                                                       int LO, int lda, int k0, float dg, const float* A2) {
  const bf16* pa = frag_a_addr(A, lda, k0);
  ldsm_x4(ah, pa);
  ldsm_x4(al, pa + LO);
  if (dg != 0.f) {
    float f[4];
    frag_a_colfactors(f, k0, dg, A2);
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const float2 x = bf16x2_f2(ah[r]);
      const float2 y = bf16x2_f2(al[r]);
      const float v0 = (x.x + y.x) * f[(r >> 1) * 2], v1 = (x.y + y.y) * f[(r >> 1) * 2 + 1];
      split2(v0, v1, ah[r], al[r]);
    }
  }
}

// HYMO_GDN_DIAG8 (the plain pass) and DIAG8_BWD (P's block): a diagonal block's product
// A Bt^T (A and Bt 16 rows of S BF16 values, rows of each 8-row half referenced to that
// half's reference, diag8_ref) into acc, and its 8x8 square from the same fragments rescaled to row 7 into
// sq: A's rows 8..15 (UPPER: rows 0..7) times exp(da A_k) against Bt's n8 tile 0 (UPPER:
// tile 1) times exp(db A_k), column k's factors ex2(d A2[k]), both <= 1 (with row-3
// references also >= 2^-LIMIT; with HYMO_GDN_DIAG8_MID a factor may flush, gdn_diag.h), each
// operand rounded again to BF16. sq holds the square in the rows it came from (registers 2,
// 3; UPPER: 0, 1), acc's quadrant there is not used (mismatched references). PK: scale_bf16x2's.
template <int S, bool UPPER, bool PK = false>
__device__ __forceinline__ void diag8_mm(float (&acc)[2][4], float (&sq)[4], const bf16* A, int lda,
                                         const bf16* Bt, int ldb, float da, float db, const float* A2) {
  const int lane = threadIdx.x & 31;
  const bf16* bp = Bt + ldsm_row_t(lane) * ldb + ldsm_col_t(lane);
#pragma unroll
  for (int k0 = 0; k0 < S; k0 += 16) {
    uint32_t a4[4], b4[4];
    ldsm_x4(a4, frag_a_addr(A, lda, k0));
    ldsm_x4(b4, bp + k0);
    mma_bf16(acc[0], a4, b4[0], b4[1]);
    mma_bf16(acc[1], a4, b4[2], b4[3]);
    float fa[4], fb[4];
    frag_a_colfactors(fa, k0, da, A2);
    frag_a_colfactors(fb, k0, db, A2);
    constexpr int r = UPPER ? 0 : 1, nb = UPPER ? 2 : 0;  // A's registers r, r + 2; B's nb, nb + 1
    uint32_t as[4] = {0u, 0u, 0u, 0u};
    as[r] = scale_bf16x2<PK>(a4[r], fa[0], fa[1]);
    as[r + 2] = scale_bf16x2<PK>(a4[r + 2], fa[2], fa[3]);
    mma_bf16(sq, as, scale_bf16x2<PK>(b4[nb], fb[0], fb[1]), scale_bf16x2<PK>(b4[nb + 1], fb[2], fb[3]));
  }
}

// Q consecutive values (Q = 4, 8 or 16; 8 * Q bytes aligned for BF16 or FP16, 16 for
// floats).
__device__ __forceinline__ float2 to_float2(__nv_bfloat162 v) { return bf16x2_f2(v); }
__device__ __forceinline__ float2 to_float2(__half2 v) { return __half22float2(v); }
template <int Q, class T>  // T: bf16 or __half
__device__ __forceinline__ void ldq(const T* p, float (&x)[Q]) {
  using T2 = std::conditional_t<std::is_same_v<T, __half>, __half2, __nv_bfloat162>;
  if constexpr (Q == 4) {
    const uint2 v = *reinterpret_cast<const uint2*>(p);
    const float2 f0 = to_float2(*reinterpret_cast<const T2*>(&v.x));
    const float2 f1 = to_float2(*reinterpret_cast<const T2*>(&v.y));
    x[0] = f0.x; x[1] = f0.y; x[2] = f1.x; x[3] = f1.y;
  } else if constexpr (std::is_same_v<T, bf16>) {
#pragma unroll
    for (int i = 0; i < Q / 8; ++i) {
      float y[8];
      ld8(p + 8 * i, y);
#pragma unroll
      for (int e = 0; e < 8; ++e) x[8 * i + e] = y[e];
    }
  } else {
#pragma unroll
    for (int i = 0; i < Q / 8; ++i) {
      const uint4 v = *reinterpret_cast<const uint4*>(p + 8 * i);
      const T2* h2 = reinterpret_cast<const T2*>(&v);
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const float2 f = to_float2(h2[e]);
        x[8 * i + 2 * e] = f.x;
        x[8 * i + 2 * e + 1] = f.y;
      }
    }
  }
}
template <int Q>
__device__ __forceinline__ void ldqf(const float* p, float (&x)[Q]) {
#pragma unroll
  for (int i = 0; i < Q / 4; ++i) {
    const float4 v = *reinterpret_cast<const float4*>(p + 4 * i);
    x[4 * i] = v.x; x[4 * i + 1] = v.y; x[4 * i + 2] = v.z; x[4 * i + 3] = v.w;
  }
}

// TR (the training forward): every staged operand and P also get a BF16 low-part
// tile, right after the high part, so that o comes out FP32-accurate.
template <int S, int D, int C, bool TR = false>
struct PlanF {
  static constexpr int LS = S + 8, LD = D + 8, LP = C + 8;  // BF16 strides (rows 16 B aligned)
  static constexpr int FS = S + 4, FD = D + 4;              // float strides
  static constexpr int NW = C / 16, NTH = 32 * NW;
  // output pass: R warps a row block, each with D / R output columns. Two for the
  // training forward (2 CTAs an SM either way: 16 warps instead of 8); one for the plain
  // forward, whose 3 CTAs of 4 warps were faster than 2 of 8 (run 31); one for D = 16.
  static constexpr int R = (TR && D >= 32) ? 2 : 1, NTHO = NTH * R;
  static constexpr int NKR = 8 * NW * (NW + 1);  // Kref_i (i = 1..NW) at row 8 i (i - 1)
  static constexpr int M = TR ? 2 : 1;           // tiles per staged operand (high, low)
  // P4 (HYMO_GDN_OUT4, plain forward, S, D <= 32): no Qs tile; a C-row Kend tile (keys
  // referenced to their own block's end) in place of the Kref_i tiles; the per-step
  // decays in FP16 (stride FA halves)
  static constexpr bool P4 = HYMO_GDN_OUT4 && !TR && S <= 32 && D <= 32;
  // KE: the C-row Kend tile (P4, or the training pass with HYMO_GDN_TKEND)
  static constexpr bool KE = P4 || (HYMO_GDN_TKEND && TR);
  // QR: no Qs tile; the Qs h product scales Qi's fragments in registers (P4)
  static constexpr bool QR = P4;
  // MR (HYMO_GDN_MIDREG, the training pass at S, D <= 32): no mid tile; the diagonal
  // square's operands are built in registers by the warp that computes it
  static constexpr bool MR = HYMO_GDN_MIDREG && TR && R == 2 && S <= 32 && D <= 32;
  static constexpr int NKRP = KE ? C : NKR, FA = S + 8;
  // T4 (HYMO_GDN_TRI4, the plain pass at D = 32): the mid2 tile where the per-step decays were
  static constexpr bool T4 = HYMO_GDN_TRI4 && !TR && S <= 32 && D == 32;
  // TW (HYMO_GDN_TRAIN3, gdn.cuh): the training pass at S <= 32, D = 32 without the per-step
  // decay tile, for 3 CTAs an SM
  static constexpr bool TW = HYMO_GDN_TRAIN3 && TR && R == 2 && S <= 32 && D == 32;
  static constexpr size_t al(size_t x) { return (x + 15) & ~size_t(15); }
  // output pass
  static constexpr size_t o_c = 0;
  static constexpr size_t o_b = al(o_c + 2 * C * LS);
  static constexpr size_t o_v0 = al(o_b + 2 * C * LS);
  static constexpr size_t o_v1 = al(o_v0 + 2 * C * LD);
  static constexpr size_t o_qs = al(o_v1 + 2 * C * LD);
  static constexpr size_t o_qi = al(o_qs + (QR ? 0 : M * 2 * C * LS));
  static constexpr size_t o_kr = al(o_qi + M * 2 * C * LS);
  static constexpr size_t o_a = al(o_kr + M * 2 * NKRP * LS);
  static constexpr size_t o_p = al(o_a + (TW ? 0 : T4 ? 2 * C * LS : P4 ? 2 * C * FA : 4 * C * FS));
  static constexpr size_t o_mid = al(o_p + M * 2 * C * LP);  // diagonal square operands
  static constexpr size_t o_hh = al(o_mid + (MR ? 0 : M * 2 * C * LS));
  static constexpr size_t o_hl = al(o_hh + 2 * S * LD);
  static constexpr size_t o_vec = al(o_hl + 2 * S * LD);  // g[C], G[C], A2[S], dl[S], ssx[R][C]
  // (+ 2 C floats with HYMO_GDN_GATE_AHEAD: g and G of the odd chunks; not in the plain
  // pass at D = 16 or S = D = 64, which spill 16 and 24 bytes with it)
  static constexpr bool GA = HYMO_GDN_GATE_AHEAD && (TR || (S <= 32 && D == 32));
  static constexpr size_t o_g1 = o_vec + 4 * (2 * C + 2 * S + R * C);
  // HYMO_GDN_TMA bit 2: two mbarriers (the b, c group and the v group); not in the plain pass at
  // S or D = 64 (one CTA an SM), where it measured 6% slower (run 199)
  static constexpr bool TMA = (HYMO_GDN_TMA & 2) && (TR || (S <= 32 && D <= 32));
  static constexpr size_t o_mb = al(o_g1 + (GA ? 4 * 2 * C : 0));
  static constexpr size_t bytes_out = al(o_mb + (TMA ? 16 : 0));
  static_assert(!TMA || (o_c % 128 == 0 && o_b % 128 == 0 && o_v0 % 128 == 0 && o_v1 % 128 == 0),
                "HYMO_GDN_TMA: the tiles at 128-byte boundaries");
  // (228 KB of shared memory an SM, 1 KB of it reserved a CTA)
  static_assert(!TW || 3 * (bytes_out + 1024) <= 228 * 1024, "HYMO_GDN_TRAIN3: three CTAs an SM");
  // state pass: double-buffered b and v, the keys' high and low parts, vectors
  static constexpr size_t s_b0 = 0;
  static constexpr size_t s_b1 = al(s_b0 + 2 * C * LS);
  static constexpr size_t s_v0 = al(s_b1 + 2 * C * LS);
  static constexpr size_t s_v1 = al(s_v0 + 2 * C * LD);
  // SR (HYMO_GDN_STATE_REG): no key tiles; a second g, G pair after A2
  static constexpr bool SR = HYMO_GDN_STATE_REG;
  static constexpr size_t s_kh = al(s_v1 + 2 * C * LD);
  static constexpr size_t s_kl = al(s_kh + (SR ? 0 : 2 * C * LS));
  static constexpr size_t s_vec = al(s_kl + (SR ? 0 : 2 * C * LS));  // g[C], G[C], A2[S] (SR: g1[C], G1[C])
  // HYMO_GDN_TMA bit 8: an mbarrier a b, v buffer pair
  static constexpr bool TMA_S = (HYMO_GDN_TMA & 8) != 0;
  static constexpr size_t s_mb = al(s_vec + 4 * (2 * C + S + (SR ? 2 * C : 0)));
  static constexpr size_t bytes_state = al(s_mb + (TMA_S ? 16 : 0));
  static_assert(!TMA_S || (s_b1 % 128 == 0 && s_v0 % 128 == 0 && s_v1 % 128 == 0),
                "HYMO_GDN_TMA: the tiles at 128-byte boundaries");
  // HYMO_GDN_STATE_PAIR (gdn.cuh): the state pass over two adjacent heads a CTA. The b and v
  // tiles hold both heads' rows (2 S and 2 D values, padded by 8: 144-byte rows at S = D = 32,
  // ldmatrix's eight rows on eight bank quads); then each head's vectors, SNV floats (g, G, A2,
  // g1, G1 as above)
  static constexpr int LS2 = 2 * S + 8, LD2 = 2 * D + 8, SNV = 4 * C + S;
  static constexpr size_t q_b0 = 0;
  static constexpr size_t q_b1 = al(q_b0 + 2 * C * LS2);
  static constexpr size_t q_v0 = al(q_b1 + 2 * C * LS2);
  static constexpr size_t q_v1 = al(q_v0 + 2 * C * LD2);
  static constexpr size_t q_vec = al(q_v1 + 2 * C * LD2);
  static constexpr size_t bytes_state2 = al(q_vec + 2 * 4 * SNV);
};

// HYMO_GDN_STATE_KSPLIT (session 15; default on since run 93, 0 turns it off): the state
// pass (with HYMO_GDN_STATE_REG, S <= 32, D = 32) splits the state update over each
// chunk's tokens instead of over the state's columns: warp w holds rows w % (S / 16) of
// the state, every column, and sums over its share of each chunk's tokens (a half at S =
// 32, a quarter at S = 16); the shares are added once, at the segment's end. Each key
// fragment (b_t exp((G_last - G_t) A), split into high and low parts in registers) is
// then built by one warp instead of one per column half. Run 92's profile: the key
// fragments were about half of the pass's 412 warp instructions a warp and chunk. Run 93
// (A/B, 3 rounds): state pass 27.9 -> 24.0 us (ncu); forward -1.9% at the default shape
// and at H = 64, -1.5% at S = 16; forward + backward -0.1..-0.5%; at D = 16 (all four
// warps at work instead of two) forward +0.7%, so D = 16 keeps the column split. Run 95
// (A/B, 3 rounds, the switch off against on): on is faster at the default shape (forward
// -3.4%, forward + backward -0.6%), H = 64 and B = 2 H = 16, but at B = 4, H = 16 the plain
// forward is 7.6% slower with it although each of its kernels is as fast or faster under
// ncu (the state pass 18.2 -> 14.9 us): an effect between the kernels (the programmatic
// dependent launches?), not yet understood.
#ifndef HYMO_GDN_STATE_KSPLIT
#define HYMO_GDN_STATE_KSPLIT 1
#endif
__host__ __device__ constexpr bool state_ksplit(int S, int D) {
  return HYMO_GDN_STATE_KSPLIT && S <= 32 && D == 32;
}
// HYMO_GDN_STATE_PAIR (gdn.cuh): whether the state pass can take two heads a CTA at S, D (where H
// is even, with the default head map; compiled whatever the switch says: gdn_set_state_pair picks
// at run time; gdn_state_pair_fits asks the same)
__host__ __device__ constexpr bool state_pair_fits(int S, int D) {
  return state_ksplit(S, D) && HYMO_GDN_STATE_REG && (HYMO_GDN_TMA & 8) == 0;
}

// HYMO_GDN_STATE_REV (session 23): the state pass walks its segment's chunks from the last to
// the first. The local end state is a sum of independent chunk terms, so the order is free:
// walking backwards, each chunk's keys are referenced to the segment's end, b_t exp((G_after +
// G_last - G_t) A) (G_after: the gate sum of the chunks already walked; every exponent <= 0),
// and the accumulators are never rescaled. The aim is the L2: the state pass runs in one wave,
// so the b, v and gate it read last are still in L2 when the output pass starts, and walking
// backwards those are each segment's first chunks, the ones the output pass reads first
// (forwards they are the last chunks, which the output pass reaches after its own c, z and y
// traffic has evicted them). Run 131 (A/B, 3 rounds, 675/675): forward -1.4% at the default
// shape, -1.1% at H = 64, -1.9% at B = 1 T = 16384 and at H = 16, -4.3% at S = 16; training
// forward -1.4..+0.1%, forward + backward -0.6..0.0% (the training output pass runs 3.4 waves,
// so only its first finds its first chunks in L2). On by default; 0 walks forwards (through the
// same code: that build's state pass is not instruction for instruction session 22's).
#ifndef HYMO_GDN_STATE_REV
#define HYMO_GDN_STATE_REV 1
#endif

// The staged forward's segment scan (HYMO_GDN_SEG_SCAN bit 1).
__host__ __device__ constexpr bool seg_scan_fwd(int, int) { return (HYMO_GDN_SEG_SCAN & 1) != 0; }
// ... in a forward of the kind given (train: the training forward; split: S or D = 128's blocks):
// HYMO_GDN_OUT_EARLY bit 16 (with bit 1, gdn.cuh) drops it from the plain forward off the split
// path where S, D <= 32 (64-token chunks), each output CTA combining the earlier segments'
// local states after its wait. Where S or D = 64 (32-token chunks, twice the segments a (b, h))
// that combine made the plain forward 21% slower at D = S = 64 (run 298) and 2.3% slower held at
// (D, S) = (64, 16) (run 301, 1.3% idle).
__host__ __device__ constexpr bool seg_scan_fwd_in(int S, int D, bool train, bool split) {
  return seg_scan_fwd(S, D) && (train || split || (HYMO_GDN_OUT_EARLY & 17) != 17 || S > 32 || D > 32);
}
// ... and the staged backward's reverse scan (bit 2; its main kernel is staged_bwd's).
__host__ __device__ constexpr bool seg_scan_bwd(int S, int D) {
  return (HYMO_GDN_SEG_SCAN & 2) && staged_bwd(S, D);
}

// The gate of one chunk: one warp (warp 0) holds the raw values of C/32 tokens a lane in
// registers (fetched ahead), then turns them into g and the inclusive within-chunk cumsum G
// (gate_cumsum).
template <int C>
__device__ __forceinline__ void gate_fetch(float (&r)[C / 32], const bf16* gate, size_t tok_stride,
                                           int n) {
  constexpr int E = C / 32;
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int e = 0; e < E; ++e) {
    const int t = lane * E + e;
    r[e] = t < n ? __bfloat162float(gate[size_t(t) * tok_stride]) : 0.f;
  }
}
template <int C, bool FUSED>
__device__ __forceinline__ void gate_finish(const float (&r)[C / 32], float* g, float* G, int n,
                                            float dtb) {
  constexpr int E = C / 32;
  const int lane = threadIdx.x & 31;
  float gv[E];
#pragma unroll
  for (int e = 0; e < E; ++e)
    gv[e] = lane * E + e < n ? (FUSED ? 1.f / (1.f + __expf(-(r[e] + dtb))) : r[e]) : 0.f;
  gate_cumsum<C>(gv, g, G);
}

// The S x D state (or adjoint) is updated in NIT items of 16 rows x 8*NTW columns,
// dealt round-robin to the NW warps (IPW items at most a warp); item (mt, nb) covers
// rows mt*16.. and columns nb.. in mma accumulator layout.
template <int S, int D, int NW>
struct Items {
  static constexpr int NMT = S / 16, NH = D >= 32 ? 2 : 1, NTW = D / 8 / NH, NIT = NMT * NH;
  static constexpr int IPW = (NIT + NW - 1) / NW;
};

// Rows gq and gq + 8 of an item's accumulators (mma layout) times d0 and d1.
template <int NT>
__device__ __forceinline__ void scale_rows(float (&x)[NT][4], float d0, float d1) {
#pragma unroll
  for (int nt = 0; nt < NT; ++nt) {
    x[nt][0] *= d0; x[nt][1] *= d0;
    x[nt][2] *= d1; x[nt][3] *= d1;
  }
}

// f(it, nt, hr, s, d) for each pair of columns (d, d+1) in row s of the it-th item of
// warp w (of the NW warps that hold the state).
template <int S, int D, int NW, class F>
__device__ __forceinline__ void for_state_pairs(int w, F f) {
  using I = Items<S, D, NW>;
  constexpr int NH = I::NH, NTW = I::NTW, NIT = I::NIT, IPW = I::IPW;
  const int lane = threadIdx.x & 31, gq = lane >> 2, tq = lane & 3;
#pragma unroll
  for (int it = 0; it < IPW; ++it) {
    const int item = w + it * NW;
    if (item >= NIT) continue;
    const int mt = item / NH, nb = (item % NH) * NTW * 8;
#pragma unroll
    for (int nt = 0; nt < NTW; ++nt)
#pragma unroll
      for (int hr = 0; hr < 2; ++hr) f(it, nt, hr, mt * 16 + gq + hr * 8, nb + nt * 8 + 2 * tq);
  }
}

// Step it (0..8) of a lane's balanced walk over one 8x8 triangle (tau <= t, rows
// inside an 8-row half): key column pp (t = pp .. 7), then key column 7 - pp
// (t = 7 - pp .. 7), 9 steps for every pp in 0..3.
__device__ __forceinline__ void tri_key_step(int pp, int it, int& tau, int& t) {
  const bool second = it >= 8 - pp;
  tau = second ? 7 - pp : pp;
  t = second ? it - 1 : pp + it;
}
// The same over one 4x4 triangle (HYMO_GDN_TRI4): key column pp (t = pp .. 3), then key
// column 3 - pp (t = 3 - pp .. 3), 5 steps (it 0..4) for pp in 0..1; true on the second.
__device__ __forceinline__ bool tri4_key_step(int pp, int it, int& tau, int& t) {
  const bool second = it >= 3 && it >= 4 - pp;
  tau = second ? 3 - pp : pp;
  t = second ? it - 1 : pp + it;
  return second;
}

// The 9 sums of a lane's balanced walk (tri_key_step), which every lane of its group of NQ
// holds after the group's sum, written by put(tau, t, x): with HYMO_GDN_WALK_WR lane qd
// writes steps qd, qd + NQ, .. (its value picked by selects), else lane 0 writes all 9.
template <int NQ, class Put>
__device__ __forceinline__ void walk_put(const float (&part)[9], int qd, int pp, Put put) {
  if constexpr (HYMO_GDN_WALK_WR) {
#pragma unroll
    for (int j = 0; j * NQ < 9; ++j) {
      const int it = qd + NQ * j;
      float x = part[NQ * j];
#pragma unroll
      for (int q = 1; q < NQ; ++q)
        if (NQ * j + q < 9 && qd == q) x = part[NQ * j + q];
      if (it < 9) {
        int tau, t;
        tri_key_step(pp, it, tau, t);
        put(tau, t, x);
      }
    }
  } else if (qd == 0) {
#pragma unroll
    for (int it = 0; it < 9; ++it) {
      int tau, t;
      tri_key_step(pp, it, tau, t);
      put(tau, t, part[it]);
    }
  }
}

// x summed over the four lanes of each quad (lane bits 0 and 1).
template <int N>
__device__ __forceinline__ void quad_sum(float (&x)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) {
    x[i] += __shfl_xor_sync(0xffffffffu, x[i], 1);
    x[i] += __shfl_xor_sync(0xffffffffu, x[i], 2);
  }
}

// HYMO_GDN_STATE_REG's state update of one warp: acc (rows mt 16 .. mt 16 + 15 of the state,
// columns nb .. nb + 8 NT - 1) = exp(Gl A) acc + K^T v over tokens kb .. kb + KW - 1 of the
// chunk, K^T's fragments built in registers: lane element (s, t) = b_t[s] exp((Gl - G_t)
// A_s), s = mt 16 + gq (+ 8), t = k0 + 2 tq (+ 1, + 8, + 9), from ldmatrix.trans of the raw
// b tile (stride LS), split into high and low parts; v's tile has stride LD.
// NOSCALE (HYMO_GDN_STATE_REV): acc += K^T v, with Gl the keys' reference (the segment's end
// as seen from this chunk), acc not rescaled. PK (HYMO_GDN_PK2, the plain forward's state pass):
// the keys as BF16 only, scaled in packed BF16 arithmetic (scale_bf16x2<true>), one product.
template <int KW, int NT, int LS, int LD, bool NOSCALE = false, bool PK = false>
__device__ __forceinline__ void state_update_regkeys(float (&acc)[NT][4], const bf16* sb, const bf16* sv,
                                                     const float* G, const float* A2, float Gl,
                                                     int mt, int kb, int nb) {
  const int lane = threadIdx.x & 31, gq = lane >> 2, tq = lane & 3;
  const float a0 = A2[mt * 16 + gq], a1 = A2[mt * 16 + gq + 8];
  if constexpr (!NOSCALE) {
    const float d0 = ex2f(Gl * a0), d1 = ex2f(Gl * a1);
    scale_rows(acc, d0, d1);
  }
#pragma unroll
  for (int kk = 0; kk < KW; kk += 16) {
    const int k0 = kb + kk;
    uint32_t r[4], ah[4], al[4];
    ldsm_x4_t(r, sb + (k0 + ldsm_row_t(lane)) * LS + mt * 16 + ldsm_col_t(lane));
    const float2 ga = *reinterpret_cast<const float2*>(G + k0 + 2 * tq);
    const float2 gb = *reinterpret_cast<const float2*>(G + k0 + 2 * tq + 8);
    // r[0]: (s0; t, t + 1), r[1]: (s0 + 8; t, t + 1), r[2], r[3]: the same at t + 8
    const float e[4] = {Gl - ga.x, Gl - ga.y, Gl - gb.x, Gl - gb.y};
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const float as = (q & 1) ? a1 : a0;
      const int e0 = (q >> 1) * 2;
      if constexpr (PK) {
        ah[q] = scale_bf16x2<true>(r[q], ex2f(e[e0] * as), ex2f(e[e0 + 1] * as));
      } else {
        const float2 x = bf16x2_f2(r[q]);
        const float y0 = x.x * ex2f(e[e0] * as), y1 = x.y * ex2f(e[e0 + 1] * as);
        split2(y0, y1, ah[q], al[q]);
      }
    }
#pragma unroll
    for (int np = 0; np < NT / 2; ++np) {
      uint32_t bv[4];
      ldsm_x4_t(bv, sv + (k0 + ldsm_row(lane)) * LD + nb + np * 16 + ldsm_col(lane));
      mma_bf16(acc[2 * np], ah, bv[0], bv[1]);
      mma_bf16(acc[2 * np + 1], ah, bv[2], bv[3]);
      if constexpr (!PK) {
        mma_bf16(acc[2 * np], al, bv[0], bv[1]);
        mma_bf16(acc[2 * np + 1], al, bv[2], bv[3]);
      }
    }
  }
}

// ---------------------------------------------------------------------------
// The local end state of chunks c0 .. c1-1 (c0 < c1) of (b, h), accumulated into acc
// (zero on entry; the items of warp wid of NWT, Items<S, D, NWT>); returns the chunks'
// gate sum.
// NTH threads; shared memory: bbuf(k), vbuf(k) b and v (two buffers, strides LS and
// LD), kh, kl the chunk-end keys' high and low parts, g and G the gate vectors, A2 (set
// and visible); graw is the gate registers. b, v and the gate of the next chunk
// are in flight while the current one computes. Warp 0 holds the gate. The state pass.
// KREG (HYMO_GDN_STATE_REG): the keys go straight into the A fragments of the
// state update (kh and kl unused); chunk k's g and G are g, G (k even) or g1, g1 + C.
// KS (HYMO_GDN_STATE_KSPLIT, with KREG): acc is [1][D / 8][4], warp wid's rows mt = wid %
// (S / 16) of the state, every column, summed over its share of each chunk's tokens
// the caller adds the shares (state_bf16_kernel).
// HP (HYMO_GDN_STATE_PAIR): heads a CTA, 1 or 2. With 2, the CTA's NTH * 2 threads fetch rows of
// both heads (h and h + 1; stride LS and LD hold 2 S and 2 D values) and warps NWT.. walk head
// h + 1 (its g, G, A2, g1, graw and acc); the arithmetic is the one-head walk's.
template <int S, int D, int C, bool FUSED, int NTH, int NWT, int LS, int LD, class BBuf,
          class VBuf, bool KREG = false, bool KS = false, bool REV = false, class HMT = HeadMap<>, bool PK = false,
          int HP = 1, int AI, int AN>
__device__ __forceinline__ float segment_local_state(
    KParams p, float (&acc)[AI][AN][4], BBuf bbuf,
    VBuf vbuf, bf16* kh, bf16* kl, float* g, float* G, const float* A2, float (&graw)[C / 32],
    int bb, int h, int c0, int c1, float dtb, float* g1 = nullptr, [[maybe_unused]] const TileMapsArg tmp = nullptr,
    [[maybe_unused]] uint64_t* mb = nullptr HYMO_GDN_CLK(, const Clk* clk = nullptr)) {
  static_assert(!KS || (KREG && AI == 1 && AN == D / 8 && NWT % (S / 16) == 0 && C % (16 * NWT / (S / 16)) == 0),
                "KS: KREG, acc [1][D / 8][4], the warps split evenly over row tiles and tokens");
  static_assert(KS || (AI == Items<S, D, NWT>::IPW && AN == Items<S, D, NWT>::NTW), "acc: the warp's items");
  static_assert(HP == 1 || (HP == 2 && KS && (HYMO_GDN_TMA & 8) == 0),
                "HYMO_GDN_STATE_PAIR: the KS walk, the b and v tiles by cp.async");
  using I = Items<S, D, NWT>;
  constexpr int NH = I::NH, NTW = I::NTW, NIT = I::NIT, IPW = I::IPW;
  // wid: the warp within its head's NWT; half: the CTA's head (HP = 2)
  const int tid = threadIdx.x, wid = HP == 1 ? tid >> 5 : (tid >> 5) % NWT, gq = (tid & 31) >> 2;
  const int half = HP == 1 ? 0 : (tid >> 5) / NWT, hg = h + half;
  const size_t tsD = size_t(HMT::HD(p.H)) * D, tsS = size_t(HMT::HS(p.H)) * S, tsG = HMT::HG(p.H);
  const bf16* gate = reinterpret_cast<const bf16*>(p.gate);
  float* const g0 = g;
  // HYMO_GDN_TMA bit 8 (PlanF::TMA_S; the caller passes tmp and mb): the b and v tiles
  // by the TMA, buffer pair k's on mbarrier mb[k], whose j-th phase is the j-th chunk walked into
  // that pair
  constexpr bool tma = (HYMO_GDN_TMA & 8) != 0;
  auto fetch = [&](int chn, int buf) {
#if HYMO_GDN_TMA & 8
    if constexpr (tma) {
      if (tid == 0) {
        mbar_expect_tx(mb + buf, 2u * C * (LS + LD));
        tma_load_3d(bbuf(buf), &tmp->b, HMT::hS(h) * S, chn * C, bb, mb + buf);
        tma_load_3d(vbuf(buf), &tmp->v, HMT::hD(h) * D, chn * C, bb, mb + buf);
      }
      return;
    }
#endif
    const int nn = min(C, p.T - chn * C);
    const size_t tk = size_t(bb) * p.T + size_t(chn) * C;
    load_rows_async<bf16, S * HP, C, NTH * HP>(bbuf(buf), LS, reinterpret_cast<const bf16*>(p.b) + (tk * HMT::HS(p.H) + HMT::hS(h)) * S, tsS, nn);
    load_rows_async<bf16, D * HP, C, NTH * HP>(vbuf(buf), LD, reinterpret_cast<const bf16*>(p.v) + (tk * HMT::HD(p.H) + HMT::hD(h)) * D, tsD, nn);
    cp_async_commit();
  };
  // the chunk a chunks after ch in the walk's order, and whether there is one (REV: the
  // walk goes from c1 - 1 down to c0)
  auto nxt = [&](int ch, int a) { return REV ? ch - a : ch + a; };
  auto has = [&](int ch, int a) { return REV ? ch - a >= c0 : ch + a < c1; };
  const int cf = REV ? c1 - 1 : c0;  // the first chunk walked
  fetch(cf, 0);
  if (wid == 0) gate_fetch<C>(graw, gate + (size_t(bb) * p.T + size_t(cf) * C) * HMT::HG(p.H) + HMT::hG(hg), tsG, min(C, p.T - cf * C));
  float gseg = 0.f;

  for (int ch = cf; REV ? ch >= c0 : ch < c1; ch = nxt(ch, 1)) {
    const int k = REV ? c1 - 1 - ch : ch - c0, n = min(C, p.T - ch * C);
    HYMO_GDN_CLK(if (clk) clk->chunk(k));
    const int cur = k & 1;  // this chunk's buffers (HP = 2: this warp's head's columns)
    bf16* sb = HP == 1 ? bbuf(cur) : bbuf(cur) + half * S;
    const bf16* sv = HP == 1 ? vbuf(cur) : vbuf(cur) + half * D;
    if constexpr (KREG) {  // this chunk's gate buffer
      g = (k & 1) ? g1 : g0;
      G = g + C;
    }
    if (wid == 0) {
      gate_finish<C, FUSED>(graw, g, G, n, dtb);
      if (has(ch, 1))
        gate_fetch<C>(graw, gate + (size_t(bb) * p.T + size_t(nxt(ch, 1)) * C) * HMT::HG(p.H) + HMT::hG(hg), tsG,
                      min(C, p.T - nxt(ch, 1) * C));
    }
    // this chunk's b and v
    if constexpr (tma) {
#if HYMO_GDN_TMA & 8
      mbar_wait(mb + cur, (k >> 1) & 1);
#endif
    } else {
      cp_async_wait_all();
    }
    __syncthreads();
    // every warp is done with the chunk walked before ch: its buffers take chunk nxt(ch, 1)
    if (has(ch, 1)) fetch(nxt(ch, 1), (k + 1) & 1);
    const float Gl = G[C - 1];
    // the keys' reference: the chunk's end, or (REV) the segment's end
    const float Gr = REV ? gseg + Gl : Gl;
    if constexpr (KS) {
      // rows mt of the state, all D columns, over tokens kb .. kb + KW - 1 of the chunk
      // (each key fragment built once in the CTA)
      constexpr int NMT = S / 16, KW = C / (NWT / NMT);
      state_update_regkeys<KW, D / 8, LS, LD, REV, PK>(acc[0], sb, sv, G, A2, Gr, wid % NMT, (wid / NMT) * KW, 0);
    } else if constexpr (KREG) {
#pragma unroll
      for (int it = 0; it < IPW; ++it) {
        const int item = wid + it * NWT;
        if (item >= NIT) continue;
        state_update_regkeys<C, NTW, LS, LD, REV, PK>(acc[it], sb, sv, G, A2, Gr, item / NH, 0, (item % NH) * NTW * 8);
      }
    } else {
      // keys referenced to the chunk end, FP32 split into BF16 high and low tiles
      for (int u = tid; u < C * (S / 8); u += NTH) {
        int q8;
        const int t = row_piece<S / 8, 2>(u, q8), s0 = q8 * 8;  // (HYMO_GDN_ROWPERM)
        float x[8], a2[8];
        ld8(sb + t * LS + s0, x);
        ld8(A2 + s0, a2);
        const float dg = Gr - G[t];
#pragma unroll
        for (int e = 0; e < 8; ++e) x[e] *= ex2f(dg * a2[e]);
        st16_split(kh + t * LS + s0, kl + t * LS + s0, x);
      }
      __syncthreads();
#pragma unroll
      for (int it = 0; it < IPW; ++it) {
        const int item = wid + it * NWT;
        if (item < NIT) {
          const int mt = item / NH, nb = (item % NH) * NTW * 8;
          if constexpr (!REV) {
            const float d0 = ex2f(Gl * A2[mt * 16 + gq]), d1 = ex2f(Gl * A2[mt * 16 + gq + 8]);
            scale_rows(acc[it], d0, d1);
          }
          warp_mm_ldsm<NTW, true>(acc[it], C, kh + mt * 16, LS, sv + nb, LD);
          warp_mm_ldsm<NTW, true>(acc[it], C, kl + mt * 16, LS, sv + nb, LD);
        }
      }
    }
    gseg += Gl;
  }
  return gseg;
}

// State pass: the local end state of each segment (from a zero state), and the
// segment's gate sum. The state lives in the warps' mma accumulators across the chunks.
// PK (HYMO_GDN_PK2, for the plain forward only): the keys as BF16 only (state_update_regkeys).
#if HYMO_GDN_TMA & 8
#define HYMO_GDN_STATE_MAPS , const __grid_constant__ TileMaps tm
#else
#define HYMO_GDN_STATE_MAPS
#endif
// HYMO_GDN_STATE_PAIR: the (b, h) pair of head `half` (0 or 1) of the head pair that blockIdx.y
// (+ p.bh0) names (H even)
template <bool GRID = false>
__device__ __forceinline__ int state_pair_bh(const KParams& p, int half) {
  const int bp = cta_bh<GRID>(p), hp = p.H / 2;
  return (bp / hp) * p.H + 2 * (bp % hp) + half;
}

// PAIR (HYMO_GDN_STATE_PAIR; run_fwd_staged launches it where H is even): two adjacent heads a
// CTA, blockIdx.y (+ p.bh0) a head pair, threads NTH.. the odd head.
template <int S, int D, int C, bool FUSED, class HM = HeadMap<>, bool PK = false, bool PAIR = false>
__global__ void __launch_bounds__(2 * C * (PAIR ? 2 : 1)) state_bf16_kernel(KParams p HYMO_GDN_STATE_MAPS) {
  HYMO_GDN_CLK(Clk clk(p.clocks, kClkState));  // (HYMO_GDN_CLOCKS)
  // HYMO_GDN_STATE_PDL_LATE (gdn.cuh): the dependents' launch waits for every CTA to reach
  // its end state rather than its top
  constexpr bool LATE = (HYMO_GDN_STATE_PDL_LATE & (PK ? 1 : 2)) != 0;
  pdl_enter_at_top<LATE>();
  HYMO_GDN_CLK(clk.waited());
  using P = PlanF<S, D, C>;
  using I = Items<S, D, P::NW>;
  constexpr int HP = PAIR ? 2 : 1;
  HYMO_GDN_SMEM_DECL;
  constexpr size_t ob0 = PAIR ? P::q_b0 : P::s_b0, ob1 = PAIR ? P::q_b1 : P::s_b1;
  constexpr size_t ov0 = PAIR ? P::q_v0 : P::s_v0, ov1 = PAIR ? P::q_v1 : P::s_v1;
  // buffer k of b and v (selects, not arrays: no local memory)
  auto sbb = [&](int k) { return reinterpret_cast<bf16*>(sm + (k ? ob1 : ob0)); };
  auto svb = [&](int k) { return reinterpret_cast<bf16*>(sm + (k ? ov1 : ov0)); };
  bf16* kh = P::SR ? nullptr : reinterpret_cast<bf16*>(sm + P::s_kh);
  bf16* kl = P::SR ? nullptr : reinterpret_cast<bf16*>(sm + P::s_kl);
  // half: the CTA's head (PAIR: threads NTH.. the odd head)
  const int half = PAIR ? int(threadIdx.x) / P::NTH : 0;
  float* g = reinterpret_cast<float*>(sm + (PAIR ? P::q_vec : P::s_vec)) + (PAIR ? half * P::SNV : 0);
  float* G = g + C;
  float* A2 = G + C;

  // this thread's (b, h) pair (PAIR: blockIdx.y a head pair), b and h
  // (PK: the plain forward's, launched only on unsplit layouts: the grid's order, seg_c0's GRID)
  const int seg = cta_seg<PK>(p), bh = PAIR ? state_pair_bh<PK>(p, half) : cta_bh<PK>(p), bb = bh / p.H, h = bh % p.H;
  // tid, w: the thread and warp within its head's 2 C threads
  const int tid = PAIR ? int(threadIdx.x) % P::NTH : threadIdx.x, w = tid >> 5;
  const int c0 = seg_c0<PK>(p, seg), c1 = seg_c1<PK>(p, c0);
  const float dtb = FUSED ? p.dt_bias[HM::hG(h)] : 0.f;
  if (!HYMO_GDN_STATE_LAST && seg + 1 == p.NSEG) {  // not needed (see HYMO_GDN_STATE_LAST)
    if (tid == 0) p.seggsum[size_t(bh) * p.NSEG + seg] = 0.f;
    HYMO_GDN_CLK(clk.exit(0));
    return;
  }
  for (int s = tid; s < S; s += P::NTH) A2[s] = -expf(p.A_log[HM::hS(h) * S + s]) * 1.4426950408889634f;

  float graw[C / 32];
  constexpr bool KS = state_ksplit(S, D) && P::SR;
  static_assert(!PAIR || (KS && std::is_same_v<HM, HeadMap<>> && !P::TMA_S),
                "HYMO_GDN_STATE_PAIR: S <= 32, D = 32, the default head map, the tiles by cp.async");
  constexpr int AI = KS ? 1 : I::IPW, AN = KS ? D / 8 : I::NTW;
  float acc[AI][AN][4];
#pragma unroll
  for (int it = 0; it < AI; ++it) zero(acc[it]);
  float gseg = 0.f;
  // HYMO_GDN_TMA bit 8: the tiles by the TMA (segment_local_state), an mbarrier a buffer pair
  [[maybe_unused]] uint64_t* mb = reinterpret_cast<uint64_t*>(sm + P::s_mb);
  [[maybe_unused]] TileMapsArg tmp = nullptr;
#if HYMO_GDN_TMA & 8
  if constexpr (P::TMA_S) {
    tma_groups_init(mb, sm);
    tmp = &tm;
  }
#endif
  constexpr int LSX = PAIR ? P::LS2 : P::LS, LDX = PAIR ? P::LD2 : P::LD;
  if (c0 < c1)
    gseg = segment_local_state<S, D, C, FUSED, P::NTH, P::NW, LSX, LDX,
                               decltype(sbb), decltype(svb), P::SR, KS, HYMO_GDN_STATE_REV, HM, PK && P::SR, HP>(
        p, acc, sbb, svb, kh, kl, g, G, A2, graw, bb, h - half, c0, c1, dtb, P::SR ? A2 + S : nullptr, tmp,
        mb HYMO_GDN_CLK(, &clk));
  pdl_release<LATE>();
  const size_t so = size_t(bh) * p.NSEG + seg;
  float* dst = p.segstate + so * S * D;
  if constexpr (KS) {
    // the token shares of rows mt: warps ks > 0 leave theirs in shared memory (over the
    // chunk buffers, in the fragment layout), warp ks = 0 adds them in order of ks
    constexpr int NMT = S / 16, NE = D / 8 * 4, NRED = (P::NW - NMT) * NE * 32;
    const int lane = tid & 31, gq = lane >> 2, tq = lane & 3, mt = w % NMT, ks = w / NMT;
    float* red = reinterpret_cast<float*>(sm) + (PAIR ? half * NRED : 0);
    static_assert(HP * NRED * 4 <= (PAIR ? P::q_vec : P::s_kh), "the shares fit the chunk buffers");
    __syncthreads();  // every warp is done with the chunk buffers
    if (ks > 0) {
#pragma unroll
      for (int nt = 0; nt < D / 8; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) red[((ks - 1) * NMT + mt) * NE * 32 + (nt * 4 + e) * 32 + lane] = acc[0][nt][e];
    }
    __syncthreads();
    if (ks == 0) {
      for (int j = 1; j < P::NW / NMT; ++j)
#pragma unroll
        for (int nt = 0; nt < D / 8; ++nt)
#pragma unroll
          for (int e = 0; e < 4; ++e) acc[0][nt][e] += red[((j - 1) * NMT + mt) * NE * 32 + (nt * 4 + e) * 32 + lane];
#pragma unroll
      for (int nt = 0; nt < D / 8; ++nt)
#pragma unroll
        for (int hr = 0; hr < 2; ++hr)
          *reinterpret_cast<float2*>(dst + (mt * 16 + gq + hr * 8) * D + nt * 8 + 2 * tq) =
              make_float2(acc[0][nt][2 * hr], acc[0][nt][2 * hr + 1]);
    }
  } else {
    for_state_pairs<S, D, P::NW>(w, [&](int it, int nt, int hr, int s, int d) {
      *reinterpret_cast<float2*>(dst + s * D + d) = make_float2(acc[it][nt][2 * hr], acc[it][nt][2 * hr + 1]);
    });
  }
  if (tid == 0) p.seggsum[so] = gseg;
  HYMO_GDN_CLK(clk.exit(c1 - c0));
}

// Segment scans (HYMO_GDN_SEG_SCAN), in place over one [BH][NSEG][S][D] buffer:
//   forward (seg_scan_fwd, between the state pass and the output pass): segstate[bh][j]
//     turns from segment j's local end state into the state entering segment j;
//   REVERSE (seg_scan_bwd, between the adjoint pass and the staged backward main kernel):
//     dHseg[bh][j] turns from segment j's local adjoint into the adjoint leaving it.
// run = 0; for each j in order (REVERSE: from the last): x = local_j, buf_j = run,
// run = exp(gsum_j A) run + x. This is the in-CTA combine each replaces, in the same
// order and arithmetic (the output pass used __expf, seg_combine<true> expf), so the
// results are bitwise the same. One thread per (b, h) and state element (grid: S D / 128
// x (b, h)); the loads of U segments are in flight together.
template <int S, int D, bool REVERSE, class HM = HeadMap<>>
__global__ void __launch_bounds__(128) seg_scan_kernel(KParams p) {
  pdl_enter();  // (gdn.cuh)
  constexpr int N = S * D, U = HYMO_GDN_SCAN_U;
  const int bh = blockIdx.y + p.bh0, h = bh % p.H;
  const int i = blockIdx.x * 128 + threadIdx.x;
  if (i >= N) return;
  const float A = -expf(__ldg(p.A_log + HM::hS(h) * S + i / D));
  float* st = (REVERSE ? p.dHseg : p.segstate) + size_t(bh) * p.NSEG * N + i;
  const float* gsum = p.seggsum + size_t(bh) * p.NSEG;
  float run = 0.f;
  for (int k0 = 0; k0 < p.NSEG; k0 += U) {
    float x[U], gj[U];
#pragma unroll
    for (int u = 0; u < U; ++u)
      if (k0 + u < p.NSEG) {
        const int j = REVERSE ? p.NSEG - 1 - (k0 + u) : k0 + u;
        // the last segment in the scan's order only ends the walk (run is not stored after it),
        // and its local state may never have been written (HYMO_GDN_STATE_LAST): not read, so
        // compute-sanitizer's initcheck reads nothing uninitialised (session 53)
        x[u] = k0 + u + 1 < p.NSEG ? st[size_t(j) * N] : 0.f;
        gj[u] = __ldg(gsum + j);
      }
#pragma unroll
    for (int u = 0; u < U; ++u)
      if (k0 + u < p.NSEG) {
        const int j = REVERSE ? p.NSEG - 1 - (k0 + u) : k0 + u;
        st[size_t(j) * N] = run;
        run = fmaf(REVERSE ? expf(gj[u] * A) : __expf(gj[u] * A), run, x[u]);
      }
  }
}

// Named barrier 1 + w between the R warps of row block w (immediate ids: the kernel
// reserves only the barriers it uses).
template <int NTHR>
__device__ __forceinline__ void block_pair_sync(int w) {
  switch (w) {
    case 0: asm volatile("bar.sync 1, %0;\n" ::"n"(NTHR) : "memory"); break;
    case 1: asm volatile("bar.sync 2, %0;\n" ::"n"(NTHR) : "memory"); break;
    case 2: asm volatile("bar.sync 3, %0;\n" ::"n"(NTHR) : "memory"); break;
    default: asm volatile("bar.sync 4, %0;\n" ::"n"(NTHR) : "memory"); break;
  }
}

// HYMO_GDN_TMA bit 2 (gdn.cuh): the output passes' tile maps, a second kernel parameter
#if HYMO_GDN_TMA & 2
#define HYMO_GDN_OUT_MAPS , const __grid_constant__ TileMaps tm
#else
#define HYMO_GDN_OUT_MAPS
#endif

// ---------------------------------------------------------------------------
// Output pass: each CTA combines the earlier segments' local states into its
// entering state (or, after the segment scan, loads it: with HYMO_GDN_OUT_EARLY once its
// first chunk's P V is done, or not at all where the segment starts the sequence), then
// walks its chunks. b, c and the gate of the next chunk are
// fetched as soon as the current chunk is done with them, v a chunk ahead (double
// buffer), z into registers (raw BF16 pairs) at the top of a chunk. The FP32 state
// lives in the mma accumulators of the warps that update it (item (mt, nb): rows
// mt*16.., columns nb..), and in shared memory only as BF16 high and low tiles.
// The CTAs an SM the output pass is compiled for (__launch_bounds__' second argument): at S, D
// <= 32 as the plans lay out. The unsplit training pass (128 threads) three where its shared
// memory allows three and its registers would not: at D = 64, S <= 32, HYMO_GDN_OUT_EARLY's bit
// 2 took it from 137 registers to 173 at S = 32, two CTAs an SM instead of three (the training
// forward 8.2% slower at (D, S) = (64, 32) in run 299; capped at 168, 8 bytes spilled); at S =
// 64, D = 32 it had 175 (164 capped, no spills). Run 300 (session 59, gdn.md item 18): the
// training forward -9.9% at (D, S) = (64, 32) and -10.5% at (32, 64), 1059 of 1059 checks. The
// unsplit plain pass at D = 64, S <= 32: five (HYMO_GDN_OUT_MINB64, gdn.cuh; run 302: the forward
// -11.2% at (64, 16), -5.9% at (64, 32)). One elsewhere; the split path's blocks (SPLIT) stay as
// they were.
template <int S, int D, int C, bool TRAIN, bool SPLIT>
__host__ __device__ constexpr int out_min_ctas() {
  if (S <= 32 && D <= 32) return TRAIN ? (PlanF<S, D, C, true>::TW ? 3 : 2) : (PlanF<S, D, C>::P4 ? 4 : 3);
  if (!SPLIT && S <= 32 && D == 64) return TRAIN ? 3 : HYMO_GDN_OUT_MINB64;  // (gdn.cuh)
  return (TRAIN && !SPLIT && S == 64 && D == 32) ? 3 : 1;
}
template <int S, int D, int C, bool FUSED, bool TRAIN, class HM = HeadMap<>>
__global__ void __launch_bounds__(PlanF<S, D, C, TRAIN>::NTHO, out_min_ctas<S, D, C, TRAIN, HM::split>())
    out_bf16_kernel(KParams p HYMO_GDN_OUT_MAPS) {
  HYMO_GDN_CLK(Clk clk(p.clocks, TRAIN ? kClkTrain : kClkOut));  // (HYMO_GDN_CLOCKS)
  pdl_launch_dependents();  // pdl_wait() below: before the segment combine, or (OE) later
  using P = PlanF<S, D, C, TRAIN>;
  constexpr int MINB = out_min_ctas<S, D, C, TRAIN, HM::split>();
  static_assert(MINB == 1 || (S <= 32 && D <= 32) || MINB * (P::bytes_out + 1024) <= 228 * 1024,
                "out_min_ctas: more CTAs an SM than the output pass's shared memory allows");
  // HM::split (S or D = 128, gdn_impl.cuh): one block of a head's state, the prologue as
  // FUSED says, no epilogue: o in FP32 into p.dObuf ([B,T,p.H,D], the kernel's own heads;
  // TRAIN: FP32-accurate, and the entering states in h0buf, also the kernel's own heads)
  constexpr bool EPI = FUSED && !HM::split;
  constexpr int NW = P::NW, LS = P::LS, LD = P::LD, LP = P::LP, FS = P::FS;
  // R warps a row block (role r: output columns r D / R ..); the state items are dealt
  // over all NWT warps
  constexpr int R = P::R, NWT = NW * R, NTH = P::NTHO, DR = D / R, ND = DR / 8;
  using I = Items<S, D, NWT>;
  constexpr int NH = I::NH, NTW = I::NTW, NIT = I::NIT, IPW = I::IPW;
  HYMO_GDN_SMEM_DECL;
  bf16* sc = reinterpret_cast<bf16*>(sm + P::o_c);
  bf16* sb = reinterpret_cast<bf16*>(sm + P::o_b);
  auto svb = [&](int k) { return reinterpret_cast<bf16*>(sm + (k ? P::o_v1 : P::o_v0)); };
  bf16* qs = reinterpret_cast<bf16*>(sm + P::o_qs);
  bf16* qi = reinterpret_cast<bf16*>(sm + P::o_qi);
  bf16* kr = reinterpret_cast<bf16*>(sm + P::o_kr);
  float* a = reinterpret_cast<float*>(sm + P::o_a);
  [[maybe_unused]] bf16* mid2 = reinterpret_cast<bf16*>(sm + P::o_a);  // (P::T4)
  bf16* sp = reinterpret_cast<bf16*>(sm + P::o_p);
  bf16* mid = reinterpret_cast<bf16*>(sm + P::o_mid);
  bf16* hh = reinterpret_cast<bf16*>(sm + P::o_hh);
  bf16* hl = reinterpret_cast<bf16*>(sm + P::o_hl);
  float* g = reinterpret_cast<float*>(sm + P::o_vec);
  float* G = g + C;
  float* A2 = G + C;
  float* dl = A2 + S;
  float* ssx = dl + S;  // the epilogue's per-row partial sums of squares, one row per role
  // low parts (TRAIN): at a fixed distance after each high tile
  constexpr int LQ = C * LS, LK = P::NKRP * LS, LPP = C * LP;
  // HYMO_GDN_OUT_ROWS: z and y as 16-byte row pieces (NU a lane: 16 rows of DR columns),
  // through the warp's P rows (C + 8 >= D columns when D <= 32); not in the plain pass at
  // D = 16, where it spills and measured 2% slower (run 65)
  constexpr bool OR = HYMO_GDN_OUT_ROWS && EPI && (D == 32 || (TRAIN && D == 16));
  constexpr int NU = OR ? 16 * (DR / 8) / 32 : 1;
  static_assert(!OR || (NU >= 1 && 16 * (DR / 8) == 32 * NU), "OUT_ROWS: whole 16-byte pieces a lane");
  // OR: piece i of this lane is row rr of the warp's block, columns cb + cc .. + 7
  // (HYMO_GDN_ROWPERM bit 4: out_piece's order, gdn.cuh)
  const auto or_piece = [](int i, int lane_, int& rr, int& cc) {
    const int u = lane_ + 32 * i;
    int q;
    rr = out_piece<DR / 8>(u, q);
    cc = q * 8;
  };

  // HYMO_GDN_OUT_EARLY (gdn.cuh): the first chunk's intra-chunk work (staging, P, P V) runs
  // before the wait, and the entering state is read (with the segment scan) or combined from the
  // earlier segments' local states (without it) after it
  constexpr bool OE = (HYMO_GDN_OUT_EARLY & (TRAIN ? 2 : 1)) && (!TRAIN || HYMO_GDN_TRAIN_FUSE);
  // OE0 (bit 4): a CTA whose segment starts the sequence (entering state zero) waits only at
  // its end; what it writes before (y; TRAIN: o and the chunks' entering states) no earlier
  // kernel of the call touches
  constexpr bool OE0 = OE && (HYMO_GDN_OUT_EARLY & 4);
  // FSF (bit 8, with HYMO_GDN_TAIL; the plain pass where no segment is split, the training pass
  // always): every pair's first segment first (gdn_place.h's first_seg_place)
  constexpr bool FSF = OE0 && (HYMO_GDN_OUT_EARLY & 8) && HYMO_GDN_TAIL;
#if HYMO_GDN_TAIL
  const int nlong = p.nlong;
#else
  const int nlong = p.NSEG;  // (FSF needs the switch)
#endif
  int seg, bh;
  if (FSF && (TRAIN || nlong == p.NSEG)) {
    int q;
    first_seg_place(int(blockIdx.y * gridDim.x + blockIdx.x), int(gridDim.y), p.NSEG, nlong, seg, q);
    bh = q + p.bh0;
  } else {
    seg = cta_seg(p);
    bh = cta_bh(p);
  }
  const int bb = bh / p.H, h = bh % p.H;
  const int tid = threadIdx.x, wid = tid >> 5, lane = tid & 31, gq = lane >> 2, tq = lane & 3;
  const int w = wid % NW, role = wid / NW, cb = role * DR;  // row block, output columns
  const int c0 = seg_c0(p, seg), c1 = seg_c1(p, c0);
  const size_t tsD = size_t(HM::HD(p.H)) * D, tsS = size_t(HM::HS(p.H)) * S, tsG = HM::HG(p.H);
  const float dtb = FUSED ? p.dt_bias[HM::hG(h)] : 0.f;
  const float dsk = EPI ? p.D_skip[h] : 0.f;
  const bf16* gate = reinterpret_cast<const bf16*>(p.gate);
  const int r0 = 16 * w;
  // HYMO_GDN_GATE_AHEAD: warp gw (the one with the least work in the P phase: an adjacent
  // off-diagonal pair, no scaling) finishes the next chunk's gate during this chunk's P
  // phase, into the other of two g / G buffers, instead of warp 0 at the top of the next
  // chunk while the CTA waits for it at the barrier there
  constexpr bool GA = P::GA;
  constexpr int gw = GA ? (NW == 4 ? NW * (R - 1) + 2 : NWT - 1) : 0;
  // store 8 staged values: the high part, and in TRAIN the low part LO elements later
  auto stage = [&](bf16* dst, int LO, const float (&x)[8]) {
    if constexpr (TRAIN)
      st16_split(dst, dst + LO, x);
    else
      st16(dst, x);
  };
  // PK (HYMO_GDN_PK2, the plain pass): operands scaled in packed BF16 arithmetic
  constexpr bool PK = pk2_at(S) && !TRAIN;
  auto put_p = [&](int t, int tau, float x0, float x1) {  // a pair of P entries
    if constexpr (TRAIN) {
      uint32_t hi, lo;
      split2(x0, x1, hi, lo);
      *reinterpret_cast<uint32_t*>(sp + t * LP + tau) = hi;
      *reinterpret_cast<uint32_t*>(sp + LPP + t * LP + tau) = lo;
    } else {
      *reinterpret_cast<uint32_t*>(sp + t * LP + tau) = pack_bf16(x0, x1);
    }
  };
  auto put_p1 = [&](int t, int tau, float x) {
    sp[t * LP + tau] = __float2bfloat16_rn(x);
    if constexpr (TRAIN) sp[LPP + t * LP + tau] = __float2bfloat16_rn(bf16_rem(x));
  };

  // HYMO_GDN_TMA bit 2 (gdn.cuh): the same tiles by the TMA, a copy a tile by thread 0, each
  // group completing on its mbarrier (mb[0]: b and c; mb[1]: v); the segment's k-th chunk waits
  // for each one's k-th phase
  constexpr bool TM = P::TMA;
  [[maybe_unused]] uint64_t* mb = reinterpret_cast<uint64_t*>(sm + P::o_mb);
#if HYMO_GDN_TMA & 2
  if constexpr (TM) tma_groups_init(mb, sm);
#endif
  auto fetch_bc = [&](int chn) {
#if HYMO_GDN_TMA & 2
    if constexpr (TM) {
      if (tid == 0) {
        mbar_expect_tx(mb, 2u * C * LS * sizeof(bf16));
        tma_load_3d(sb, &tm.b, HM::hS(h) * S, chn * C, bb, mb);
        tma_load_3d(sc, &tm.c, HM::hS(h) * S, chn * C, bb, mb);
      }
      return;
    }
#endif
    const int nn = min(C, p.T - chn * C);
    const size_t tk = size_t(bb) * p.T + size_t(chn) * C;
    load_rows_async<bf16, S, C, NTH>(sb, LS, reinterpret_cast<const bf16*>(p.b) + (tk * HM::HS(p.H) + HM::hS(h)) * S, tsS, nn);
    load_rows_async<bf16, S, C, NTH>(sc, LS, reinterpret_cast<const bf16*>(p.c) + (tk * HM::HS(p.H) + HM::hS(h)) * S, tsS, nn);
    cp_async_commit();
  };
  auto fetch_v = [&](int chn, bf16* dst) {
#if HYMO_GDN_TMA & 2
    if constexpr (TM) {
      if (tid == 0) {
        mbar_expect_tx(mb + 1, 1u * C * LD * sizeof(bf16));
        tma_load_3d(dst, &tm.v, HM::hD(h) * D, chn * C, bb, mb + 1);
      }
      return;
    }
#endif
    const int nn = min(C, p.T - chn * C);
    const size_t tk = size_t(bb) * p.T + size_t(chn) * C;
    load_rows_async<bf16, D, C, NTH>(dst, LD, reinterpret_cast<const bf16*>(p.v) + (tk * HM::HD(p.H) + HM::hD(h)) * D, tsD, nn);
    cp_async_commit();
  };
  float graw[C / 32];
  if (c0 < c1) {
    fetch_bc(c0);
    fetch_v(c0, svb(0));
    if (wid == gw) gate_fetch<C>(graw, gate + (size_t(bb) * p.T + size_t(c0) * C) * HM::HG(p.H) + HM::hG(h), tsG, min(C, p.T - c0 * C));
  }
  for (int s = tid; s < S; s += NTH) A2[s] = -expf(p.A_log[HM::hS(h) * S + s]) * 1.4426950408889634f;
  [[maybe_unused]] float2 wy[ND];
  if constexpr (EPI) {
#pragma unroll
    for (int nt = 0; nt < ND; ++nt) wy[nt] = make_float2(p.w_y[cb + nt * 8 + 2 * tq], p.w_y[cb + nt * 8 + 2 * tq + 1]);  // w_y: 4-byte aligned is enough
  }

  // The state entering this segment, in this warp's accumulators: with the segment scan,
  // segstate holds it; else run = exp(gsum_j A) run + local_j over the earlier segments j
  // (every exponent gsum * A <= 0). Then its BF16 high and low parts into the tiles.
  float hreg[IPW][NTW][4];
  // HHI (HYMO_GDN_PK2_HHI, the plain pass): the state's high tile only
  constexpr bool HHI = HYMO_GDN_PK2_HHI && !TRAIN;
  // (the state as a parameter, not captured: nvcc's front end took the capture, before hreg's
  // first store, for a read of it, warning 549)
  auto put_state = [&](const float (&hs)[IPW][NTW][4]) {
    for_state_pairs<S, D, NWT>(wid, [&](int it, int nt, int hr, int s, int d) {
      const float x0 = hs[it][nt][2 * hr], x1 = hs[it][nt][2 * hr + 1];
      if constexpr (HHI)
        *reinterpret_cast<uint32_t*>(hh + s * LD + d) = pack_bf16(x0, x1);
      else
        st2_split(hh + s * LD + d, hl + s * LD + d, x0, x1);
    });
  };
  // The wait: everything after it may read the state pass's output and write global memory.
  // Then the entering state into hreg and the tiles.
  auto enter = [&]() {
    pdl_wait();
    HYMO_GDN_CLK(clk.waited());
    if constexpr (seg_scan_fwd_in(S, D, TRAIN, HM::split)) {
      const float* src = p.segstate + (size_t(bh) * p.NSEG + seg) * S * D;
      for_state_pairs<S, D, NWT>(wid, [&](int it, int nt, int hr, int s, int d) {
        const float2 x = *reinterpret_cast<const float2*>(src + s * D + d);
        hreg[it][nt][2 * hr] = x.x;
        hreg[it][nt][2 * hr + 1] = x.y;
      });
#pragma unroll
      for (int it = 0; it < IPW; ++it)  // items past NIT (no state rows): zero, as below
        if (wid + it * NWT >= NIT) zero(hreg[it]);
    } else {
      const float* loc = p.segstate + size_t(bh) * p.NSEG * S * D;
      const float* gsum = p.seggsum + size_t(bh) * p.NSEG;
#pragma unroll
      for (int it = 0; it < IPW; ++it) {
        zero(hreg[it]);
        const int item = wid + it * NWT;
        if (item >= NIT) continue;
        const int mt = item / NH, nb = (item % NH) * NTW * 8;
        const float al0 = -expf(p.A_log[HM::hS(h) * S + mt * 16 + gq]), al1 = -expf(p.A_log[HM::hS(h) * S + mt * 16 + gq + 8]);
#pragma unroll 4
        for (int j = 0; j < seg; ++j) {
          const float gj = __ldg(gsum + j);
          const float* lj = loc + size_t(j) * S * D;
          const float e0 = __expf(gj * al0), e1 = __expf(gj * al1);
#pragma unroll
          for (int nt = 0; nt < NTW; ++nt)
#pragma unroll
            for (int hr = 0; hr < 2; ++hr) {
              const int s = mt * 16 + gq + hr * 8, d = nb + nt * 8 + 2 * tq;
              const float2 x = __ldg(reinterpret_cast<const float2*>(lj + s * D + d));
              const float e = hr ? e1 : e0;
              hreg[it][nt][2 * hr] = fmaf(e, hreg[it][nt][2 * hr], x.x);
              hreg[it][nt][2 * hr + 1] = fmaf(e, hreg[it][nt][2 * hr + 1], x.y);
            }
        }
      }
    }
    put_state(hreg);
  };
  // The first chunk's inputs are in flight. OE: a CTA without chunks still waits (every CTA
  // does, so that the pass never completes before the kernel it depends on); OE0: a CTA whose
  // segment starts the sequence enters with a zero state and waits at its end (zero_entry), the
  // others enter in their first chunk, once its P V is done (enter_in_chunk)
  // (a lambda rather than a bool held across the chunk loop, which changed the s16 and s32 units'
  // machine code; recomputed from c0, which the loop keeps anyway)
  const auto zero_entry = [&]() { return OE0 && c0 == 0; };
  const auto enter_in_chunk = [&](int k) {
    if (OE && k == 0 && !zero_entry()) {
      enter();
      __syncthreads();
    }
  };
  if constexpr (!OE) {
    enter();
  } else if (c0 >= c1) {
    pdl_wait();
    HYMO_GDN_CLK(clk.waited());
  } else if (zero_entry()) {
#pragma unroll
    for (int it = 0; it < IPW; ++it) zero(hreg[it]);
    put_state(hreg);
  }

  // the segment's end chunk, c1, recomputed at each use rather than kept in a register across
  // the loop: with HYMO_GDN_TAIL from c0, which the loop keeps anyway (k = ch - c0; the
  // placement's division recomputed from blockIdx cost the training pass 8 bytes of spills, this
  // form 4); without it from blockIdx (ctaid_x_fresh: cta_seg's value) as the next segment's
  // start (the form c0 + cps gave this pass other machine code throughout)
#if HYMO_GDN_TAIL
  const auto c1_now = [&]() { return seg_c1(p, c0); };
#else
  const auto c1_now = [&]() { return min(p.NC, seg_c0(p, ctaid_x_fresh() + 1)); };
#endif
  float* const g0 = g;
  float* const g1 = reinterpret_cast<float*>(sm + P::o_g1);
  // HYMO_GDN_DIAG8 (the plain pass with TRI4 and SEL; gdn.cuh)
  // (D8 at S = 16 only with HYMO_GDN_DIAG8_S16: on since run 115, -2.9% there with
  // HYMO_GDN_DIAG8_MID; 1.6% slower before USTAGE, run 104, and even before MID, run 110)
  constexpr bool D8 = HYMO_GDN_DIAG8 && P::T4 && HYMO_GDN_SEL && R == 1 && (S == 32 || (S == 16 && HYMO_GDN_DIAG8_S16));
  // HYMO_GDN_DIAG8_TRAIN (the training pass with MIDREG): a block that passes diag8_fast has its
  // two halves computed by its first warp (which otherwise walks the triangles), each one product
  // around its reference (diag8_ref), operands built in registers from the raw c and b tiles as
  // the square's are, high and low parts; the square by the second warp as always
  constexpr bool DT8 = HYMO_GDN_DIAG8_TRAIN && TRAIN && P::MR && R == 2 && !(HYMO_GDN_TRI_SPLIT && S >= 64);
  // HYMO_GDN_DIAG16_TRAIN (gdn.cuh): a block that passes diag16_fast is one product around its
  // midpoint, by the first warp (the second has no square then)
  constexpr bool DT16 = DT8 && HYMO_GDN_DIAG16_TRAIN && HYMO_GDN_DIAG8_MID;
  [[maybe_unused]] const float amax2 = D8 || DT8 ? head_amax2(p.A_log + HM::hS(h) * S, S) : 0.f;
  for (int ch = c0; ch < c1_now(); ++ch) {
    const int k = ch - c0, t0 = ch * C, n = min(C, p.T - t0);
    HYMO_GDN_CLK(clk.chunk(k));
    const size_t tok0 = size_t(bb) * p.T + t0;
    const bf16* sv = svb(k & 1);
    float* g = GA && (k & 1) ? g1 : g0;  // (this chunk's g and G; buffer 0 without GA)
    float* G = g + C;
    // this lane's z pairs (epilogue layout), kept as raw BF16 pairs so that nothing
    // waits for them before the epilogue (OR: 16-byte pieces of the warp's rows, turned
    // into the pairs in the epilogue)
    [[maybe_unused]] uint32_t zq[ND][2];
    [[maybe_unused]] uint4 zr[OR ? NU : 1];
    if constexpr (OR) {
      const bf16* zb = reinterpret_cast<const bf16*>(p.z) + (tok0 * p.H + h) * D + cb;
#pragma unroll
      for (int i = 0; i < NU; ++i) {
        int rr, cc;
        or_piece(i, lane, rr, cc);
        const int t = r0 + rr;
        zr[i] = t < n ? __ldg(reinterpret_cast<const uint4*>(zb + (t * p.H * D + cc))) : make_uint4(0u, 0u, 0u, 0u);
      }
    } else if constexpr (EPI) {
      // (one 64-bit base a chunk, 32-bit offsets from it: H D C < 2^31, gdn_check_shape)
      const bf16* zb = reinterpret_cast<const bf16*>(p.z) + (tok0 * p.H + h) * D + cb + 2 * tq;
#pragma unroll
      for (int nt = 0; nt < ND; ++nt)
#pragma unroll
        for (int hr = 0; hr < 2; ++hr) {
          const int t = r0 + gq + hr * 8;
          zq[nt][hr] = t < n ? __ldg(reinterpret_cast<const unsigned int*>(zb + (t * p.H * D + nt * 8))) : 0u;
        }
    }
    if (wid == gw && (!GA || k == 0)) {  // (GA: the later chunks' gates come ahead)
      gate_finish<C, FUSED>(graw, g, G, n, dtb);
      if (ch + 1 < c1_now())
        gate_fetch<C>(graw, gate + (tok0 + C) * HM::HG(p.H) + HM::hG(h), tsG, min(C, p.T - (ch + 1) * C));
    }
    if constexpr (TM) {
#if HYMO_GDN_TMA & 2
      tma_groups_wait(mb, k);
#endif
    } else {
      cp_async_wait_all();
    }
    __syncthreads();
    if (ch + 1 < c1_now()) fetch_v(ch + 1, svb((k + 1) & 1));
    // Staged operands, one unit per (t, 8 values of s): Qs, Qi, the per-step decays
    // a = exp(g A), the diagonal square's operand (rows 8..15 of a block: queries
    // referenced to row 7 of the block; rows 0..7: keys referenced to it), and key t
    // in every Kref_i with i > its block (P4: no Qs; key t once, in Kend, referenced to
    // the end of its own block; a in FP16).
    for (int s = tid; s < S; s += NTH) dl[s] = ex2f(G[C - 1] * A2[s]);
    // TS, R1 and ZR: how the P phase below deals its work (defined here for SL)
    constexpr bool TS = HYMO_GDN_TRI_SPLIT && R == 2 && S >= 64;
    constexpr bool R1 = HYMO_GDN_OFFD_R1 && R == 2 && !TS;
    // ZR (HYMO_GDN_ZROW): the zeros above the diagonal inside the block's two 8x8 halves as
    // whole 16-byte rows of zeros (and of the low tile's), written first by the warp that
    // writes every other entry of the halves (one warp a block, or the first warps with
    // ZFILL0), then overwritten by its squares and walk
    constexpr bool ZR = (HYMO_GDN_ZROW == 2 && (R == 1 || (R1 && HYMO_GDN_ZFILL0))) ||
                        (HYMO_GDN_ZROW == 1 && R == 1 && !TRAIN && D == 16);
    // HYMO_GDN_SEL: one exp an element for the squares' operands (in the plain pass at D = 16
    // only with ZROW's zero rows: run 88, 3.6% slower alone there; run 89, -5.2% with them)
    constexpr bool SL = HYMO_GDN_SEL && (TRAIN || D != 16 || ZR);
    // HYMO_GDN_CHAIN (gdn.cuh): the plain pass at D = S = 32 stages a row pair a thread, each
    // tile's two rows from one exp: the first row's factor (queries, referenced before it) or
    // the second's (keys, referenced after it) as 2^(d a2), the other row's that times the
    // per-step decay Ad = 2^(g_{t+1} a2) of row t + 1 (a product of factors <= 1 where the
    // reference is a row; the fast halves' midpoints bound theirs, diag8_fast)
    constexpr bool CH = HYMO_GDN_CHAIN && PK && P::QR && P::KE && P::T4 && D8 && HYMO_GDN_DIAG8_USTAGE &&
                        S == 32 && D == 32 && R == 1;
    if constexpr (CH) {
      static_assert(C * S / 16 == NTH, "HYMO_GDN_CHAIN: one row pair of 8 values of s a thread");
      // lanes 8k .. 8k + 7 on pairs 4 rows apart (rows 320 bytes apart: disjoint bank quads, as
      // HYMO_GDN_ROWPERM's order), q8 the lane's 8 values of s
      const int q8 = lane & 3, k8 = lane >> 3;
      const int t = 16 * wid + 2 * ((k8 >> 1) * 4 + (k8 & 1) + ((lane >> 2) & 1) * 2), s0 = q8 * 8, blk = wid;
      float a2[8], Ad[8];
      ld8(A2 + s0, a2);
      const float gt = G[t], gu = G[t + 1], gn = g[t + 1];
#pragma unroll
      for (int e = 0; e < 8; ++e) Ad[e] = ex2f(gn * a2[e]);
      // rows t and t + 1 of one tile: fwd, queries from row t on (row t: 2^(d a2)); else keys up
      // to row t + 1 (row t + 1: 2^(d a2)); the other row that times Ad
      const auto chain = [&](bf16* dst, bool fwd, float d) {
        const int ro = fwd ? t : t + 1, rn = fwd ? t + 1 : t;
        const bf16* x = fwd ? sc : sb;  // (the raw rows loaded again a tile: fewer live registers)
        const uint4 xo = *reinterpret_cast<const uint4*>(x + ro * LS + s0);
        const uint4 xn = *reinterpret_cast<const uint4*>(x + rn * LS + s0);
        const uint32_t* xo2 = reinterpret_cast<const uint32_t*>(&xo);
        const uint32_t* xn2 = reinterpret_cast<const uint32_t*>(&xn);
        uint4 oo, on;
        uint32_t* vo = reinterpret_cast<uint32_t*>(&oo);
        uint32_t* vn = reinterpret_cast<uint32_t*>(&on);
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const float f0 = ex2f(d * a2[2 * e]), f1 = ex2f(d * a2[2 * e + 1]);
          vo[e] = mul_bf16x2(xo2[e], pack_bf16(f0, f1));
          vn[e] = mul_bf16x2(xn2[e], pack_bf16(f0 * Ad[2 * e], f1 * Ad[2 * e + 1]));
        }
        *reinterpret_cast<uint4*>(dst + ro * LS + s0) = oo;
        *reinterpret_cast<uint4*>(dst + rn * LS + s0) = on;
      };
      chain(qi, true, gt - (blk ? G[16 * blk - 1] : 0.f));
      const bool fast = HYMO_GDN_DIAG_NOSLOW ? true : diag8_fast(G, 16 * blk, amax2);
      // a fast block: every row a query in mid2 and a key in mid, around the half's reference;
      // else mid2 rows 4..7 of each half queries, 0..3 keys (row 3), mid the square's (row 7)
      const float gr = diag8_ref(G, t & ~7), g3 = G[(t & ~7) + 3], gm = G[16 * blk + 7];
      const bool q4 = t & 4, lo = (t & 15) >= 8;
      chain(mid2, fast || q4, fast ? gt - gr : q4 ? gt - g3 : g3 - gu);
      chain(mid, !fast && lo, fast ? gr - gu : lo ? gt - gm : gm - gu);
      chain(kr, false, G[16 * blk + 15] - gu);
    }
    if constexpr (!CH)
    for (int u = tid; u < C * (S / 8); u += NTH) {
      int q8;
      const int t = row_piece<S / 8, 2>(u, q8), s0 = q8 * 8, blk = t >> 4;  // (HYMO_GDN_ROWPERM)
      float cx[8], bx[8], a2[8], y[8], z[8];
      ld8(A2 + s0, a2);
      const uint4 cr = *reinterpret_cast<const uint4*>(sc + t * LS + s0);
      const uint4 br = *reinterpret_cast<const uint4*>(sb + t * LS + s0);
      unpack8(cr, cx);
      unpack8(br, bx);
      // stage 8 values of this unit, x_e 2^(d a2_e) with x this row's queries c (qc) or keys b:
      // PK in packed BF16 arithmetic from the raw values, else in FP32
      const auto stage_sc = [&](bf16* dst, int LO, bool qc, float d) {
        if constexpr (PK) {
          const uint4 xr = qc ? cr : br;
          const uint32_t* x = reinterpret_cast<const uint32_t*>(&xr);
          uint4 o;
          uint32_t* v = reinterpret_cast<uint32_t*>(&o);
#pragma unroll
          for (int e = 0; e < 4; ++e) v[e] = mul_bf16x2(x[e], pack_bf16(ex2f(d * a2[2 * e]), ex2f(d * a2[2 * e + 1])));
          *reinterpret_cast<uint4*>(dst) = o;
        } else {
          float v[8];
#pragma unroll
          for (int e = 0; e < 8; ++e) v[e] = (qc ? cx[e] : bx[e]) * ex2f(d * a2[e]);
          stage(dst, LO, v);
        }
      };
      const float gt = G[t], gs = blk ? G[16 * blk - 1] : 0.f, gg = g[t], gm = G[16 * blk + 7];
      // D8: two products and the square (mid2: queries, mid: keys, each half's diag8_ref)
      [[maybe_unused]] const bool fast = (HYMO_GDN_DIAG_NOSLOW && (D8 || DT8)) ? true
                                         : (D8 || DT8) && diag8_fast(G, 16 * blk, amax2);
      const bool lower = D8 ? (t & 15) >= 8 && !fast : (t & 15) >= 8;  // (mid row t holds a query)
      if constexpr (P::QR) {  // (no Qs: the Qs h product scales Qi's fragments instead)
        stage_sc(qi + t * LS + s0, LQ, true, gt - gs);
      } else {
        stage_sc(qs + t * LS + s0, LQ, true, gt);
        stage_sc(qi + t * LS + s0, LQ, true, gt - gs);
      }
      // D8 with USTAGE: mid2 and mid in one branch on the block's test (warp-uniform: a warp's
      // staging units lie in one block at S = 16 and 32)
      constexpr bool US = D8 && HYMO_GDN_DIAG8_USTAGE;
      if constexpr (US) {
        const float g3 = G[(t & ~7) + 3];
        if (fast) {  // every row a query in mid2 and a key in mid, both around the half's reference
          const float gr = diag8_ref(G, t & ~7);
          stage_sc(mid2 + t * LS + s0, LQ, true, gt - gr);
          stage_sc(mid + t * LS + s0, LQ, false, gr - gt);
        } else {  // mid2 as TRI4's (row 3 of the half), mid as the square's (row 7 of the block)
          const bool q4 = t & 4, lo = (t & 15) >= 8;
          const float dq = q4 ? gt - g3 : g3 - gt, dz = lo ? gt - gm : gm - gt;
          stage_sc(mid2 + t * LS + s0, LQ, q4, dq);
          stage_sc(mid + t * LS + s0, LQ, lo, dz);
        }
      } else if constexpr (D8) {
        // mid2: rows 4..7 of each half queries, rows 0..3 keys (a fast block: every row a
        // query), referenced to row 3 of the half
        const float g3 = fast ? diag8_ref(G, t & ~7) : G[(t & ~7) + 3];
        const bool q4 = fast || (t & 4);
        const float dq = q4 ? gt - g3 : g3 - gt;
        stage_sc(mid2 + t * LS + s0, LQ, q4, dq);
      } else if constexpr (P::T4) {
        // mid2 (in place of the per-step decays): rows 4..7 of each 8-row half queries,
        // rows 0..3 keys, both referenced to row 3 of the half
        const float g3 = G[(t & ~7) + 3];
        const bool q4 = t & 4;
        if constexpr (SL) {
          const float dq = q4 ? gt - g3 : g3 - gt;
          stage_sc(mid2 + t * LS + s0, LQ, q4, dq);
        } else {
#pragma unroll
          for (int e = 0; e < 8; ++e) y[e] = q4 ? cx[e] * ex2f((gt - g3) * a2[e]) : bx[e] * ex2f((g3 - gt) * a2[e]);
          stage(mid2 + t * LS + s0, LQ, y);
        }
      }
      // the mid tile's reference: row 7 of the block (D8, a fast block: the half's diag8_ref,
      // every row a key)
      const float gz = D8 && fast ? diag8_ref(G, t & ~7) : gm;
#pragma unroll
      for (int e = 0; e < 8 && !US; ++e) {
        if constexpr (!P::T4) y[e] = ex2f(gg * a2[e]);
        if constexpr (SL)
          z[e] = (lower ? cx[e] : bx[e]) * ex2f((lower ? gt - gz : gz - gt) * a2[e]);
        else
          z[e] = lower ? cx[e] * ex2f((gt - gz) * a2[e]) : bx[e] * ex2f((gz - gt) * a2[e]);
      }
      if constexpr (P::T4) {
        // (no per-step decays: the walk evaluates each pair's decay; mid2 is staged above)
      } else if constexpr (P::P4) {
        // FP16: values in [0, 1], finer than P's own BF16 rounding in FP16's normal range;
        // a decay below 6e-5 a step keeps an absolute error under 3e-8, below 6e-8 it is 0
        uint32_t hv[4];
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const __half2 x2 = __floats2half2_rn(y[2 * e], y[2 * e + 1]);
          hv[e] = *reinterpret_cast<const uint32_t*>(&x2);
        }
        *reinterpret_cast<uint4*>(reinterpret_cast<__half*>(a) + t * P::FA + s0) =
            make_uint4(hv[0], hv[1], hv[2], hv[3]);
      } else if (!P::TW && !(DT8 && fast)) {  // (DT8: a fast block has no walk; TW: no tile)
        *reinterpret_cast<float4*>(a + t * FS + s0) = make_float4(y[0], y[1], y[2], y[3]);
        *reinterpret_cast<float4*>(a + t * FS + s0 + 4) = make_float4(y[4], y[5], y[6], y[7]);
      }
      if constexpr (!P::MR && !US) {
        if constexpr (SL && PK)
          stage_sc(mid + t * LS + s0, LQ, lower, lower ? gt - gz : gz - gt);
        else
          stage(mid + t * LS + s0, LQ, z);
      }
      if constexpr (P::KE) {  // Kend: key t referenced to the end of its own block
        stage_sc(kr + t * LS + s0, LK, false, G[16 * blk + 15] - gt);
      } else {
        for (int i = blk + 1; i <= NW; ++i) stage_sc(kr + (8 * i * (i - 1) + t) * LS + s0, LK, false, G[16 * i - 1] - gt);
      }
    }
    __syncthreads();
    // P (BF16, rows t, columns tau <= t). Off-diagonal blocks (i, j < i), dealt
    // round-robin over the warps (OFFD_R1: over the second warps of the row blocks; with
    // OFFD_SPLIT one a second warp, the rest to the first warps of blocks 0, 1, ..):
    // Qi rows of block i against Kref_i rows of block j (KE: Qi scaled by the pair decay
    // against Kend rows of block j). (Dealing the plain pass's six by cost instead, the
    // three scaled pairs to warps 0..2 and the three adjacent ones to warp 3, was 0.8-1.2%
    // slower: run 71.) With ZR, the zero rows of the diagonal halves first.
    if constexpr (ZR) {
      if (role == 0) {
        constexpr int NR = TRAIN ? 2 : 1;  // high (and low) tiles
        for (int i = lane; i < 16 * NR; i += 32) {  // row r0 + (i & 15) of its half, tile i / 16
          const int r = i & 15;
          *reinterpret_cast<uint4*>(sp + (i >> 4) * LPP + (r0 + r) * LP + r0 + (r & 8)) = make_uint4(0u, 0u, 0u, 0u);
        }
        __syncwarp();  // the zeros before this warp's entries
      }
    }
    // OS (HYMO_GDN_OFFD_SPLIT): the second warps one block each, the first warps the rest
    constexpr bool OS = R1 && HYMO_GDN_OFFD_SPLIT;
    const int pr0 = R1 ? (OS ? (role == 1 ? w : NW + w) : (role == 1 ? w : NW * NW)) : wid;
    for (int pr = pr0; pr < NW * (NW - 1) / 2; pr += R1 ? (OS ? 2 * NW : NW) : NWT) {
      int i = 1;
      while (pr >= i * (i + 1) / 2) ++i;
      const int j = pr - i * (i - 1) / 2;
      float acc[2][4];
      zero(acc);
      const bf16* qa = qi + 16 * i * LS;
      if constexpr (P::KE) {
        // (Qi_i scaled by d_ij = exp((G_{16i-1} - G_{16j+15}) A) in registers) Kend_j^T;
        // TRAIN: high and low parts of both, hi * hi + lo * hi + hi * lo
        const float dg = G[16 * i - 1] - G[16 * j + 15];
        const bf16* kb = kr + 16 * j * LS;
#pragma unroll
        for (int k0 = 0; k0 < S; k0 += 16) {
          uint32_t a4[4], b4[4];
          const bf16* kp = kb + ldsm_row_t(lane) * LS + k0 + ldsm_col_t(lane);
          if constexpr (TRAIN) {
            uint32_t al4[4], bl4[4];
            ldsm_a_colscaled_split(a4, al4, qa, LQ, LS, k0, dg, A2);
            ldsm_x4(b4, kp);
            ldsm_x4(bl4, kp + LK);
            mma_bf16(acc[0], al4, b4[0], b4[1]);
            mma_bf16(acc[1], al4, b4[2], b4[3]);
            mma_bf16(acc[0], a4, bl4[0], bl4[1]);
            mma_bf16(acc[1], a4, bl4[2], bl4[3]);
          } else {
            ldsm_a_colscaled<PK>(a4, qa, LS, k0, dg, A2);
            ldsm_x4(b4, kp);
          }
          mma_bf16(acc[0], a4, b4[0], b4[1]);
          mma_bf16(acc[1], a4, b4[2], b4[3]);
        }
      } else {
        const bf16* kb = kr + (8 * i * (i - 1) + 16 * j) * LS;
        warp_mm_nt<2>(acc, S, qa, LS, kb, LS);
        if constexpr (TRAIN) {  // FP32-accurate: + lo * hi + hi * lo
          warp_mm_nt<2>(acc, S, qa + LQ, LS, kb, LS);
          warp_mm_nt<2>(acc, S, qa, LS, kb + LK, LS);
        }
      }
#pragma unroll
      for (int nt = 0; nt < 2; ++nt)
#pragma unroll
        for (int hr = 0; hr < 2; ++hr)
          put_p(16 * i + gq + 8 * hr, 16 * j + nt * 8 + 2 * tq, acc[nt][2 * hr], acc[nt][2 * hr + 1]);
    }
    // Diagonal block: the 8x8 square below the diagonal (t in 8..15, tau in 0..7 of
    // the block) from the mid tile (the product's other quadrants are not used; MR: from
    // operands built in registers), by the block's last warp. D8, DT8: a block that passes
    // diag8_fast (the same test as its staging's) has no walk (below).
    [[maybe_unused]] const bool fastb = (HYMO_GDN_DIAG_NOSLOW && (D8 || DT8)) ? true
                                        : (D8 || DT8) && diag8_fast(G, r0, amax2);
    // DT16: the block is one product around its midpoint
    [[maybe_unused]] const bool fast16 = DT16 && fastb && diag16_fast(G, r0, amax2);
    // HYMO_GDN_MIDREG (the block's second warp): the square's operands from the raw c and b
    // tiles, scaled and split into high and low parts in registers: A rows 8..15 (queries
    // r0 + 8 + gq, referenced to row 7; rows 0..7 zero), one n8 tile of keys r0 + gq
    // (referenced to row 7); the zeros above it
    [[maybe_unused]] auto midreg_square = [&]() {
      float acc[4] = {0.f, 0.f, 0.f, 0.f};
      const float gm = G[r0 + 7], dq = G[r0 + 8 + gq] - gm, dk = gm - G[r0 + gq];
      const bf16* cq = sc + (r0 + 8 + gq) * LS + 2 * tq;
      const bf16* bk = sb + (r0 + gq) * LS + 2 * tq;
#pragma unroll
      for (int k0 = 0; k0 < S; k0 += 16) {
        uint32_t ah[4] = {0u, 0u, 0u, 0u}, al[4] = {0u, 0u, 0u, 0u}, bh[2], bl[2];
#pragma unroll
        for (int hk = 0; hk < 2; ++hk) {  // columns k0 + 2 tq (+1), then + 8
          const int col = k0 + 8 * hk + 2 * tq;
          const float2 a2v = *reinterpret_cast<const float2*>(A2 + col);
          const float2 cv = ld2(cq + k0 + 8 * hk);
          const float2 bv = ld2(bk + k0 + 8 * hk);
          const float q0 = cv.x * ex2f(dq * a2v.x), q1 = cv.y * ex2f(dq * a2v.y);
          const float k0v = bv.x * ex2f(dk * a2v.x), k1v = bv.y * ex2f(dk * a2v.y);
          split2(q0, q1, ah[1 + 2 * hk], al[1 + 2 * hk]);
          split2(k0v, k1v, bh[hk], bl[hk]);
        }
        mma_bf16(acc, ah, bh[0], bh[1]);
        mma_bf16(acc, al, bh[0], bh[1]);
        mma_bf16(acc, ah, bl[0], bl[1]);
      }
      put_p(r0 + 8 + gq, r0 + 2 * tq, acc[2], acc[3]);
      put_p(r0 + gq, r0 + 8 + 2 * tq, 0.f, 0.f);  // above the diagonal
    };
    // (D8, DT16) the block's product into P: entries t >= tau, zeros above the diagonal
    [[maybe_unused]] auto put_p_block_lower = [&](const float (&acc)[2][4]) {
#pragma unroll
      for (int nt = 0; nt < 2; ++nt)
#pragma unroll
        for (int hr = 0; hr < 2; ++hr) {
          const int t = gq + 8 * hr, tau = 8 * nt + 2 * tq;
          put_p(r0 + t, r0 + tau, tau <= t ? acc[nt][2 * hr] : 0.f, tau + 1 <= t ? acc[nt][2 * hr + 1] : 0.f);
        }
    };
    if (DT8 && fastb) {
      if (role == 0) {
        // the halves, FP32-accurate (hi * hi + lo * hi + hi * lo): A rows gq and gq + 8
        // (queries c_t exp((G_t - ref) A)), n8 tiles nt of keys r0 + 8 nt + gq
        // (b_tau exp((ref - G_tau) A)), ref the half's diag8_ref: n8 tile hr holds the keys
        // of half hr (the tiles' quadrants across the square are not used)
        float acc[2][4];
        zero(acc);
        // (DT16, a block that passes diag16_fast: both halves around the block's midpoint, so
        // that the product is the whole block, its square included)
        const float ref0 = fast16 ? diag16_ref(G, r0) : diag8_ref(G, r0), ref1 = fast16 ? ref0 : diag8_ref(G, r0 + 8);
        const float dq0 = G[r0 + gq] - ref0, dq1 = G[r0 + 8 + gq] - ref1;
        const bf16* c0p = sc + (r0 + gq) * LS + 2 * tq;
        const bf16* b0p = sb + (r0 + gq) * LS + 2 * tq;
#pragma unroll
        for (int k0 = 0; k0 < S; k0 += 16) {
          uint32_t ah[4], al[4], bh[2][2], bl[2][2];
#pragma unroll
          for (int hk = 0; hk < 2; ++hk) {
            const int col = k0 + 8 * hk + 2 * tq;
            const float2 a2v = *reinterpret_cast<const float2*>(A2 + col);
#pragma unroll
            for (int hr = 0; hr < 2; ++hr) {  // rows gq + 8 hr: queries, and keys of n8 tile hr
              const float dq = hr ? dq1 : dq0;
              const float2 cv = ld2(c0p + 8 * hr * LS + k0 + 8 * hk);
              const float2 bv = ld2(b0p + 8 * hr * LS + k0 + 8 * hk);
              split2(cv.x * ex2f(dq * a2v.x), cv.y * ex2f(dq * a2v.y), ah[hr + 2 * hk], al[hr + 2 * hk]);
              split2(bv.x * ex2f(-dq * a2v.x), bv.y * ex2f(-dq * a2v.y), bh[hr][hk], bl[hr][hk]);
            }
          }
#pragma unroll
          for (int nt = 0; nt < 2; ++nt) {
            mma_bf16(acc[nt], ah, bh[nt][0], bh[nt][1]);
            mma_bf16(acc[nt], al, bh[nt][0], bh[nt][1]);
            mma_bf16(acc[nt], ah, bl[nt][0], bl[nt][1]);
          }
        }
        if (DT16 && fast16) {
          put_p_block_lower(acc);
        } else {  // the halves, t >= tau (the square and the zeros beside it: below)
#pragma unroll
          for (int hr = 0; hr < 2; ++hr) {
            const int t = gq + 8 * hr, tau = 8 * hr + 2 * tq;
            put_p(r0 + t, r0 + tau, tau <= t ? acc[hr][2 * hr] : 0.f, tau + 1 <= t ? acc[hr][2 * hr + 1] : 0.f);
          }
        }
      } else {
        if (!(DT16 && fast16)) midreg_square();  // (role R - 1: the square, and the zeros above it)
      }
    } else if (D8 && fastb) {
      // the two 8-row halves, each around its diag8_ref (queries from mid2, keys from mid, all 16
      // rows: n8 tile 0 against half 0's keys, tile 1 against half 1's), and the square (rows
      // 8..15 against keys 0..7) from the same fragments referenced to row 7 in registers:
      // queries times exp((ref_1 - G_7) A), keys times exp((G_7 - ref_0) A), both <= 1
      // (ref_i: diag8_ref of half i), rounded again. The halves' quadrants across the square
      // (mismatched references, possibly infinite) are not used.
      float acc[2][4], sq[4] = {0.f, 0.f, 0.f, 0.f};
      zero(acc);
      diag8_mm<S, false, PK>(acc, sq, mid2 + r0 * LS, LS, mid + r0 * LS, LS, diag8_ref(G, r0 + 8) - G[r0 + 7],
                             G[r0 + 7] - diag8_ref(G, r0), A2);
      acc[0][2] = sq[2];  // rows 8..15 of n8 tile 0: the square
      acc[0][3] = sq[3];
      put_p_block_lower(acc);
    } else {
      // (the blocks that fail the test, and every block without the switches: the same code)
      if (P::MR && role == R - 1) {
        midreg_square();
      } else if (role == R - 1) {
        float acc[2][4];
        zero(acc);
        warp_mm_nt<2>(acc, S, mid + r0 * LS, LS, mid + r0 * LS, LS);
        if constexpr (TRAIN) {
          warp_mm_nt<2>(acc, S, mid + LQ + r0 * LS, LS, mid + r0 * LS, LS);
          warp_mm_nt<2>(acc, S, mid + r0 * LS, LS, mid + LQ + r0 * LS, LS);
        }
        put_p(r0 + 8 + gq, r0 + 2 * tq, acc[0][2], acc[0][3]);
        put_p(r0 + gq, r0 + 8 + 2 * tq, 0.f, 0.f);  // above the diagonal
        if constexpr (P::T4) {
          // the 4x4 squares of the two halves (rows 4..7 against keys 0..3 of each) from
          // mid2: rows 4..7 of the product's first n8 tile, rows 12..15 of its second
          zero(acc);
          warp_mm_nt<2>(acc, S, mid2 + r0 * LS, LS, mid2 + r0 * LS, LS);
          if (gq >= 4 && tq < 2) {
            put_p(r0 + gq, r0 + 2 * tq, acc[0][0], acc[0][1]);
            put_p(r0 + 8 + gq, r0 + 8 + 2 * tq, acc[1][2], acc[1][3]);
          }
        }
      }
      // ... and the two 8x8 triangles (tau <= t inside each 8-row half of the block),
      // elementwise from products of per-step decays. A lane walks two key columns of
      // one triangle, tau and 7 - tau (9 steps in all, the same for every lane), over a
      // quarter of S (TS: an eighth); the parts are summed by shuffles at the end. The
      // block's first warp walks both triangles; with TS (HYMO_GDN_TRI_SPLIT, two warps
      // a row block, S >= 64) each of the block's two warps walks one, 8 consecutive
      // lanes splitting S for a key column pair (the first warp otherwise carried this phase's
      // largest share while the second waited at the barrier after it). Run 59: the
      // training forward at S = D = 64 3.7% faster; at S = 32 (4 values a lane) 1-2% slower,
      // so not there.
      if constexpr (P::T4) {
        // HYMO_GDN_TRI4: four 4x4 triangles a block. Lane (group lane / 8 of 4 rows, pair pp,
        // quarter qd of S) walks key columns pp and 3 - pp of its group (5 steps), each pair
        // decay exp((G_t - G_tau) A) evaluated directly (exponent <= 0)
        if (role == 0) {
          constexpr int Q = S / 4;
          const int qd = lane & 3, pp = (lane >> 2) & 1, s0 = qd * Q, base = r0 + 4 * (lane >> 3);
          float kb[Q], kb2[Q], ar[Q], part[5];
          ldq<Q>(sb + (base + pp) * LS + s0, kb);
          ldq<Q>(sb + (base + 3 - pp) * LS + s0, kb2);
          ldqf<Q>(A2 + s0, ar);
          const float gk = G[base + pp], gk2 = G[base + 3 - pp];
#pragma unroll
          for (int it = 0; it < 5; ++it) {
            int tau, kk;
            const bool second = tri4_key_step(pp, it, tau, kk);
            float cv[Q];
            ldq<Q>(sc + (base + kk) * LS + s0, cv);
            float sacc = 0.f;
            if (it == 0) {  // t = tau
#pragma unroll
              for (int e = 0; e < Q; ++e) sacc = fmaf(cv[e], kb[e], sacc);
            } else {
              const float dg = G[base + kk] - (second ? gk2 : gk);
#pragma unroll
              for (int e = 0; e < Q; ++e) sacc = fmaf(cv[e], (second ? kb2[e] : kb[e]) * ex2f(dg * ar[e]), sacc);
            }
            part[it] = sacc;
          }
          quad_sum(part);
          if (qd == 0) {
#pragma unroll
            for (int it = 0; it < 5; ++it) {
              int tau, kk;
              tri4_key_step(pp, it, tau, kk);
              put_p1(base + kk, base + tau, part[it]);
            }
          }
        }
      } else if (TS || role == 0) {
        constexpr int NQ = TS ? 8 : 4, Q = S / NQ;  // lanes a key column pair, values a lane
        const int qd = lane % NQ, pp = (lane / NQ) & 3, s0 = qd * Q;
        const int base = r0 + 8 * (TS ? role : lane >> 4);
        float kb[Q], kb2[Q], part[9];
        ldq<Q>(sb + (base + pp) * LS + s0, kb);
        ldq<Q>(sb + (base + 7 - pp) * LS + s0, kb2);
        if constexpr (P::TW) {
          // HYMO_GDN_TRAIN3: no per-step decay tile; each step's decays exp(g_t A) are evaluated
          // here as the staging evaluated them (the products keep their bits). The walk is
          // rolled, part's entry picked by selects: unrolled, ptxas spilled 56 bytes at the 80
          // registers of three CTAs an SM, in the common path (this walk is the rare one).
#pragma unroll 1
          for (int it = 0; it < 9; ++it) {
            const bool second = it >= 8 - pp;
            const int t = base + (second ? it - 1 : pp + it);
            if (it > 0) {
              const float gg = g[t];
              const bool restart = it == 8 - pp;
              float ar[Q];
              ldqf<Q>(A2 + s0, ar);
#pragma unroll
              for (int e = 0; e < Q; ++e) kb[e] = restart ? kb2[e] : kb[e] * ex2f(gg * ar[e]);
            }
            float cv[Q];
            ldq<Q>(sc + t * LS + s0, cv);
            float sacc = 0.f;
#pragma unroll
            for (int e = 0; e < Q; ++e) sacc = fmaf(cv[e], kb[e], sacc);
#pragma unroll
            for (int k2 = 0; k2 < 9; ++k2)
              if (k2 == it) part[k2] = sacc;
          }
        } else {
#pragma unroll
        for (int it = 0; it < 9; ++it) {
          // tri_key_step's query row only (through the helper, with the key unused here,
          // ptxas gave this kernel 23 more registers and spills at the default variant)
          const bool second = it >= 8 - pp;
          const int kk = second ? it - 1 : pp + it;  // row inside the half
          const int t = base + kk;
          if (it > 0) {
            float av[Q];
            if constexpr (P::P4)
              ldq<Q>(reinterpret_cast<const __half*>(a) + t * P::FA + s0, av);
            else
              ldqf<Q>(a + t * FS + s0, av);
            const bool restart = it == 8 - pp;
#pragma unroll
            for (int e = 0; e < Q; ++e) kb[e] = restart ? kb2[e] : kb[e] * av[e];
          }
          float cv[Q];
          ldq<Q>(sc + t * LS + s0, cv);
          float sacc = 0.f;
#pragma unroll
          for (int e = 0; e < Q; ++e) sacc = fmaf(cv[e], kb[e], sacc);
          part[it] = sacc;
        }
        }
        quad_sum(part);
        if constexpr (TS) {
#pragma unroll
          for (int it = 0; it < 9; ++it) part[it] += __shfl_xor_sync(0xffffffffu, part[it], 4);
        }
        walk_put<NQ>(part, qd, pp, [&](int tau, int kk, float x) { put_p1(base + kk, base + tau, x); });
      }
      // zeros above the diagonal inside the block's two halves, by the warp(s) that walked
      // the triangles (TS: each warp inside its half), with R1 by the block's second warp
      // unless ZFILL0 (then the first); ZR wrote them as whole rows before the P phase
      if (!ZR && (R1 ? role == (HYMO_GDN_ZFILL0 ? 0 : 1) : (TS || role == 0)))
        for (int i = lane; i < (TS ? 64 : 128); i += 32) {
          const int hb = r0 + 8 * (TS ? role : i >> 6), t = (i >> 3) & 7, tau = i & 7;
          if (t < tau) put_p1(hb + t, hb + tau, 0.f);
        }
    }
    if (GA && wid == gw && ch + 1 < c1_now()) {  // the next chunk's gate (the other buffer)
      float* gn = (k & 1) ? g0 : g1;
      gate_finish<C, FUSED>(graw, gn, gn + C, min(C, p.T - (ch + 1) * C), dtb);
      if (ch + 2 < c1_now())
        gate_fetch<C>(graw, gate + (tok0 + 2 * C) * HM::HG(p.H) + HM::hG(h), tsG, min(C, p.T - (ch + 2) * C));
    }
    __syncthreads();
    if (ch + 1 < c1_now()) fetch_bc(ch + 1);  // b, c are dead for this chunk
    // o = P V + Qs h (h as BF16 high + low)
    float acc[ND][4];
    zero(acc);
    if constexpr (TRAIN && HYMO_GDN_TRAIN_FUSE) {
      // P_hi V + P_lo V, then Qs_hi h_hi + Qs_lo h_hi + Qs_hi h_lo, each fragment loaded once
      warp_mm_ldsm_split<ND, false>(acc, r0 + 16, sp + r0 * LP, LPP, LP, sv + cb, 0, LD);
      enter_in_chunk(k);
      warp_mm_ldsm_split<ND, true>(acc, S, qs + r0 * LS, LQ, LS, hh + cb, int(hl - hh), LD);
    } else {
      warp_mm_ldsm<ND>(acc, r0 + 16, sp + r0 * LP, LP, sv + cb, LD);
      enter_in_chunk(k);  // (OE: the entering state, once P V is in the accumulators)
      if constexpr (P::QR) {
        // Qs = Qi exp(G_{r0-1} A) (block 0: Qi), the factor applied to Qi's fragments (P4: the
        // plain pass only)
        static_assert(!TRAIN, "QR: the plain pass");
        const float gs = w ? G[r0 - 1] : 0.f;
#pragma unroll
        for (int k0 = 0; k0 < S; k0 += 16) {
          uint32_t a4[4];
          ldsm_a_colscaled<PK>(a4, qi + r0 * LS, LS, k0, gs, A2);
#pragma unroll
          for (int np = 0; np < ND / 2; ++np) {
            uint32_t b4[4];
            const int bo = (k0 + ldsm_row(lane)) * LD + cb + np * 16 + ldsm_col(lane);
            ldsm_x4_t(b4, hh + bo);
            mma_bf16(acc[2 * np], a4, b4[0], b4[1]);
            mma_bf16(acc[2 * np + 1], a4, b4[2], b4[3]);
            if constexpr (!HHI) {
              ldsm_x4_t(b4, hl + bo);
              mma_bf16(acc[2 * np], a4, b4[0], b4[1]);
              mma_bf16(acc[2 * np + 1], a4, b4[2], b4[3]);
            }
          }
        }
      } else {
        warp_mm_ldsm<ND>(acc, S, qs + r0 * LS, LS, hh + cb, LD);
        if constexpr (!HHI) warp_mm_ldsm<ND>(acc, S, qs + r0 * LS, LS, hl + cb, LD);
      }
      if constexpr (TRAIN) {
        warp_mm_ldsm<ND>(acc, r0 + 16, sp + LPP + r0 * LP, LP, sv + cb, LD);
        if constexpr (!P::QR) warp_mm_ldsm<ND>(acc, S, qs + LQ + r0 * LS, LS, hh + cb, LD);
      }
    }
    if constexpr (TRAIN || HM::split) {
      // o in FP32: TRAIN, FP32-accurate for the backward's adjoint pass, which turns it into dO
      // in place; the split path, this block's part (summed by split_out_kernel)
#pragma unroll
      for (int nt = 0; nt < ND; ++nt)
#pragma unroll
        for (int hr = 0; hr < 2; ++hr) {
          const int t = r0 + gq + hr * 8, d = cb + nt * 8 + 2 * tq;
          if (t < n)
            *reinterpret_cast<float2*>(p.dObuf + ((tok0 + t) * p.H + h) * D + d) =
                make_float2(acc[nt][2 * hr], acc[nt][2 * hr + 1]);
        }
    }
    if (TRAIN && !p.out) {
      // the backward's recomputation: o and the states only
    } else if constexpr (HM::split) {
      // (o's part written above; no epilogue)
    } else if constexpr (!FUSED) {
#pragma unroll
      for (int nt = 0; nt < ND; ++nt)
#pragma unroll
        for (int hr = 0; hr < 2; ++hr) {
          const int t = r0 + gq + hr * 8, d = cb + nt * 8 + 2 * tq;
          if (t < n) st2(reinterpret_cast<bf16*>(p.out) + ((tok0 + t) * p.H + h) * D + d, acc[nt][2 * hr], acc[nt][2 * hr + 1]);
        }
    } else {
      // epilogue: yp = o + D_skip v; y = yp * rsqrt(mean yp^2 + eps) * w_y * silu(z)
      float ss[2] = {0.f, 0.f};
#pragma unroll
      for (int nt = 0; nt < ND; ++nt)
#pragma unroll
        for (int hr = 0; hr < 2; ++hr) {
          const int t = r0 + gq + hr * 8, d = cb + nt * 8 + 2 * tq;
          const float2 v2 = ld2(sv + t * LD + d);
          acc[nt][2 * hr] = fmaf(dsk, v2.x, acc[nt][2 * hr]);
          acc[nt][2 * hr + 1] = fmaf(dsk, v2.y, acc[nt][2 * hr + 1]);
          ss[hr] = fmaf(acc[nt][2 * hr], acc[nt][2 * hr], fmaf(acc[nt][2 * hr + 1], acc[nt][2 * hr + 1], ss[hr]));
        }
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        ss[r] += __shfl_xor_sync(0xffffffffu, ss[r], 1);
        ss[r] += __shfl_xor_sync(0xffffffffu, ss[r], 2);
      }
      if constexpr (R > 1) {  // the row sums over the other warps' columns
        if (tq == 0) {
          ssx[role * C + r0 + gq] = ss[0];
          ssx[role * C + r0 + gq + 8] = ss[1];
        }
        block_pair_sync<32 * R>(w);
        ss[0] = ss[1] = 0.f;
#pragma unroll
        for (int q = 0; q < R; ++q) {
          ss[0] += ssx[q * C + r0 + gq];
          ss[1] += ssx[q * C + r0 + gq + 8];
        }
      }
#pragma unroll
      for (int r = 0; r < 2; ++r) ss[r] = rsqrtf(ss[r] * (1.f / D) + p.eps);
      // OR: z and y pass through this warp's columns of its row block's P rows, dead
      // since the P V product (R = 2: since the pair barrier above, after both warps'
      // products): z in as 16-byte row pieces, out as the lane's pairs; y in as pairs,
      // out as 16-byte row pieces
      [[maybe_unused]] bf16* stg = sp + r0 * LP + cb;
      if constexpr (OR) {
        __syncwarp();
#pragma unroll
        for (int i = 0; i < NU; ++i) {
          int rr, cc;
          or_piece(i, lane, rr, cc);
          *reinterpret_cast<uint4*>(stg + rr * LP + cc) = zr[i];
        }
        __syncwarp();
#pragma unroll
        for (int nt = 0; nt < ND; ++nt)
#pragma unroll
          for (int hr = 0; hr < 2; ++hr)
            zq[nt][hr] = *reinterpret_cast<const uint32_t*>(stg + (gq + hr * 8) * LP + nt * 8 + 2 * tq);
        __syncwarp();
      }
#pragma unroll
      for (int nt = 0; nt < ND; ++nt) {
        const int d = cb + nt * 8 + 2 * tq;
#pragma unroll
        for (int hr = 0; hr < 2; ++hr) {
          const int t = r0 + gq + hr * 8;
          if (OR || t < n) {
            const float2 zz = bf16x2_f2(zq[nt][hr]);
            const float s0 = silu_fwd(zz.x), s1 = silu_fwd(zz.y);
            const float y0 = acc[nt][2 * hr] * (ss[hr] * wy[nt].x) * s0;
            const float y1 = acc[nt][2 * hr + 1] * (ss[hr] * wy[nt].y) * s1;
            if constexpr (OR)
              *reinterpret_cast<uint32_t*>(stg + (gq + hr * 8) * LP + nt * 8 + 2 * tq) = pack_bf16(y0, y1);
            else
              st2(reinterpret_cast<bf16*>(p.out) + ((tok0 + t) * p.H + h) * D + d, y0, y1);
          }
        }
      }
      if constexpr (OR) {
        __syncwarp();
        bf16* ob = reinterpret_cast<bf16*>(p.out) + (tok0 * p.H + h) * D + cb;
#pragma unroll
        for (int i = 0; i < NU; ++i) {
          int rr, cc;
          or_piece(i, lane, rr, cc);
          const int t = r0 + rr;
          if (t < n)
            *reinterpret_cast<uint4*>(ob + (t * p.H * D + cc)) = *reinterpret_cast<const uint4*>(stg + rr * LP + cc);
        }
      }
    }
    // The Kend state update (KE) reads the block-end gate sums: into registers before the
    // barrier (without GATE_AHEAD, warp 0 may write the next chunk's G into the same
    // buffer after it)
    [[maybe_unused]] float gend[NW];
    if constexpr (P::KE) {
#pragma unroll
      for (int j = 0; j < NW; ++j) gend[j] = G[16 * j + 15];
    }
    __syncthreads();  // the state tiles are read above and rewritten below
    // state update h = exp(G_last A) h + Kref_NW^T V
    {
      const bf16* kl = kr + 8 * NW * (NW - 1) * LS;
#pragma unroll
      for (int it = 0; it < IPW; ++it) {
        const int item = wid + it * NWT;
        if (item >= NIT) continue;
        const int mt = item / NH, nb = (item % NH) * NTW * 8;
        if constexpr (TRAIN) {  // the state entering this chunk, for the backward: for
          // the staged backward, per row s the D BF16 high parts, then the D low parts;
          // for the generic one, FP32
          float* h0f = p.h0buf + (size_t(bh) * p.NC + ch) * S * D;
          bf16* h0 = reinterpret_cast<bf16*>(h0f);
#pragma unroll
          for (int nt = 0; nt < NTW; ++nt)
#pragma unroll
            for (int hr = 0; hr < 2; ++hr) {
              const int s = mt * 16 + gq + hr * 8, d = nb + nt * 8 + 2 * tq;
              const float x0 = hreg[it][nt][2 * hr], x1 = hreg[it][nt][2 * hr + 1];
              if constexpr (staged_bwd(S, D)) {
                st2_split(h0 + s * 2 * D + d, h0 + s * 2 * D + D + d, x0, x1);
              } else {
                *reinterpret_cast<float2*>(h0f + s * D + d) = make_float2(x0, x1);
              }
            }
        }
        if constexpr (P::KE) {
          // block by block: h = exp((G_{16j+15} - G_{16j-1}) A) h + Kend_j^T V_j (G_{-1} = 0),
          // i.e. h = exp(G_last A) h + sum_j exp((G_last - G_{16j+15}) A) Kend_j^T V_j
          // (TRAIN: + the low part's product)
          const float al0 = A2[mt * 16 + gq], al1 = A2[mt * 16 + gq + 8];
#pragma unroll
          for (int k0 = 0; k0 < C; k0 += 16) {
            const float dg = gend[k0 / 16] - (k0 ? gend[k0 / 16 - 1] : 0.f);
            const float f0 = ex2f(dg * al0), f1 = ex2f(dg * al1);
            scale_rows(hreg[it], f0, f1);
            uint32_t a4[4], al4[4];
            const bf16* ka = kr + (k0 + ldsm_row_t(lane)) * LS + mt * 16 + ldsm_col_t(lane);
            ldsm_x4_t(a4, ka);
            if constexpr (TRAIN) ldsm_x4_t(al4, ka + LK);
#pragma unroll
            for (int np = 0; np < NTW / 2; ++np) {
              uint32_t b4[4];
              ldsm_x4_t(b4, sv + (k0 + ldsm_row(lane)) * LD + nb + np * 16 + ldsm_col(lane));
              mma_bf16(hreg[it][2 * np], a4, b4[0], b4[1]);
              mma_bf16(hreg[it][2 * np + 1], a4, b4[2], b4[3]);
              if constexpr (TRAIN) {
                mma_bf16(hreg[it][2 * np], al4, b4[0], b4[1]);
                mma_bf16(hreg[it][2 * np + 1], al4, b4[2], b4[3]);
              }
            }
          }
        } else {
          const float d0 = dl[mt * 16 + gq], d1 = dl[mt * 16 + gq + 8];
          scale_rows(hreg[it], d0, d1);
          warp_mm_ldsm<NTW, true>(hreg[it], C, kl + mt * 16, LS, sv + nb, LD);
          if constexpr (TRAIN) warp_mm_ldsm<NTW, true>(hreg[it], C, kl + LK + mt * 16, LS, sv + nb, LD);
        }
      }
      put_state(hreg);
    }
  }
  if (zero_entry() && c0 < c1) {  // (OE0: the first segment's wait, at its end)
    pdl_wait();
    HYMO_GDN_CLK(clk.waited());
  }
  HYMO_GDN_CLK(clk.exit(c1_now() - c0));
}

// ---------------------------------------------------------------------------
// Backward, first pass (after a training forward, which left o in FP32 in dObuf and
// the per-chunk entering states in h0buf): per segment, the epilogue backward
// (dz, the dw_y and D_skip partials, dO = d(o + D_skip v)), dO written over o, and
// the segment's local adjoint  sum_t (c_t exp((gseg + G_t) A)) dO_t^T, accumulated
// per chunk as exp(gseg A) (Qs^T dO) with Qs and dO split into BF16 high and low
// tiles (FP32-accurate products: the adjoints feed the decay gradient).
// The fused epilogue's backward for one element, y = nn w silu(z) with nn = yp r (r the
// row's rsqrt): returns dz; dn = dL/dnn, and adds the dw_y term and nn dn (the row's m).
// HYMO_GDN_ADJ_FASTSIG: sigmoid(z) as in the forward's epilogue, 1 / (1 + 2^(-z log2 e))
// with the approximate reciprocal (IEEE 1/x inlines its slow-path branch 16 times a
// chunk: about 10 instructions an element more).
__device__ __forceinline__ float epi_bwd(float zz, float dy, float wv, float nn, float& dn,
                                         float& dw, float& m) {
  const float sg = HYMO_GDN_ADJ_FASTSIG ? __fdividef(1.f, 1.f + ex2f(-1.4426950408889634f * zz))
                                        : 1.f / (1.f + __expf(-zz));
  const float sz = zz * sg;
  dn = dy * wv * sz;
  dw += dy * nn * sz;
  m += dn * nn;
  return dy * nn * wv * (sg + zz * sg * (1.f - sg));
}

// HP (HYMO_GDN_ADJ_PAIR): heads a CTA, 1 or 2. The o, v and c tiles hold the CTA's heads' rows
// side by side (strides FDX, LDX, LSX: HP D, HP D, HP S values and the pad); Qs, dO and the
// vectors (VN floats) are each head's own, one head's after the other's.
template <int S, int D, int C, int HP = 1>
struct PlanA {
  static constexpr int LS = S + 8, LD = D + 8, FD = D + 4;
  static constexpr int FDX = HP * D + 4, LDX = HP * D + 8, LSX = HP * S + 8;
  static constexpr int NW = C / 16, NTH = 32 * NW;
  static constexpr bool ROWS = HYMO_GDN_ADJ_ROWS && D >= 32;  // (w_y in shared memory then)
  static constexpr int VN = 2 * C + S + (ROWS ? 2 : 1) * D;  // g[C], G[C], A2[S], dw[D], wy[D]
  static constexpr size_t al(size_t x) { return (x + 15) & ~size_t(15); }
  static constexpr size_t o_o = 0;                                // o, FP32 [C][FDX]
  static constexpr size_t o_v = al(o_o + 4 * C * FDX);            // v [C][LDX]
  static constexpr size_t o_c = al(o_v + 2 * C * LDX);            // c [C][LSX]
  static constexpr size_t o_qs = al(o_c + 2 * C * LSX);           // Qs high, low [C][LS] a head
  static constexpr size_t o_do = al(o_qs + HP * 2 * 2 * C * LS);  // dO high, low [C][LD] a head
  static constexpr size_t o_vec = al(o_do + HP * 2 * 2 * C * LD); // the vectors, VN a head
  // HYMO_GDN_TMA bit 4: one mbarrier (o, v and c; adj_tma)
  static constexpr size_t o_mb = al(o_vec + 4 * HP * VN);
  static constexpr size_t bytes = al(o_mb + ((HYMO_GDN_TMA & 4) ? 16 : 0));
  static_assert(!(HYMO_GDN_TMA & 4) || (o_v % 128 == 0 && o_c % 128 == 0), "HYMO_GDN_TMA: the tiles at 128-byte boundaries");
};
// HYMO_GDN_TMA bit 4: the adjoint pass's o, v and c tiles by the TMA, one mbarrier (not on the
// split path's blocks)
template <class HM>
__host__ __device__ constexpr bool adj_tma() {
  return (HYMO_GDN_TMA & 4) && !HM::split;
}
// HYMO_GDN_ADJ_PAIR (gdn.cuh): whether the adjoint pass can take two heads a CTA at S, D (where H
// is even, with the default head map; compiled whatever the switch says: gdn_set_adj_pair picks
// at run time; gdn_adj_pair_fits asks the same)
__host__ __device__ constexpr bool adj_pair_fits(int S, int D) {
  return S <= 32 && D == 32 && (HYMO_GDN_TMA & 4) == 0;
}
// The adjoint pass's minimum CTAs an SM for ptxas (HYMO_GDN_ADJ_MINB, _MINB16); a head
// pair's CTA (twice the threads) asks for half as many
__host__ __device__ constexpr int adj_min_blocks(int S, int D, bool pair) {
  const int m = (S <= 32 && D == 32 && HYMO_GDN_ADJ_MINB)    ? HYMO_GDN_ADJ_MINB
                : (S <= 32 && D <= 16 && HYMO_GDN_ADJ_MINB16) ? HYMO_GDN_ADJ_MINB16
                                                              : 1;
  return pair ? (m / 2 > 1 ? m / 2 : 1) : m;
}
#if HYMO_GDN_TMA & 4
#define HYMO_GDN_ADJ_MAPS , const __grid_constant__ TileMaps tm
#else
#define HYMO_GDN_ADJ_MAPS
#endif

// PAIR (HYMO_GDN_ADJ_PAIR; run_adj_pass launches it where H is even and adj_pair_fits): two
// adjacent heads a CTA, blockIdx.y (+ p.bh0) a head pair, threads NTH.. the odd head. The CTA's
// threads fetch both heads' o, v and c rows (128-byte rows at S = D = 32, not 64) and each half
// does the one-head arithmetic on its own columns: the same bits as one head a CTA.
template <int S, int D, int C, bool FUSED, class HM = HeadMap<>, bool PAIR = false>
__global__ void __launch_bounds__(2 * C * (PAIR ? 2 : 1), adj_min_blocks(S, D, PAIR))
    adj_bf16_kernel(KParams p HYMO_GDN_ADJ_MAPS) {
  HYMO_GDN_CLK(Clk clk(p.clocks, kClkAdj));  // (HYMO_GDN_CLOCKS)
  constexpr int HP = PAIR ? 2 : 1;
  using P = PlanA<S, D, C, HP>;
  static_assert(!PAIR || (adj_pair_fits(S, D) && std::is_same_v<HM, HeadMap<>>),
                "HYMO_GDN_ADJ_PAIR: S <= 32, D = 32, the default head map, the tiles by cp.async");
  // HM::split (S or D = 128, gdn_impl.cuh run_bwd_split): one block of a head's state, the
  // prologue as FUSED says, no epilogue: the o tile is dO (FP32, the caller's [B,T,H,D] in
  // p.dObuf, from split_dout_kernel), read as v's view; nothing is written over it
  constexpr bool EPI = FUSED && !HM::split, LO = FUSED || HM::split;  // (LO: the o tile)
  pdl_enter();  // (gdn.cuh)
  HYMO_GDN_CLK(clk.waited());
  // FD, LD, LS: the strides of this head's view of the o, v and c tiles; LQ, LE: of its Qs and dO
  constexpr int NW = P::NW, LS = P::LSX, LD = P::LDX, FD = P::FDX, LQ = P::LS, LE = P::LD;
  using I = Items<S, D, NW>;
  constexpr int NH = I::NH, NTW = I::NTW, NIT = I::NIT, IPW = I::IPW;
  HYMO_GDN_SMEM_DECL;
  // the o, v and c tiles (PAIR: both heads' rows, fetched by the CTA's NTC threads); half: the
  // CTA's head (PAIR: threads NTH.. the odd head); so, sv, sc and the pointers below are this head's
  constexpr int NTC = HP * P::NTH;
  float* const so0 = reinterpret_cast<float*>(sm + P::o_o);
  bf16* const sv0 = reinterpret_cast<bf16*>(sm + P::o_v);
  bf16* const sc0 = reinterpret_cast<bf16*>(sm + P::o_c);
  const int half = PAIR ? int(threadIdx.x) / P::NTH : 0;
  float* so = so0 + half * D;
  bf16* sv = sv0 + half * D;
  bf16* sc = sc0 + half * S;
  bf16* qs = reinterpret_cast<bf16*>(sm + P::o_qs) + half * 2 * C * LQ;
  bf16* dO = reinterpret_cast<bf16*>(sm + P::o_do) + half * 2 * C * LE;
  float* g = reinterpret_cast<float*>(sm + P::o_vec) + half * P::VN;
  float* G = g + C;
  float* A2 = G + C;
  float* sdw = A2 + S;
  float* swy = sdw + D;  // HYMO_GDN_ADJ_ROWS: w_y (read from here, not held in registers)
  __shared__ double dDacc[HP];  // dD_skip partial (FP64: the sum over tokens of dyp.v cancels)

  // this thread's (b, h) pair (PAIR: blockIdx.y a head pair); tid, w: the thread and warp within
  // its head's NTH threads
  const int seg = cta_seg(p), bh = PAIR ? state_pair_bh(p, half) : cta_bh(p), bb = bh / p.H, h = bh % p.H;
  const int tid = PAIR ? int(threadIdx.x) % P::NTH : threadIdx.x, w = tid >> 5, lane = tid & 31, gq = lane >> 2,
            tq = lane & 3;
  const int h0 = h - half;  // the CTA's first head (the tiles' rows start there)
  const int c0 = seg_c0(p, seg), c1 = seg_c1(p, c0);
  const size_t tsD = size_t(HM::HD(p.H)) * D, tsS = size_t(HM::HS(p.H)) * S, tsG = HM::HG(p.H);
  const float dtb = FUSED ? p.dt_bias[HM::hG(h)] : 0.f;
  const float dsk = EPI ? p.D_skip[h] : 0.f;
  const bf16* gate = reinterpret_cast<const bf16*>(p.gate);
  const int r0 = 16 * w;

  // the offset of the CTA's first head's row at token tk in the D-wide tensors (o in dObuf, v, z,
  // dy) and in the S-wide one (c); the tiles' fetches and the L2 prefetches start there
  auto rowD = [&](size_t tk) { return (tk * HM::HD(p.H) + HM::hD(h0)) * D; };
  auto rowS = [&](size_t tk) { return (tk * HM::HS(p.H) + HM::hS(h0)) * S; };
  // the o, v and c tiles of the chunk of nn tokens from token tk of batch row bb
  auto load_o = [&](size_t tk, int nn) {
    load_rows_async<float, HP * D, C, NTC>(so0, FD, p.dObuf + rowD(tk), tsD, nn);
  };
  auto load_v = [&](size_t tk, int nn) {
    load_rows_async<bf16, HP * D, C, NTC>(sv0, LD, reinterpret_cast<const bf16*>(p.v) + rowD(tk), tsD, nn);
  };
  auto load_c = [&](size_t tk, int nn) {
    load_rows_async<bf16, HP * S, C, NTC>(sc0, LS, reinterpret_cast<const bf16*>(p.c) + rowS(tk), tsS, nn);
  };
  auto rows = [&](int chn) { return min(C, p.T - chn * C); };
  auto tok = [&](int chn) { return size_t(bb) * p.T + size_t(chn) * C; };
  // HYMO_GDN_TMA bit 4 (adj_tma): the same tiles by the TMA, a copy a tile by thread 0, on one
  // mbarrier; the segment's k-th chunk waits for its k-th phase
  constexpr bool TM = adj_tma<HM>();
  [[maybe_unused]] uint64_t* mb = reinterpret_cast<uint64_t*>(sm + P::o_mb);
#if HYMO_GDN_TMA & 4
  if constexpr (TM) tma_groups_init(mb, sm, 1);
#endif
  auto fetch = [&](int chn) {
#if HYMO_GDN_TMA & 4
    if constexpr (TM) {
      if (tid == 0) {
        mbar_expect_tx(mb, (LO ? 4u * C * P::FD : 0u) + (EPI ? 2u * C * LD : 0u) + 2u * C * LS);
        if constexpr (LO) tma_load_3d(so, &tm.o, HM::hD(h) * D, chn * C, bb, mb);
        if constexpr (EPI) tma_load_3d(sv, &tm.v, HM::hD(h) * D, chn * C, bb, mb);
        tma_load_3d(sc, &tm.c, HM::hS(h) * S, chn * C, bb, mb);
      }
      return;
    }
#endif
    const int nn = rows(chn);
    const size_t tk = tok(chn);
    if constexpr (LO) load_o(tk, nn);
    if constexpr (EPI) load_v(tk, nn);
    load_c(tk, nn);
    cp_async_commit();
  };
  float graw[C / 32];
  if (c0 < c1) {
    fetch(c0);
    if (w == 0) gate_fetch<C>(graw, gate + (size_t(bb) * p.T + size_t(c0) * C) * HM::HG(p.H) + HM::hG(h), tsG, min(C, p.T - c0 * C));
  }
  // (after the first chunk's fetches: the inputs' loads in flight together; A_log's and w_y's
  // both before either's shared store, which the compiler may not move a load across)
  static_assert(S <= P::NTH && D <= P::NTH, "a thread an A2 and a w_y value");
  const float alog = tid < S ? p.A_log[HM::hS(h) * S + tid] : 0.f;
  const float wyd = EPI && P::ROWS && tid < D ? p.w_y[tid] : 0.f;
  if (tid < S) A2[tid] = -expf(alog) * 1.4426950408889634f;
  if (tid < D) {
    sdw[tid] = 0.f;
    if (EPI && P::ROWS) swy[tid] = wyd;
  }
  if (tid == 0) dDacc[half] = 0.0;
  // HYMO_GDN_ADJ_ROWS: the epilogue's lane owns columns cw0 .. cw0 + CW - 1 of its two
  // rows (NV 16-byte vectors a row); wy and dwl then hold those columns, pair nt = columns
  // cw0 + 2 nt, + 1
  constexpr bool ROWS = P::ROWS;
  constexpr int CW = D / 4, NV = ROWS ? CW / 8 : 1;
  const int cw0 = tq * CW;
  // the column of pair nt, element u of this lane's epilogue values
  const auto ecol = [&](int nt, int u) { return ROWS ? cw0 + 2 * nt + u : nt * 8 + 2 * tq + u; };
  [[maybe_unused]] float2 wy[D / 8];
  if constexpr (EPI && !ROWS) {
#pragma unroll
    for (int nt = 0; nt < D / 8; ++nt) wy[nt] = make_float2(p.w_y[nt * 8 + 2 * tq], p.w_y[nt * 8 + 2 * tq + 1]);  // w_y: 4-byte aligned is enough
  }
  float dH[IPW][NTW][4];
#pragma unroll
  for (int it = 0; it < IPW; ++it) zero(dH[it]);
  float gseg = 0.f, dwl[D / 8][2];
  double dsum = 0.0;  // sum of dyp . v: per chunk in FP32, across chunks in FP64
#pragma unroll
  for (int nt = 0; nt < D / 8; ++nt) dwl[nt][0] = dwl[nt][1] = 0.f;

  for (int ch = c0; ch < c1; ++ch) {
    const int t0 = ch * C, n = min(C, p.T - t0);
    const size_t tok0 = size_t(bb) * p.T + t0;
    HYMO_GDN_CLK(clk.chunk(ch - c0));
    // this lane's z and dy pairs (epilogue layout), raw; ROWS: its rows' columns, 16
    // bytes a load
    [[maybe_unused]] uint32_t zq[D / 8][2], yq[D / 8][2];
    [[maybe_unused]] uint4 zv[2][NV], yv[2][NV];
    if constexpr (HM::split) {
      // (dO is the o tile)
    } else if constexpr (ROWS) {
#pragma unroll
      for (int hr = 0; hr < 2; ++hr)
#pragma unroll
        for (int k = 0; k < NV; ++k) {
          const int t = r0 + gq + hr * 8;
          const size_t gi = ((tok0 + t) * p.H + h) * D + cw0 + 8 * k;
          const uint4 zero4 = make_uint4(0u, 0u, 0u, 0u);
          yv[hr][k] = t < n ? __ldg(reinterpret_cast<const uint4*>(reinterpret_cast<const bf16*>(p.dout) + gi)) : zero4;
          zv[hr][k] = (FUSED && t < n) ? __ldg(reinterpret_cast<const uint4*>(reinterpret_cast<const bf16*>(p.z) + gi)) : zero4;
        }
    } else {
#pragma unroll
      for (int nt = 0; nt < D / 8; ++nt)
#pragma unroll
        for (int hr = 0; hr < 2; ++hr) {
          const int t = r0 + gq + hr * 8;
          const size_t gi = ((tok0 + t) * p.H + h) * D + nt * 8 + 2 * tq;
          yq[nt][hr] = t < n ? __ldg(reinterpret_cast<const unsigned int*>(reinterpret_cast<const bf16*>(p.dout) + gi)) : 0u;
          zq[nt][hr] = (FUSED && t < n) ? __ldg(reinterpret_cast<const unsigned int*>(reinterpret_cast<const bf16*>(p.z) + gi)) : 0u;
        }
    }
    if (w == 0) {
      gate_finish<C, FUSED>(graw, g, G, n, dtb);
      if (ch + 1 < c1)
        gate_fetch<C>(graw, gate + (tok0 + C) * HM::HG(p.H) + HM::hG(h), tsG, min(C, p.T - (ch + 1) * C));
    }
    if constexpr (TM) {
#if HYMO_GDN_TMA & 4
      mbar_wait(mb, (ch - c0) & 1);
#endif
    } else {
      cp_async_wait_all();
    }
    __syncthreads();
    if ((HYMO_GDN_L2PF & 2) && D == 32 && ch + 1 < c1) {  // chunk ch + 1's tiles and dy, z into L2
      // (PAIR: both heads' rows, by the CTA's threads)
      const size_t tk = tok(ch + 1);
      const int nn = rows(ch + 1);
      if (LO) prefetch_rows_l2<float, HP * D, C, NTC>(p.dObuf + rowD(tk), tsD, nn);
      prefetch_rows_l2<bf16, HP * S, C, NTC>(reinterpret_cast<const bf16*>(p.c) + rowS(tk), tsS, nn);
      if (EPI) {
        prefetch_rows_l2<bf16, HP * D, C, NTC>(reinterpret_cast<const bf16*>(p.v) + rowD(tk), tsD, nn);
        prefetch_rows_l2<bf16, HP * D, C, NTC>(reinterpret_cast<const bf16*>(p.z) + rowD(tk), tsD, nn);
      }
      if (!HM::split) prefetch_rows_l2<bf16, HP * D, C, NTC>(reinterpret_cast<const bf16*>(p.dout) + rowD(tk), tsD, nn);
    }
    // Qs = c exp(G A), high and low parts
    for (int u = tid; u < C * (S / 8); u += P::NTH) {
      int q8;
      const int t = row_piece<S / 8, 2>(u, q8), s0 = q8 * 8;  // (HYMO_GDN_ROWPERM)
      float x[8], a2[8];
      ld8(A2 + s0, a2);
      ld8(sc + t * LS + s0, x);
      const float gt = G[t];
#pragma unroll
      for (int e = 0; e < 8; ++e) x[e] *= ex2f(gt * a2[e]);
      st16_split(qs + t * LQ + s0, qs + C * LQ + t * LQ + s0, x);
    }
    // dO for this warp's rows
    if constexpr (ROWS) {
      // as below, in the row layout: element e of 16-byte vector k of row half hr is
      // column cw0 + 8 k + e; pair nt of wy and dwl is columns cw0 + 2 nt, + 1
      // dO's 8 values x of vector k of row half hr: high and low into the tiles, and
      // over o's row (as below)
      auto emit = [&](int hr, int k, const float (&x)[8]) {
        const int t = r0 + gq + hr * 8, d = cw0 + 8 * k;
        uint4 xh, xl;
        split8(x, xh, xl);
        *reinterpret_cast<uint4*>(dO + t * LE + d) = xh;
        *reinterpret_cast<uint4*>(dO + C * LE + t * LE + d) = xl;
        if (!HM::split && t < n) {
          float* rowf = p.dObuf + ((tok0 + t) * p.H + h) * D;
          bf16* row = reinterpret_cast<bf16*>(rowf);
          if constexpr (staged_bwd(S, D)) {
            *reinterpret_cast<uint4*>(row + d) = xh;
            *reinterpret_cast<uint4*>(row + D + d) = xl;
          } else {
            *reinterpret_cast<float4*>(rowf + d) = make_float4(x[0], x[1], x[2], x[3]);
            *reinterpret_cast<float4*>(rowf + d + 4) = make_float4(x[4], x[5], x[6], x[7]);
          }
        }
      };
      // f(hr, k, t) for each 16-byte piece k of row half hr (row t) of this lane
      auto pieces = [&](auto f) {
#pragma unroll
        for (int hr = 0; hr < 2; ++hr)
#pragma unroll
          for (int k = 0; k < NV; ++k) f(hr, k, r0 + gq + hr * 8);
      };
      if constexpr (EPI) {
        float yp[2][CW], dn[2][CW], ss[2] = {0.f, 0.f}, m[2] = {0.f, 0.f};
        pieces([&](int hr, int k, int t) {
          float o8[8], v8[8];
          ld8(so + t * FD + cw0 + 8 * k, o8);
          ld8(sv + t * LD + cw0 + 8 * k, v8);
#pragma unroll
          for (int e = 0; e < 8; ++e) {
            const float y = fmaf(dsk, v8[e], o8[e]);
            yp[hr][8 * k + e] = y;
            ss[hr] = fmaf(y, y, ss[hr]);
          }
        });
        quad_rsqrt_mean<D>(ss, p.eps);
        pieces([&](int hr, int k, int t) {
          float z8[8], y8[8], dz8[8], w8[8];
          unpack8(zv[hr][k], z8);
          unpack8(yv[hr][k], y8);
          ld8(swy + cw0 + 8 * k, w8);
#pragma unroll
          for (int e = 0; e < 8; ++e) {
            const int c = 8 * k + e;
            dz8[e] = epi_bwd(z8[e], y8[e], w8[e], yp[hr][c] * ss[hr], dn[hr][c], dwl[c >> 1][c & 1], m[hr]);
          }
          if (t < n) st16(reinterpret_cast<bf16*>(p.dz) + ((tok0 + t) * p.H + h) * D + cw0 + 8 * k, dz8);
        });
        quad_mean<D>(m);
        float dsc = 0.f;
        pieces([&](int hr, int k, int t) {
          float v8[8], x[8];
          ld8(sv + t * LD + cw0 + 8 * k, v8);
#pragma unroll
          for (int e = 0; e < 8; ++e) {
            const int c = 8 * k + e;
            x[e] = t < n ? ss[hr] * (dn[hr][c] - yp[hr][c] * ss[hr] * m[hr]) : 0.f;
            dsc = fmaf(x[e], v8[e], dsc);
          }
          emit(hr, k, x);
        });
        dsum += double(dsc);
      } else if constexpr (HM::split) {
        pieces([&](int hr, int k, int t) {
          float x[8];
          ld8(so + t * FD + cw0 + 8 * k, x);
          emit(hr, k, x);
        });
      } else {
        pieces([&](int hr, int k, int) {
          float y8[8];
          unpack8(yv[hr][k], y8);
          emit(hr, k, y8);
        });
      }
    } else {
      float dyp[D / 8][4];
      if constexpr (EPI) {
        // dn = dy w_y silu(z); dyp = r (dn - n mean(dn n)), n = yp r, yp = o + D_skip v
        float yp[D / 8][4], ss[2] = {0.f, 0.f}, m[2] = {0.f, 0.f}, dn[D / 8][4];
#pragma unroll
        for (int nt = 0; nt < D / 8; ++nt)
#pragma unroll
          for (int hr = 0; hr < 2; ++hr) {
            const int t = r0 + gq + hr * 8, d = nt * 8 + 2 * tq;
            const float2 o2 = *reinterpret_cast<const float2*>(so + t * FD + d), v2 = ld2(sv + t * LD + d);
            yp[nt][2 * hr] = fmaf(dsk, v2.x, o2.x);
            yp[nt][2 * hr + 1] = fmaf(dsk, v2.y, o2.y);
            ss[hr] = fmaf(yp[nt][2 * hr], yp[nt][2 * hr], fmaf(yp[nt][2 * hr + 1], yp[nt][2 * hr + 1], ss[hr]));
          }
        quad_rsqrt_mean<D>(ss, p.eps);
#pragma unroll
        for (int nt = 0; nt < D / 8; ++nt)
#pragma unroll
          for (int hr = 0; hr < 2; ++hr) {
            const int t = r0 + gq + hr * 8, d = nt * 8 + 2 * tq;
            const float2 z2 = bf16x2_f2(zq[nt][hr]);
            const float2 y2 = bf16x2_f2(yq[nt][hr]);
            float dzv[2];
#pragma unroll
            for (int u = 0; u < 2; ++u) {
              const int e = 2 * hr + u;
              dzv[u] = epi_bwd(u ? z2.y : z2.x, u ? y2.y : y2.x, u ? wy[nt].y : wy[nt].x,
                               yp[nt][e] * ss[hr], dn[nt][e], dwl[nt][u], m[hr]);
            }
            if (t < n) st2(reinterpret_cast<bf16*>(p.dz) + ((tok0 + t) * p.H + h) * D + d, dzv[0], dzv[1]);
          }
        quad_mean<D>(m);
        float dsc = 0.f;
#pragma unroll
        for (int nt = 0; nt < D / 8; ++nt)
#pragma unroll
          for (int hr = 0; hr < 2; ++hr) {
            const int t = r0 + gq + hr * 8, d = nt * 8 + 2 * tq;
#pragma unroll
            for (int u = 0; u < 2; ++u) {
              const int e = 2 * hr + u;
              dyp[nt][e] = t < n ? ss[hr] * (dn[nt][e] - yp[nt][e] * ss[hr] * m[hr]) : 0.f;
              dsc = fmaf(dyp[nt][e], __bfloat162float(sv[t * LD + d + u]), dsc);
            }
          }
        dsum += double(dsc);
      } else if constexpr (HM::split) {
#pragma unroll
        for (int nt = 0; nt < D / 8; ++nt)
#pragma unroll
          for (int hr = 0; hr < 2; ++hr) {
            const float2 o2 = *reinterpret_cast<const float2*>(so + (r0 + gq + hr * 8) * FD + nt * 8 + 2 * tq);
            dyp[nt][2 * hr] = o2.x;
            dyp[nt][2 * hr + 1] = o2.y;
          }
      } else {
#pragma unroll
        for (int nt = 0; nt < D / 8; ++nt)
#pragma unroll
          for (int hr = 0; hr < 2; ++hr) {
            const float2 y2 = bf16x2_f2(yq[nt][hr]);
            dyp[nt][2 * hr] = y2.x;
            dyp[nt][2 * hr + 1] = y2.y;
          }
      }
#pragma unroll
      for (int nt = 0; nt < D / 8; ++nt)
#pragma unroll
        for (int hr = 0; hr < 2; ++hr) {
          const int t = r0 + gq + hr * 8, d = nt * 8 + 2 * tq;
          const float x0 = dyp[nt][2 * hr], x1 = dyp[nt][2 * hr + 1];
          uint32_t hi, lo;
          split2(x0, x1, hi, lo);
          *reinterpret_cast<uint32_t*>(dO + t * LE + d) = hi;
          *reinterpret_cast<uint32_t*>(dO + C * LE + t * LE + d) = lo;
          if (!HM::split && t < n) {  // over o's row: for the staged backward, the D BF16 high parts,
            // then the D low parts; for the generic one, FP32
            float* rowf = p.dObuf + ((tok0 + t) * p.H + h) * D;
            bf16* row = reinterpret_cast<bf16*>(rowf);
            if constexpr (staged_bwd(S, D)) {
              *reinterpret_cast<uint32_t*>(row + d) = hi;
              *reinterpret_cast<uint32_t*>(row + D + d) = lo;
            } else {
              *reinterpret_cast<float2*>(rowf + d) = make_float2(x0, x1);
            }
          }
        }
    }
    // read before the barrier: warp 0 rewrites G for the next chunk (gate_finish) before
    // the next barrier, possibly while a slower warp is still in the dH products below
    const float Glast = G[C - 1];
    __syncthreads();
    if (ch + 1 < c1) fetch(ch + 1);  // o, v and c are dead for this chunk
    // dH += exp(gseg A) (Qs^T dO), hi*hi + lo*hi + hi*lo
#pragma unroll
    for (int it = 0; it < IPW; ++it) {
      const int item = w + it * NW;
      if (item >= NIT) continue;
      const int mt = item / NH, nb = (item % NH) * NTW * 8;
      float acc[NTW][4];
      zero(acc);
      warp_mm_ldsm<NTW, true>(acc, C, qs + mt * 16, LQ, dO + nb, LE);
      warp_mm_ldsm<NTW, true>(acc, C, qs + C * LQ + mt * 16, LQ, dO + nb, LE);
      warp_mm_ldsm<NTW, true>(acc, C, qs + mt * 16, LQ, dO + C * LE + nb, LE);
      const float e0 = ex2f(gseg * A2[mt * 16 + gq]), e1 = ex2f(gseg * A2[mt * 16 + gq + 8]);
#pragma unroll
      for (int nt = 0; nt < NTW; ++nt) {
        dH[it][nt][0] = fmaf(e0, acc[nt][0], dH[it][nt][0]);
        dH[it][nt][1] = fmaf(e0, acc[nt][1], dH[it][nt][1]);
        dH[it][nt][2] = fmaf(e1, acc[nt][2], dH[it][nt][2]);
        dH[it][nt][3] = fmaf(e1, acc[nt][3], dH[it][nt][3]);
      }
    }
    gseg += Glast;
  }
  const size_t sgi = size_t(bh) * p.NSEG + seg;
  float* dst = p.dHseg + sgi * S * D;
  for_state_pairs<S, D, NW>(w, [&](int it, int nt, int hr, int s, int d) {
    *reinterpret_cast<float2*>(dst + s * D + d) = make_float2(dH[it][nt][2 * hr], dH[it][nt][2 * hr + 1]);
  });
  if constexpr (EPI) {
#pragma unroll
    for (int nt = 0; nt < D / 8; ++nt)
#pragma unroll
      for (int u = 0; u < 2; ++u) {
        float x = dwl[nt][u];
        x += __shfl_xor_sync(0xffffffffu, x, 4);
        x += __shfl_xor_sync(0xffffffffu, x, 8);
        x += __shfl_xor_sync(0xffffffffu, x, 16);
        dwl[nt][u] = x;
      }
#pragma unroll
    for (int off = 16; off; off >>= 1) dsum += __shfl_xor_sync(0xffffffffu, dsum, off);
    in_warp_order<NW>(w, [&] {  // the warps' partials, added in warp order (gdn.cuh): once a CTA
      if (gq == 0)
#pragma unroll
        for (int nt = 0; nt < D / 8; ++nt)
#pragma unroll
          for (int u = 0; u < 2; ++u) sdw[ecol(nt, u)] += dwl[nt][u];
      if (lane == 0) dDacc[half] += dsum;
    });
    for (int d = tid; d < D; d += P::NTH) p.dwpart[sgi * D + d] = sdw[d];
    if (tid == 0) p.dDpart[sgi] = dDacc[half];
  }
  HYMO_GDN_CLK(clk.exit(c1 - c0));
}

}  // namespace hymo::gdn::dev
