// hymo GDN: the diagonal blocks' one-product tests (HYMO_GDN_DIAG8 with its _TRAIN and _BWD
// twins, HYMO_GDN_DIAG16_TRAIN: diag8_fast, diag16_fast below; diag_fast, the 16-row test of
// session 16's HYMO_GDN_DIAGMM, removed in session 37, for the host's share only)
// and their limit, shared by the kernels (gdn.cuh) and by the host-side share the GPU test and
// the benchmark report (gdn_test_util.h).
//
// A block passes when every gate span between its reference rows, times max_s |A_s| log2(e),
// is at most HYMO_GDN_DIAG_LIMIT. Then every operand factor of the block's products lies in
// 2^-LIMIT .. 2^LIMIT, and an entry t >= tau is its exact term rounded once. A factor below
// FP32's normal range (2^-126) is flushed to zero by ex2.approx.ftz; the other factor of its
// pair is at most 2^LIMIT, so the term lost is below 2^(LIMIT - 126) |c_t| |b_tau| (2^-30 at
// 96: far below BF16's 2^-9 rounding of the same term). Operands up to 2^LIMIT |c| or |b|
// stay finite for |c|, |b| (and the backward's |dP|) below 2^(127 - LIMIT) = 2^31 at 96.
// Session 16 used 64; session 17 96 (runs 102-106). Run 107: 110 made the forward 2.3% and
// forward + backward 2.8% faster (540/540 checks) but leaves only 2^17 on |c|, |b| (2^15 on
// the backward's |dP b|), so the default stays 96 (docs/kernels/gdn.md, Algorithm).
// docs/kernels/gdn.md, "What session 17 did", has the measurements.
#pragma once

#include <cmath>

#ifndef HYMO_GDN_DIAG_LIMIT
#define HYMO_GDN_DIAG_LIMIT 96
#endif

// HYMO_GDN_DIAG8_MID (session 19): DIAG8's 8-row halves referenced to the midpoint of their gate
// span, M = (G_first + G_last) / 2 of the half, instead of to the half's row 3. A query's factor
// exp((G_t - M) A) and a key's exp((M - G_tau) A) then both lie within 2^-x .. 2^x,
// x = (G_last - G_first) max_s |A_s| log2(e) / 2, so the test asks each half's 7-gate span for
// at most 2 LIMIT, where row 3 asked each 4-gate span (from the row before the block) for at most
// LIMIT: the same bound on every operand factor (the same 2^31 margin on the inputs), passed by
// more blocks (with even gates, 3.5 gates' decay against 4). The square's column factors
// (G_7 - M) and (M' - G_7) may now fall below 2^-LIMIT; a factor flushed there multiplies a value
// below 2^LIMIT times the inputs, so what it drops stays below 2^(LIMIT - 126) of them, as for the
// operands themselves. At the spec's decays (benchmark inputs, B = 4 H = 28) 99.8% of the blocks
// pass, against 93.0% with row 3 (a host-side count). Run 115 (A/B, 3 rounds, 540/540, racecheck
// clean): forward -3.9%, training forward -1.4%, forward + backward -3.7% at the default shape;
// H = 64 -2.0 / -1.2 / -4.0%; S = 16 -0.3 / -1.9 / -4.8% (-2.9% forward with DIAG8_S16, which is
// on since); --decay-scale 3 -1.7 / -1.0 / -0.6%. Default on since run 115 (session 19).
#ifndef HYMO_GDN_DIAG8_MID
#define HYMO_GDN_DIAG8_MID 1
#endif

// HYMO_GDN_DIAG_NOSLOW (session 24; a diagnostic build, never for results): every diagonal block
// that has a one-product path takes it whatever its gate span (diag_fast and diag8_fast are
// true; diag16_fast keeps its test), so the kernels' walks for failing blocks are compiled out.
// Where a block would fail the test its factors can overflow (inf or NaN in those rows): such a
// build only measures what the slow path's presence costs the blocks that pass (an A/B at the
// spec's decays, where 99.8% pass). The tests fail in it by design.
#ifndef HYMO_GDN_DIAG_NOSLOW
#define HYMO_GDN_DIAG_NOSLOW 0
#endif
#if HYMO_GDN_DIAG_NOSLOW
#pragma message("HYMO_GDN_DIAG_NOSLOW: diagnostic build, wrong where a diagonal block fails its test")
#endif

// The tests, for the diagonal block of rows r0 .. r0 + 15 of a chunk (G: the chunk's inclusive
// cumulative gate, amax2: max_s |A_s| log2(e)): the kernels' (gdn.cuh; F = float, every caller
// gets the same answer from the same G and amax2, NaN: false) and the host's count of the
// blocks that pass (gdn_test_util.h; F = double).
#ifdef __CUDACC__
#define HYMO_GDN_DIAG_FN __host__ __device__ __forceinline__
#else
#define HYMO_GDN_DIAG_FN inline
#endif
namespace hymo::gdn {
HYMO_GDN_DIAG_FN float diag_max(float a, float b) { return fmaxf(a, b); }
HYMO_GDN_DIAG_FN double diag_max(double a, double b) { return fmax(a, b); }
// (Session 16's HYMO_GDN_DIAGMM's) test: both factors around row r0 + 7 stay within 2^-LIMIT .. 2^LIMIT.
template <class F>
HYMO_GDN_DIAG_FN bool diag_fast(const F* G, int r0, F amax2) {
  if constexpr (HYMO_GDN_DIAG_NOSLOW) return true;
  const F gs = r0 ? G[r0 - 1] : F(0), gm = G[r0 + 7];
  return diag_max(gm - gs, G[r0 + 15] - gm) * amax2 <= F(HYMO_GDN_DIAG_LIMIT);
}
// HYMO_GDN_DIAG8's test: every 4-row gate span of the block (reference rows r0 - 1, r0 + 3,
// r0 + 7, r0 + 11, r0 + 15) within the limit, so that each 8-row half's factors around its
// row 3 and the square's factors between rows 3, 7 and 11 stay within 2^-LIMIT .. 2^LIMIT;
// with HYMO_GDN_DIAG8_MID each half's 7-gate span within twice the limit instead.
template <class F>
HYMO_GDN_DIAG_FN bool diag8_fast(const F* G, int r0, F amax2) {
  if constexpr (HYMO_GDN_DIAG_NOSLOW) return true;
  if constexpr (HYMO_GDN_DIAG8_MID) {
    return diag_max(G[r0 + 7] - G[r0], G[r0 + 15] - G[r0 + 8]) * amax2 <= F(2 * HYMO_GDN_DIAG_LIMIT);
  } else {
    const F g0 = r0 ? G[r0 - 1] : F(0), g1 = G[r0 + 3], g2 = G[r0 + 7], g3 = G[r0 + 11];
    return diag_max(diag_max(g1 - g0, g2 - g1), diag_max(g3 - g2, G[r0 + 15] - g3)) * amax2 <=
           F(HYMO_GDN_DIAG_LIMIT);
  }
}
// HYMO_GDN_DIAG16_TRAIN's test (gdn.cuh): the block's whole span within twice the limit.
template <class F>
HYMO_GDN_DIAG_FN bool diag16_fast(const F* G, int r0, F amax2) {
  return (G[r0 + 15] - G[r0]) * amax2 <= F(2 * HYMO_GDN_DIAG_LIMIT);
}
}  // namespace hymo::gdn
