// The segment rule (gdn.cu's layout(), read through gdn_segments): the counts the benchmarks
// measured best (docs/kernels/gdn.md, "Segment length"), and the overrides; where gdn_saved_o
// points. Host code only:
// runs without a GPU, where the rule assumes 132 SMs (H100, H200); on a device with another SM
// count the HYMO_GDN_CPS_FILL cases are skipped.
#include <cstdio>

#include <cuda_runtime.h>

#include "gdn.h"

using namespace hymo::gdn;

static int g_fail = 0;

static Shape mk(int B, int T, int H, int D, int S) {
  Shape s;
  s.B = B; s.T = T; s.H = H; s.D = D; s.S = S; s.dtype = DType::BF16; s.fused = true;
  return s;
}

static void expect(const char* what, const Shape& s, int want) {
  const int got = gdn_segments(s);
  std::printf("  %-4s %-40s B=%d T=%d H=%d D=%d S=%d: %d segments (want %d)\n",
              got == want ? "ok" : "FAIL", what, s.B, s.T, s.H, s.D, s.S, got, want);
  g_fail += got != want;
}

int main() {
  int dev = 0, sms = 132;
  if (cudaGetDevice(&dev) == cudaSuccess)
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  cudaGetLastError();
  // the automatic rule (NC = T / 64 chunks a (b, h)), no segment split in halves (below)
  gdn_set_tail_segments(0);
  expect("default shape: 8 chunks", mk(4, 4096, 28, 32, 32), 8);
  expect("H = 64: 16 chunks", mk(4, 4096, 64, 32, 32), 4);
  expect("H = 32: 8 chunks", mk(4, 4096, 32, 32, 32), 8);
  expect("T = 2048: 4 chunks (448 CTAs at 8)", mk(4, 2048, 28, 32, 32), 8);
  expect("T = 512: halved to 2 (fewer than 400)", mk(4, 512, 28, 32, 32), 4);
  expect("D = 16 keeps 4", mk(4, 4096, 16, 16, 32), 16);
  expect("B = 2, H = 28: 56 pairs keep 4", mk(2, 4096, 28, 32, 32), 16);
  if (sms == 132) {  // HYMO_GDN_CPS_FILL: 8 where 512..799 CTAs fill the 2-CTA passes' last wave
    expect("64 pairs: 8 chunks (1.94 waves)", mk(4, 4096, 16, 32, 32), 8);
    expect("64 pairs: 8 chunks", mk(8, 4096, 8, 32, 32), 8);
    expect("96 pairs: 8 chunks (2.91 waves)", mk(4, 4096, 24, 32, 32), 8);
    expect("80 pairs keep 4 (2.42 waves)", mk(4, 4096, 20, 32, 32), 16);
  } else {
    std::printf("  skip the HYMO_GDN_CPS_FILL cases: this device has %d SMs, not 132\n", sms);
  }
  // the split path of S or D = 128 (C = 32: 128 chunks at T = 4096): the rule above over its
  // blocks (B H NS NV heads)
  expect("D = S = 128: 448 blocks, 32 chunks", mk(4, 4096, 28, 128, 128), 4);
  expect("D = S = 128, B H = 16: 64 blocks, 4", mk(1, 4096, 16, 128, 128), 32);
  expect("D = S = 128, B H = 256: 1024 blocks, 64", mk(8, 4096, 32, 128, 128), 2);
  expect("D = 128, S = 32: 224 blocks, 16", mk(4, 4096, 28, 128, 32), 8);
  {  // the generic rule (the FP32 variant, C = 32): about 1400 CTAs
    Shape f = mk(4, 4096, 28, 64, 64);
    f.dtype = DType::F32;
    expect("FP32 D = S = 64: 1400 CTAs (13)", f, 13);
  }
  // overrides (65 chunks at T = 4097)
  gdn_set_segments(7);
  expect("gdn_set_segments(7): 10 chunks, last 5", mk(1, 4097, 2, 32, 32), 7);
  gdn_set_segments(100);
  expect("gdn_set_segments(100): one chunk each", mk(1, 4097, 2, 32, 32), 65);
  gdn_set_segments(0);
  gdn_set_chunks_per_segment(3);
  expect("gdn_set_chunks_per_segment(3)", mk(1, 1000, 2, 32, 32), 6);
  // HYMO_GDN_TAIL's split last segments (gdn_set_tail_segments): cps / 2 chunks each, where cps
  // is even; in a build without the switch the setting changes nothing
  {
    const bool tb = gdn_tail_segments_built();
    std::printf("  (this build %s HYMO_GDN_TAIL)\n", tb ? "has" : "has no");
    gdn_set_tail_segments(1);
    expect("odd length: no split", mk(1, 1000, 2, 32, 32), 6);
    gdn_set_chunks_per_segment(0);
    expect("tail 1: 7 of 8 chunks, 2 of 4", mk(4, 4096, 28, 32, 32), tb ? 9 : 8);
    gdn_set_tail_segments(2);
    expect("tail 2: 6 of 8, 4 of 4", mk(4, 4096, 28, 32, 32), tb ? 10 : 8);
    // the split path's rule (split_tail_rule): at D = S = 128 the last segment split where the
    // blocks' CTAs fill four waves of three an SM and the segments are at least 16 chunks long
    gdn_set_tail_segments(-1);
    if (sms == 132) {
      expect("D = S = 128 rule: 3 of 32, 2 of 16 (1792 CTAs)", mk(4, 4096, 28, 128, 128), tb ? 5 : 4);
      expect("D = S = 128 rule: 512 CTAs keep 32 of 4", mk(1, 4096, 4, 128, 128), 32);
      expect("D = S = 128 rule: 8 chunks keep 4", mk(4, 1024, 28, 128, 128), 4);
    }
    expect("D = 128, S = 32: no split", mk(4, 4096, 28, 128, 32), 8);
    gdn_set_tail_segments(2);
    gdn_set_segments(7);
    expect("tail 2 of 7 segments: 5 of 10, 5 5 5", mk(1, 4097, 2, 32, 32), tb ? 8 : 7);
    gdn_set_segments(0);
    gdn_set_tail_segments(100);
    expect("tail past the segments: 16 of 4", mk(4, 4096, 28, 32, 32), tb ? 16 : 8);
    gdn_set_tail_segments(-1);
  }
  // HYMO_GDN_TAIL's rule (gdn.cu's tail_rule: the count of 0 to 3 whose modelled spans of the
  // backward main kernel, the training output pass and the adjoint pass are shortest, at least 2%
  // below none), where S <= 32, D = 32 and the segment count is automatic; the picks of run 246's
  // shapes are its best or near it (docs/kernels/gdn.md, "Segment length")
  if (gdn_tail_segments_built() && sms == 132) {
    // {what, B, T, H, D, S, segments}; D = 16 at B=1 H=28 (16 segments of 4 chunks), where the
    // model without the rule's D = 32 gate would pick 2
    struct Pick {
      const char* what;
      int B, T, H, D, S, want;
    };
    static const Pick picks[] = {
        {"split rule: default shape, 1 of 8", 4, 4096, 28, 32, 32, 9},
        {"split rule: S = 16, 1 of 8", 4, 4096, 28, 32, 16, 9},
        {"split rule: T = 2048, 1 of 8", 4, 2048, 28, 32, 32, 9},
        {"split rule: B = 1, 2 of 16", 1, 4096, 28, 32, 32, 18},
        {"split rule: H = 16, 2 of 8", 4, 4096, 16, 32, 32, 10},
        {"split rule: H = 64, none of 4", 4, 4096, 64, 32, 32, 4},
        {"split rule: H = 32, none of 8", 4, 4096, 32, 32, 32, 8},
        {"split rule: T = 512, none (one wave)", 4, 512, 28, 32, 32, 4},
        {"split rule: D = 16, none", 1, 4096, 28, 16, 32, 16},
    };
    for (const Pick& k : picks) expect(k.what, mk(k.B, k.T, k.H, k.D, k.S), k.want);
    gdn_set_tail_segments(0);
    const int d64 = gdn_segments(mk(4, 4096, 28, 64, 64));
    gdn_set_tail_segments(-1);
    expect("split rule: D = 64, none", mk(4, 4096, 28, 64, 64), d64);
    gdn_set_segments(8);
    expect("split rule: none with gdn_set_segments", mk(4, 4096, 28, 32, 32), 8);
    gdn_set_segments(0);
    gdn_set_tail_segments(2);
    expect("gdn_set_tail_segments overrides the rule", mk(4, 4096, 64, 32, 32), 6);
    // the workspace holds the rule's largest count (3 split), whatever it picks on this device
    for (const Shape& w : {mk(4, 4096, 28, 32, 32), mk(4, 4096, 64, 32, 32)}) {
      gdn_set_tail_segments(3);
      const size_t three = gdn_workspace_bytes(w);
      gdn_set_tail_segments(-1);
      const size_t ruled = gdn_workspace_bytes(w);
      std::printf("  %-4s workspace under the rule, H = %d: %zu bytes (3 split: %zu)\n", ruled == three ? "ok" : "FAIL",
                  w.H, ruled, three);
      g_fail += ruled != three;
    }
    gdn_set_tail_segments(-1);
  } else {
    std::printf("  skip the split rule's cases: %s\n",
                gdn_tail_segments_built() ? "this device has another SM count than 132" : "a build without HYMO_GDN_TAIL");
  }
  expect("a rejected shape: 0", mk(1, 64, 2, 24, 32), 0);
  // gdn_saved_o: inside the workspace for the staged BF16 kernels, none elsewhere
  {
    alignas(16) static char ws[1];  // only its address is used
    auto saved = [&](const char* what, Shape s, bool want) {
      const float* o = gdn_saved_o(s, ws);
      const bool inside = o && reinterpret_cast<const char*>(o) >= ws &&
                          reinterpret_cast<const char*>(o) + sizeof(float) * size_t(s.B) * s.T * s.H * s.D <=
                              ws + gdn_workspace_bytes(s);
      const bool ok = want ? inside : o == nullptr;
      std::printf("  %-4s gdn_saved_o %-32s %s\n", ok ? "ok" : "FAIL", what, o ? "inside the workspace" : "none");
      g_fail += !ok;
    };
    saved("BF16 D = S = 32", mk(2, 300, 3, 32, 32), true);
    saved("BF16 D = 64, S = 16", mk(1, 100, 2, 64, 16), true);
    saved("BF16 D = S = 128 (split)", mk(1, 100, 2, 128, 128), false);
    Shape f = mk(1, 100, 2, 32, 32);
    f.dtype = DType::F32;
    saved("FP32 (generic)", f, false);
    saved("a rejected shape", mk(1, 64, 2, 24, 32), false);
    std::printf("  %-4s gdn_saved_o without a workspace: none\n", gdn_saved_o(mk(1, 64, 2, 32, 32), nullptr) ? "FAIL" : "ok");
    g_fail += gdn_saved_o(mk(1, 64, 2, 32, 32), nullptr) != nullptr;
  }
  // the workspace of the split path: the per-chunk states (h0buf), dO, the parts of o / dv, dc and
  // db, and a few percent for the rest (session 28's review: the buffers were once sized from the
  // blocks' count, NS NV times too large)
  {
    const Shape s = mk(4, 4096, 28, 128, 128);
    const double BH = 4.0 * 28, BTH = BH * 4096, NC = 4096 / 32, SD = 128.0 * 128;
    const double core = 4 * (BH * NC * SD + BTH * 128 + BTH * 128 * 2 + 2 * BTH * 128 * 2);
    const double ws = double(gdn_workspace_bytes(s));
    const bool ok = ws >= core && ws <= 1.05 * core;
    std::printf("  %-4s workspace D = S = 128 (split): %.2f GiB, its large buffers %.2f GiB\n", ok ? "ok" : "FAIL",
                ws / 1073741824.0, core / 1073741824.0);
    g_fail += !ok;
  }
  // launches a call makes (the benchmark's report): the split path of S or D = 128 runs the
  // state pass, the segment scan, the output (or training) pass and the parts' sum; its backward
  // the epilogue's backward, the blocks' adjoint pass and main kernel, the parts' sums (in the
  // main kernel with HYMO_GDN_SPLIT_SUMS, gdn_split_sums) and the
  // parameter reduction, recomputing with the training forward less its parts' sum. Each
  // segment scan the build has (gdn_segment_scans: bit 1 the forward's, bit 2 the staged
  // backward's) is one launch more; off the split path the plain forward drops its scan with
  // HYMO_GDN_OUT_EARLY bit 16 (gdn_out_early, with bit 1) where S, D <= 32.
  {
    const int fs = gdn_segment_scans() & 1, bs = (gdn_segment_scans() >> 1) & 1;  // 0 or 1 each
    const int drop = fs && (gdn_out_early() & 17) == 17;  // the plain forward's scan dropped (S, D <= 32)
    auto launches = [&](const char* what, Shape s, int fwd_train, int fwd, int bwd_saved, int bwd_recompute) {
      const int f = gdn_forward_launches(s), ft = gdn_forward_launches(s, true),
                b0 = gdn_backward_launches(s, true), b1 = gdn_backward_launches(s, false);
      const bool ok = f == fwd && ft == fwd_train && b0 == bwd_saved && b1 == bwd_recompute;
      std::printf("  %-4s launches %-28s fwd %d (training %d), bwd %d / %d recomputing (expected %d (%d), %d / %d)\n",
                  ok ? "ok" : "FAIL", what, f, ft, b0, b1, fwd, fwd_train, bwd_saved, bwd_recompute);
      g_fail += !ok;
    };
    launches("BF16 D = S = 32", mk(4, 4096, 28, 32, 32), 2 + fs, 2 + fs - drop, 3 + bs, 5 + bs + fs);
    launches("BF16 D = S = 64", mk(1, 100, 2, 64, 64), 2 + fs, 2 + fs, 3, 5 + fs);
    launches("BF16 D = 64, S = 16", mk(1, 100, 2, 64, 16), 2 + fs, 2 + fs, 3, 5 + fs);  // (keeps its scan)
    const int ss = gdn_split_sums();  // the backward's parts summed in its main kernel: one launch fewer
    launches("BF16 D = S = 128 (split)", mk(4, 4096, 28, 128, 128), 3 + fs, 3 + fs, 5 - ss, 7 + fs - ss);
    launches("BF16 D = 128, S = 32 (split)", mk(1, 100, 2, 128, 32), 3 + fs, 3 + fs, 5 - ss, 7 + fs - ss);
  }
  std::printf("%s: %d failed\n", g_fail ? "FAILED" : "PASSED", g_fail);
  return g_fail ? 1 : 0;
}
