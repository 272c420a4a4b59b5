// gdn_place.h's CTA placement (HYMO_GDN_TAIL) on the CPU: over grids of several shapes, every
// (segment, pair) is taken by exactly one CTA, every long segment's CTA has a lower linear index
// than every short one's (the hardware places CTAs in that order), a grid with no short segments
// keeps its own order, and the segments' first chunks follow one another by their lengths;
// first_seg_place (HYMO_GDN_OUT_EARLY bit 8) takes each (segment, pair) once, first segments first.
// A last check places with a wrong split and must see it fail. Host code only; no GPU.
#include <cstdio>
#include <vector>

#include "gdn_place.h"

using namespace hymo::gdn;

namespace {

int g_fail = 0;

// The faults every placement of an nseg x npairs grid is checked for: place(lid, seg, q) gives
// each (segment, pair) to exactly one CTA. order(lid, seg, q) returns the placement's own
// faults at each CTA, taken in linear order. 0 when sound.
template <class Place, class Order>
int cover_faults(int npairs, int nseg, Place place, Order order) {
  int bad = 0;
  std::vector<int> taken(size_t(nseg) * npairs, -1);
  for (int lid = 0; lid < nseg * npairs; ++lid) {
    int seg = -1, q = -1;
    place(lid, seg, q);
    if (seg < 0 || seg >= nseg || q < 0 || q >= npairs) {
      ++bad;
      continue;
    }
    int& t = taken[size_t(q) * nseg + seg];
    bad += t >= 0;  // taken twice
    t = lid;
    bad += order(lid, seg, q);
  }
  for (int t : taken) bad += t < 0;  // never taken
  return bad;
}

// Long segments' CTAs before short ones' (segments 0 .. nlong - 1 long): saw() each CTA in
// linear order, then faults().
struct LongFirst {
  int nlong, last_long = -1, first_short = -1;
  void saw(int lid, int seg) {
    if (seg < nlong)
      last_long = lid;
    else if (first_short < 0)
      first_short = lid;
  }
  int faults() const { return first_short >= 0 && last_long >= first_short; }
};

// The faults of the placement of an nseg x npairs grid whose first nlong segments are long, as
// tail_place gives it: the long segments' CTAs first, and with nlong = nseg the grid's own order.
int faults(int npairs, int nseg, int nlong) {
  LongFirst lf{nlong};
  const int bad = cover_faults(
      npairs, nseg, [&](int lid, int& seg, int& q) { tail_place(lid, npairs, nseg, nlong, seg, q); },
      [&](int lid, int seg, int q) {
        lf.saw(lid, seg);
        return nlong == nseg ? int(seg != lid % nseg || q != lid / nseg) : 0;
      });
  return bad + lf.faults();
}

// The faults of first_seg_place over an nseg x npairs grid whose first nlong segments are long:
// every first segment's CTA (pair by pair) before any other, then every other long segment's
// before any short one's; with nlong = nseg the rest pair by pair in segment order.
int first_faults(int npairs, int nseg, int nlong) {
  LongFirst lf{nlong};
  int prev_q = -1, prev_seg = 0;
  const int bad = cover_faults(
      npairs, nseg, [&](int lid, int& seg, int& q) { first_seg_place(lid, npairs, nseg, nlong, seg, q); },
      [&](int lid, int seg, int q) {
        if (lid < npairs) return int(seg != 0 || q != lid);
        int f = seg == 0;
        lf.saw(lid, seg);
        if (nlong == nseg) {
          f += !(q > prev_q || (q == prev_q && seg == prev_seg + 1));
          prev_q = q;
          prev_seg = seg;
        }
        return f;
      });
  return bad + lf.faults();
}

void check(int npairs, int nseg, int nlong) {
  const int f = faults(npairs, nseg, nlong);
  std::printf("  %-4s %d pairs, %d segments, %d long\n", f ? "FAIL" : "ok", npairs, nseg, nlong);
  g_fail += f != 0;
}

}  // namespace

int main() {
  std::printf("tail_place: each (segment, pair) once, the long segments' CTAs first\n");
  for (int npairs : {1, 2, 3, 56, 112})
    for (int nseg : {1, 2, 5, 9, 17})
      for (int nlong : {0, 1, nseg / 2, nseg - 1, nseg})
        if (nlong >= 0 && nlong <= nseg) check(npairs, nseg, nlong);
  std::printf("first_seg_place: each (segment, pair) once, the first segments' CTAs first\n");
  for (int npairs : {1, 2, 3, 56, 112})
    for (int nseg : {1, 2, 5, 8, 17})
      for (int nlong : {0, 1, nseg / 2, nseg - 1, nseg}) {
        const int f = first_faults(npairs, nseg, nlong);
        std::printf("  %-4s %d pairs, %d segments, %d long\n", f ? "FAIL" : "ok", npairs, nseg, nlong);
        g_fail += f != 0;
      }
  std::printf("tail_c0: 7 segments of 8 chunks, then segments of 4\n");
  {
    const int want[10] = {0, 8, 16, 24, 32, 40, 48, 56, 60, 64};
    int bad = 0;
    for (int seg = 0; seg < 10; ++seg) bad += tail_c0(seg, 7, 8, 4) != want[seg];
    std::printf("  %-4s first chunks 0, 8, .., 56, 60, 64\n", bad ? "FAIL" : "ok");
    g_fail += bad != 0;
  }
  // the segments tile the sequence: segment s ends where s + 1 starts (the last at nc), none
  // empty, for the layouts gdn.cu's layout() makes (nlong long of cps, the rest of cps2 = cps / 2)
  std::printf("tail_c1: the segments tile the chunks\n");
  {
    int bad = 0, layouts = 0;
    for (int nc : {1, 5, 13, 64, 65, 129})
      for (int cps : {2, 4, 8})
        for (int tail : {0, 1, 2, 3, 100}) {
          const int nseg_u = (nc + cps - 1) / cps;
          const int nlong = tail ? (nseg_u - tail > 0 ? nseg_u - tail : 0) : nseg_u;
          const int cps2 = tail ? cps / 2 : cps;
          const int nseg = nlong + (nc - nlong * cps + cps2 - 1) / cps2;
          ++layouts;
          int c = 0;
          for (int seg = 0; seg < nseg; ++seg) {
            const int c0 = tail_c0(seg, nlong, cps, cps2), c1 = tail_c1(c0, nc, nlong, cps, cps2);
            bad += c0 != c || c1 <= c0 || c1 > nc || (seg + 1 < nseg && c1 != tail_c0(seg + 1, nlong, cps, cps2));
            c = c1;
          }
          bad += c != nc;
        }
    std::printf("  %-4s %d layouts (%d faults)\n", bad ? "FAIL" : "ok", layouts, bad);
    g_fail += bad != 0;
  }
  // the checks can fail: the long CTAs' pair count taken one too small must break the map
  {
    int bad = 0;
    std::vector<int> taken(size_t(9) * 4, 0);
    for (int lid = 0; lid < 36; ++lid) {
      int seg = -1, q = -1;
      tail_place(lid, 3, 9, 7, seg, q);  // (a grid of 4 pairs placed as one of 3)
      if (seg >= 0 && seg < 9 && q >= 0 && q < 4) ++taken[size_t(q) * 9 + seg];
    }
    for (int t : taken) bad += t != 1;
    std::printf("  %-4s a wrong pair count is caught (%d cells off)\n", bad ? "ok" : "FAIL", bad);
    g_fail += bad == 0;
  }
  if (g_fail) {
    std::printf("%d check(s) FAILED\n", g_fail);
    return 1;
  }
  std::printf("all placement checks passed\n");
  return 0;
}
