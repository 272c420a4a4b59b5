// hymo GDN: which segment and (b, h) pair each CTA of a segment kernel takes, and where its
// segment starts and ends (HYMO_GDN_TAIL, gdn.cuh: cta_place, seg_c0, seg_c1). Host code sees the same
// functions: gdn_place_test.cc checks that every (segment, pair) of a grid is taken exactly once,
// that every long segment's CTA comes before any short one's, and that the segments tile the
// sequence; and first_seg_place (HYMO_GDN_OUT_EARLY bit 8: every pair's first segment first).
#pragma once

#if defined(__CUDACC__)
#define HYMO_GDN_PLACE_FN __host__ __device__ __forceinline__
#else
#define HYMO_GDN_PLACE_FN inline
#endif

namespace hymo::gdn {

// The CTA of linear index lid in a grid of nseg x npairs CTAs, where segments 0 .. nlong - 1 of
// each pair are long and the rest short (0 <= nlong <= nseg): the pairs' long segments first,
// pair by pair (lid < nlong npairs), then their short ones, pair by pair. With nlong = nseg it is
// the grid's own order (seg = lid % nseg, q = lid / nseg). seg: the CTA's segment; q: its pair
// (counted from the grid's first).
HYMO_GDN_PLACE_FN void tail_place(int lid, int npairs, int nseg, int nlong, int& seg, int& q) {
  const int nl = nlong * npairs;
  if (lid < nl) {
    q = lid / nlong;
    seg = lid - q * nlong;
  } else {
    const int ns = nseg - nlong, j = lid - nl;
    q = j / ns;
    seg = nlong + j - q * ns;
  }
}

// HYMO_GDN_OUT_EARLY bit 8: the CTA of linear index lid in a grid of nseg x npairs CTAs takes
// every pair's first segment first (lid < npairs), then the other segments as tail_place orders
// them (their long ones pair by pair, then their short ones), so that the CTAs placed earliest
// are the ones that need no entering state. With nlong = nseg (no short segment) the rest come
// pair by pair in segment order.
HYMO_GDN_PLACE_FN void first_seg_place(int lid, int npairs, int nseg, int nlong, int& seg, int& q) {
  if (lid < npairs) {
    q = lid;
    seg = 0;
  } else if (nlong == nseg) {  // (what tail_place gives here too, written out so that the plain
    // output pass, which passes nlong = nseg, keeps the machine code run 294 measured)
    const int ns = nseg - 1, j = lid - npairs;
    q = j / ns;
    seg = 1 + j - q * ns;
  } else {
    tail_place(lid - npairs, npairs, nseg - 1, nlong > 0 ? nlong - 1 : 0, seg, q);
    ++seg;
  }
}

// The first chunk of segment seg: nlong segments of cps chunks, then segments of cps2 (the
// caller bounds the last one by the sequence's chunks).
HYMO_GDN_PLACE_FN int tail_c0(int seg, int nlong, int cps, int cps2) {
  return seg < nlong ? seg * cps : nlong * cps + (seg - nlong) * cps2;
}

// The end of the segment that starts at chunk c0, of a sequence of nc chunks: tail_c0 of the
// next segment, at most nc. The long segments are the chunks before nlong cps, so no segment
// index is needed (the output passes recompute it in their chunk loop).
HYMO_GDN_PLACE_FN int tail_c1(int c0, int nc, int nlong, int cps, int cps2) {
  const int e = c0 + (c0 < nlong * cps ? cps : cps2);
  return e < nc ? e : nc;
}

}  // namespace hymo::gdn
