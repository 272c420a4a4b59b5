// GDN benchmark: CUDA-event medians of forward (fused) and forward+backward, inputs
// rotating through buffers larger than the 60 MB L2, each timed twice: from an idle GPU (fwd_ms,
// ...: the host's launch latency included) and with the stream held until the call is enqueued
// (fwd_held_ms, ...: the GPU's work alone). `--json`: one JSON object a shape
// (default shape first). Usage: hymo_gdn_bench [--json] [--iters N] [--cps a,b,..] [--nseg a,b,..]
//   [--shape B,T,H,D,S] [--quick] [--decay-scale F] [--clocks FILE]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gdn.h"
#include "gdn_test_util.h"

using namespace hymo::gdn;
using namespace hymo::gdn::util;

namespace {

struct Set {
  DevBuf v, b, c, gate, z, out, dout, dv, db, dc, dgate, dz;
};

struct Res {
  double fwd_ms, fwd_bwd_ms, fwd_train_ms;  // fwd_train: the forward with save_for_backward
  // the same calls timed with the stream held until the whole call is enqueued (StreamHold)
  double fwd_held_ms, fwd_bwd_held_ms, fwd_train_held_ms;
  double diag_share;   // diagonal blocks of the first input set that pass the 16-row test (DIAG16_TRAIN's)
  double diag8_share;  // ... and HYMO_GDN_DIAG8's (gdn_test_util.h diag_fast_shares)
};

double median(std::vector<float> x) {
  std::sort(x.begin(), x.end());
  return x[x.size() / 2];
}

// Holds a stream at a host function until release(): the calls enqueued meanwhile start on the
// GPU only once all of them are queued, so that the CUDA events around them time the GPU's work
// alone. Without it (the benchmark's first figures) the GPU is idle when the first event is
// recorded, and the time includes the host's work before the first kernel's launch and that
// launch's latency. A hold not released within 10 s lets the stream go and marks the figure.
class StreamHold {
 public:
  void hold(cudaStream_t stream) {
    go_.store(0);
    GDN_CUDA(cudaLaunchHostFunc(stream, &StreamHold::wait, this));
  }
  void release() { go_.store(1); }
  bool timed_out() const { return timed_out_.load() != 0; }

 private:
  static void CUDART_CB wait(void* self) {  // (on the driver's thread: no CUDA calls here)
    auto* h = static_cast<StreamHold*>(self);
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!h->go_.load()) {
      if (std::chrono::steady_clock::now() > end) {
        h->timed_out_.store(1);
        return;
      }
      std::this_thread::yield();
    }
  }
  std::atomic<int> go_{0}, timed_out_{0};
};

// A comma-separated list of whole numbers, each in [lo, hi], appended to out. Every item must be a
// number and nothing else ("4,,8", "8x" and "" are refused); false if one is not, with `bad` the
// item (or the whole text where it is empty).
bool parse_ints(const std::string& text, long lo, long hi, std::vector<int>& out, std::string& bad) {
  if (text.empty()) {
    bad = text;
    return false;
  }
  size_t pos = 0;
  for (;;) {
    const size_t comma = text.find(',', pos);
    const std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    char* end = nullptr;
    // (strtol alone would take " 8" and "+8": an item starts with a digit or '-')
    const bool starts = !item.empty() && (std::isdigit(static_cast<unsigned char>(item[0])) || item[0] == '-');
    const long x = starts ? std::strtol(item.c_str(), &end, 10) : 0;
    if (!starts || *end != '\0' || x < lo || x > hi) {
      bad = item;
      return false;
    }
    out.push_back(int(x));
    if (comma == std::string::npos) return true;
    pos = comma + 1;
  }
}

// decay_scale: A = -(h % 28 + 1) decay_scale (1: the spec's initialisation, A_log = log(h + 1))
// held: also time each call with the stream held (the _held figures; NaN without)
Res bench(const Shape& s, int iters, double decay_scale, bool held) {
  const size_t nv = size_t(s.B) * s.T * s.H * s.D, ns = size_t(s.B) * s.T * s.H * s.S,
               ng = size_t(s.B) * s.T * s.H;
  const size_t set_bytes = (4 * nv + 2 * ns + ng) * 2;  // v z out dout b c gate
  const int R = int(std::max<size_t>(2, (256ull << 20) / set_bytes + 1));
  uint64_t st = 0x9E3779B97F4A7C15ull;
  auto rnd = [&](size_t n, double sc) {  // fast uniform, unit variance (timing data only)
    std::vector<double> x(n);
    for (auto& e : x) {
      st ^= st << 13; st ^= st >> 7; st ^= st << 17;
      e = sc * 3.4641016 * (double(st >> 11) * (1.0 / 9007199254740992.0) - 0.5);
    }
    return x;
  };
  std::vector<Set> sets;
  std::vector<double> gate0;  // the first set's gate (diag_fast_shares)
  for (int r = 0; r < R; ++r) {
    Set st{DevBuf(nv, true), DevBuf(ns, true), DevBuf(ns, true), DevBuf(ng, true),
           DevBuf(nv, true), DevBuf(nv, true), DevBuf(nv, true), DevBuf(nv, true),
           DevBuf(ns, true), DevBuf(ns, true), DevBuf(ng, true), DevBuf(nv, true)};
    st.v.upload(rnd(nv, 1));
    st.b.upload(rnd(ns, 0.2));
    st.c.upload(rnd(ns, 0.2));
    const std::vector<double> gt = rnd(ng, 1);
    st.gate.upload(gt);
    if (r == 0) gate0 = gt;
    st.z.upload(rnd(nv, 1));
    st.dout.upload(rnd(nv, 1));
    sets.push_back(std::move(st));
  }
  DevBuf dtb(s.H, false), alog(size_t(s.H) * s.S, false), dsk(s.H, false), wy(s.D, false);
  DevBuf gdtb(s.H, false), galog(size_t(s.H) * s.S, false), gdsk(s.H, false), gwy(s.D, false);
  double diag_share = 0, diag8_share = 0;
  {
    std::vector<double> a(size_t(s.H) * s.S);
    for (int h = 0; h < s.H; ++h)
      for (int k = 0; k < s.S; ++k) a[size_t(h) * s.S + k] = std::log(double(h % 28 + 1) * decay_scale);
    alog.upload(a);
    if (s.D == 32 && s.S <= 32) {
      const DiagShares sh = diag_fast_shares(gate0, true, std::vector<double>(s.H, 0.0), a, s.B, s.T, s.H, s.S);
      diag_share = sh.diagmm;
      diag8_share = sh.diag8;
    }
    dtb.upload(std::vector<double>(s.H, 0.0));
    dsk.upload(std::vector<double>(s.H, 1.0));
    wy.upload(std::vector<double>(s.D, 1.0));
  }
  void* ws = nullptr;
  GDN_CUDA(cudaMalloc(&ws, gdn_workspace_bytes(s)));
  auto fargs = [&](Set& st) {
    FwdArgs fa;
    fa.v = st.v.p; fa.b = st.b.p; fa.c = st.c.p; fa.gate = st.gate.p; fa.z = st.z.p;
    fa.dt_bias = static_cast<float*>(dtb.p); fa.A_log = static_cast<float*>(alog.p);
    fa.D_skip = static_cast<float*>(dsk.p); fa.w_y = static_cast<float*>(wy.p);
    fa.out = st.out.p;
    return fa;
  };
  auto bargs = [&](Set& st) {
    BwdArgs ba;
    ba.in = fargs(st);
    ba.dout = st.dout.p; ba.dv = st.dv.p; ba.db = st.db.p; ba.dc = st.dc.p;
    ba.dgate = st.dgate.p; ba.dz = st.dz.p;
    ba.ddt_bias = static_cast<float*>(gdtb.p); ba.dA_log = static_cast<float*>(galog.p);
    ba.dD_skip = static_cast<float*>(gdsk.p); ba.dw_y = static_cast<float*>(gwy.p);
    return ba;
  };
  cudaEvent_t e0, e1;
  GDN_CUDA(cudaEventCreate(&e0));
  GDN_CUDA(cudaEventCreate(&e1));
  // median CUDA-event time of run(set) over iters calls, after 3 warm-up calls; hold_stream: with the
  // stream held while the call is enqueued (StreamHold)
  StreamHold hold;
  auto time_ms = [&](auto run, bool hold_stream = false) {
    std::vector<float> ts;
    for (int it = -3; it < iters; ++it) {
      Set& st = sets[(it + 3) % R];
      if (hold_stream) hold.hold(0);
      GDN_CUDA(cudaEventRecord(e0));
      run(st);
      GDN_CUDA(cudaEventRecord(e1));
      if (hold_stream) hold.release();
      GDN_CUDA(cudaEventSynchronize(e1));
      if (hold.timed_out()) {
        std::fprintf(stderr,
                     "hymo_gdn_bench: a stream hold timed out: a call was not queued within 10 s (a launch blocked while "
                     "the stream was held, as under a profiler that waits for each kernel: run with --no-held there)\n");
        std::exit(1);
      }
      float ms;
      GDN_CUDA(cudaEventElapsedTime(&ms, e0, e1));
      if (it >= 0) ts.push_back(ms);
    }
    return median(ts);
  };
  auto fwd = [&](Set& st) { GDN_CUDA(gdn_forward(s, fargs(st), ws, 0)); };
  auto fwd_train = [&](Set& st) { GDN_CUDA(gdn_forward(s, fargs(st), ws, 0, /*save_for_backward=*/true)); };
  auto fwd_bwd = [&](Set& st) {
    fwd_train(st);
    GDN_CUDA(gdn_backward(s, bargs(st), ws, true, 0));
  };
  const double tf = time_ms(fwd), tft = time_ms(fwd_train), tfb = time_ms(fwd_bwd);
  double tf_h = NAN, tft_h = NAN, tfb_h = NAN;
  if (held) {
    tf_h = time_ms(fwd, true);
    tft_h = time_ms(fwd_train, true);
    tfb_h = time_ms(fwd_bwd, true);
  }
  GDN_CUDA(cudaFree(ws));
  GDN_CUDA(cudaEventDestroy(e0));
  GDN_CUDA(cudaEventDestroy(e1));
  return {tf, tfb, tft, tf_h, tfb_h, tft_h, diag_share, diag8_share};
}

}  // namespace

int main(int argc, char** argv) {
  const char* usage =
      "usage: hymo_gdn_bench [--json] [--quick] [--iters N] [--cps L1,L2,...] [--nseg N1,N2,...]\n"
      "                      [--shape B,T,H,D,S]... [--decay-scale F] [--clocks FILE]\n"
      "                      [--state-pair M,...] [--adj-pair M,...] [--tail N,...] [--tail-plain]\n"
      "                      [--no-held]\n"
      "  the default shape and a sweep over T, H and D = S (--quick: the default shape only);\n"
      "  each call timed from an idle GPU (fwd_ms, fwd_bwd_ms, fwd_train_ms) and with the stream\n"
      "  held by a host function until the call is enqueued (the \"_held_ms\" figures; --no-held:\n"
      "  not, as under a profiler that waits for each kernel, where a held call cannot be queued;\n"
      "  --clocks implies it);\n"
      "  --cps: segment lengths in chunks (0 = the automatic rule); --nseg: segments a (b, h)\n"
      "  instead (gdn_set_segments; each list is run in turn; the JSON's \"segments\" is the\n"
      "  count the calls used); --shape may repeat;\n"
      "  --decay-scale: A = -(h % 28 + 1) F for head h (default 1: the spec's initial A_log;\n"
      "  0.1 gives milder decays, where more diagonal blocks take the one-product paths);\n"
      "  --clocks FILE (a build with -DHYMO_GDN_CLOCKS=1): the kernels' per-CTA time stamps of\n"
      "  each shape's last calls, appended to FILE (read it with scripts/gdn-clocks.py);\n"
      "  --state-pair M1,M2,...: the state pass over head pairs (1) or one head a CTA (0), each\n"
      "  in turn for every (cps, nseg) setting (gdn_set_state_pair; default: the build's); the\n"
      "  JSON's \"state_pair\" is what the calls used (0 where the shape has no head pairs);\n"
      "  --adj-pair M1,M2,...: likewise the backward's adjoint pass (gdn_set_adj_pair; each with\n"
      "  every --state-pair mode; the JSON's \"adj_pair\");\n"
      "  --tail N1,N2,...: the last N segments of each (b, h) in halves, dispatched last\n"
      "  (gdn_set_tail_segments; -1: the layout's rule, the default; each with every mode above;\n"
      "  the JSON's \"tail\" is the setting, \"segments\" the count); --tail-plain: the plain forward\n"
      "  split too (in BF16 it keeps its segments otherwise; the JSON's \"tail_plain\")\n";
  bool json = false, quick = false, tail_plain = false, held = true;
  int iters = 50;
  double decay_scale = 1.0;
  std::vector<int> cps_list, nseg_list, pair_list, adj_list, tail_list;
  std::vector<Shape> shapes;
  const char* clocks_path = nullptr;
  auto mk = [](int B, int T, int H, int D, int S) {
    Shape s;
    s.B = B; s.T = T; s.H = H; s.D = D; s.S = S; s.dtype = DType::BF16; s.fused = true;
    return s;
  };
  // the count lists, each parsed the same way: whole numbers in range, or an error naming the item
  struct ListOpt {
    const char* name;
    long lo, hi;
    const char* what;
    std::vector<int>* list;
  };
  const ListOpt list_opts[] = {
      {"--cps", 0, 1024, "segment lengths in 0..1024 (0: the automatic rule)", &cps_list},
      {"--nseg", 1, 1024, "counts in 1..1024", &nseg_list},
      {"--tail", -1, 1024, "counts in -1..1024 (-1: the layout's rule)", &tail_list},
      {"--state-pair", 0, 1, "0s and 1s", &pair_list},
      {"--adj-pair", 0, 1, "0s and 1s", &adj_list},
  };
  auto list_opt = [&](const char* arg) -> const ListOpt* {
    for (const ListOpt& o : list_opts)
      if (!std::strcmp(o.name, arg)) return &o;
    return nullptr;
  };
  // the arguments first (also without a GPU: --help, and bad input is an error there too)
  for (int i = 1; i < argc; ++i) {
    const bool takes = list_opt(argv[i]) || !std::strcmp(argv[i], "--iters") || !std::strcmp(argv[i], "--clocks") ||
                       !std::strcmp(argv[i], "--shape") || !std::strcmp(argv[i], "--decay-scale");
    if (takes && i + 1 >= argc) {
      std::fprintf(stderr, "hymo_gdn_bench: %s needs a value\n%s", argv[i], usage);
      return 2;
    }
    if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
      std::printf("%s", usage);
      return 0;
    } else if (!std::strcmp(argv[i], "--json")) {
      json = true;
    } else if (!std::strcmp(argv[i], "--quick")) {
      quick = true;
    } else if (!std::strcmp(argv[i], "--tail-plain")) {
      tail_plain = true;
    } else if (!std::strcmp(argv[i], "--no-held")) {
      held = false;
    } else if (const ListOpt* o = list_opt(argv[i])) {
      std::string bad;
      if (!parse_ints(argv[++i], o->lo, o->hi, *o->list, bad)) {
        std::fprintf(stderr, "hymo_gdn_bench: %s expects %s, got '%s'\n", o->name, o->what, bad.c_str());
        return 2;
      }
    } else if (!std::strcmp(argv[i], "--iters")) {
      std::vector<int> v;
      std::string bad;
      if (!parse_ints(argv[++i], 1, 1000000, v, bad) || v.size() != 1) {
        std::fprintf(stderr, "hymo_gdn_bench: --iters expects one count in 1..1000000, got '%s'\n", argv[i]);
        return 2;
      }
      iters = v[0];
    } else if (!std::strcmp(argv[i], "--clocks")) {
      clocks_path = argv[++i];
    } else if (!std::strcmp(argv[i], "--decay-scale")) {
      char* end = nullptr;
      decay_scale = std::strtod(argv[++i], &end);
      if (end == argv[i] || *end != '\0' || !(decay_scale > 0) || !std::isfinite(decay_scale)) {
        std::fprintf(stderr, "hymo_gdn_bench: --decay-scale expects a number > 0, got '%s'\n", argv[i]);
        return 2;
      }
    } else if (!std::strcmp(argv[i], "--shape")) {
      std::vector<int> v;
      std::string bad;
      if (!parse_ints(argv[++i], 1, 1L << 30, v, bad) || v.size() != 5) {
        std::fprintf(stderr, "hymo_gdn_bench: --shape expects B,T,H,D,S (positive), got '%s'\n", argv[i]);
        return 2;
      }
      shapes.push_back(mk(v[0], v[1], v[2], v[3], v[4]));
    } else {
      std::fprintf(stderr, "hymo_gdn_bench: unknown argument '%s'\n%s", argv[i], usage);
      return 2;
    }
  }
  if (clocks_path) held = false;  // (the stamps are the last calls': the idle forward + backward's)
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    std::printf("no CUDA device: skipping\n");
    return 77;
  }
  if (shapes.empty()) {
    shapes.push_back(mk(4, 4096, 28, 32, 32));  // default (hymo_750m GDN layer) first
    if (!quick) {
      for (int T : {512, 1024, 2048, 8192, 16384}) shapes.push_back(mk(4, T, 28, 32, 32));
      for (int H : {16, 32, 64}) shapes.push_back(mk(4, 4096, H, 32, 32));
      for (int D : {64, 128}) shapes.push_back(mk(4, 4096, 28, D, D));
    }
  }
  // (cps, nseg, state pair, adjoint pair, tail) settings: the --cps list, then the --nseg list,
  // each with every --state-pair mode, each of those with every --adj-pair mode (-1: the
  // build's), each of those with every --tail count (-1: the layout's rule)
  struct Setting {
    int cps, nseg, pair, adj, tail;
  };
  if (pair_list.empty()) pair_list.push_back(-1);
  if (adj_list.empty()) adj_list.push_back(-1);
  if (tail_list.empty()) tail_list.push_back(-1);
  std::vector<Setting> settings;
  auto add = [&](int c, int n) {
    for (int m : pair_list)
      for (int a : adj_list)
        for (int t : tail_list) settings.push_back({c, n, m, a, t});
  };
  for (int c : cps_list) add(c, 0);
  for (int n : nseg_list) add(0, n);
  if (settings.empty()) add(0, 0);
  // --clocks: the stamps' device buffer, armed for every call; FILE is opened (appending)
  // before the first measurement, so that a path that cannot be written fails at once
  DevBuf clk_buf;
  FILE* clk_file = nullptr;
  // the stamps' layout (gdn.cuh's ClkKernel and ClkWord): kernels, CTAs a kernel, words a CTA
  constexpr unsigned long long kClkKernels = 5, kClkCtas = 8192, kClkWords = 128;
  if (clocks_path) {
    if (gdn_clocks_bytes() != kClkKernels * kClkCtas * kClkWords * 8) {  // the record header below
      std::fprintf(stderr, "hymo_gdn_bench: --clocks: the library's stamp buffer is not the bench's layout\n");
      return 2;
    }
    clk_buf = DevBuf(gdn_clocks_bytes() / 4, false);
    if (gdn_clocks_arm(clk_buf.p) != cudaSuccess) {
      std::fprintf(stderr, "hymo_gdn_bench: --clocks: %s\n", gdn_last_error());
      return 2;
    }
    clk_file = std::fopen(clocks_path, "ab");
    if (!clk_file) {
      std::fprintf(stderr, "hymo_gdn_bench: --clocks: cannot open '%s' for appending\n", clocks_path);
      return 2;
    }
  }
  const double bw = 4.3e12;
  for (const Shape& s : shapes) {
    if (const char* m = gdn_check_shape(s); *m) {
      std::fprintf(stderr, "%s\n", m);
      return 1;
    }
    for (const auto& [cps, nseg, pair, adj, tail] : settings) {
      gdn_set_chunks_per_segment(cps);
      gdn_set_segments(nseg);
      gdn_set_tail_segments(tail, tail_plain);
      gdn_set_state_pair(pair);
      gdn_set_adj_pair(adj);
      // the state and adjoint passes' layouts these calls use: head pairs where this build's
      // kernels allow them on this shape
      const int pair_used = gdn_state_pair() && gdn_state_pair_fits(s);
      const int adj_used = gdn_adj_pair() && gdn_adj_pair_fits(s);
      if (clk_file) GDN_CUDA(cudaMemset(clk_buf.p, 0, gdn_clocks_bytes()));
      const Res r = bench(s, iters, decay_scale, held);
      if (clk_file) {
        // a record: 16 header words (magic "GDNCLK01", B, T, H, D, S, segments, kernels, CTAs a
        // kernel, words a CTA, 6 zero), then the buffer
        std::vector<unsigned long long> rec(16 + gdn_clocks_bytes() / 8, 0ull);
        const unsigned long long hdr[10] = {0x31304b4c434e4447ull, (unsigned long long)s.B, (unsigned long long)s.T,
                                            (unsigned long long)s.H, (unsigned long long)s.D, (unsigned long long)s.S,
                                            (unsigned long long)gdn_segments(s), kClkKernels, kClkCtas, kClkWords};
        std::copy(hdr, hdr + 10, rec.begin());
        GDN_CUDA(cudaMemcpy(rec.data() + 16, clk_buf.p, gdn_clocks_bytes(), cudaMemcpyDeviceToHost));
        if (std::fwrite(rec.data(), 8, rec.size(), clk_file) != rec.size() || std::fflush(clk_file) != 0) {
          std::fprintf(stderr, "hymo_gdn_bench: --clocks: writing '%s' failed\n", clocks_path);
          return 1;
        }
      }
      const double tok = double(s.B) * s.T * s.H;
      // minimal bytes: fwd reads v b c z gate, writes y; bwd reads v b c z gate dy, writes
      // dv db dc dz dgate (BF16); parameters are negligible
      const double fwd_bytes = tok * 2 * (3.0 * s.D + 2.0 * s.S + 1);
      const double bwd_bytes = tok * 2 * (6.0 * s.D + 4.0 * s.S + 2);
      const double floor_f = fwd_bytes / bw * 1e3, floor_fb = (fwd_bytes + bwd_bytes) / bw * 1e3;
      // the held figures, where measured (JSON has no NaN: the fields are left out without them)
      char held_json[256] = "", held_text[160] = "";
      if (held) {
        std::snprintf(held_json, sizeof held_json,
                      ", \"fwd_held_ms\": %.4f, \"fwd_bwd_held_ms\": %.4f, \"fwd_train_held_ms\": %.4f, "
                      "\"fwd_held_x_floor\": %.2f, \"fwd_bwd_held_x_floor\": %.2f",
                      r.fwd_held_ms, r.fwd_bwd_held_ms, r.fwd_train_held_ms, r.fwd_held_ms / floor_f,
                      r.fwd_bwd_held_ms / floor_fb);
        std::snprintf(held_text, sizeof held_text, "  held: fwd %.4f ms (%.2fx)  fwd+bwd %.4f ms (%.2fx)  training fwd %.4f ms",
                      r.fwd_held_ms, r.fwd_held_ms / floor_f, r.fwd_bwd_held_ms, r.fwd_bwd_held_ms / floor_fb,
                      r.fwd_train_held_ms);
      }
      if (json)
        std::printf(
            "{\"B\": %d, \"T\": %d, \"H\": %d, \"D\": %d, \"S\": %d, \"fwd_ms\": %.4f, "
            "\"fwd_bwd_ms\": %.4f, \"floor_ms\": %.4f, \"floor_fwd_bwd_ms\": %.4f, "
            "\"launches_fwd\": %d, \"launches_bwd\": %d, \"cps\": %d, \"nseg\": %d, \"segments\": %d, \"fwd_x_floor\": %.2f, "
            "\"fwd_bwd_x_floor\": %.2f, \"fwd_train_ms\": %.4f, \"launches_fwd_train\": %d, \"decay_scale\": %g, "
            "\"diag_fast_share\": %.3f, \"diag8_fast_share\": %.3f, \"state_pair\": %d, \"adj_pair\": %d, \"tail\": %d, \"tail_plain\": %d%s}\n",
            s.B, s.T, s.H, s.D, s.S, r.fwd_ms, r.fwd_bwd_ms, floor_f, floor_fb,
            gdn_forward_launches(s), gdn_backward_launches(s, true), cps, nseg, gdn_segments(s), r.fwd_ms / floor_f,
            r.fwd_bwd_ms / floor_fb, r.fwd_train_ms, gdn_forward_launches(s, true), decay_scale, r.diag_share, r.diag8_share,
            pair_used, adj_used, tail, int(tail_plain), held_json);
      else
        std::printf("B=%d T=%5d H=%2d D=%3d S=%3d cps=%d nseg=%d tail=%d%s (%d segments)%s%s  fwd %.4f ms (floor %.4f, %.2fx)  "
                    "fwd+bwd %.4f ms (floor %.4f, %.2fx)  training fwd %.4f ms  decay scale %g "
                    "(diagonal blocks passing the 16-row test: %.0f%%, the DIAG8 test: %.0f%%)%s\n",
                    s.B, s.T, s.H, s.D, s.S, cps, nseg, tail, tail_plain ? " (plain too)" : "", gdn_segments(s), pair_used ? " state pass: head pairs" : "",
                    adj_used ? " adjoint pass: head pairs" : "",
                    r.fwd_ms, floor_f, r.fwd_ms / floor_f, r.fwd_bwd_ms, floor_fb, r.fwd_bwd_ms / floor_fb,
                    r.fwd_train_ms, decay_scale, 100 * r.diag_share, 100 * r.diag8_share, held_text);
      std::fflush(stdout);
    }
  }
  if (clk_file) {
    gdn_clocks_arm(nullptr);
    std::fclose(clk_file);
  }
  return 0;
}
