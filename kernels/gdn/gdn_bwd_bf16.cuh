// hymo GDN: the BF16 backward main pass with staged operands (S, D <= 64).
//
// Runs after the training forward (per-chunk entering states h0, split into BF16
// high and low halves) and the adjoint pass (dO, likewise split). One CTA per
// (b, h, segment), chunks in reverse order; two warps per 16-row block w of a chunk:
// the query warp (dc, then the adjoint update) and the key warp (db, P's diagonal
// block, dv). Each chunk's decay-scaled operands are
// computed once into BF16 tiles (high and low parts), every product reads them with
// ldmatrix, and the intra-chunk dP blocks never touch shared memory: a warp computes
// the ones it needs (dO_i v_j^T for its dc, v_j dO_i^T for its db) in registers and
// feeds the accumulators straight back into the next mma as its A operand.
//
// With G_t the inclusive within-chunk gate cumsum, A_s < 0, r_i = 16 i - 1 the row
// before block i (G_{-1} = 0) and e_j = 16 j + 15 the last row of block j:
//   Qi[t]   = c_t exp((G_t - G_{r_i}) A)        t in block i
//   Kend[t] = b_t exp((G_{e_j} - G_t) A)        t in block j
//   mid[t]  = block rows 8..15: c_t exp((G_t - G_m) A), rows 0..7: b_t exp((G_m - G_t) A),
//             G_m = G at row 7 of the block
//   d_ij[s] = exp((G_{r_i} - G_{e_j}) A_s)      j < i <= NW (r_NW = C - 1: the chunk end)
// so that for t in block i, tau in block j < i:
//   exp((G_t - G_tau) A) = exp((G_t - G_{r_i}) A) d_ij exp((G_{e_j} - G_tau) A),
// every factor <= 1 (each exponent is (G_hi - G_lo) A with G_hi >= G_lo). Sums over s
// (P for dv) fold d_ij into the key operand in registers; sums over tau (dc) or t
// (db) apply it, and the row factor, to the product's output. The diagonal blocks
// keep the forward's split: an 8x8 square by mma from the mid tile, two 8x8
// triangles elementwise from products of per-step decays.
//
// Accuracy: every product on the decay-gradient path (dP, dc, db, the adjoint) is
// FP32-accurate (high * high + low * high + high * low); dv uses P in BF16.
#pragma once
#include "gdn_fwd_bf16.cuh"

// HYMO_GDN_BWD_ROLL (default on since run 45: forward + backward -3.7%;
// -DHYMO_GDN_BWD_ROLL=0 turns it off): the staged backward main kernel's largest stall
// was instruction fetch (run 43: 1.84 cycles an instruction; 122 KB of code). With the
// switch, the loops over row blocks (the off-diagonal products of dc, db and dv, the
// adjoint update) and the dc triangle walk are kept rolled (unroll 1) rather than
// unrolled by the compiler: 10% less code.
#ifndef HYMO_GDN_BWD_ROLL
#define HYMO_GDN_BWD_ROLL 1
#endif
#if HYMO_GDN_BWD_ROLL
#define HYMO_GDN_BWD_LOOP _Pragma("unroll 1")
#define HYMO_GDN_BWD_UNROLL _Pragma("unroll 1")
#else
#define HYMO_GDN_BWD_LOOP
#define HYMO_GDN_BWD_UNROLL _Pragma("unroll")
#endif
#ifdef HYMO_GDN_BWD_PAIR2
#error "HYMO_GDN_BWD_PAIR2 was removed in session 52 (run 254: the backward +1.1..+2.7%); commit 19e0946 has it"
#endif

// HYMO_GDN_BWD_BAL (session 8; default 2 since run 58, 0 turns it off): the key warps' dv
// goes to block NW-1-w, so that every key warp does the same number of off-diagonal
// products (run 52: the key warps issued 1889 instructions a chunk on average, block 0's
// about 2230, and the barrier where the roles join held 8.4% of the stall samples). The
// key warps meet at a named barrier (1) before the diagonal dv term. 1: run 56, all 450
// checks pass and forward + backward is 0.7-1.0% faster, but compute-sanitizer's racecheck
// reported 62 hazards, also across __syncthreads in code the switch does not touch. 2: as
// 1, and the query warps execute a named barrier of their own (2) at the same point of
// the chunk, so that every warp executes as many barriers: run 58, racecheck 0 hazards
// (its bookkeeping, not a race, when half the CTA runs a named barrier), -0.9% (run 57).
// HYMO_GDN_DG_WARP (session 9; default on since run 61, 0 turns it off): the decay-gradient
// tail with the dgate reduction across a warp's lanes and the dA / ddt_bias partials in
// registers (chunk_decay_grads_warp): one CTA barrier a chunk fewer, and dl is not
// written back. Run 61: forward + backward -1.3% (0.7100-0.7117 against 0.7189-0.7228 ms),
// 450/450, racecheck and memcheck clean. (2, also q = c dc - b db computed by the thread that
// sums it, measured slower in runs 63 and 189, was removed in session 37; commit 4157ffb has it.)
#ifndef HYMO_GDN_DG_WARP
#define HYMO_GDN_DG_WARP 1
#endif
static_assert(HYMO_GDN_DG_WARP == 0 || HYMO_GDN_DG_WARP == 1, "HYMO_GDN_DG_WARP: 0 or 1 (2 was removed)");

#ifndef HYMO_GDN_BWD_BAL
#define HYMO_GDN_BWD_BAL 2
#endif
#ifndef HYMO_GDN_PD24  // (PlanB::LTP; default 1 since run 195)
#define HYMO_GDN_PD24 1
#endif
// HYMO_GDN_DCB (session 36; 0 turns it off): the dc and db tiles without bank conflicts (run 202:
// 1.38 M of the backward main kernel's 1.44 M excess shared-memory wavefronts were their stores
// and the decay-gradient tail's loads of them and of c and b). The
// tiles' rows are S + 8 floats apart (PlanB::FSD; S + 4 before), and a row whose index has bit 2
// set starts 4 floats further on (dcb_row in gdn.cuh). The products' float2 stores in the mma
// layout (a half-warp's four rows) then fill the 32 banks once where rows 36 floats apart
// shared half of them; the tail (chunk_store_dcdb_q) gives a quarter-warp rows t and t + 4,
// whose c and b rows (80 bytes apart a row) no longer share a bank, and whose dc and db rows
// the skew keeps apart. S = 32 only (the tail's four lanes a row), with HYMO_GDN_DG_WARP (whose
// tail reads the skewed rows; the scan tail of HYMO_GDN_DG_WARP=0 does not, so the switch does
// nothing there); 2 KB more shared memory (two CTAs an SM still fit).
// Run 203 (A/B, 3 rounds, 925/925, racecheck and memcheck clean): the kernel's excess
// wavefronts 1.44 M -> 0.07 M, its time in ncu 230.1 -> 226.2 us; forward + backward -0.4%
// (default shape), -0.7% (H = 64), -0.2% (D = 16); on since then.
#ifndef HYMO_GDN_DCB
#define HYMO_GDN_DCB 1
#endif
// Removed in session 34 (notes/gdn-measurements.md, runs 190-192): HYMO_GDN_PSAVE (the training
// forward leaves P^T's blocks for dv, commit 197aa0b: the key warps' instructions -18%, the
// kernel no faster, the training forward +3.2%) and HYMO_GDN_BWD_OFFB (one of the three
// off-diagonal products of dc / db moved to the warp with none, commit 9afe0f5: +4%).

// HYMO_GDN_BWD_DVHI (session 31; on since run 178, 0 turns it off): dv's products from BF16 high
// parts only. dv is written in BF16 and no other gradient reads it; its P term already takes P
// rounded to BF16 and dO's high part. With the switch the key operands of its off-diagonal P
// blocks and of its state term are Kend's high part scaled in packed BF16 arithmetic
// (scaled_key_frag<true>) instead of high + low scaled in FP32, and the state term takes dh's
// high tile only (one product instead of two). Run 178: forward + backward -1.0% at the default
// shape, -1.2% at H = 64; dv's relative errors move in the fourth digit (runs 178-179).
#ifndef HYMO_GDN_BWD_DVHI
#define HYMO_GDN_BWD_DVHI 1
#endif

// HYMO_GDN_BWD_QOFF (session 25; default on): dc and db accumulate without their diagonal
// (tau = t) terms dP_tt b_t and dP_tt c_t; the query warps keep dP_tt (a C-float tile, dpt) and
// chunk_store_dcdb_q adds the terms back only where dc and db are written out. The decay
// gradient's q = c dc - b db then has no c_t b_t dP_tt in either half: those cancel exactly, but
// the diagonal blocks' one-product paths (HYMO_GDN_DIAG8_BWD) compute each
// through its reference factors with BF16 high + low operands, about 2^-16 relative, not FP32's
// 2^-24, and what they left of it, times A_s in dgate, was most of the BF16 path's dA_log and
// ddt_bias error (run 144: dA_log 5.9e-3 with DIAG8_BWD, 2.2e-4 without). gdn.cuh's
// HYMO_GDN_F32_QOFF is the FP32 variant's twin.
#ifndef HYMO_GDN_BWD_QOFF
#define HYMO_GDN_BWD_QOFF 1
#endif

// HYMO_GDN_BWD_KTAIL (session 47, run 228; removed, commit f2a5ee2 has it): the decay-gradient
// tail moved into the key warps, each taking its own row block after its dv (query warp w's dc
// announced by bar.arrive on named barrier 3 + w), dgate from a suffix scan of q's row sums and dA
// from G-weighted column sums, no tail barriers. Full test 944 of 944 and bitwise repro, but the
// backward +5.7% at the default shape (+2.5% at H = 64, +0.1% at T = 2048): four warps doing the
// rows one after another cost more than the whole CTA's tail after the barrier, which run 227
// bounded at 5.7% of the backward. racecheck reported 9 hazards between the column partials'
// stores and their reads across the CTA barriers (the BAL = 1 kind of report, likely its
// bookkeeping of warps executing different barrier counts; not pursued).
#if defined(HYMO_GDN_BWD_KTAIL) && HYMO_GDN_BWD_KTAIL
#error "HYMO_GDN_BWD_KTAIL was removed in session 47 (run 228: backward +5.7%); commit f2a5ee2 has it"
#endif

// HYMO_GDN_BWD_BCPP (session 47, run 231; removed, commit 3d3d457 has it): the next chunk's b and c
// fetched at the roles' barrier (with v, dO and h0) into the mid tile's place, b, c and mid trading
// places every chunk, instead of after the tail's first barrier (run 230: the chunk top's waits for
// its tiles were 6% of the kernel's stall samples). Full test 944 of 944 with the same errors,
// racecheck and memcheck clean, but the backward +2.9% at the default shape (+3.4% at H = 64, +2.6%
// at T = 2048; -0.9% at S = 16): the tiles' pointers, no longer constant, took the S = 32 kernels
// from 123 registers to 128 with 36-44 bytes of spills (the tail's dA and ddt partials, warp 0's
// gate registers); recomputing them in each phase behind a volatile asm still spilled (compiled
// here only).
#if defined(HYMO_GDN_BWD_BCPP) && HYMO_GDN_BWD_BCPP
#error "HYMO_GDN_BWD_BCPP was removed in session 47 (run 231: backward +2.9%); commit 3d3d457 has it"
#endif

// HYMO_GDN_BWD_MTAIL (session 60, run 303; removed, commit 6aef1fa has it): gdn-bwd-plan.md's C1
// in its mma-layout form. Where a chunk's diagonal blocks were all fast, each role warp stored its
// dc or db from the accumulators (QOFF's tau = t term added back), wrote the row sums u_t = sum_s
// A_s q_t[s] of its half of q and folded sum_t G_t q_t[s] into the tail's dA register; one warp
// scanned the 64 u values for dgate, and the tail's two CTA barriers and its pass over the FP32
// tiles were gone. 1059 of 1059 checks, memcheck and racecheck clean, the decay sums as before on
// five fresh seeds; but the backward +15.3% at the default shape (+12.8% at H = 64, +13.3% at T =
// 2048, +14.8% at H = 16; an H100): more than the whole tail's 5.7% (run 227). The epilogues sit
// on the roles, which set the chunk's phase; ptxas had 128 registers and 8 bytes spilled against
// 121 and none.
#if defined(HYMO_GDN_BWD_MTAIL) && HYMO_GDN_BWD_MTAIL
#error "HYMO_GDN_BWD_MTAIL was removed in session 60 (run 303: backward +15%); commit 6aef1fa has it"
#endif
// HYMO_GDN_SQ_K8 (session 64): diag8_block_product's square (the quarter of the diagonal block
// whose A operand is not zero) as mma.m16n8k8 products over its 8 columns, from the B fragments
// the halves' product loads (24 of the kernel's 218 HMMA at k = 8, 8 SASS instructions fewer:
// ptxas had already folded the zero quarters' splits and shared the B loads). Run 315 (an H100,
// three rounds): even (the backward +0.2% at the default shape, -0.2% at H = 64, -0.4% at T =
// 2048). Removed; commit f37305f has it.
#if defined(HYMO_GDN_SQ_K8) && HYMO_GDN_SQ_K8
#error "HYMO_GDN_SQ_K8 was removed in session 64 (run 315: even); commit f37305f has it"
#endif

// HYMO_GDN_BWD_STAGGER (session 47; default 6000 since run 234, 0 turns it off): the first wave's
// second CTA on each SM (two CTAs an SM at S, D <= 32) starts HYMO_GDN_BWD_STAGGER ns after its
// programmatic wait (gdn.cuh's cta_stagger; only where the grid fills the SMs twice and the CTA
// walks at least 4 chunks). The two CTAs an SM start together and do the same work, so their
// chunks' phases (the tail's barriers, the chunk top's wait for its tiles) stay in step, and a
// pair that ends together hands its slots to a pair that starts together; offset by about a
// chunk's share of a CTA's life, one's barrier phases meet the other's roles. Runs 228-229 (removed
// work making the kernel slower) suggested it. Run 232 (3 rounds, H100): the backward -0.1% at
// 1500 ns, -1.2% at 3500 (every round below every default round; -2.2% at T = 2048, 0.0% at H = 64).
// Run 233 (4 rounds): 6000 ns -1.5% (forward + backward -1.0%; T = 2048 -2.3%; H = 64 -0.3%).
#ifndef HYMO_GDN_BWD_STAGGER
#define HYMO_GDN_BWD_STAGGER 6000
#endif

// HYMO_GDN_ACC2 (session 71, run 325; removed, commit 9a2b8bd has it): the split products' low
// parts' terms accumulated in a second register set, added once at the end, so that each n8
// tile's chain of dependent mma is shorter (bits: the dP blocks, mm_split3, the adjoint update,
// the state terms). 124-128 registers, no spills at the default shape; the quick test 870 of 870
// in every arm; the backward -0.6..+2.1% at the default shape and -0.0..+1.7% at H = 64 (five
// rounds, an H100): within the noise or slower. The roles' `wait` stalls are not the mma chains
// inside one block's product.
#if defined(HYMO_GDN_ACC2) && HYMO_GDN_ACC2
#error "HYMO_GDN_ACC2 was removed in session 71 (run 325: even or slower); commit 9a2b8bd has it"
#endif

// HYMO_GDN_BWD_BCEARLY (session 54, runs 271-272; removed, commit 0f19299 has it): the next
// chunk's b and c fetched right after the staging where every row block of the chunk is fast
// (then only the staging and the tail read those tiles), the tail reading c and b from global
// memory, prefetched to L1 (prefetch.global.L1, no register held across the roles). Full test
// 1059 of 1059, the four sanitizers clean, 121 registers without spills, but the backward +3.8%
// at the default shape (+1.8..+3.6% at four other shapes; run 271, an H100). The clock stamps (run
// 272) show where the time went: the chunk top did not shrink (about 0.43 us before, 0.46 after:
// its wait was not for b and c), while each warp's role took 0.53-0.69 us longer (warp 0: 3.53 ->
// 4.13 us). The likely reason, not measured: the copies' writes land during the roles and delay
// their shared-memory reads (run 273's profile of the default: the roles latency-bound, short-
// scoreboard waits 13% of the stalls, the shared-memory queue's throttle 3%).
#if defined(HYMO_GDN_BWD_BCEARLY) && HYMO_GDN_BWD_BCEARLY
#error "HYMO_GDN_BWD_BCEARLY was removed in session 54 (run 271: backward +3.8%); commit 0f19299 has it"
#endif

// HYMO_GDN_BWD_RUNS (session 22, run 128: the kernel as one wave of CTAs each walking runs of
// segments; -1.2% of forward + backward only at 16 segments a pair, which cost the other passes
// 2.3%) was removed in session 24, never shown race-free; commit fec08ba has it.

namespace hymo::gdn::dev {

template <int S, int D, int C>
struct PlanB {
  static constexpr int LS = S + 8, LD = D + 8, FS = S + 4;  // BF16 / float strides
  static constexpr bool SK = HYMO_GDN_DCB && HYMO_GDN_DG_WARP && S == 32;  // (HYMO_GDN_DCB)
  static constexpr int FSD = SK ? S + 8 : FS;               // the dc and db tiles' row stride
  static constexpr int NW = C / 16, NTH = 64 * NW;  // two warps a row block
  static constexpr int NPAIR = NW * (NW + 1) / 2;  // block pairs j < i <= NW
  static constexpr int LT = 17;                     // stride of the per-warp 16x16 tiles
  // HYMO_GDN_PD24 (session 34): the key warps' P^T diagonal blocks (pd) at a stride of 24 floats,
  // written and read as float2 pairs: a half-warp's pairs on rows 24 floats apart fill the 32
  // banks once (with 17 and single floats, run 194's profile: 4x the ideal wavefronts). Run 195
  // (A/B, 3 rounds): forward + backward -0.7% (default shape), 0.0% (H = 64), -0.5% (D = 16), the
  // forwards untouched; 1.8 KB more shared memory (still two CTAs an SM)
  static constexpr int LTP = HYMO_GDN_PD24 ? 24 : LT;
  static constexpr size_t al(size_t x) { return (x + 15) & ~size_t(15); }
  static constexpr size_t o_b = 0;
  static constexpr size_t o_c = al(o_b + 2 * C * LS);
  static constexpr size_t o_v = al(o_c + 2 * C * LS);
  static constexpr size_t o_do = al(o_v + 2 * C * LD);        // dO high, low [C][LD]
  static constexpr size_t o_h0 = al(o_do + 2 * 2 * C * LD);   // entering state high, low [S][LD]
  static constexpr size_t o_dh = al(o_h0 + 2 * 2 * S * LD);   // adjoint leaving the chunk, high, low
  static constexpr size_t o_qi = al(o_dh + 2 * 2 * S * LD);   // Qi high, low [C][LS]
  static constexpr size_t o_ke = al(o_qi + 2 * 2 * C * LS);   // Kend high, low
  static constexpr size_t o_mid = al(o_ke + 2 * 2 * C * LS);  // mid high, low
  static constexpr size_t o_a = al(o_mid + 2 * 2 * C * LS);   // per-step decays, FP32 [C][FS]
  static constexpr size_t o_dpd = al(o_a + 4 * C * FS);  // per warp: dP (or dP^T) diagonal block [16][LT]
  static constexpr size_t o_pd = al(o_dpd + 4 * 2 * NW * 16 * LT);  // per key warp: P^T diagonal block
  static constexpr size_t o_dcb = al(o_pd + 4 * NW * 16 * LTP);  // dc, db FP32 [C][FSD] each
  static constexpr size_t o_vec = al(o_dcb + 2 * 4 * C * FSD);
  // g[C], G[C] (two buffers), A2[S] (A log2 e), As[S], dpair[NPAIR][S], rbend[S], rbp[2][S], dAx[S], misc[4]
  // (+ HYMO_GDN_DIAG_FLAGS_BWD with HYMO_GDN_DIAG8_BWD: two buffers of 4 flags, amax2)
  static constexpr bool DF = HYMO_GDN_DIAG_FLAGS_BWD && HYMO_GDN_DIAG8_BWD;
  static constexpr size_t vec_floats = 4 * C + 2 * S + NPAIR * S + S + 2 * S + S + 4 + (DF ? 12 : 0);
  // HYMO_GDN_BWD_QOFF: dP's diagonal, dP_tt, a float a row of the chunk
  static constexpr size_t o_dpt = al(o_vec + 4 * vec_floats);
  // HYMO_GDN_TMA bit 1: two mbarriers (the b, c group and the v, dO, h0 group)
  static constexpr size_t o_mb = al(o_dpt + (HYMO_GDN_BWD_QOFF ? 4 * C : 0));
  static constexpr size_t bytes = al(o_mb + ((HYMO_GDN_TMA & 1) ? 16 : 0));
  static_assert(!(HYMO_GDN_TMA & 1) || (o_c % 128 == 0 && o_v % 128 == 0 && o_do % 128 == 0 &&
                                        (2 * C * LD) % 128 == 0 && o_h0 % 128 == 0 && (2 * S * LD) % 128 == 0),
                "HYMO_GDN_TMA: the tiles at 128-byte boundaries");
  // the segment's leaving adjoint (FP32 [S][D + 4]) is combined in the Kend and mid tiles
  static_assert(4 * S * (D + 4) <= o_a - o_ke, "the combined adjoint aliases Kend and mid");
  static_assert(bytes <= 227 * 1024, "shared memory");
  static_assert(2 * NTH <= 2 * NW * 16 * LT, "the decay-gradient scratch fits the dP tiles");
};

// acc (16 x 8 NT) += A B for one k-step of 16: A given as an mma fragment, B (16 x 8 NT)
// a row-major BF16 tile read with ldmatrix.trans.
template <int NT>
__device__ __forceinline__ void mm_regA(float (&acc)[NT][4], const uint32_t (&a)[4], const bf16* B,
                                        int ldb) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int np = 0; np < NT / 2; ++np) {
    uint32_t b[4];
    ldsm_x4_t(b, B + ldsm_row(lane) * ldb + np * 16 + ldsm_col(lane));
    mma_bf16(acc[2 * np], a, b[0], b[1]);
    mma_bf16(acc[2 * np + 1], a, b[2], b[3]);
  }
}

// A 16x16 FP32 accumulator (two n8 tiles) as an A fragment: its high part (frag_hi), or
// its high part and the BF16 remainder (frag_split).
__device__ __forceinline__ void frag_hi(const float (&c)[2][4], uint32_t (&a)[4]) {
  a[0] = pack_bf16(c[0][0], c[0][1]);
  a[1] = pack_bf16(c[0][2], c[0][3]);
  a[2] = pack_bf16(c[1][0], c[1][1]);
  a[3] = pack_bf16(c[1][2], c[1][3]);
}
__device__ __forceinline__ void frag_split(const float (&c)[2][4], uint32_t (&a)[4], uint32_t (&alo)[4]) {
  split2(c[0][0], c[0][1], a[0], alo[0]);
  split2(c[0][2], c[0][3], a[1], alo[1]);
  split2(c[1][0], c[1][1], a[2], alo[2]);
  split2(c[1][2], c[1][3], a[3], alo[3]);
}

// acc += A B with A split (ah + alo) and B split (high tile at B, low tile lo elements
// later): high * high + low * high + high * low, one k-step of 16.
template <int NT>
__device__ __forceinline__ void mm_split3(float (&acc)[NT][4], const uint32_t (&ah)[4],
                                          const uint32_t (&alo)[4], const bf16* B, int ldb, int lo) {
  mm_regA<NT>(acc, ah, B, ldb);
  mm_regA<NT>(acc, alo, B, ldb);
  mm_regA<NT>(acc, ah, B + lo, ldb);
}

// f(nt, e, row, col) for each element this lane holds of a 16x16 mma accumulator (two n8
// tiles: element [nt][e] sits at row, col of the block).
template <class F>
__device__ __forceinline__ void for_frag16(F&& f) {
  const int lane = threadIdx.x & 31, gq = lane >> 2, tq = lane & 3;
#pragma unroll
  for (int nt = 0; nt < 2; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) f(nt, e, gq + (e >> 1) * 8, nt * 8 + 2 * tq + (e & 1));
}

// HYMO_GDN_BWD_QOFF: the diagonal of a 16x16 block of dP (mma accumulator layout) to dst[0..15].
__device__ __forceinline__ void keep_diag(const float (&dp)[2][4], float* dst) {
  for_frag16([&](int nt, int e, int row, int col) {
    if (row == col) dst[row] = dp[nt][e];
  });
}

// HYMO_GDN_DIAG8_BWD: a diagonal block (rows r0 .. r0 + 15) that passes diag8_fast, as products.
// dp is the block of dP (LOWER: rows t, columns tau; kept where tau <= t) or of dP^T (rows tau,
// columns t; kept where t >= tau; NODIAG: the diagonal dropped too), acc what the row adds to,
// dst (FP32 rows of stride fs) where it goes; B holds the other side's operand for all 16 rows, each row referenced to its
// 8-row half's diag8_ref (g3 for rows 0..7, g11 for rows 8..15: G_{r0+3} and G_{r0+11}, or with
// HYMO_GDN_DIAG8_MID the midpoints of the halves' gate spans). The block of dp splits into the two
// halves' triangles (one product with B, rows scaled by exp((G_x - G_ref) A) or its
// inverse) and the square (LOWER: rows 8..15 against columns 0..7; else rows 0..7 against
// columns 8..15), whose product is first scaled by its column factor exp((G_7 - g3) A)
// (LOWER) or exp((g11 - G_7) A), both <= 1, then by the row factor referenced
// to row 7: each step keeps the values in range, where the factors' product alone could be
// below FP32's normal range (diag8_fast bounds each 4-row span, not their sums; with
// HYMO_GDN_DIAG8_MID a column factor may itself flush: gdn_diag.h bounds what that drops).
template <int NS, bool LOWER, bool NODIAG = false>
__device__ __forceinline__ void diag8_block_product(const float (&dp)[2][4], const float (&acc)[NS][4],
                                                    const bf16* B, int ldb, int lo, const float* G,
                                                    const float* A2, int r0, float* dst, int fs) {
  const int lane = threadIdx.x & 31, gq = lane >> 2, tq = lane & 3;
  float dh[2][4], ds[2][4];
  for_frag16([&](int nt, int e, int row, int col) {
    const bool keep = (LOWER ? col <= row : col >= row) && !(NODIAG && col == row),
               same = (row < 8) == (col < 8);
    dh[nt][e] = keep && same ? dp[nt][e] : 0.f;
    ds[nt][e] = keep && !same ? dp[nt][e] : 0.f;
  });
  float th[NS][4], ts[NS][4];
  zero(th);
  zero(ts);
  {
    uint32_t ah[4], alo[4];
    frag_split(dh, ah, alo);
    mm_split3<NS>(th, ah, alo, B, ldb, lo);
    frag_split(ds, ah, alo);
    mm_split3<NS>(ts, ah, alo, B, ldb, lo);
  }
  const float g3 = diag8_ref(G, r0), g7 = G[r0 + 7], g11 = diag8_ref(G, r0 + 8);
  const float dsq = LOWER ? g7 - g3 : g11 - g7;
#pragma unroll
  for (int nt = 0; nt < NS; ++nt)
#pragma unroll
    for (int hr = 0; hr < 2; ++hr) {
      const int x = r0 + gq + hr * 8, s = nt * 8 + 2 * tq;
      const float gref = hr ? g11 : g3;
      const float dgh = LOWER ? G[x] - gref : gref - G[x], dgs = LOWER ? G[x] - g7 : g7 - G[x];
      float v[2];
#pragma unroll
      for (int u = 0; u < 2; ++u) {
        v[u] = fmaf(th[nt][2 * hr + u], ex2f(dgh * A2[s + u]), acc[nt][2 * hr + u]);
        if (LOWER ? hr == 1 : hr == 0)  // the square's rows
          v[u] = fmaf(ts[nt][2 * hr + u] * ex2f(dsq * A2[s + u]), ex2f(dgs * A2[s + u]), v[u]);
      }
      *reinterpret_cast<float2*>(dst + x * fs + s) = make_float2(v[0], v[1]);
    }
}

// acc (16 x 8 NT, mma layout) += f[column] * x.
template <int NT>
__device__ __forceinline__ void fma_cols(float (&acc)[NT][4], const float* f, const float (&x)[NT][4]) {
  const int tq = threadIdx.x & 3;
#pragma unroll
  for (int nt = 0; nt < NT; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) acc[nt][e] = fmaf(f[nt * 8 + 2 * tq + (e & 1)], x[nt][e], acc[nt][e]);
}

// (high + low) * f, rounded once to BF16, for a pair of BF16 values.
__device__ __forceinline__ uint32_t scale_pair(uint32_t hi, uint32_t lo, float f0, float f1) {
  const float2 x = bf16x2_f2(hi);
  const float2 y = bf16x2_f2(lo);
  return pack_bf16((x.x + y.x) * f0, (x.y + y.y) * f1);
}

// One 16 x 16 A fragment (columns k0..k0+15) of 16 K rows, high + low, column s scaled by
// f[s] and rounded once to BF16, read with ldmatrix from Kh and Kl (row stride ld). HI: K's high
// part only, scaled in packed BF16 arithmetic (HYMO_GDN_BWD_DVHI); Kl is not read.
template <bool HI>
__device__ __forceinline__ void scaled_key_frag(uint32_t (&a)[4], const bf16* Kh, const bf16* Kl, int ld,
                                                int k0, const float* f) {
  const int tq = threadIdx.x & 3;
  uint32_t ah[4];
  ldsm_x4(ah, frag_a_addr(Kh, ld, k0));
  const int c = k0 + 2 * tq;
  const float f0 = f[c], f1 = f[c + 1], f8 = f[c + 8], f9 = f[c + 9];
  if constexpr (HI) {
    a[0] = scale_bf16x2<true>(ah[0], f0, f1);
    a[1] = scale_bf16x2<true>(ah[1], f0, f1);
    a[2] = scale_bf16x2<true>(ah[2], f8, f9);
    a[3] = scale_bf16x2<true>(ah[3], f8, f9);
  } else {
    uint32_t alo[4];
    ldsm_x4(alo, frag_a_addr(Kl, ld, k0));
    a[0] = scale_pair(ah[0], alo[0], f0, f1);
    a[1] = scale_pair(ah[1], alo[1], f0, f1);
    a[2] = scale_pair(ah[2], alo[2], f8, f9);
    a[3] = scale_pair(ah[3], alo[3], f8, f9);
  }
}

// acc (16 x 16) += (K rows of one block, scaled as scaled_key_frag<HI> builds them) Bt^T,
// Bt: 16 rows x S (high only), read with ldmatrix (K = S).
template <int S, bool HI = false>
__device__ __forceinline__ void mm_scaled_key(float (&acc)[2][4], const bf16* Kh, const bf16* Kl,
                                              int lda, const float* f, const bf16* Bt, int ldb) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int k0 = 0; k0 < S; k0 += 16) {
    uint32_t a[4], b[4];
    scaled_key_frag<HI>(a, Kh, Kl, lda, k0, f);
    ldsm_x4(b, Bt + ldsm_row_t(lane) * ldb + k0 + ldsm_col_t(lane));
    mma_bf16(acc[0], a, b[0], b[1]);
    mma_bf16(acc[1], a, b[2], b[3]);
  }
}

// HYMO_GDN_DG_WARP (session 9): chunk_decay_grads_scan's tail with one CTA barrier fewer
// a chunk. Thread (group gg, s) keeps its group's TG values of q in registers; the warp
// that holds group gg (S = 32: a warp; S = 16: a half-warp, two groups a warp) then has
// every s of the group's tokens, so dg_t = sum_s A_s dl_t[s] is a reduction across its
// lanes (a reduce-scatter: TG values over S lanes in log2(S) shuffle levels) instead of a
// pass over dl written to and read back from shared memory after a barrier. dA_s and the
// ddt_bias partial accumulate in registers over the segment's chunks and are reduced
// once at its end, in a fixed order (the default tail adds ddt_bias with a shared
// atomicAdd a warp and chunk).
// (FS: the dc and db tiles' row stride, PlanB::FSD; SK: their rows skewed, HYMO_GDN_DCB)
template <int S, int C, int NTH, int FS, int LS, bool FUSED, bool SK, class BCDead>
__device__ __forceinline__ void chunk_decay_grads_warp(const KParams& p, float* sdc, const float* sdb,
                                                       const bf16* sc, const bf16* sb,
                                                       const float* rbend, float* gs, const float* g,
                                                       const float* As, float& dA_acc,
                                                       float& ddt_acc, int n, size_t tok0, int h,
                                                       BCDead bc_dead, const float* dpt = nullptr) {
  constexpr int NG = NTH / S, TG = C / NG;
  static_assert(NG * S == NTH && TG * NG == C && (S == 16 || S == 32) && TG <= S / 4,
                "thread layout: a group's S threads are a warp or a half-warp");
  const int tid = threadIdx.x, lane = tid & 31;
  chunk_store_dcdb_q<bf16, S, C, NTH, FS, LS, true, false, SK>(p, sdc, sdb, sc, sb, n, tok0, h, dpt, 0);
  __syncthreads();
  bc_dead();  // sc and sb are not read below
  const int gg = tid / S, s = tid % S, tb = gg * TG;
  float q[TG];
  {
    float x = 0.f;
#pragma unroll
    for (int k = 0; k < TG; ++k) {
      const int t = tb + k;
      q[k] = sdc[dcb_row<SK>(t, FS) + s];
      x += q[k];
    }
    gs[gg * S + s] = x;
  }
  __syncthreads();
  // rows past n hold q = 0 and g = 0: they add nothing
  float run = rbend[s];
  for (int j = NG - 1; j > gg; --j) run += gs[j * S + s];
  const float a = As[s];
  float y[TG];
#pragma unroll
  for (int k = TG - 1; k >= 0; --k) {
    run += q[k];  // dl_t[s], t = tb + k
    dA_acc = fmaf(g[tb + k], run, dA_acc);
    y[k] = a * run;
  }
  // sum y over the group's S lanes: at offset o, the lanes with bit o keep the upper half
  // of the values still being split and send the lower half (and the others the
  // reverse); after log2(TG) levels a lane holds one token's partial, idx, and the
  // remaining levels sum it whole
  int idx = 0;
#pragma unroll
  for (int m = TG, o = S / 2; m > 1; m >>= 1, o >>= 1) {
    const bool up = lane & o;
#pragma unroll
    for (int i = 0; i < m / 2; ++i) {
      const float keep = up ? y[i + m / 2] : y[i], send = up ? y[i] : y[i + m / 2];
      y[i] = keep + __shfl_xor_sync(0xffffffffu, send, o);
    }
    idx += up ? m / 2 : 0;
  }
#pragma unroll
  for (int o = S / (2 * TG); o; o >>= 1) y[0] += __shfl_xor_sync(0xffffffffu, y[0], o);
  const int t = tb + idx;
  float dg = y[0];
  if (FUSED) dg *= g[t] * (1.f - g[t]);
  if (t < n && (lane & (S / TG - 1)) == 0) {
    reinterpret_cast<bf16*>(p.dgate)[(tok0 + t) * p.H + h] = __float2bfloat16_rn(dg);
    if (FUSED) ddt_acc += dg;
  }
}

// The decay gradient of one chunk in the staged backward (chunk_decay_grads in gdn.cuh
// is the generic kernels' version, same results up to FP32 rounding order): writes dc
// and db, turns sdc into q = c dc - b db, then into the suffix sums over the chunk,
// dl_t[s] = rbend[s] + sum_{t' >= t} q_t'[s], taken by all threads: thread (g, s) sums
// group g of C / NG tokens, then walks it backwards from the later groups' sums (a
// fixed order: deterministic); then dgate, and dA_s into dAx, the ddt_bias partial
// into misc[0] (as in chunk_decay_grads). gs, dap: NTH floats each. bc_dead() is called
// once sc and sb are no longer read.
template <int S, int C, int NTH, int FS, int LS, bool FUSED, class BCDead>
__device__ __forceinline__ void chunk_decay_grads_scan(const KParams& p, float* sdc, const float* sdb,
                                                       const bf16* sc, const bf16* sb,
                                                       const float* rbend, float* gs, float* dap,
                                                       const float* g, const float* As, float* dAx,
                                                       float* misc, int n, size_t tok0, int h,
                                                       BCDead bc_dead, const float* dpt = nullptr) {
  constexpr int NG = NTH / S, TG = C / NG;
  static_assert(NG * S == NTH && TG * NG == C, "thread layout");
  const int tid = threadIdx.x;
  chunk_store_dcdb_q<bf16, S, C, NTH, FS, LS>(p, sdc, sdb, sc, sb, n, tok0, h, dpt, 0);
  __syncthreads();
  bc_dead();  // sc and sb are not read below
  const int gg = tid / S, s = tid % S, tb = gg * TG;
  {
    float x = 0.f;
#pragma unroll
    for (int k = 0; k < TG; ++k) x += sdc[(tb + k) * FS + s];
    gs[gg * S + s] = x;
  }
  __syncthreads();
  {
    // rows past n hold q = 0 and g = 0: they add nothing
    float run = rbend[s], xa = 0.f;
    for (int j = NG - 1; j > gg; --j) run += gs[j * S + s];
#pragma unroll
    for (int k = TG - 1; k >= 0; --k) {
      const int t = tb + k;
      run += sdc[t * FS + s];
      sdc[t * FS + s] = run;
      xa = fmaf(g[t], run, xa);
    }
    dap[gg * S + s] = xa;
  }
  __syncthreads();
  for (int s2 = tid; s2 < S; s2 += NTH) {
    float x = 0.f;
    for (int j = 0; j < NG; ++j) x += dap[j * S + s2];
    dAx[s2] += x;
  }
  chunk_dgate<bf16, S, C, NTH, FS, FUSED>(p, sdc, g, As, misc, n, tok0, h);
}

// HYMO_GDN_TMA bit 1 (gdn.cuh): the tile maps, a second kernel parameter
#if HYMO_GDN_TMA & 1
#define HYMO_GDN_BWD_MAPS , const __grid_constant__ TileMaps tm
#else
#define HYMO_GDN_BWD_MAPS
#endif
template <int S, int D, int C, bool FUSED>
__global__ void __launch_bounds__(4 * C, (S <= 32 && D <= 32) ? 2 : 1) bwd_bf16_kernel(KParams p HYMO_GDN_BWD_MAPS) {
  HYMO_GDN_CLK(Clk clk(p.clocks, kClkBwd));  // (HYMO_GDN_CLOCKS)
  if constexpr (!HYMO_GDN_BWD_PDL_LATE)  // (gdn.cuh)
    pdl_launch_dependents();  // pdl_wait() below, once the first chunk's b and c are in flight
  using P = PlanB<S, D, C>;
  constexpr int NW = P::NW, LS = P::LS, LD = P::LD, FS = P::FS, NTH = P::NTH, LT = P::LT;
  constexpr int FSD = P::FSD;      // the dc and db tiles' row stride
  constexpr bool SK = P::SK;       // (HYMO_GDN_DCB) their rows skewed: dcb_row
  using I = Items<S, D, NW>;
  constexpr int NH = I::NH, NTW = I::NTW, NIT = I::NIT, IPW = I::IPW;
  constexpr int NS = S / 8, ND = D / 8;
  HYMO_GDN_SMEM_DECL;
  bf16* sb = reinterpret_cast<bf16*>(sm + P::o_b);
  bf16* sc = reinterpret_cast<bf16*>(sm + P::o_c);
  bf16* sv = reinterpret_cast<bf16*>(sm + P::o_v);
  bf16* dOt = reinterpret_cast<bf16*>(sm + P::o_do);  // low part C * LD later
  bf16* h0t = reinterpret_cast<bf16*>(sm + P::o_h0);  // low part S * LD later
  bf16* dht = reinterpret_cast<bf16*>(sm + P::o_dh);  // low part S * LD later
  bf16* qi = reinterpret_cast<bf16*>(sm + P::o_qi);   // low parts C * LS later
  bf16* ke = reinterpret_cast<bf16*>(sm + P::o_ke);
  bf16* mid = reinterpret_cast<bf16*>(sm + P::o_mid);
  float* sdc = reinterpret_cast<float*>(sm + P::o_dcb);
  float* sdb = sdc + C * FSD;
  // the mma layout's rows r0 + gq (+ 8), r0 = 16 w a multiple of 8 (below): bit 2 of the row is
  // gq's, so a lane's skew (dcb_row) is a fixed offset of the tiles' base
  float* const sdcl = sdc + (SK ? ((threadIdx.x >> 2) & 4) : 0);
  float* const sdbl = sdb + (SK ? ((threadIdx.x >> 2) & 4) : 0);
  float* a = reinterpret_cast<float*>(sm + P::o_a);
  // the gate of a chunk and its inclusive cumsum, two buffers: chunk ch uses buffer
  // (c1 - 1 - ch) & 1 (the next chunk's is computed while this one runs)
  float* gbuf = reinterpret_cast<float*>(sm + P::o_vec);
  float* A2 = gbuf + 4 * C;
  float* As = A2 + S;
  float* dpair = As + S;
  float* rbend = dpair + P::NPAIR * S;
  float* rbp = rbend + S;
  float* dAx = rbp + 2 * S;
  float* misc = dAx + S;
  constexpr bool QO = HYMO_GDN_BWD_QOFF;
  [[maybe_unused]] float* dpt = reinterpret_cast<float*>(sm + P::o_dpt);  // (QO) dP_tt
  constexpr int LQ = C * LS, LO = C * LD, LH = S * LD;  // high-to-low distances

  const int seg = cta_seg(p), bh = cta_bh(p), bb = bh / p.H, h = bh % p.H;
  const int tid = threadIdx.x, wid = tid >> 5, lane = tid & 31, gq = lane >> 2, tq = lane & 3;
  // the row block and this warp's role in it (roles alternating by warp, so that each
  // scheduler ran one role's code, was 2% slower: run 36)
  const int role = wid / NW, w = wid % NW;
  const int c0 = seg_c0(p, seg), c1 = seg_c1(p, c0);
  const size_t tsS = size_t(p.H) * S, tsG = p.H;
  const float dtb = FUSED ? p.dt_bias[h] : 0.f;
  const float dsk = FUSED ? p.D_skip[h] : 0.f;
  const size_t so = size_t(bh) * p.NSEG + seg;
  const bf16* gate = reinterpret_cast<const bf16*>(p.gate);
  // dO (adjoint pass) and the entering states (training forward) come split: per
  // row, D high halves then D low halves
  const bf16* dOsrc = reinterpret_cast<const bf16*>(p.dObuf);
  const bf16* h0src = reinterpret_cast<const bf16*>(p.h0buf);
  float* dpd = reinterpret_cast<float*>(sm + P::o_dpd) + wid * 16 * LT;  // this warp's
  constexpr int LTP = P::LTP;  // (HYMO_GDN_PD24)
  float* pd = reinterpret_cast<float*>(sm + P::o_pd) + w * 16 * LTP;
  const int r0 = 16 * w;
  auto pair = [&](int i, int j) { return dpair + (i * (i - 1) / 2 + j) * S; };

  // a chunk's tiles: v, dO and h0 (fetch_vo), b and c (fetch_bc); each batch is issued
  // as soon as the chunk before (in walking order) is done with its tiles
  // HYMO_GDN_TMA bit 1 (gdn.cuh): the same tiles by the TMA, a copy a tile by thread 0, each
  // group completing on its mbarrier (mb[0]: b and c; mb[1]: v, dO, h0); the k-th chunk walked
  // waits for each one's k-th phase
  constexpr bool TM = (HYMO_GDN_TMA & 1) != 0;
#if HYMO_GDN_TMA & 1
  uint64_t* mb = reinterpret_cast<uint64_t*>(sm + P::o_mb);
  tma_groups_init(mb, sm);
#endif
  auto fetch_bc = [&](int chn) {
#if HYMO_GDN_TMA & 1
    if (tid == 0) {
      mbar_expect_tx(mb, 2u * C * LS * sizeof(bf16));
      tma_load_3d(sb, &tm.b, h * S, chn * C, bb, mb);
      tma_load_3d(sc, &tm.c, h * S, chn * C, bb, mb);
    }
    return;
#endif
    const int nn = min(C, p.T - chn * C);
    const size_t tk = size_t(bb) * p.T + size_t(chn) * C;
    load_rows_async<bf16, S, C, NTH>(sb, LS, reinterpret_cast<const bf16*>(p.b) + (tk * p.H + h) * S, tsS, nn);
    load_rows_async<bf16, S, C, NTH>(sc, LS, reinterpret_cast<const bf16*>(p.c) + (tk * p.H + h) * S, tsS, nn);
    cp_async_commit();
  };
  // the walk's first b and c before the prologue's own loads (inputs: no wait for the kernel before)
  if (c0 < c1) fetch_bc(c1 - 1);

  for (int s = tid; s < S; s += NTH) {
    const float A = -expf(p.A_log[h * S + s]);
    As[s] = A;
    A2[s] = A * 1.4426950408889634f;
    dAx[s] = 0.f;
  }
  if (tid == 0) misc[0] = 0.f;
  // HYMO_GDN_DIAG8_BWD: a diagonal block that passes diag8_fast (gdn_diag.h) has no walks: the
  // mid tile holds its keys Km = b_t exp((G_m - G_t) A) for all 16 rows, the per-step decay
  // tile its queries Qm = c_t exp((G_t - G_m) A) (BF16 high and low parts, a row of LQM
  // elements with the low part S elements after the high), G_m its half's diag8_ref
  constexpr bool B8 = HYMO_GDN_DIAG8_BWD && S <= 32 && D == 32;
  constexpr int LQM = 2 * FS;
  static_assert(!B8 || (2 * S <= LQM && (LQM * 2) % 16 == 0), "a query row's high and low parts fit a decay row");
  [[maybe_unused]] bf16* qm = reinterpret_cast<bf16*>(a);
  // HYMO_GDN_DIAG_FLAGS_BWD: the tests made by warp 0 (which finishes the gates) into fl0 after
  // misc (chunk ch: buffer (c1 - 1 - ch) & 1, as its gate), amax2 at word 8
  constexpr bool DFL = P::DF && B8;
  static_assert(!DFL || NW <= 4, "four flags a chunk");
  [[maybe_unused]] int* const fl0 = reinterpret_cast<int*>(misc + 4);
  if constexpr (DFL)
    if (wid == 0) diag_flags_amax(p.A_log + h * S, S, fl0 + 8);
  [[maybe_unused]] const float amax2 = B8 && !DFL ? head_amax2(p.A_log + h * S, S) : 0.f;
  // HYMO_GDN_DG_WARP: the decay-gradient tail's register partials (chunk_decay_grads_warp)
  constexpr bool DGW = HYMO_GDN_DG_WARP && (S == 16 || S == 32);
  [[maybe_unused]] float dA_acc = 0.f, ddt_acc = 0.f;

  auto fetch_vo = [&](int chn) {
#if HYMO_GDN_TMA & 1
    if (tid == 0) {
      mbar_expect_tx(mb + 1, (3u * C + 2u * S) * LD * sizeof(bf16));
      tma_load_3d(sv, &tm.v, h * D, chn * C, bb, mb + 1);
      tma_load_3d(dOt, &tm.o, h * 2 * D, chn * C, bb, mb + 1);
      tma_load_3d(dOt + LO, &tm.o, h * 2 * D + D, chn * C, bb, mb + 1);
      tma_load_3d(h0t, &tm.h0, 0, 0, bh * p.NC + chn, mb + 1);
      tma_load_3d(h0t + LH, &tm.h0, D, 0, bh * p.NC + chn, mb + 1);
    }
    return;
#endif
    const int nn = min(C, p.T - chn * C);
    const size_t tk = size_t(bb) * p.T + size_t(chn) * C;
    load_rows_async<bf16, D, C, NTH>(sv, LD, reinterpret_cast<const bf16*>(p.v) + (tk * p.H + h) * D, size_t(p.H) * D, nn);
    const bf16* dsrc = dOsrc + (tk * p.H + h) * 2 * D;
    load_rows_async<bf16, D, C, NTH>(dOt, LD, dsrc, size_t(p.H) * 2 * D, nn);
    load_rows_async<bf16, D, C, NTH>(dOt + LO, LD, dsrc + D, size_t(p.H) * 2 * D, nn);
    const bf16* hsrc = h0src + (size_t(bh) * p.NC + chn) * S * 2 * D;
    load_rows_async<bf16, D, S, NTH>(h0t, LD, hsrc, 2 * D, S);
    load_rows_async<bf16, D, S, NTH>(h0t + LH, LD, hsrc + D, 2 * D, S);
    cp_async_commit();
  };
  float graw[C / 32];
  pdl_wait();  // dO, h0 (fetch_vo) and the later segments' adjoints come from this call
  HYMO_GDN_CLK(clk.waited());
  if constexpr (HYMO_GDN_BWD_STAGGER > 0)  // (the two CTAs an SM out of step: above)
    if (c1 - c0 >= 4) cta_stagger((S <= 32 && D <= 32) ? 2 : 1, HYMO_GDN_BWD_STAGGER);
  // the adjoint leaving this segment (seg_scan_kernel<.., true> left it in dHseg): its loads in
  // flight before warp 0's gate work
  constexpr int NDH = (S * D + NTH - 1) / NTH;
  [[maybe_unused]] float dhv[NDH];
  if constexpr (seg_scan_bwd(S, D)) {
    const float* src = p.dHseg + (size_t(bh) * p.NSEG + seg) * S * D;
#pragma unroll
    for (int k = 0; k < NDH; ++k)
      if (tid + k * NTH < S * D) dhv[k] = src[tid + k * NTH];
  }
  if (c0 < c1) {
    fetch_vo(c1 - 1);
    if (wid == 0) {
      const size_t tk = size_t(bb) * p.T + size_t(c1 - 1) * C;
      gate_fetch<C>(graw, gate + tk * p.H + h, tsG, min(C, p.T - (c1 - 1) * C));
      gate_finish<C, FUSED>(graw, gbuf, gbuf + C, min(C, p.T - (c1 - 1) * C), dtb);
      if constexpr (DFL) diag_flags(gbuf + C, fl0, NW, fl0 + 8);
      if (c1 - 2 >= c0) gate_fetch<C>(graw, gate + (tk - C) * p.H + h, tsG, C);
    }
  }

  // The adjoint leaving this segment (from the later segments' local adjoints) into
  // this warp's items (FP32 registers) and the high / low tiles.
  float dh[IPW][NTW][4];
  {
    float* tmp = reinterpret_cast<float*>(sm + P::o_ke);
    if constexpr (seg_scan_bwd(S, D)) {  // (dhv: above)
#pragma unroll
      for (int k = 0; k < NDH; ++k) {
        const int i = tid + k * NTH;
        if (i < S * D) tmp[(i / D) * (D + 4) + i % D] = dhv[k];
      }
    } else {
      seg_combine<true, S, D, NTH, D + 4>(tmp, p.dHseg + size_t(bh) * p.NSEG * S * D,
                                          p.seggsum + size_t(bh) * p.NSEG, p.A_log, h, seg, p.NSEG);
    }
    __syncthreads();
#pragma unroll
    for (int it = 0; it < IPW; ++it) zero(dh[it]);
    if (role == 0)  // the adjoint lives in the query warps (items as in the forward)
      for_state_pairs<S, D, NW>(w, [&](int it, int nt, int hr, int s, int d) {
        dh[it][nt][2 * hr] = tmp[s * (D + 4) + d];
        dh[it][nt][2 * hr + 1] = tmp[s * (D + 4) + d + 1];
      });
  }
  auto put_dh = [&]() {
    for_state_pairs<S, D, NW>(w, [&](int it, int nt, int hr, int s, int d) {
      const float x0 = dh[it][nt][2 * hr], x1 = dh[it][nt][2 * hr + 1];
      st2_split(dht + s * LD + d, dht + LH + s * LD + d, x0, x1);
    });
  };
  // <dh, h>_s at a chunk end (h: the next chunk's entering state, high + low), partial
  // sums of this thread's columns; rbp[k][s] for the k-th column half of the items
  auto rb_end = [&](auto hval) {
    float part[IPW][2];
#pragma unroll
    for (int it = 0; it < IPW; ++it) part[it][0] = part[it][1] = 0.f;
    for_state_pairs<S, D, NW>(w, [&](int it, int nt, int hr, int s, int d) {
      const float2 x = hval(it, nt, hr, s, d);
      part[it][hr] = fmaf(dh[it][nt][2 * hr], x.x, fmaf(dh[it][nt][2 * hr + 1], x.y, part[it][hr]));
    });
#pragma unroll
    for (int it = 0; it < IPW; ++it) {
      const int item = w + it * NW;
      if (item >= NIT) continue;
      const int mt = item / NH, half = item % NH;
#pragma unroll
      for (int hr = 0; hr < 2; ++hr) {
        float x = part[it][hr];
        x += __shfl_xor_sync(0xffffffffu, x, 1);
        x += __shfl_xor_sync(0xffffffffu, x, 2);
        if (tq == 0) rbp[half * S + mt * 16 + gq + hr * 8] = x;
      }
    }
  };
  __syncthreads();  // the combined adjoint is read; its region is staged below
  if (role == 0) put_dh();
  if (role == 0) {  // the last chunk's end sensitivity: h is the next segment's entering state
    if (c1 < p.NC) {
      const bf16* hn = h0src + (size_t(bh) * p.NC + c1) * S * 2 * D;
      rb_end([&](int, int, int, int s, int d) { return bf16x2_sum(hn + s * 2 * D + d, hn + s * 2 * D + D + d); });
    } else {
      for (int s = 32 * w + lane; s < 2 * S; s += 32 * NW) rbp[s] = 0.f;
    }
  }

  for (int ch = c1 - 1; ch >= c0; --ch) {
    const int t0 = ch * C, n = min(C, p.T - t0);
    const size_t tok0 = size_t(bb) * p.T + t0;
    HYMO_GDN_CLK(clk.chunk(c1 - 1 - ch));
    float* g = gbuf + ((c1 - 1 - ch) & 1) * 2 * C;
    float* G = g + C;
    [[maybe_unused]] const int* fl = fl0 + 4 * ((c1 - 1 - ch) & 1);  // (DFL: this chunk's flags)
    if constexpr (TM) {
#if HYMO_GDN_TMA & 1
      tma_groups_wait(mb, c1 - 1 - ch);
#endif
    } else {
      cp_async_wait_all();
    }
    __syncthreads();
    // the chunk-end sensitivity (rbp is rewritten for the next chunk during this one)
    for (int s = tid; s < S; s += NTH) rbend[s] = rbp[s] + (NH > 1 ? rbp[S + s] : 0.f);
    // ---- staging: the pair decays d_ij, then Qi, Kend, mid, a per (t, 8 values of s)
    for (int u = tid; u < P::NPAIR * S; u += NTH) {
      const int pr = u / S, s = u % S;
      int i = 1;
      while (pr >= i * (i + 1) / 2) ++i;
      const int j = pr - i * (i - 1) / 2;
      dpair[u] = ex2f((G[16 * i - 1] - G[16 * j + 15]) * A2[s]);
    }
    for (int u = tid; u < C * NS; u += NTH) {
      int q8;
      const int t = row_piece<NS, 2>(u, q8), s0 = q8 * 8, blk = t >> 4;  // (HYMO_GDN_ROWPERM)
      float cx[8], bx[8], a2[8], y[8];
      ld8(A2 + s0, a2);
      ld8(sc + t * LS + s0, cx);
      ld8(sb + t * LS + s0, bx);
      const float gt = G[t], gs = blk ? G[16 * blk - 1] : 0.f, ge = G[16 * blk + 15],
                  gm = G[16 * blk + 7], gg = g[t];
      [[maybe_unused]] const bool fast = (HYMO_GDN_DIAG_NOSLOW && B8) ? true
                                         : DFL                         ? fl[blk] != 0
                                         : B8 && diag8_fast(G, 16 * blk, amax2);
      const bool lower = (t & 15) >= 8 && !fast;  // mid row t holds a query (B8: not in a fast block)
      // the mid tile's and the fast block's query reference: row 7 of the block (B8, a fast
      // block: the half's diag8_ref)
      const float gz = B8 && fast ? diag8_ref(G, t & ~7) : gm;
      auto put = [&](bf16* dst) { st16_split(dst + t * LS + s0, dst + LQ + t * LS + s0, y); };
#pragma unroll
      for (int e = 0; e < 8; ++e) y[e] = cx[e] * ex2f((gt - gs) * a2[e]);
      put(qi);
#pragma unroll
      for (int e = 0; e < 8; ++e) y[e] = bx[e] * ex2f((ge - gt) * a2[e]);
      put(ke);
#pragma unroll
      for (int e = 0; e < 8; ++e)
        y[e] = HYMO_GDN_SEL ? (lower ? cx[e] : bx[e]) * ex2f((lower ? gt - gz : gz - gt) * a2[e])
                            : lower ? cx[e] * ex2f((gt - gz) * a2[e]) : bx[e] * ex2f((gz - gt) * a2[e]);
      put(mid);
      if (B8 && fast) {  // the block's queries, referenced as its keys, where its decays were
#pragma unroll
        for (int e = 0; e < 8; ++e) y[e] = cx[e] * ex2f((gt - gz) * a2[e]);
        st16_split(qm + t * LQM + s0, qm + t * LQM + S + s0, y);
      } else {
#pragma unroll
        for (int e = 0; e < 8; ++e) y[e] = ex2f(gg * a2[e]);
        *reinterpret_cast<float4*>(a + t * FS + s0) = make_float4(y[0], y[1], y[2], y[3]);
        *reinterpret_cast<float4*>(a + t * FS + s0 + 4) = make_float4(y[4], y[5], y[6], y[7]);
      }
    }
    __syncthreads();
    HYMO_GDN_CLK(clk.staged(c1 - 1 - ch));

    // Two warps a row block: role 0 (warps 0..NW-1) takes block w as queries (dc, and
    // later the adjoint update), role 1 (warps NW..2NW-1) as keys (db, dv).
    const float gm = G[r0 + 7];
    [[maybe_unused]] const bool fastb = (HYMO_GDN_DIAG_NOSLOW && B8) ? true
                                        : DFL                         ? fl[w] != 0
                                        : B8 && diag8_fast(G, r0, amax2);  // (the staging's test)
    constexpr int Q = S / 4;
    const int qd = lane & 3, pp = (lane >> 2) & 3, lb = 8 * (lane >> 4), s0 = qd * Q;
    const int base = r0 + lb;
    // the diagonal block's two 8x8 triangles (tau <= t inside each 8-row half) are
    // elementwise, from products of per-step decays w = prod_{k=tau+1..t} a_k:
    //   dc_t += dP[t][tau] b_tau w,  db_tau += dP[t][tau] c_t w,  P[t][tau] = sum_s c_t b_tau w.
    // Balanced: lane (pair pp, quarter qd of S, half lb) walks queries t = 7 - pp then pp
    // (dc), or keys tau = pp then 7 - pp (db and P): 9 steps for every lane.
    auto flush = [&](float* dst, float (&acc)[Q]) {
      float x[Q];
      ldqf<Q>(dst, x);
#pragma unroll
      for (int u = 0; u < Q; u += 4)
        *reinterpret_cast<float4*>(dst + u) = make_float4(x[u] + acc[u], x[u + 1] + acc[u + 1],
                                                          x[u + 2] + acc[u + 2], x[u + 3] + acc[u + 3]);
#pragma unroll
      for (int u = 0; u < Q; ++u) acc[u] = 0.f;
    };
    if (role == 0) {
      // ---- dc, rows of block w:
      //   exp((G_t - G_r) A) [exp(G_r A) (dO h0^T) + sum_{j<w} d_wj (dP_wj Kend_j)] + square
      float dcacc[NS][4];
      zero(dcacc);
      warp_mm_nt<NS>(dcacc, D, dOt + r0 * LD, LD, h0t, LD);
      warp_mm_nt<NS>(dcacc, D, dOt + LO + r0 * LD, LD, h0t, LD);
      warp_mm_nt<NS>(dcacc, D, dOt + r0 * LD, LD, h0t + LH, LD);
      const float gr = w ? G[r0 - 1] : 0.f;
      if (w) {
#pragma unroll
        for (int nt = 0; nt < NS; ++nt)
#pragma unroll
          for (int e = 0; e < 4; ++e) dcacc[nt][e] *= ex2f(gr * A2[nt * 8 + 2 * tq + (e & 1)]);
      }
      HYMO_GDN_BWD_LOOP
      for (int j = 0; j < (HYMO_GDN_DIAG_NO_QPAIRS ? 0 : w); ++j) {  // (NO_QPAIRS: timing only)
        float dp[2][4], tmp[NS][4];
        zero(dp);
        warp_mm_nt<2>(dp, D, dOt + r0 * LD, LD, sv + 16 * j * LD, LD);
        warp_mm_nt<2>(dp, D, dOt + LO + r0 * LD, LD, sv + 16 * j * LD, LD);
        uint32_t ah[4], alo[4];
        frag_split(dp, ah, alo);
        zero(tmp);
        mm_split3<NS>(tmp, ah, alo, ke + 16 * j * LS, LS, LQ);
        fma_cols(dcacc, pair(w, j), tmp);
      }
#pragma unroll
      for (int nt = 0; nt < NS; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int t = r0 + gq + (e >> 1) * 8, s = nt * 8 + 2 * tq + (e & 1);
          dcacc[nt][e] *= ex2f((G[t] - gr) * A2[s]);
        }
      if (B8 && fastb) {
        // the whole diagonal block: its halves and its square (diag8_block_product) against the
        // keys Km from the mid tile, FP32-accurate (high and low parts); no walk
        float dp[2][4];
        zero(dp);
        warp_mm_nt<2>(dp, D, dOt + r0 * LD, LD, sv + r0 * LD, LD);
        warp_mm_nt<2>(dp, D, dOt + LO + r0 * LD, LD, sv + r0 * LD, LD);
        if constexpr (QO) keep_diag(dp, dpt + r0);
        if constexpr (B8) diag8_block_product<NS, true, QO>(dp, dcacc, mid + r0 * LS, LS, LQ, G, A2, r0, sdcl, FSD);
      } else {
        // the diagonal block of dP: its lower triangle (FP32) for the elementwise
        // triangles, its 8x8 square (rows 8..15, keys 0..7) against the mid tile
        {
          float dp[2][4], tmp[NS][4];
          zero(dp);
          warp_mm_nt<2>(dp, D, dOt + r0 * LD, LD, sv + r0 * LD, LD);
          warp_mm_nt<2>(dp, D, dOt + LO + r0 * LD, LD, sv + r0 * LD, LD);
          if constexpr (QO) keep_diag(dp, dpt + r0);
          for_frag16([&](int nt, int e, int tl, int kl) {
            dpd[tl * LT + kl] = (QO ? kl < tl : kl <= tl) ? dp[nt][e] : 0.f;
          });
          uint32_t ah[4] = {0u, 0u, 0u, 0u}, alo[4] = {0u, 0u, 0u, 0u};
          split2(dp[0][2], dp[0][3], ah[1], alo[1]);
          zero(tmp);
          mm_split3<NS>(tmp, ah, alo, mid + r0 * LS, LS, LQ);
#pragma unroll
          for (int nt = 0; nt < NS; ++nt)
#pragma unroll
            for (int e = 2; e < 4; ++e) {
              const int t = r0 + gq + 8, s = nt * 8 + 2 * tq + (e & 1);
              dcacc[nt][e] = fmaf(tmp[nt][e], ex2f((G[t] - gm) * A2[s]), dcacc[nt][e]);
            }
        }
        __syncwarp();  // dpd
#pragma unroll
        for (int nt = 0; nt < NS; ++nt)
#pragma unroll
          for (int hr = 0; hr < 2; ++hr) {
            const int t = r0 + gq + hr * 8, s = nt * 8 + 2 * tq;
            *reinterpret_cast<float2*>(sdcl + t * FSD + s) = make_float2(dcacc[nt][2 * hr], dcacc[nt][2 * hr + 1]);
          }
        __syncwarp();  // sdc
        // dc triangles: query 7 - pp (tau = 7 - pp .. 0), then query pp (tau = pp .. 0)
        float acc[Q], wv[Q];
#pragma unroll
        for (int u = 0; u < Q; ++u) { acc[u] = 0.f; wv[u] = 1.f; }
        HYMO_GDN_BWD_UNROLL  // the dc triangle walk
        for (int it = 0; it < 9; ++it) {
          const bool second = it >= 8 - pp;
          const int t = second ? pp : 7 - pp, tau = second ? pp - (it - (8 - pp)) : 7 - pp - it;
          if (it == 8 - pp) {
            flush(sdc + dcb_row<SK>(base + 7 - pp, FSD) + s0, acc);
#pragma unroll
            for (int u = 0; u < Q; ++u) wv[u] = 1.f;
          } else if (it > 0) {  // w(t, tau) = w(t, tau + 1) a_{tau + 1}
            float av[Q];
            ldqf<Q>(a + (base + tau + 1) * FS + s0, av);
#pragma unroll
            for (int u = 0; u < Q; ++u) wv[u] *= av[u];
          }
          float bv[Q];
          ldq<Q>(sb + (base + tau) * LS + s0, bv);
          const float dp = dpd[(lb + t) * LT + lb + tau];
#pragma unroll
          for (int u = 0; u < Q; ++u) acc[u] = fmaf(dp, bv[u] * wv[u], acc[u]);
        }
        flush(sdc + dcb_row<SK>(base + pp, FSD) + s0, acc);
      }

      // ---- dh = exp(G_last A) dh + sum_i exp(G_{r_i} A) (Qi_i^T dO_i) (query warps; the
      // old adjoint is read from its tiles by the key warps, rewritten after the chunk)
      {
        const float Gl = G[C - 1];
#pragma unroll
        for (int it = 0; it < IPW; ++it) {
          const int item = w + it * NW;
          if (item >= NIT) continue;
          const int mt = item / NH, nb = (item % NH) * NTW * 8;
          const float a0 = A2[mt * 16 + gq], a1 = A2[mt * 16 + gq + 8];
          const float d0 = ex2f(Gl * a0), d1 = ex2f(Gl * a1);
          scale_rows(dh[it], d0, d1);
          HYMO_GDN_BWD_UNROLL  // the adjoint update over the row blocks
          for (int i = 0; i < (HYMO_GDN_DIAG_NO_ADJUPD ? 0 : NW); ++i) {  // (NO_ADJUPD: timing only)
            float acc[NTW][4];
            zero(acc);
            const bf16* q = qi + 16 * i * LS + mt * 16;
            const bf16* o = dOt + 16 * i * LD + nb;
            warp_mm_ldsm<NTW, true>(acc, 16, q, LS, o, LD);
            warp_mm_ldsm<NTW, true>(acc, 16, q + LQ, LS, o, LD);
            warp_mm_ldsm<NTW, true>(acc, 16, q, LS, o + LO, LD);
            const float gi = i ? G[16 * i - 1] : 0.f;
            const float f0 = ex2f(gi * a0), f1 = ex2f(gi * a1);
#pragma unroll
            for (int nt = 0; nt < NTW; ++nt) {
              dh[it][nt][0] = fmaf(f0, acc[nt][0], dh[it][nt][0]);
              dh[it][nt][1] = fmaf(f0, acc[nt][1], dh[it][nt][1]);
              dh[it][nt][2] = fmaf(f1, acc[nt][2], dh[it][nt][2]);
              dh[it][nt][3] = fmaf(f1, acc[nt][3], dh[it][nt][3]);
            }
          }
        }
      }
      // the previous chunk's end sensitivity <dh, h>_s: h is this chunk's entering state
      rb_end([&](int, int, int, int s, int d) { return bf16x2_sum(h0t + s * LD + d, h0t + LH + s * LD + d); });
      if (w == 0 && ch > c0) {
        // the next chunk's gate (a full chunk) into the other buffer, while the key warps
        // are still busy
        float* gn = gbuf + ((c1 - ch) & 1) * 2 * C;
        gate_finish<C, FUSED>(graw, gn, gn + C, C, dtb);
        if constexpr (DFL) diag_flags(gn + C, fl0 + 4 * ((c1 - ch) & 1), NW, fl0 + 8);
        if (ch - 1 > c0) gate_fetch<C>(graw, gate + (tok0 - 2 * C) * p.H + h, tsG, C);
      }
      // HYMO_GDN_BWD_BAL = 2: the query warps' own named barrier, so that every warp
      // executes as many barriers as the key warps (with 1, racecheck's bookkeeping
      // reported hazards across the CTA barriers; with 2 it reports none, run 58)
      HYMO_GDN_CLK(clk.role(c1 - 1 - ch));  // (before the query warps' own barrier)
      if constexpr (HYMO_GDN_BWD_BAL == 2) asm volatile("bar.sync 2, %0;\n" ::"n"(32 * NW) : "memory");
    } else {
      // ---- db, rows (keys) of block w:
      //   exp((G_e - G_tau) A) [d_NW,w (v dh^T) + sum_{i>w} d_iw (dP_iw^T Qi_i)] + square
      float dbacc[NS][4];
      zero(dbacc);
      warp_mm_nt<NS>(dbacc, D, sv + r0 * LD, LD, dht, LD);
      warp_mm_nt<NS>(dbacc, D, sv + r0 * LD, LD, dht + LH, LD);
      {
        const float* f = pair(NW, w);
#pragma unroll
        for (int nt = 0; nt < NS; ++nt)
#pragma unroll
          for (int e = 0; e < 4; ++e) dbacc[nt][e] *= f[nt * 8 + 2 * tq + (e & 1)];
      }
      HYMO_GDN_BWD_LOOP
      for (int i = HYMO_GDN_DIAG_NO_KEYPAIRS ? NW : w + 1; i < NW; ++i) {  // (NO_KEYPAIRS: timing only)
        float dp[2][4], tmp[NS][4];
        zero(dp);
        warp_mm_nt<2>(dp, D, sv + r0 * LD, LD, dOt + 16 * i * LD, LD);
        warp_mm_nt<2>(dp, D, sv + r0 * LD, LD, dOt + LO + 16 * i * LD, LD);
        uint32_t ah[4], alo[4];
        frag_split(dp, ah, alo);
        zero(tmp);
        mm_split3<NS>(tmp, ah, alo, qi + 16 * i * LS, LS, LQ);
        fma_cols(dbacc, pair(i, w), tmp);
      }
      {
        const float ge = G[r0 + 15];
#pragma unroll
        for (int nt = 0; nt < NS; ++nt)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int t = r0 + gq + (e >> 1) * 8, s = nt * 8 + 2 * tq + (e & 1);
            dbacc[nt][e] *= ex2f((ge - G[t]) * A2[s]);
          }
      }
      if (B8 && fastb) {
        // the whole diagonal block against the queries Qm from the decay tile (qm),
        // FP32-accurate; no walk: db's halves and square (diag8_block_product); P^T's block =
        // Km Qm^T (BF16 high parts, as dv reads P), t >= tau kept: its halves from one product,
        // its square (keys 0..7,
        // queries 8..15) from the fragments scaled to row 7 in registers (keys times
        // exp((G_7 - ref_0) A), queries times exp((ref_1 - G_7) A); ref_i: diag8_ref of half
        // i), as HYMO_GDN_DIAG8's
        float dp[2][4];
        zero(dp);
        warp_mm_nt<2>(dp, D, sv + r0 * LD, LD, dOt + r0 * LD, LD);
        warp_mm_nt<2>(dp, D, sv + r0 * LD, LD, dOt + LO + r0 * LD, LD);
        float sq[2][4];
        zero(sq);
        if constexpr (B8) {
          diag8_block_product<NS, false, QO>(dp, dbacc, qm + r0 * LQM, LQM, S, G, A2, r0, sdbl, FSD);
          float sq8[4] = {0.f, 0.f, 0.f, 0.f};
          diag8_mm<S, true>(sq, sq8, mid + r0 * LS, LS, qm + r0 * LQM, LQM, G[r0 + 7] - diag8_ref(G, r0),
                            diag8_ref(G, r0 + 8) - G[r0 + 7], A2);
          sq[1][0] = sq8[0];  // rows 0..7 of n8 tile 1: the square
          sq[1][1] = sq8[1];
        }
        if constexpr (HYMO_GDN_PD24) {
#pragma unroll
          for (int nt = 0; nt < 2; ++nt)
#pragma unroll
            for (int hr = 0; hr < 2; ++hr) {
              const int kl = gq + 8 * hr, tl = nt * 8 + 2 * tq;
              *reinterpret_cast<float2*>(pd + kl * LTP + tl) =
                  make_float2(tl >= kl ? sq[nt][2 * hr] : 0.f, tl + 1 >= kl ? sq[nt][2 * hr + 1] : 0.f);
            }
        } else {
          for_frag16([&](int nt, int e, int kl, int tl) { pd[kl * LTP + tl] = tl >= kl ? sq[nt][e] : 0.f; });
        }
        __syncwarp();  // pd
      } else {
        {
          // the diagonal block of dP^T = v_w dO_w^T: its upper triangle (FP32) for the
          // elementwise triangles, its 8x8 square (keys 0..7, queries 8..15) against mid
          float dp[2][4], tmp[NS][4];
          zero(dp);
          warp_mm_nt<2>(dp, D, sv + r0 * LD, LD, dOt + r0 * LD, LD);
          warp_mm_nt<2>(dp, D, sv + r0 * LD, LD, dOt + LO + r0 * LD, LD);
          for_frag16([&](int nt, int e, int kl, int tl) {
            dpd[kl * LT + tl] = (QO ? tl > kl : tl >= kl) ? dp[nt][e] : 0.f;
          });
          uint32_t ah[4] = {0u, 0u, 0u, 0u}, alo[4] = {0u, 0u, 0u, 0u};
          split2(dp[1][0], dp[1][1], ah[2], alo[2]);
          zero(tmp);
          mm_split3<NS>(tmp, ah, alo, mid + r0 * LS, LS, LQ);
#pragma unroll
          for (int nt = 0; nt < NS; ++nt)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
              const int t = r0 + gq, s = nt * 8 + 2 * tq + e;
              dbacc[nt][e] = fmaf(tmp[nt][e], ex2f((gm - G[t]) * A2[s]), dbacc[nt][e]);
            }
        }
#pragma unroll
        for (int nt = 0; nt < NS; ++nt)
#pragma unroll
          for (int hr = 0; hr < 2; ++hr) {
            const int t = r0 + gq + hr * 8, s = nt * 8 + 2 * tq;
            *reinterpret_cast<float2*>(sdbl + t * FSD + s) = make_float2(dbacc[nt][2 * hr], dbacc[nt][2 * hr + 1]);
          }
        {
          // P^T of the diagonal block (rows tau, columns t; FP32 here, BF16 in the product):
          // the square from the mid tile, the triangles below
          float sq[2][4];
          zero(sq);
          warp_mm_nt<2>(sq, S, mid + r0 * LS, LS, mid + r0 * LS, LS);
          // rows tau 0..7 (gq), columns t 8..15: sq[1][0..1]; rows 8..15 x columns 0..7: 0
          pd[gq * LTP + 8 + 2 * tq] = sq[1][0];
          pd[gq * LTP + 9 + 2 * tq] = sq[1][1];
          pd[(gq + 8) * LTP + 2 * tq] = 0.f;
          pd[(gq + 8) * LTP + 2 * tq + 1] = 0.f;
          for (int i = lane; i < 128; i += 32) {  // zeros where tau > t inside the halves
            const int hb = 8 * (i >> 6), tl = (i >> 3) & 7, kl = i & 7;
            if (kl < tl) pd[(hb + tl) * LTP + hb + kl] = 0.f;
          }
        }
        __syncwarp();  // sdb, dpd
        // db and P triangles: key pp (t = pp .. 7), then key 7 - pp (t = 7 - pp .. 7)
        float acc[Q], wv[Q], kb[Q], part[9];
#pragma unroll
        for (int u = 0; u < Q; ++u) { acc[u] = 0.f; wv[u] = 1.f; }
        ldq<Q>(sb + (base + pp) * LS + s0, kb);
#pragma unroll
        for (int it = 0; it < 9; ++it) {
          int tau, t;
          tri_key_step(pp, it, tau, t);
          if (it == 8 - pp) {
            flush(sdb + dcb_row<SK>(base + pp, FSD) + s0, acc);
#pragma unroll
            for (int u = 0; u < Q; ++u) wv[u] = 1.f;
            ldq<Q>(sb + (base + 7 - pp) * LS + s0, kb);
          } else if (it > 0) {
            float av[Q];
            ldqf<Q>(a + (base + t) * FS + s0, av);
#pragma unroll
            for (int u = 0; u < Q; ++u) wv[u] *= av[u];
          }
          float cv[Q];
          ldq<Q>(sc + (base + t) * LS + s0, cv);
          const float dp = dpd[(lb + tau) * LT + lb + t];
          float x = 0.f;
#pragma unroll
          for (int u = 0; u < Q; ++u) {
            const float cw = cv[u] * wv[u];
            acc[u] = fmaf(dp, cw, acc[u]);
            x = fmaf(cw, kb[u], x);
          }
          part[it] = x;
        }
        flush(sdb + dcb_row<SK>(base + 7 - pp, FSD) + s0, acc);
        quad_sum(part);
        walk_put<4>(part, qd, pp, [&](int tau, int t, float x) { pd[(lb + tau) * LTP + lb + t] = x; });
        __syncwarp();  // pd
      }
      // ---- dv, rows (keys) of block wb (HYMO_GDN_BWD_BAL: wb = NW - 1 - w, else w):
      //   sum_{i>wb} P_i,wb^T dO_i + P_wb,wb^T dO_wb + Klast_wb dh + D_skip dO
      // With the switch, key warp w's off-diagonal products are NW-1-w for db (block w)
      // and w for dv (block NW-1-w): the same for every key warp, where block 0's key
      // warp did all 2 (NW-1) of its block's and block NW-1's none. The diagonal term
      // reads block wb's P^T from that block's key warp (its pd): the key warps meet at
      // a named barrier first, after their off-diagonal dv products.
      {
        constexpr bool BAL = HYMO_GDN_BWD_BAL != 0;
        const int wb = BAL ? NW - 1 - w : w, rb = 16 * wb;
        const float* pdb = pd + (wb - w) * 16 * LTP;  // block wb's key warp's pd
        float dvacc[ND][4];
        zero(dvacc);
        HYMO_GDN_BWD_LOOP
        for (int i = HYMO_GDN_DIAG_NO_KEYPAIRS ? NW : wb + 1; i < NW; ++i) {  // (NO_KEYPAIRS: timing only)
          float pt[2][4];
          zero(pt);
          mm_scaled_key<S, HYMO_GDN_BWD_DVHI>(pt, ke + rb * LS, ke + LQ + rb * LS, LS, pair(i, wb), qi + 16 * i * LS, LS);
          uint32_t pa[4];
          frag_hi(pt, pa);
          mm_regA<ND>(dvacc, pa, dOt + 16 * i * LD, LD);
        }
        if constexpr (BAL)  // every key warp's pd is complete (barrier 1: the key warps only)
          asm volatile("bar.sync 1, %0;\n" ::"n"(32 * NW) : "memory");
        {
          uint32_t pa[4];
          const auto pp2 = [&](int r, int c) {  // (PD24: one float2 load)
            if constexpr (HYMO_GDN_PD24) {
              const float2 x = *reinterpret_cast<const float2*>(pdb + r * LTP + c);
              return pack_bf16(x.x, x.y);
            } else {
              return pack_bf16(pdb[r * LTP + c], pdb[r * LTP + c + 1]);
            }
          };
          pa[0] = pp2(gq, 2 * tq);
          pa[1] = pp2(gq + 8, 2 * tq);
          pa[2] = pp2(gq, 8 + 2 * tq);
          pa[3] = pp2(gq + 8, 8 + 2 * tq);
          mm_regA<ND>(dvacc, pa, dOt + rb * LD, LD);
        }
        {
          // Klast = Kend_wb d_NW,wb: scaled in registers (scaled_key_frag), against dh high and
          // low (DVHI: high only)
          const float* f = pair(NW, wb);
#pragma unroll
          for (int k0 = 0; k0 < S; k0 += 16) {
            uint32_t ak[4];
            scaled_key_frag<HYMO_GDN_BWD_DVHI>(ak, ke + rb * LS, ke + LQ + rb * LS, LS, k0, f);
            mm_regA<ND>(dvacc, ak, dht + k0 * LD, LD);
            if constexpr (!HYMO_GDN_BWD_DVHI) mm_regA<ND>(dvacc, ak, dht + LH + k0 * LD, LD);
          }
        }
#pragma unroll
        for (int nt = 0; nt < ND; ++nt)
#pragma unroll
          for (int hr = 0; hr < 2; ++hr) {
            const int t = rb + gq + hr * 8, d = nt * 8 + 2 * tq;
            if (t < n) {
              const float2 o2 = bf16x2_sum(dOt + t * LD + d, dOt + LO + t * LD + d);
              st2(reinterpret_cast<bf16*>(p.dv) + ((tok0 + t) * p.H + h) * D + d,
                  fmaf(dsk, o2.x, dvacc[nt][2 * hr]), fmaf(dsk, o2.y, dvacc[nt][2 * hr + 1]));
            }
          }
      }
      HYMO_GDN_CLK(clk.role(c1 - 1 - ch));
    }
    __syncthreads();  // dc, db of every block are complete: v, dO, h0 and dh's tiles are dead
    if (role == 0) put_dh();
    if (ch > c0) fetch_vo(ch - 1);
    {
      float* scr = reinterpret_cast<float*>(sm + P::o_dpd);  // dpd is dead
      auto bc_dead = [&]() {  // b and c are dead
        if (ch > c0) fetch_bc(ch - 1);
      };
      if constexpr (HYMO_GDN_DIAG_NO_TAIL) {  // (timing only: no dc, db, dgate, dA; gdn.cuh)
        bc_dead();
      } else if constexpr (DGW) {
        chunk_decay_grads_warp<S, C, NTH, FSD, LS, FUSED, SK>(p, sdc, sdb, sc, sb, rbend, scr, g, As,
                                                         dA_acc, ddt_acc, n, tok0, h, bc_dead,
                                                         QO ? dpt : nullptr);
      } else {
        chunk_decay_grads_scan<S, C, NTH, FSD, LS, FUSED>(p, sdc, sdb, sc, sb, rbend, scr, scr + NTH,
                                                         g, As, dAx, misc, n, tok0, h, bc_dead,
                                                         QO ? dpt : nullptr);
      }
    }
    HYMO_GDN_CLK(clk.tail(c1 - 1 - ch));
  }
  pdl_release<HYMO_GDN_BWD_PDL_LATE>();  // (gdn.cuh)
  __syncthreads();
  if constexpr (DGW) {  // the register partials, summed in a fixed order
    float* scr = reinterpret_cast<float*>(sm + P::o_dpd);
    scr[tid] = dA_acc;  // thread (group tid / S, s)
    float x = ddt_acc;
#pragma unroll
    for (int off = 16; off; off >>= 1) x += __shfl_xor_sync(0xffffffffu, x, off);
    if (lane == 0) scr[NTH + wid] = x;
    __syncthreads();
    for (int s = tid; s < S; s += NTH) {
      float y = 0.f;
      for (int j = 0; j < NTH / S; ++j) y += scr[j * S + s];
      p.dApart[so * S + s] = y;
    }
    if (FUSED && tid == 0) {
      float y = 0.f;
      for (int j = 0; j < NTH / 32; ++j) y += scr[NTH + j];
      p.ddtpart[so] = y;
    }
  } else {
    for (int s = tid; s < S; s += NTH) p.dApart[so * S + s] = dAx[s];
    if (FUSED && tid == 0) p.ddtpart[so] = misc[0];
  }
  HYMO_GDN_CLK(clk.exit(c1 - c0));
}

}  // namespace hymo::gdn::dev
