// hymo GDN launchers: shape checks, workspace layout, dispatch.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <initializer_list>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "gdn.h"
#include "gdn_impl.cuh"

namespace hymo::gdn {
namespace dev {
template <typename Tin, int S>
cudaError_t run_variant(int D, bool fused, int what, bool recompute, const KParams& p,
                        cudaStream_t st);
extern template cudaError_t run_variant<__nv_bfloat16, 16>(int, bool, int, bool, const KParams&, cudaStream_t);
extern template cudaError_t run_variant<__nv_bfloat16, 32>(int, bool, int, bool, const KParams&, cudaStream_t);
extern template cudaError_t run_variant<__nv_bfloat16, 64>(int, bool, int, bool, const KParams&, cudaStream_t);
extern template cudaError_t run_variant<__nv_bfloat16, 128>(int, bool, int, bool, const KParams&, cudaStream_t);
extern template cudaError_t run_variant<float, 16>(int, bool, int, bool, const KParams&, cudaStream_t);
extern template cudaError_t run_variant<float, 32>(int, bool, int, bool, const KParams&, cudaStream_t);
extern template cudaError_t run_variant<float, 64>(int, bool, int, bool, const KParams&, cudaStream_t);
}  // namespace dev

namespace {
thread_local std::string g_err;
int g_cps_override = 0;
int g_nseg_override = 0;
int g_tail_override = -1;  // gdn_set_tail_segments
bool g_tail_plain = false;  // ... its second argument
int g_grid_slice = 0;      // gdn_set_grid_slice
int g_state_pair = -1;     // gdn_set_state_pair
int g_adj_pair = -1;       // gdn_set_adj_pair
unsigned long long* g_clocks = nullptr;  // gdn_clocks_arm

#ifndef HYMO_GDN_CPS_LONG
#define HYMO_GDN_CPS_LONG 1
#endif
#ifndef HYMO_GDN_CPS_FILL
#define HYMO_GDN_CPS_FILL 1
#endif

// The current device's SM count, for the segment-length rule (layout()); 132 (H100, H200)
// where no device answers (the workspace size is then computed as for those; a launch there
// fails anyway).
int sm_count() {
  static std::mutex mu;
  static std::unordered_map<int, int> counts;
  int dev = 0, n = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) {
    cudaGetLastError();
    return 132;
  }
  std::lock_guard<std::mutex> lk(mu);
  auto it = counts.find(dev);
  if (it != counts.end()) return it->second;
  if (cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || n <= 0) {
    cudaGetLastError();
    n = 132;
  }
  counts[dev] = n;
  return n;
}

// What the last forward on each workspace left for the backward (set when the
// forward is enqueued): the staged BF16 variants' backward, and the split path's (S or D =
// 128), read o (the split path's: its blocks' parts) and the chunk states from the workspace,
// which only a forward with save_for_backward writes. Every backward that reads the forward's
// workspace also reads its segments' states or gate sums, laid out by the forward's segments: a
// tuning call between the two (gdn_set_chunks_per_segment, gdn_set_segments,
// gdn_set_tail_segments) would have it read them at other strides, so the segments are noted too.
struct SegKey {
  int NC, cps, NSEG, nlong, cps2;
  bool operator==(const SegKey& o) const {
    return NC == o.NC && cps == o.cps && NSEG == o.NSEG && nlong == o.nlong && cps2 == o.cps2;
  }
};
SegKey seg_key(const dev::KParams& p) { return {p.NC, p.cps, p.NSEG, p.nlong, p.cps2}; }
struct WsNote {
  bool saved;
  SegKey key;
};
std::mutex g_ws_mu;
std::unordered_map<const void*, WsNote> g_ws_note;
void note_forward(const void* ws, bool saved, const SegKey& key) {
  std::lock_guard<std::mutex> lk(g_ws_mu);
  g_ws_note[ws] = {saved, key};
}
void note_consumed(const void* ws) {  // (the BF16 backward used up the saved forward)
  std::lock_guard<std::mutex> lk(g_ws_mu);
  auto it = g_ws_note.find(ws);
  if (it != g_ws_note.end()) it->second.saved = false;
}
// the last forward's note on ws; false where none ran on it
bool forward_note(const void* ws, WsNote& n) {
  std::lock_guard<std::mutex> lk(g_ws_mu);
  auto it = g_ws_note.find(ws);
  if (it == g_ws_note.end()) return false;
  n = it->second;
  return true;
}
bool staged(const Shape& s) { return dev::staged_variant(s.dtype == DType::BF16, s.S, s.D); }
// S or D = 128 in BF16: the staged forward passes on blocks of the state (gdn_split.cuh)
bool split(const Shape& s) { return dev::split_variant(s.dtype == DType::BF16, s.S, s.D); }

bool ok_dim(int x) { return x == 16 || x == 32 || x == 64 || x == 128; }

// The segment count of NC chunks whose first nlong segments have cps chunks and the rest cps / 2
// (the last one shorter): HYMO_GDN_TAIL's layouts.
int split_segments(int NC, int nlong, int cps) {
  const int cps2 = cps / 2;
  return nlong + (NC - nlong * cps + cps2 - 1) / cps2;
}

// HYMO_GDN_TAIL's rule: how many segments of each (b, h) to split in halves. The passes whose
// last waves it fills are modelled as lists of CTAs placed in order on the first free slot (as
// the hardware places a grid's CTAs), each CTA taking o + c microseconds a chunk (run 247's clock
// stamps at the default shape on an H100: medians of the wait and prologue, and of a middle
// chunk): the backward main kernel (2 CTAs an SM; o 5.0, c 6.8), the training output pass (3 an
// SM; 3.6, 6.0) and the adjoint pass (2 an SM, over head pairs; 6.9, 6.6). The split count of 0
// to 3 with the shortest sum of the three spans wins where it is at least 2% shorter than none
// (the placement's own cost with no split: forward + backward +0.4%, training forward +1.0%, run
// 246). Run 246 (H100, two rounds, forward + backward against no split; the model's pick in
// brackets): B=4 T=4096 H=28 1 -3.1% [1], 2 -2.4%, 3 -2.1%; S = 16 1 -4.8% [1]; T = 2048 1 -3.2% [1];
// B = 1 2 -3.2% [2], 3 -6.0%; H = 16 2 -3.1% [2]; H = 64 (4 segments) 1 +0.2%, 2 +0.4%, 3 +1.8% [0].
double tail_span(long n_long, long n_short, long slots, double o, double c, int cps, int cps2) {
  std::vector<double> free_at(size_t(std::max(1L, slots)), 0.0);  // a min-heap of the slots' ends
  double end = 0;
  const auto later = std::greater<double>();
  for (long i = 0; i < n_long + n_short; ++i) {
    std::pop_heap(free_at.begin(), free_at.end(), later);
    const double t = free_at.back() + o + c * (i < n_long ? cps : cps2);
    free_at.back() = t;
    std::push_heap(free_at.begin(), free_at.end(), later);
    end = std::max(end, t);
  }
  return end;
}
int tail_rule(long BH, int NC, int cps, int NSEG, int sms) {
  if (!HYMO_GDN_TAIL || cps % 2 != 0 || NSEG < 2) return 0;
  // (layout() runs on every call: the picks are kept by their inputs)
  static std::mutex mu;
  static std::map<std::tuple<long, int, int, int, int>, int> picked;
  const auto key = std::make_tuple(BH, NC, cps, NSEG, sms);
  std::lock_guard<std::mutex> lk(mu);
  if (auto it = picked.find(key); it != picked.end()) return it->second;
  auto spans = [&](int k) {
    const int nlong = std::max(0, NSEG - k), cps2 = cps / 2;
    const int nshort = k ? split_segments(NC, nlong, cps) - nlong : 0;
    return tail_span(BH * nlong, BH * nshort, 2L * sms, 5.0, 6.8, cps, cps2) +
           tail_span(BH * nlong, BH * nshort, 3L * sms, 3.6, 6.0, cps, cps2) +
           tail_span((BH + 1) / 2 * nlong, (BH + 1) / 2 * nshort, 2L * sms, 6.9, 6.6, cps, cps2);
  };
  const double none = spans(0);
  int best = 0;
  double best_span = none;
  for (int k = 1; k <= std::min(3, NSEG); ++k) {
    const double t = spans(k);
    if (t < best_span) best = k, best_span = t;
  }
  if (best_span > 0.98 * none) best = 0;
  picked.emplace(key, best);
  return best;
}
// Where the rule applies: the staged BF16 backward main kernel at 2 CTAs an SM (S <= 32), with
// D = 32, the shapes run 246 measured (D = 16 keeps its shorter segments, HYMO_GDN_CPS_LONG).
bool tail_rule_applies(const Shape& s) { return staged(s) && !split(s) && s.S <= 32 && s.D == 32; }
// The split path's rule (session 62): at D = S = 128 the last segment of each block in halves
// where the blocks' CTAs (B H NS NV of them a segment; the generic main kernel runs three an SM)
// fill at least four waves. Run 312 (an H100, three rounds, B=4 T=4096 H=28: 4.5 waves at the
// automatic 4 segments): forward + backward held 6.746 -> 6.542 ms (-3.0%; idle -2.4%), the
// training forward even; two split segments 6.686, three 6.750. The plain forward keeps its
// segments (gdn_forward: split too in run 312, +2.3% held). Only where the segments are long
// (16 chunks or more: the measured shape's are 32) and at D = S = 128: other split shapes (S or
// D alone 128) were not measured and keep theirs.
bool split_tail_eligible(const Shape& s) { return split(s) && s.S == 128 && s.D == 128; }
// (An odd length or a build without HYMO_GDN_TAIL splits nothing whatever the pick: layout()'s
// split_count.)
int split_tail_rule(long BHk, int cps, int NSEG, int sms) {
  return cps >= 16 && BHk * NSEG >= 4L * 3 * sms ? 1 : 0;
}

struct Layout {
  // NSEG segments a (b, h): nlong of cps chunks, then NSEG - nlong of cps2 (HYMO_GDN_TAIL), the
  // last one shorter; NSEG_plain: the count without the split (the staged plain forward's)
  int C, NC, cps, NSEG, nlong, cps2, NSEG_plain;
  size_t segstate, seggsum, h0buf, dObuf, dHseg, dApart, dwpart, dDpart, ddtpart;
  size_t sp_state, sp_gsum, sp_o, sp_dc, sp_db, sp_dg, sp_cnt;  // the split path (none elsewhere)
  size_t total;
};

Layout layout(const Shape& s) {
  Layout L{};
  L.C = (s.S <= 32 && s.D <= 32) ? 64 : 32;
  L.NC = (s.T + L.C - 1) / L.C;
  // the split path (S or D = 128 in BF16) runs the staged kernels on NS NV blocks a head: the
  // segment rule counts its kernels' B H NS NV heads (the buffers below are sized from B H)
  const long BH = long(s.B) * s.H;
  const long BHk = BH * (split(s) ? dev::split_ns(s.S) * dev::split_nv(s.D) : 1);
  if (g_cps_override > 0) {
    L.cps = g_cps_override;
  } else if (!staged(s) && !split(s)) {
    // The generic kernels (the FP32 test variant) still combine the earlier segments'
    // states in each CTA (work that grows with the square of the segment count): about
    // 1400 CTAs (run 9). The power-of-two rule below made D = S = 128 7% slower (run 48:
    // fwd 4.907 ms at 8 chunks a segment against 4.591 at 10, run 43; the generic kernels
    // then ran BF16 at 128).
    const long nseg = std::max(1L, (1400 + BHk - 1) / BHk);
    L.cps = int((L.NC + nseg - 1) / nseg);
  } else {
    // (The split path, S or D = 128, by the same rule over its blocks: session 28, run 156 at B=4
    // H=28 D=S=128, forward + backward 8.76 ms at the rule's 4 segments, 8.89 at 8, 9.26 at 16,
    // 9.78 at 2.)
    // A power-of-two number of chunks a segment: 4, doubled while a pass would have more
    // than 3072 CTAs (B*H*segments), halved while it would have fewer than 400. Runs 46
    // and 47 (19 shapes, segment scans and the 4-CTA output pass on): 4, 8 and 16 beat
    // their neighbours 3, 5, 6, 10, 12 by 5-15% (no ragged last segment when T is a
    // multiple of 64 * cps; fewer partial waves), too many CTAs lose to per-segment
    // overhead (3584 at B*H = 224), too few to idle SMs (224 at T = 512). This rule is
    // within 1.1% (forward) and 0.7% (forward + backward) of each shape's best length
    // in the geometric mean, and no shape is more than 5% off (notes/gdn-measurements.md).
    auto ctas = [&](int c) { return BHk * ((L.NC + c - 1) / c); };
    int cps = 4;
    while (cps < L.NC && ctas(cps) > 3072) cps *= 2;
    // HYMO_GDN_CPS_LONG (session 14; default on since run 92, 0 turns it off): at D = 32,
    // S <= 32 also doubled up to 16 while the doubled length keeps at least 800 CTAs.
    // Run 91 (`hymo_gdn_bench --cps`, two rounds): B=4 T=4096 H=28 at 8 instead of 4,
    // forward + backward -3.2%, forward -1%; H = 64 at 16 instead of 8, -1.8%; T = 8192 at
    // 16 instead of 8, even; unchanged where the rule keeps the length (T = 2048: 8 was 3%
    // slower; T = 16384: 32 was 1.5% slower; B = 1, H = 16). Run 92 (8 against 4, two
    // rounds): H = 32 -5% (forward -3%); S = 16 -2%; but D = 16 +3% (S = 32) and +6% (S =
    // 16), so D = 16 keeps the shorter segments.
    if (HYMO_GDN_CPS_LONG && s.S <= 32 && s.D == 32)
      while (cps < 16 && 2 * cps <= L.NC && ctas(2 * cps) >= 800) cps *= 2;
    // HYMO_GDN_CPS_FILL (session 20; default on since run 122, 0 turns it off): at D = 32,
    // S <= 32 doubled from 4 to 8 chunks also where the doubled length has 512 to 799 CTAs that
    // fill the last wave of the passes with two CTAs an SM (the training output pass, the
    // backward main kernel) to at least 85%. Run 121 (`hymo_gdn_bench --nseg 8,16`, T = 4096,
    // two rounds, 8 chunks a segment against the rule's 4): 64 (b, h) pairs (B=4 H=16, B=2 H=32,
    // B=8 H=8; 512 CTAs, 1.94 waves on 132 SMs) forward + backward -4.2 to -4.9%, forward even;
    // 96 pairs (768 CTAs, 2.91 waves) -2.4%, forward +1%; but 80 pairs (640, 2.42 waves) +3%,
    // forward +12%, and 56 pairs (448) +1.6%, forward +7%: those keep 4. Run 122 confirmed it
    // (-4.2 to -4.6% and -2.5%, 80 and 56 pairs unchanged). From 8 to 16 (B=4 H=32: 512 CTAs at
    // 16) it measured even in run 122 against run 118 (forward +1.2%, forward + backward -0.4%,
    // two calls), so it stays at 8 there.
    if (HYMO_GDN_CPS_FILL && s.S <= 32 && s.D == 32 && cps == 4 && 2 * cps <= L.NC) {
      const long n2 = ctas(2 * cps);
      const double w = double(n2) / (2.0 * sm_count()), frac = w - std::floor(w);
      if (n2 >= 512 && n2 < 800 && (frac == 0.0 || frac >= 0.85)) cps *= 2;
    }
    while (cps > 1 && ctas(cps) < 400) cps /= 2;
    L.cps = cps;
  }
  if (L.cps < 1) L.cps = 1;
  if (L.cps > L.NC) L.cps = L.NC;
  L.NSEG = (L.NC + L.cps - 1) / L.cps;
  if (g_nseg_override > 0) {  // ceil(NC / nseg) chunks a segment, the last one shorter
    L.NSEG = std::min(g_nseg_override, L.NC);
    L.cps = (L.NC + L.NSEG - 1) / L.NSEG;
    L.NSEG = (L.NC + L.cps - 1) / L.cps;
  }
  // HYMO_GDN_TAIL (gdn.cuh): the last `tail` segments of each (b, h) split in halves, whose CTAs
  // the kernels dispatch after every long segment's (cta_place), so that the passes' last waves
  // hold short CTAs. The rule (tail_rule, above): where the segment count is the automatic one
  // and the backward main kernel is the staged one of S <= 32, D = 32, the count of 0 to 3 whose
  // modelled spans are shortest; at D = S = 128 (the split path) one where its grids fill four
  // waves (split_tail_rule); gdn_set_tail_segments overrides both. The plain forward keeps the
  // segments unsplit unless asked (gdn_forward; session 21's run 126 measured it 1.5-2.5% slower
  // at every split count, with the grids turned segment-major, which this placement does not do;
  // run 312: 2.3% slower at D = S = 128); its backward needs a saving forward, which splits them
  // as the backward does.
  L.NSEG_plain = L.NSEG;
  L.nlong = L.NSEG;
  L.cps2 = L.cps;
  const bool automatic = g_cps_override <= 0 && g_nseg_override <= 0;
  const bool ruled = g_tail_override < 0 && automatic && tail_rule_applies(s);
  const bool split_ruled = g_tail_override < 0 && automatic && split_tail_eligible(s);
  const int tail_most = ruled ? 3 : split_ruled ? 1 : 0;  // the most the applying rule may pick
  const int tail = g_tail_override >= 0 ? g_tail_override
                   : ruled       ? tail_rule(BH, L.NC, L.cps, L.NSEG, sm_count())
                   : split_ruled ? split_tail_rule(BHk, L.cps, L.NSEG, sm_count())
                                 : 0;
  // the segment count with the last k split (nlong(k) long ones, then cps / 2 chunks each, where
  // cps is even)
  auto nlong = [&](int k) { return std::max(0, L.NSEG_plain - k); };
  auto split_count = [&](int k) {
    if (!HYMO_GDN_TAIL || k <= 0 || L.cps % 2 != 0) return L.NSEG_plain;
    return split_segments(L.NC, nlong(k), L.cps);
  };
  if (split_count(tail) != L.NSEG_plain) {
    L.nlong = nlong(tail);
    L.cps2 = L.cps / 2;
    L.NSEG = split_count(tail);
  }
  // The per-segment buffers hold the rule's largest count (tail_most), not only its pick: the
  // pick depends on the SM count, and a workspace sized on one device must not run short on
  // another for the rule's sake (HYMO_GDN_CPS_FILL's lengths still depend on it:
  // gdn_workspace_bytes)
  const size_t NSEGb = size_t(std::max(L.NSEG, split_count(tail_most)));
  size_t off = 0;
  auto take = [&](size_t floats) {
    const size_t o = off;
    off += (floats * sizeof(float) + 255) & ~size_t(255);
    return o;
  };
  const size_t SD = size_t(s.S) * s.D, BTH = size_t(s.B) * s.T * s.H;
  // the split path: NS x NV blocks a head (gdn_split.cuh), whose kernels keep h0buf and dHseg at
  // their own heads in the same sizes (B H NS NV blocks of S D / (NS NV) values), and per-block
  // dApart and ddtpart (nb times the caller's); its segment states and gate sums are sp_state and
  // sp_gsum
  const bool sp = split(s);
  const size_t ns = sp ? dev::split_ns(s.S) : 1, nv = sp ? dev::split_nv(s.D) : 1, nb = ns * nv;
  L.segstate = take(sp ? 0 : BH * NSEGb * SD);
  L.seggsum = take(sp ? 0 : BH * NSEGb);
  L.h0buf = take(BH * L.NC * SD);
  L.dObuf = take(BTH * s.D);
  L.dHseg = take(BH * NSEGb * SD);
  L.dApart = take(BH * NSEGb * s.S * nv);
  L.dwpart = take(BH * NSEGb * s.D);
  L.dDpart = take(2 * BH * NSEGb);  // doubles
  L.ddtpart = take(BH * NSEGb * nb);
  L.sp_state = take(sp ? BH * NSEGb * SD : 0);
  L.sp_gsum = take(sp ? nb * BH * NSEGb : 0);
  L.sp_o = take(sp ? BTH * s.D * ns : 0);
  L.sp_dc = take(sp ? BTH * s.S * nv : 0);
  L.sp_db = take(sp ? BTH * s.S * nv : 0);
  L.sp_dg = take(sp ? BTH * nb : 0);
  L.sp_cnt = take(sp ? BH * NSEGb : 0);  // (unsigned: HYMO_GDN_SPLIT_SUMS's counts)
  L.total = off;
  return L;
}

dev::KParams make_params(const Shape& s, const Layout& L, const FwdArgs& a, void* ws) {
  dev::KParams p{};
  p.B = s.B; p.T = s.T; p.H = s.H; p.NC = L.NC; p.cps = L.cps; p.NSEG = L.NSEG; p.eps = s.eps;
  p.nlong = L.nlong; p.cps2 = L.cps2;
  p.v = a.v; p.b = a.b; p.c = a.c; p.gate = a.gate; p.z = a.z;
  p.dt_bias = a.dt_bias; p.A_log = a.A_log; p.D_skip = a.D_skip; p.w_y = a.w_y;
  p.out = a.out;
  char* w = static_cast<char*>(ws);
  p.segstate = reinterpret_cast<float*>(w + L.segstate);
  p.seggsum = reinterpret_cast<float*>(w + L.seggsum);
  p.h0buf = reinterpret_cast<float*>(w + L.h0buf);
  p.dObuf = reinterpret_cast<float*>(w + L.dObuf);
  p.dHseg = reinterpret_cast<float*>(w + L.dHseg);
  p.dApart = reinterpret_cast<float*>(w + L.dApart);
  p.dwpart = reinterpret_cast<float*>(w + L.dwpart);
  p.dDpart = reinterpret_cast<double*>(w + L.dDpart);
  p.ddtpart = reinterpret_cast<float*>(w + L.ddtpart);
  p.sp_state = reinterpret_cast<float*>(w + L.sp_state);
  p.sp_gsum = reinterpret_cast<float*>(w + L.sp_gsum);
  p.sp_o = reinterpret_cast<float*>(w + L.sp_o);
  p.sp_dc = reinterpret_cast<float*>(w + L.sp_dc);
  p.sp_db = reinterpret_cast<float*>(w + L.sp_db);
  p.sp_dg = reinterpret_cast<float*>(w + L.sp_dg);
  p.sp_cnt = reinterpret_cast<unsigned*>(w + L.sp_cnt);
  p.clocks = g_clocks;
  return p;
}

bool misaligned(std::initializer_list<const void*> ps) {
  for (const void* p : ps)
    if (p && (reinterpret_cast<uintptr_t>(p) & 15u)) return true;
  return false;
}

cudaError_t fail(const std::string& msg) {
  g_err = msg;
  return cudaErrorInvalidValue;
}

cudaError_t dispatch(const Shape& s, int what, bool recompute, const dev::KParams& p,
                     cudaStream_t st) {
  if (s.dtype == DType::BF16) {
    switch (s.S) {
      case 16: return dev::run_variant<__nv_bfloat16, 16>(s.D, s.fused, what, recompute, p, st);
      case 32: return dev::run_variant<__nv_bfloat16, 32>(s.D, s.fused, what, recompute, p, st);
      case 64: return dev::run_variant<__nv_bfloat16, 64>(s.D, s.fused, what, recompute, p, st);
      case 128: return dev::run_variant<__nv_bfloat16, 128>(s.D, s.fused, what, recompute, p, st);
    }
  } else {
    switch (s.S) {
      case 16: return dev::run_variant<float, 16>(s.D, s.fused, what, recompute, p, st);
      case 32: return dev::run_variant<float, 32>(s.D, s.fused, what, recompute, p, st);
      case 64: return dev::run_variant<float, 64>(s.D, s.fused, what, recompute, p, st);
    }
  }
  return fail("gdn: no kernel variant for this shape");
}
}  // namespace

int dev::grid_slice() { return g_grid_slice > 0 && g_grid_slice < 65535 ? g_grid_slice : 65535; }
bool dev::state_pair_on() { return g_state_pair < 0 ? HYMO_GDN_STATE_PAIR != 0 : g_state_pair != 0; }
bool dev::adj_pair_on() { return g_adj_pair < 0 ? HYMO_GDN_ADJ_PAIR != 0 : g_adj_pair != 0; }

const char* gdn_check_shape(const Shape& s) {
  static thread_local std::string msg;
  char buf[256];
  msg.clear();
  if (!ok_dim(s.D) || !ok_dim(s.S)) {
    std::snprintf(buf, sizeof buf,
                  "gdn: expected head_dim D and state_dim S in {16, 32, 64, 128}, got D=%d S=%d",
                  s.D, s.S);
    msg = buf;
  } else if (s.B < 1 || s.T < 1 || s.H < 1) {
    std::snprintf(buf, sizeof buf, "gdn: expected B, T, H >= 1, got B=%d T=%d H=%d", s.B, s.T, s.H);
    msg = buf;
  } else if (s.dtype == DType::F32 && (s.S != s.D || s.S > 64)) {
    std::snprintf(buf, sizeof buf,
                  "gdn: the FP32 test variant needs S == D <= 64, got D=%d S=%d", s.D, s.S);
    msg = buf;
  } else if (!(s.eps > 0.f)) {
    msg = "gdn: expected eps > 0";
  } else if (int64_t(s.H) * std::max(s.D, s.S) >= (int64_t(1) << 24)) {
    // the kernels address a chunk's rows (up to 64 tokens of 2 H max(D, S) values, the
    // backward's split dO) with 32-bit offsets
    std::snprintf(buf, sizeof buf, "gdn: expected H * max(D, S) < 2^24, got H=%d D=%d S=%d",
                  s.H, s.D, s.S);
    msg = buf;
  }
  return msg.c_str();
}

const char* gdn_last_error() { return g_err.c_str(); }

void gdn_set_chunks_per_segment(int cps) { g_cps_override = cps; }
void gdn_set_segments(int nseg) { g_nseg_override = nseg; }
void gdn_set_tail_segments(int n, bool plain_too) {
  g_tail_override = n < 0 ? -1 : n;
  g_tail_plain = plain_too;
}
bool gdn_tail_segments_built() { return HYMO_GDN_TAIL != 0; }
void gdn_set_grid_slice(int n) { g_grid_slice = n; }
void gdn_set_state_pair(int mode) { g_state_pair = mode < 0 ? -1 : mode > 0; }
bool gdn_state_pair() { return dev::state_pair_on(); }
bool gdn_state_pair_fits(const Shape& s) {
  // (S, D <= 32 in BF16: the staged forward with the default head map)
  return s.dtype == DType::BF16 && s.H % 2 == 0 && dev::state_pair_fits(s.S, s.D);
}
void gdn_set_adj_pair(int mode) { g_adj_pair = mode < 0 ? -1 : mode > 0; }
bool gdn_adj_pair() { return dev::adj_pair_on(); }
bool gdn_adj_pair_fits(const Shape& s) {
  // (S <= 32, D = 32 in BF16: the staged backward's adjoint pass with the default head map)
  return s.dtype == DType::BF16 && s.H % 2 == 0 && dev::adj_pair_fits(s.S, s.D);
}

size_t gdn_clocks_bytes() {
  return size_t(dev::kClkKernels) * dev::kClkCtas * dev::kClkWords * sizeof(unsigned long long);
}

cudaError_t gdn_clocks_arm(void* buf) {
  if (!HYMO_GDN_CLOCKS && buf) {
    g_err = "gdn_clocks_arm: this build has no clock stamps; configure a profiling build with "
            "-DCMAKE_CUDA_FLAGS=-DHYMO_GDN_CLOCKS=1 (GDN_CUDA_FLAGS=-DHYMO_GDN_CLOCKS=1 for the scripts)";
    return cudaErrorNotSupported;
  }
  if (misaligned({buf})) return fail("gdn_clocks_arm: the buffer must be 16-byte aligned");
  g_clocks = static_cast<unsigned long long*>(buf);
  return cudaSuccess;
}

int gdn_segments(const Shape& s) {
  if (*gdn_check_shape(s)) return 0;
  return layout(s).NSEG;
}

size_t gdn_workspace_bytes(const Shape& s) {
  if (*gdn_check_shape(s)) return 0;
  return layout(s).total;
}

const float* gdn_saved_o(const Shape& s, const void* workspace) {
  if (*gdn_check_shape(s) || !workspace || !staged(s)) return nullptr;
  return reinterpret_cast<const float*>(static_cast<const char*>(workspace) + layout(s).dObuf);
}

// stream operations: the state pass and the output pass, plus the segment scan between
// them in the staged BF16 variants; the split path (S or D = 128) adds the parts' sum and
// epilogue
int gdn_forward_launches(const Shape& s, bool save_for_backward) {
  // (the training pass replaces the output pass: as many launches, unless the plain forward
  // drops its scan, HYMO_GDN_OUT_EARLY bit 16)
  if (split(s)) return dev::seg_scan_fwd(s.S / dev::split_ns(s.S), s.D / dev::split_nv(s.D)) ? 4 : 3;
  return staged(s) && dev::seg_scan_fwd_in(s.S, s.D, save_for_backward, false) ? 3 : 2;
}
int gdn_backward_launches(const Shape& s, bool states_from_forward) {
  // adjoint (or prologue) pass, main kernel, parameter reduction, plus the reverse
  // segment scan before the staged main kernel; the staged BF16 variants recompute with
  // the training forward, the generic ones with the state pass (1). The split path: the
  // epilogue's backward, the blocks' adjoint pass and main kernel, the parts' sums (in the main
  // kernel with HYMO_GDN_SPLIT_SUMS), the parameter reduction, recomputing with the training
  // forward less its parts' sum.
  if (split(s)) return 5 - HYMO_GDN_SPLIT_SUMS + (states_from_forward ? 0 : gdn_forward_launches(s, true) - 1);
  const int n = staged(s) && dev::seg_scan_bwd(s.S, s.D) ? 4 : 3;
  return n + (states_from_forward ? 0 : staged(s) ? gdn_forward_launches(s, true) : 1);
}
int gdn_segment_scans() { return HYMO_GDN_SEG_SCAN; }
int gdn_out_early() { return HYMO_GDN_OUT_EARLY; }
int gdn_split_sums() { return HYMO_GDN_SPLIT_SUMS; }

cudaError_t gdn_forward(const Shape& s, const FwdArgs& a, void* workspace, cudaStream_t stream,
                        bool save_for_backward) {
  g_err.clear();
  if (const char* m = gdn_check_shape(s); *m) return fail(m);
  if (!a.v || !a.b || !a.c || !a.gate || !a.A_log || !a.out || !workspace ||
      (s.fused && (!a.z || !a.dt_bias || !a.D_skip || !a.w_y)))
    return fail("gdn_forward: null pointer argument");
  if (misaligned({a.v, a.b, a.c, a.z, a.out, workspace}))
    return fail("gdn_forward: expected 16-byte aligned v, b, c, z, out and workspace");
  const Layout L = layout(s);
  dev::KParams p = make_params(s, L, a, workspace);
  if (!save_for_backward && (staged(s) || split(s)) && !g_tail_plain) {  // (unsplit: layout())
    p.NSEG = L.NSEG_plain;
    p.nlong = L.NSEG_plain;
    p.cps2 = L.cps;
  }
  const cudaError_t e = dispatch(s, save_for_backward ? 2 : 0, true, p, stream);
  note_forward(workspace, e == cudaSuccess && save_for_backward, seg_key(p));
  return e;
}

cudaError_t gdn_backward(const Shape& s, const BwdArgs& a, void* workspace,
                         bool states_from_forward, cudaStream_t stream) {
  g_err.clear();
  if (const char* m = gdn_check_shape(s); *m) return fail(m);
  const FwdArgs& in = a.in;
  if (!in.v || !in.b || !in.c || !in.gate || !in.A_log || !workspace || !a.dout || !a.dv ||
      !a.db || !a.dc || !a.dgate || !a.dA_log ||
      (s.fused && (!in.z || !in.dt_bias || !in.D_skip || !in.w_y || !a.dz || !a.ddt_bias ||
                   !a.dD_skip || !a.dw_y)))
    return fail("gdn_backward: null pointer argument");
  if (misaligned({in.v, in.b, in.c, in.z, workspace, a.dout, a.dv, a.db, a.dc, a.dz}))
    return fail("gdn_backward: expected 16-byte aligned v, b, c, z, dout, dv, db, dc, dz and workspace");
  const Layout L = layout(s);
  dev::KParams p = make_params(s, L, in, workspace);
  WsNote fw{};
  const bool noted = forward_note(workspace, fw);
  if (states_from_forward && (staged(s) || split(s)) && !(noted && fw.saved))
    return fail("gdn_backward: states_from_forward=true needs the forward to run on this "
                "workspace with save_for_backward=true (or pass states_from_forward=false)");
  if (states_from_forward && noted && !(fw.key == seg_key(p)))
    return fail("gdn_backward: the segments changed since this workspace's forward "
                "(gdn_set_chunks_per_segment, gdn_set_segments or gdn_set_tail_segments between "
                "the calls): run the forward again, or pass states_from_forward=false");
  // the BF16 backward consumes the saved forward (dO over o, dv's parts over o's): a second one
  // needs another saving forward
  if (staged(s) || split(s)) note_consumed(workspace);
  p.dout = a.dout; p.dv = a.dv; p.db = a.db; p.dc = a.dc; p.dgate = a.dgate; p.dz = a.dz;
  p.ddt_bias = a.ddt_bias; p.dA_log = a.dA_log; p.dD_skip = a.dD_skip; p.dw_y = a.dw_y;
  return dispatch(s, 1, !states_from_forward, p, stream);
}

}  // namespace hymo::gdn
