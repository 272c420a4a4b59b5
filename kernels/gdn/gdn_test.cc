// GPU parity test of the GDN kernels against the FP64 CPU twin (ctest label gpu).
// Exits 77 (skip) when no CUDA device is present.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gdn.h"
#include "gdn_cpu.h"
#include "gdn_test_util.h"

using namespace hymo::gdn;
using namespace hymo::gdn::util;

static int g_fail = 0, g_checks = 0;
// the largest relative error of each tensor, per dtype (the summary line at the end; the
// floored checks, whose exact gradient is ~0, are not in it)
static std::map<std::string, double> g_worst;
static std::string g_dtype_tag;

// ||out - ref|| / ||ref||. Where the exact gradient vanishes (T = 1: the decay has
// nothing to act on and RMSNorm makes dyp orthogonal to v, so db, dc, dgate are 0;
// log-decay -28 everywhere: dg ~ e^-28), the RMS error against the unit scale of
// the inputs is checked instead, and the line says so.
// --explain: where a failed check's error sits (--explain all: every check's). For a
// [B,T,H,X] tensor, the share of the squared error by t mod 64 (the four 16-row blocks of a
// chunk where S, D <= 32; where the chunk is 32 tokens a bin spans two chunks' halves) and by
// the parity of the last index (the test's "mixed" A_log puts log 28 on even s), then the
// largest elements with out, ref and the error
static int g_explain = 0;  // 0 off, 1 failed checks, 2 every check
static bool g_repro = true;  // --no-repro: skip run_case's second run (bitwise reproducibility)
static int g_state_pair = -1;  // --state-pair: the first run's state pass (gdn_set_state_pair)
static int g_adj_pair = -1;    // --adj-pair: the first run's adjoint pass (gdn_set_adj_pair)
struct Dims {
  int B = 0, T = 0, H = 0, X = 0;  // X: the last dimension (D or S); B = 0: not per token
};

static void explain(const std::vector<double>& out, const std::vector<double>& ref, const Dims& dm) {
  std::vector<size_t> idx(out.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  auto e2 = [&](size_t i) { return (out[i] - ref[i]) * (out[i] - ref[i]); };
  double tot = 0;
  for (size_t i = 0; i < out.size(); ++i) tot += e2(i);
  if (!std::isfinite(tot)) {
    size_t bad = 0;
    for (double x : out) bad += !std::isfinite(x);
    std::printf("      %zu of %zu values are not finite\n", bad, out.size());
    return;
  }
  if (tot == 0) return;
  if (dm.B > 0) {
    double blk[4] = {0, 0, 0, 0}, par[2] = {0, 0};
    for (size_t i = 0; i < out.size(); ++i) {
      const int t = int(i / (size_t(dm.H) * dm.X) % dm.T), x = int(i % dm.X);
      blk[(t % 64) / 16] += e2(i);
      par[x % 2] += e2(i);
    }
    std::printf("      error share by t mod 64 in 0-15/16-31/32-47/48-63: %.2f %.2f %.2f %.2f;"
                " last index even/odd: %.2f %.2f\n",
                blk[0] / tot, blk[1] / tot, blk[2] / tot, blk[3] / tot, par[0] / tot, par[1] / tot);
  }
  const size_t k = std::min<size_t>(5, idx.size());
  std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), [&](size_t a, size_t b) { return e2(a) > e2(b); });
  for (size_t j = 0; j < k; ++j) {
    const size_t i = idx[j];
    if (dm.B > 0)
      std::printf("      b=%d t=%d h=%d x=%d", int(i / (size_t(dm.T) * dm.H * dm.X)),
                  int(i / (size_t(dm.H) * dm.X) % dm.T), int(i / dm.X % dm.H), int(i % dm.X));
    else
      std::printf("      i=%zu", i);
    std::printf("  out %+.9e ref %+.9e err %+.3e (%.2f of the squared error)\n", out[i], ref[i],
                out[i] - ref[i], e2(i) / tot);
  }
}

// What a check knows beyond out and ref: the tensor's dims (--explain), for a per-head sum
// the terms' magnitudes (CpuGrads::*_mag), and for the FP32 variant the reference again from
// inputs jittered at FP32's rounding (see check()).
struct Extra {
  Dims dm;
  const std::vector<double>* mag = nullptr;
  const std::vector<double>* jit = nullptr;
};

// Ill-conditioned instances (docs/kernels/gdn.md, "Parity": "The reading for ill-conditioned
// instances"). Where ||out - ref|| / ||ref|| misses tol, a check still passes (printed "ok*",
// counted at the end) when
//  - a per-head sum over tokens (dt_bias, A_log, D_skip; both dtypes) is within tol of the sum
//    of its terms' magnitudes (||out - ref|| / ||sum_t |term_t| ||): the per-token terms held to
//    the per-tensor tolerance, summed; its condition number (that over ||ref||) is printed; or
//  - (FP32 variant) any tensor is within kSensFactor times the instance's sensitivity to FP32 rounding
//    (sens = ||ref(x') - ref(x)|| / ||ref(x)||, every input and dout moved by a random relative
//    2^-24), e.g. a token whose RMSNorm input o + D_skip v nearly cancels. kSensFactor covers
//    PyTorch's own FP32 chunked form (bench/gdn/fp32_floor.py: at most 53 on 84 instances).
constexpr double kSensFactor = 64;
// The BF16 training forward's saved FP32 o (gdn_saved_o), which the backward's decay-parameter
// gradients rest on: its operands are BF16 high + low pairs (about 16 bits), so it is held to
// FP32-like accuracy, far inside the BF16 outputs' 1e-2.
constexpr double kSavedOTol = 1e-4;
static int g_cond_pass = 0;

static void check(const std::string& what, const std::vector<double>& out,
                  const std::vector<double>& ref, double tol, double tol_abs, const Extra& ex = Extra()) {
  ++g_checks;
  double num = 0, den = 0, jn = 0, mm = 0;
  bool finite = true;
  for (size_t i = 0; i < out.size(); ++i) {
    finite = finite && std::isfinite(out[i]);
    num += (out[i] - ref[i]) * (out[i] - ref[i]);
    den += ref[i] * ref[i];
    if (ex.jit) jn += ((*ex.jit)[i] - ref[i]) * ((*ex.jit)[i] - ref[i]);
    if (ex.mag) mm += (*ex.mag)[i] * (*ex.mag)[i];
  }
  // exact gradient ~0 (RMS < 1e-3 against O(1) inputs): compare the RMS error with
  // the inputs' unit scale instead, at tol_abs
  const bool floored = den < 1e-6 * double(out.size());
  const double err = finite ? std::sqrt(num / (floored ? double(out.size()) : den)) : INFINITY;
  const double sens = (ex.jit && !floored) ? std::sqrt(jn / den) : 0.0;
  const double vs_mag = (ex.mag && mm > 0) ? std::sqrt(num / mm) : INFINITY;
  bool ok = std::isfinite(err) && err < (floored ? tol_abs : tol);
  bool by_mag = false, by_sens = false;
  if (!ok && std::isfinite(err) && !floored) {
    by_mag = ex.mag && vs_mag < tol;
    by_sens = !by_mag && ex.jit && err < kSensFactor * sens;
  }
  const bool by_cond = by_mag || by_sens;
  ok = ok || by_cond;
  if (!ok) ++g_fail;
  if (by_cond) ++g_cond_pass;
  if (!floored) {
    double& wst = g_worst[g_dtype_tag + " " + what];
    wst = std::isfinite(err) ? std::max(wst, err) : INFINITY;
  }
  char note[200] = "";
  int nn = 0;
  if (ex.jit && !floored)
    nn = std::snprintf(note, sizeof note, "  [sens %.1e]", sens);
  if (ex.mag && !floored && mm > 0 && std::isfinite(err))
    nn += std::snprintf(note + nn, sizeof note - nn, "  [cond %.0f; vs the terms' magnitudes %.2e]",
                        std::sqrt(mm / den), vs_mag);
  if (by_mag)
    std::snprintf(note + nn, sizeof note - nn, "  ill-conditioned: within tol of the terms' magnitudes");
  else if (by_sens)
    std::snprintf(note + nn, sizeof note - nn, "  ill-conditioned: within %.0f sens", kSensFactor);
  std::printf("  %-4s %-14s %s %.3e (tol %.0e)%s%s\n", by_cond ? "ok*" : ok ? "ok" : "FAIL", what.c_str(),
              floored ? "abs" : "rel", err, floored ? tol_abs : tol,
              floored ? "  [exact gradient ~0: RMS error vs unit scale]" : "", note);
  if (g_explain == 2 || (g_explain == 1 && (!ok || by_cond))) explain(out, ref, ex.dm);
}

struct Case {
  int B, T, H, D, S;
  DType dt;
  bool fused;
  double gate_mean, alog_max;  // alog_max < 0: A_log = log(28) everywhere (extreme);
                               // alog_max = 0: log(28) on even s, U(0, log 4) on odd s
  bool recompute;
  // chunks a segment (gdn_set_chunks_per_segment): 1, every chunk its own segment, the
  // most segment scan work (what the automatic rule picks at these small B*H); 0 the
  // automatic rule
  int cps = 1;
  // segments a (b, h) (gdn_set_segments; 0: from cps): ceil(chunks / nseg) chunks a segment,
  // the last one shorter
  int nseg = 0;
  // the segment grids' slices (gdn_set_grid_slice; 0: only where the grid's limit needs them)
  int slice = 0;
  // the last segments of each (b, h) split in halves and dispatched last (gdn_set_tail_segments,
  // HYMO_GDN_TAIL; -1: the layout's rule), and whether the plain forward splits them too
  int tail = -1;
  bool tail_plain = false;
};

// A case's inputs and output gradient, drawn from its seed (rounded to the dtype's I/O).
static void draw_case(const Case& k, uint64_t seed, CpuInputs& in, std::vector<double>& dout) {
  const bool bf = k.dt == DType::BF16;
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> n01(0.0, 1.0);
  std::uniform_real_distribution<double> u01(0.0, 1.0);
  const size_t nv = size_t(k.B) * k.T * k.H * k.D, ns = size_t(k.B) * k.T * k.H * k.S,
               ng = size_t(k.B) * k.T * k.H;
  auto fill = [&](std::vector<double>& x, size_t n, double mean, double sc) {
    x.resize(n);
    for (auto& e : x) e = mean + sc * n01(rng);
  };
  fill(in.v, nv, 0, 1);
  fill(in.z, nv, 0, 1);
  fill(in.b, ns, 0, 1 / std::sqrt(double(k.S)));
  fill(in.c, ns, 0, 1 / std::sqrt(double(k.S)));
  fill(in.gate, ng, k.gate_mean, 1);
  if (!k.fused)
    for (auto& e : in.gate) e = 1 / (1 + std::exp(-e));
  fill(in.dt_bias, k.H, 0, 0.3);
  in.A_log.resize(size_t(k.H) * k.S);
  for (size_t i = 0; i < in.A_log.size(); ++i)
    in.A_log[i] = k.alog_max < 0 ? std::log(28.0)
                  : k.alog_max == 0 ? ((i % 2 == 0) ? std::log(28.0) : std::log(4.0) * u01(rng))
                                    : k.alog_max * u01(rng);
  fill(in.D_skip, k.H, 1, 0.2);
  fill(in.w_y, k.D, 1, 0.2);
  for (auto* x : {&in.v, &in.z, &in.b, &in.c, &in.gate}) round_io(*x, bf);
  for (auto* x : {&in.dt_bias, &in.A_log, &in.D_skip, &in.w_y}) round_io(*x, false);
  fill(dout, nv, 0, 1);
  round_io(dout, bf);
}

// --dump-case N FILE: case N's inputs as run_case draws them, for other evaluations of the
// same function on the same numbers (bench/gdn/fp32_floor.py --case-file). One text line
// "hymo-gdn-case B T H D S fused dtype" (dtype bf16 or f32: the values are already rounded to
// it, BF16 for v, b, c, gate, z and dout, FP32 for the rest), then float64 arrays (little-endian) in the order v, b, c,
// gate, z, dt_bias, A_log, D_skip, w_y, dout.
static bool dump_case(const Case& k, uint64_t seed, const char* path) {
  CpuInputs in;
  std::vector<double> dout;
  draw_case(k, seed, in, dout);
  FILE* f = std::fopen(path, "wb");
  if (!f) return false;
  std::fprintf(f, "hymo-gdn-case %d %d %d %d %d %d %s\n", k.B, k.T, k.H, k.D, k.S, k.fused ? 1 : 0,
               k.dt == DType::BF16 ? "bf16" : "f32");
  bool ok = true;
  for (const auto* x : {&in.v, &in.b, &in.c, &in.gate, &in.z, &in.dt_bias, &in.A_log, &in.D_skip, &in.w_y, &dout})
    ok = ok && std::fwrite(x->data(), sizeof(double), x->size(), f) == x->size();
  return std::fclose(f) == 0 && ok;
}

static void run_case(const Case& k, uint64_t seed) {
  const bool bf = k.dt == DType::BF16;
  g_dtype_tag = bf ? "bf16" : "f32";
  // A_log: "log28" everywhere (alog_max < 0), "mixed" (log 28 on even s, U(0, log 4) on odd,
  // alog_max = 0), else "U(0,x)"
  char alog_desc[32];
  if (k.alog_max < 0)
    std::snprintf(alog_desc, sizeof alog_desc, "log28");
  else if (k.alog_max == 0)
    std::snprintf(alog_desc, sizeof alog_desc, "mixed");
  else
    std::snprintf(alog_desc, sizeof alog_desc, "U(0,%.2f)", k.alog_max);
  std::printf("case B=%d T=%d H=%d D=%d S=%d %s %s gate_mean=%.1f A_log=%s cps=%s%s%s%s%s\n", k.B,
              k.T, k.H, k.D, k.S, bf ? "bf16" : "f32", k.fused ? "fused" : "unfused", k.gate_mean, alog_desc,
              k.cps ? std::to_string(k.cps).c_str() : "auto",
              (k.nseg ? " nseg=" + std::to_string(k.nseg) : std::string()).c_str(),
              (k.slice ? " slices of " + std::to_string(k.slice) : std::string()).c_str(),
              (k.tail >= 0 ? " tail=" + std::to_string(k.tail) + (k.tail_plain ? " (plain too)" : "")
                           : std::string()).c_str(),
              k.recompute ? " (bwd recomputes states)" : "");
  gdn_set_chunks_per_segment(k.cps);
  gdn_set_segments(k.nseg);
  gdn_set_grid_slice(k.slice);
  gdn_set_tail_segments(k.tail, k.tail_plain);
  gdn_set_state_pair(g_state_pair);
  gdn_set_adj_pair(g_adj_pair);
  CpuShape cs;
  cs.B = k.B; cs.T = k.T; cs.H = k.H; cs.D = k.D; cs.S = k.S; cs.fused = k.fused; cs.eps = 1e-6;
  const size_t nv = size_t(k.B) * k.T * k.H * k.D, ns = size_t(k.B) * k.T * k.H * k.S,
               ng = size_t(k.B) * k.T * k.H;
  CpuInputs in;
  std::vector<double> dout;
  draw_case(k, seed, in, dout);
  if (bf && k.D == 32 && k.S <= 32) {  // the HYMO_GDN_DIAG8 fast paths (gdn.cuh)
    const DiagShares sh = diag_fast_shares(in.gate, k.fused, in.dt_bias, in.A_log, k.B, k.T, k.H, k.S);
    std::printf("  diagonal blocks passing the 16-row test: %.0f%%, the DIAG8 test: %.0f%%\n",
                100 * sh.diagmm, 100 * sh.diag8);
  }

  std::vector<double> yref;
  cpu_forward(cs, in, yref);
  CpuGrads gref;
  cpu_backward(cs, in, dout, gref);
  // the FP32 variant: the reference again from every input and dout moved by a random
  // relative 2^-24 (FP32's unit roundoff), the instance's sensitivity to FP32 rounding
  std::vector<double> yjit;
  CpuGrads gjit;
  if (!bf) {
    std::mt19937_64 jr(seed ^ 0x9e3779b97f4a7c15ull);
    std::uniform_real_distribution<double> um(-1.0, 1.0);
    auto jig = [&](const std::vector<double>& x) {
      std::vector<double> y(x);
      for (auto& e : y) e *= 1 + std::ldexp(um(jr), -24);
      return y;
    };
    CpuInputs ij = in;
    for (auto* x : {&ij.v, &ij.b, &ij.c, &ij.gate, &ij.z, &ij.dt_bias, &ij.A_log, &ij.D_skip, &ij.w_y})
      *x = jig(*x);
    cpu_forward(cs, ij, yjit);
    cpu_backward(cs, ij, jig(dout), gjit);
  }

  Shape s;
  s.B = k.B; s.T = k.T; s.H = k.H; s.D = k.D; s.S = k.S; s.dtype = k.dt; s.fused = k.fused;
  s.eps = 1e-6f;
  DevBuf v(nv, bf), b(ns, bf), c(ns, bf), gate(ng, bf), z(nv, bf), out(nv, bf), dO(nv, bf);
  DevBuf dv(nv, bf), db(ns, bf), dc(ns, bf), dgate(ng, bf), dz(nv, bf);
  DevBuf dtb(k.H, false), alog(size_t(k.H) * k.S, false), dsk(k.H, false), wy(k.D, false);
  DevBuf gdtb(k.H, false), galog(size_t(k.H) * k.S, false), gdsk(k.H, false), gwy(k.D, false);
  v.upload(in.v); b.upload(in.b); c.upload(in.c); gate.upload(in.gate); z.upload(in.z);
  dO.upload(dout);
  dtb.upload(in.dt_bias); alog.upload(in.A_log); dsk.upload(in.D_skip); wy.upload(in.w_y);
  for (DevBuf* x : {&out, &dv, &db, &dc, &dgate, &dz, &gdtb, &galog, &gdsk, &gwy}) x->poison();
  void* ws = nullptr;
  const size_t wsb = gdn_workspace_bytes(s);
  GDN_CUDA(cudaMalloc(&ws, wsb));
  GDN_CUDA(cudaMemset(ws, 0xff, wsb));
  FwdArgs fa;
  fa.v = v.p; fa.b = b.p; fa.c = c.p; fa.gate = gate.p; fa.z = z.p;
  fa.dt_bias = static_cast<float*>(dtb.p); fa.A_log = static_cast<float*>(alog.p);
  fa.D_skip = static_cast<float*>(dsk.p); fa.w_y = static_cast<float*>(wy.p); fa.out = out.p;
  // the training forward (it leaves o and the chunk states for the backward) where the
  // backward takes the forward's states, the plain forward where it recomputes them
  cudaError_t e = gdn_forward(s, fa, ws, 0, /*save_for_backward=*/!k.recompute);
  if (e != cudaSuccess) std::printf("  forward: %s %s\n", cudaGetErrorString(e), gdn_last_error());
  GDN_CUDA(e);
  GDN_CUDA(cudaDeviceSynchronize());
  // the FP32 o the training forward leaves for the backward (staged BF16 kernels): the
  // decay-parameter gradients rest on it, so it must be FP32-accurate, not BF16
  std::vector<double> osaved;
  if (const float* so = k.recompute ? nullptr : gdn_saved_o(s, ws)) {
    std::vector<float> of(nv);
    GDN_CUDA(cudaMemcpy(of.data(), so, nv * sizeof(float), cudaMemcpyDeviceToHost));
    osaved.assign(of.begin(), of.end());
  }
  BwdArgs ba;
  ba.in = fa;
  ba.dout = dO.p; ba.dv = dv.p; ba.db = db.p; ba.dc = dc.p; ba.dgate = dgate.p; ba.dz = dz.p;
  ba.ddt_bias = static_cast<float*>(gdtb.p); ba.dA_log = static_cast<float*>(galog.p);
  ba.dD_skip = static_cast<float*>(gdsk.p); ba.dw_y = static_cast<float*>(gwy.p);
  if (k.recompute) GDN_CUDA(cudaMemset(ws, 0xff, wsb));
  e = gdn_backward(s, ba, ws, !k.recompute, 0);
  if (e != cudaSuccess) std::printf("  backward: %s %s\n", cudaGetErrorString(e), gdn_last_error());
  GDN_CUDA(e);
  GDN_CUDA(cudaDeviceSynchronize());
  const double tol = bf ? 1e-2 : 1e-5, tabs = bf ? 1e-2 : 1e-3;
  const Dims dd{k.B, k.T, k.H, k.D}, ds{k.B, k.T, k.H, k.S}, dg{k.B, k.T, k.H, 1};
  auto J = [&](const std::vector<double>& x) { return bf ? nullptr : &x; };
  check(k.fused ? "y" : "o", out.download(), yref, tol, tabs, {dd, nullptr, J(yjit)});
  if (!osaved.empty()) {
    std::vector<double> oref;
    if (k.fused) {  // o itself: the unfused function of g = sigmoid(gate_raw + dt_bias)
      CpuShape cu = cs;
      cu.fused = false;
      CpuInputs iu = in;
      for (size_t i = 0; i < iu.gate.size(); ++i)
        iu.gate[i] = 1 / (1 + std::exp(-(in.gate[i] + in.dt_bias[i % k.H])));
      cpu_forward(cu, iu, oref);
    } else {
      oref = yref;
    }
    check("o_saved", osaved, oref, kSavedOTol, kSavedOTol, {dd, nullptr, nullptr});
  }
  check("dv", dv.download(), gref.v, tol, tabs, {dd, nullptr, J(gjit.v)});
  check("db", db.download(), gref.b, tol, tabs, {ds, nullptr, J(gjit.b)});
  check("dc", dc.download(), gref.c, tol, tabs, {ds, nullptr, J(gjit.c)});
  check(k.fused ? "dgate_raw" : "dg", dgate.download(), gref.gate, tol, tabs, {dg, nullptr, J(gjit.gate)});
  check("dA_log", galog.download(), gref.A_log, tol, tabs, {Dims(), &gref.A_log_mag, J(gjit.A_log)});
  if (k.fused) {
    check("dz", dz.download(), gref.z, tol, tabs, {dd, nullptr, J(gjit.z)});
    check("ddt_bias", gdtb.download(), gref.dt_bias, tol, tabs, {Dims(), &gref.dt_bias_mag, J(gjit.dt_bias)});
    check("dD_skip", gdsk.download(), gref.D_skip, tol, tabs, {Dims(), &gref.D_skip_mag, J(gjit.D_skip)});
    check("dw_y", gwy.download(), gref.w_y, tol, tabs, {Dims(), nullptr, J(gjit.w_y)});
  }
  if (g_repro) {
    // bitwise reproducibility: the same forward and backward again on the same inputs, into
    // poisoned outputs and workspace, must write the same bits to every output (no order of
    // atomics, or of anything else, may depend on the run)
    std::vector<std::pair<const char*, DevBuf*>> outs = {
        {k.fused ? "y" : "o", &out}, {"dv", &dv}, {"db", &db}, {"dc", &dc},
        {k.fused ? "dgate_raw" : "dg", &dgate}, {"dA_log", &galog}};
    if (k.fused)
      for (auto x : {std::make_pair("dz", &dz), std::make_pair("ddt_bias", &gdtb),
                     std::make_pair("dD_skip", &gdsk), std::make_pair("dw_y", &gwy)})
        outs.push_back(x);
    std::vector<std::vector<double>> first;
    for (auto& [name, x] : outs) {
      first.push_back(x->download());
      x->poison();
    }
    // where the BF16 state pass can take two heads a CTA (HYMO_GDN_STATE_PAIR: S <= 32, D = 32, H
    // even), the second run takes the other layout, whose arithmetic is the same: the same bits;
    // likewise the backward's adjoint pass (HYMO_GDN_ADJ_PAIR)
    const bool flip = gdn_state_pair_fits(s);
    const bool pair2 = flip ? !gdn_state_pair() : gdn_state_pair();
    gdn_set_state_pair(pair2 ? 1 : 0);
    const bool aflip = gdn_adj_pair_fits(s);
    const bool apair2 = aflip ? !gdn_adj_pair() : gdn_adj_pair();
    gdn_set_adj_pair(apair2 ? 1 : 0);
    GDN_CUDA(cudaMemset(ws, 0xff, wsb));
    GDN_CUDA(gdn_forward(s, fa, ws, 0, !k.recompute));
    if (k.recompute) GDN_CUDA(cudaMemset(ws, 0xff, wsb));
    GDN_CUDA(gdn_backward(s, ba, ws, !k.recompute, 0));
    GDN_CUDA(cudaDeviceSynchronize());
    gdn_set_state_pair(g_state_pair);
    gdn_set_adj_pair(g_adj_pair);
    std::string differ;
    for (size_t i = 0; i < outs.size(); ++i) {
      const std::vector<double> again = outs[i].second->download();
      if (std::memcmp(again.data(), first[i].data(), again.size() * sizeof(double)) != 0)
        differ += std::string(differ.empty() ? "" : ", ") + outs[i].first;
    }
    ++g_checks;
    if (!differ.empty()) ++g_fail;
    std::printf("  %-4s %-14s a second forward and backward%s%s wrote the same bits%s%s\n",
                differ.empty() ? "ok" : "FAIL", "repro",
                !flip ? "" : pair2 ? " (state pass: head pairs)" : " (state pass: one head a CTA)",
                !aflip ? "" : apair2 ? " (adjoint pass: head pairs)" : " (adjoint pass: one head a CTA)",
                differ.empty() ? "" : "; they differ in ", differ.c_str());
  }
  GDN_CUDA(cudaFree(ws));
}

int main(int argc, char** argv) {
  // --quick: skip the cases with T > 1000; --max-t N: skip those with T > N; --max-bh N:
  // skip those with more than N (b, h) pairs (the last two for compute-sanitizer runs,
  // which are slow); --from N: skip the first N cases of the list (each case keeps its seed),
  // e.g. to run a sanitizer on the cases appended last
  // --seed N: the first case's seed (default 12345; case i gets N + i, skipped cases included),
  // for fresh inputs; --dtype bf16|f32: only that dtype's cases; --explain [all]: where
  // a failed (every) check's error sits; --dump-case N FILE: write case N's inputs (with
  // --seed's numbering: seed + N) and exit, no device needed; --no-repro: no second forward and
  // backward a case (by default each case runs twice and checks that every output has the same
  // bits both times; where the state pass can take head pairs, the second run takes the other
  // layout than the first, and so does the adjoint pass); --state-pair 0|1: the first run's
  // state pass (gdn_set_state_pair; default the build's, HYMO_GDN_STATE_PAIR); --adj-pair 0|1:
  // its adjoint pass (gdn_set_adj_pair; default the build's, HYMO_GDN_ADJ_PAIR)
  long max_t = -1, max_bh = -1, from = 0, seed0 = 12345, only_dt = -1, dump_idx = -1;
  const char* dump_path = nullptr;
  // a line at a time even into a file: a run cut short by a timeout (compute-sanitizer) still
  // shows how far it got (run 134's racecheck printed nothing in 230 s)
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  auto count = [&](const char* opt, const char* text) {
    char* end = nullptr;
    const long x = std::strtol(text, &end, 10);
    if (end == text || *end != '\0' || x < 0) {
      std::fprintf(stderr, "%s: %s expects a count >= 0, got \"%s\"\n", argv[0], opt, text);
      std::exit(2);
    }
    return x;
  };
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      max_t = 1000;
    } else if (std::strcmp(argv[i], "--max-t") == 0 && i + 1 < argc) {
      max_t = count("--max-t", argv[++i]);
    } else if (std::strcmp(argv[i], "--max-bh") == 0 && i + 1 < argc) {
      max_bh = count("--max-bh", argv[++i]);
    } else if (std::strcmp(argv[i], "--from") == 0 && i + 1 < argc) {
      from = count("--from", argv[++i]);
    } else if (std::strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
      seed0 = count("--seed", argv[++i]);
    } else if (std::strcmp(argv[i], "--dump-case") == 0 && i + 2 < argc) {
      dump_idx = count("--dump-case", argv[++i]);
      dump_path = argv[++i];
    } else if (std::strcmp(argv[i], "--no-repro") == 0) {
      g_repro = false;
    } else if ((std::strcmp(argv[i], "--state-pair") == 0 || std::strcmp(argv[i], "--adj-pair") == 0) &&
               i + 1 < argc) {
      const char* opt = argv[i];
      const char* m = argv[++i];
      if (std::strcmp(m, "0") != 0 && std::strcmp(m, "1") != 0) {
        std::fprintf(stderr, "%s: %s expects 0 or 1, got \"%s\"\n", argv[0], opt, m);
        return 2;
      }
      (std::strcmp(opt, "--adj-pair") == 0 ? g_adj_pair : g_state_pair) = m[0] - '0';
    } else if (std::strcmp(argv[i], "--explain") == 0) {
      g_explain = (i + 1 < argc && std::strcmp(argv[i + 1], "all") == 0) ? (++i, 2) : 1;
    } else if (std::strcmp(argv[i], "--dtype") == 0 && i + 1 < argc) {
      const char* d = argv[++i];
      if (std::strcmp(d, "bf16") == 0) {
        only_dt = int(DType::BF16);
      } else if (std::strcmp(d, "f32") == 0) {
        only_dt = int(DType::F32);
      } else {
        std::fprintf(stderr, "%s: --dtype expects bf16 or f32, got \"%s\"\n", argv[0], d);
        return 2;
      }
    } else {
      std::fprintf(stderr, "usage: %s [--quick] [--max-t N] [--max-bh N] [--from N] [--seed N] [--dtype bf16|f32]\n"
                   "       [--explain [all]] [--dump-case N FILE] [--no-repro] [--state-pair 0|1] [--adj-pair 0|1]\n",
                   argv[0]);
      return 2;
    }
  }
  // the case list first: a --from past its end is an error even without a device
  const double lg = std::log(16.0);
  std::vector<Case> cases = {
      // BF16 production path
      {2, 1, 3, 32, 32, DType::BF16, true, 0, lg, false},
      {2, 63, 3, 32, 32, DType::BF16, true, 0, lg, false},
      {1, 65, 2, 32, 32, DType::BF16, true, 0, lg, false},
      {1, 4097, 2, 32, 32, DType::BF16, true, 0, lg, false},
      {2, 777, 3, 32, 32, DType::BF16, true, 0, lg, true},
      {1, 300, 2, 32, 32, DType::BF16, true, 4, 0, false},    // extreme: -28/step on half of S
      {1, 300, 2, 32, 32, DType::BF16, false, 6, -1, false},  // extreme: -28/step everywhere
      {1, 300, 2, 32, 32, DType::BF16, true, 0, 5.0, false},  // mixed, up to -148/step
      {2, 130, 2, 32, 32, DType::BF16, false, 0, lg, false},
      {1, 200, 2, 16, 16, DType::BF16, true, 0, lg, false},
      {1, 200, 2, 64, 64, DType::BF16, true, 0, lg, false},
      {1, 150, 2, 128, 128, DType::BF16, true, 0, lg, false},
      {1, 150, 2, 16, 64, DType::BF16, true, 0, lg, false},
      {1, 150, 2, 128, 32, DType::BF16, true, 0, lg, false},
      {1, 150, 2, 32, 128, DType::BF16, false, 0, lg, false},
      // More (b, h) pairs than a grid's y dimension holds (65535): sliced launches.
      {3, 5, 22000, 16, 16, DType::BF16, true, 0, lg, false},
      // FP32 test variant (no TF32)
      {2, 1, 2, 32, 32, DType::F32, true, 0, lg, false},
      {2, 63, 2, 32, 32, DType::F32, true, 0, lg, false},
      {1, 65, 2, 32, 32, DType::F32, true, 0, lg, false},
      {1, 4097, 1, 32, 32, DType::F32, true, 0, lg, false},
      {1, 300, 2, 32, 32, DType::F32, true, 4, 0, false},
      {1, 300, 2, 32, 32, DType::F32, false, 6, -1, false},
      {1, 129, 2, 32, 32, DType::F32, false, 0, lg, true},
      {1, 100, 2, 16, 16, DType::F32, true, 0, lg, false},
      {1, 100, 2, 64, 64, DType::F32, false, 0, lg, false},
      // (appended, so that the cases above keep their seeds) The plain (inference) forward, then a backward that recomputes with the
      // training forward: unfused, extreme decays, D != S, C = 32
      {2, 130, 2, 32, 32, DType::BF16, false, 0, lg, true},
      {1, 300, 2, 32, 32, DType::BF16, true, 0, 5.0, true},
      {1, 200, 2, 64, 64, DType::BF16, true, 0, lg, true},
      {1, 150, 2, 16, 64, DType::BF16, true, 0, lg, true},
      // (appended) the remaining D != S pairs of the staged BF16 kernels, each with the
      // forward's saved states and with a backward that recomputes them
      {1, 150, 2, 32, 16, DType::BF16, true, 0, lg, false},
      {1, 150, 2, 16, 32, DType::BF16, true, 0, lg, true},
      {1, 150, 2, 64, 16, DType::BF16, true, 0, lg, false},
      {1, 150, 2, 64, 32, DType::BF16, true, 0, lg, true},
      {1, 150, 2, 32, 64, DType::BF16, false, 0, lg, false},
      {1, 97, 2, 32, 16, DType::BF16, true, 0, 5.0, true},
      {1, 97, 2, 64, 32, DType::BF16, true, 4, 0, false},
      // (appended) power-of-two segment lengths as the automatic rule picks at large
      // B*H (here it picks 1: B*H is small), with a ragged last segment (T = 4097: 65 or
      // 129 chunks), and a length that divides no T here (3). The FP32 case has H = 2:
      // with H = 1 its dD_skip is one number, a sum over 131,104 products that cancelled
      // to -0.15 on its first seed (|dD_skip| ~ 3-900 on its neighbours' seeds), so that
      // a 1.9e-6 absolute error read as 1.3e-5 relative (run 47, docs/kernels/gdn.md)
      {1, 4097, 2, 32, 32, DType::BF16, true, 0, lg, false, 4},
      {2, 777, 3, 32, 32, DType::BF16, true, 0, lg, true, 8},
      {1, 4097, 2, 64, 64, DType::BF16, true, 4, 0, false, 16},
      {1, 4097, 2, 32, 32, DType::F32, true, 0, lg, false, 4},
      {2, 1000, 2, 32, 32, DType::BF16, false, 0, 5.0, false, 3},
      {1, 1000, 2, 32, 32, DType::BF16, true, 0, lg, true, 3},
      // (appended) segments of several chunks at T <= 320, so that the compute-sanitizer
      // runs (--max-t 320) see them: every case above that they reach has one chunk a
      // segment, where a race between a chunk's last reads and the next chunk's writes
      // cannot happen (one such race in the adjoint pass went unseen until session 7)
      {1, 300, 2, 32, 32, DType::BF16, true, 0, lg, false, 2},
      {2, 320, 2, 32, 32, DType::BF16, false, 0, 5.0, true, 4},
      {1, 300, 2, 64, 64, DType::BF16, true, 4, 0, false, 3},
      {1, 300, 2, 16, 32, DType::BF16, true, 0, lg, true, 2},
      {1, 300, 2, 32, 16, DType::BF16, true, 0, lg, false, 3},
      {1, 300, 2, 32, 32, DType::F32, true, 0, lg, false, 3},
      {1, 200, 2, 32, 128, DType::BF16, false, 0, lg, true, 3},
      // (appended) mild decays (A in -1..-2: every diagonal block passes the 16-row test
      // (session 16's HYMO_GDN_DIAGMM, removed; the DIAG8 tests too), so the one-product paths run) and decays near the test's threshold (A down
      // to -12: blocks on both sides of it in one chunk), fused and not, S = 32 and 16
      // (the plain forward runs where the backward recomputes: the last flag)
      {1, 300, 2, 32, 32, DType::BF16, true, 0, std::log(2.0), true, 2},
      {2, 777, 3, 32, 32, DType::BF16, true, 0, std::log(12.0), true, 4},
      {1, 4097, 2, 32, 32, DType::BF16, false, 0, std::log(12.0), true, 0},
      {1, 300, 2, 32, 16, DType::BF16, true, 0, std::log(2.0), true, 3},
      {2, 500, 2, 32, 16, DType::BF16, false, 0, std::log(12.0), true, 2},
      {1, 300, 2, 32, 32, DType::BF16, true, 0, std::log(2.0), false, 2},
      {2, 500, 2, 32, 16, DType::BF16, false, 0, std::log(12.0), false, 2},
      // (appended in session 17) decays at the threshold of HYMO_GDN_DIAG8's 4-row test at
      // its limit 96 (A down to -30: about half of the blocks passed, in one chunk blocks on
      // both sides of it), fused and not, S = 32 and 16, plain and training forward. With
      // HYMO_GDN_DIAG8_MID (session 19) nearly all of their blocks pass; the cases above with
      // A_log_max 3.4 and 5 now mix passing and failing blocks (run 118: 83%, 95%, 14%)
      {2, 777, 3, 32, 32, DType::BF16, true, 0, std::log(30.0), true, 4},
      {1, 300, 2, 32, 32, DType::BF16, true, 0, std::log(30.0), false, 2},
      {2, 500, 2, 32, 16, DType::BF16, false, 0, std::log(30.0), true, 2},
      {1, 4097, 2, 32, 32, DType::BF16, false, 0, std::log(30.0), false, 0},
      // (appended in session 20) segment counts set directly (gdn_set_segments) that do not
      // divide the chunks: 65 chunks in 7 segments, 5 in 3, C = 32's 129 in 6, the FP32
      // variant's 16 in 5 (ceil(NC / nseg) chunks a segment, the last shorter; balanced lengths,
      // HYMO_GDN_SEG_BAL, were removed in session 37)
      {1, 4097, 2, 32, 32, DType::BF16, true, 0, lg, false, 0, 7},
      {2, 300, 2, 32, 32, DType::BF16, true, 0, lg, true, 0, 3},
      {2, 300, 2, 32, 16, DType::BF16, false, 0, 5.0, false, 0, 3},
      {1, 4097, 2, 64, 64, DType::BF16, true, 0, lg, false, 0, 6},
      {1, 1000, 2, 32, 32, DType::F32, true, 0, lg, false, 0, 5},
      // (appended in session 21 for HYMO_GDN_SEG_TAIL's split last segments, a switch removed in
      // session 37; kept, seeds unchanged, as plain layouts): segments of 4, 8, 2 and 4 chunks
      {2, 1024, 2, 32, 32, DType::BF16, true, 0, lg, false, 4, 0},
      {1, 2048, 3, 32, 16, DType::BF16, false, 0, lg, true, 8, 0},
      {2, 640, 2, 16, 32, DType::BF16, true, 0, 5.0, false, 2, 0},
      {1, 4096, 2, 32, 32, DType::BF16, true, 0, lg, false, 4, 0},
      // (appended in session 22 for HYMO_GDN_BWD_RUNS's runs of segments, a switch removed in
      // session 24; kept, seeds unchanged, as plain layouts): 30 segments (5 a pair); 10 (S = 16,
      // unfused); 6 pairs' 24 segments of 4 chunks (the last of one), the states recomputed; 16
      // and 17 segments of 4097 tokens; D = S = 16, 12 segments
      {2, 320, 3, 32, 32, DType::BF16, true, 0, lg, false, 1, 0},
      {1, 300, 2, 32, 16, DType::BF16, false, 0, 5.0, false, 1, 0},
      {2, 777, 3, 32, 32, DType::BF16, true, 0, std::log(12.0), true, 4, 0},
      {1, 4097, 2, 32, 32, DType::BF16, true, 0, lg, false, 0, 16},
      {1, 4097, 2, 32, 32, DType::BF16, false, 0, lg, true, 0, 17},
      {2, 300, 2, 16, 16, DType::BF16, true, 0, lg, false, 2, 0},
      // (appended in session 27) the split forward of S or D = 128 (gdn_split.cuh: the staged
      // passes on 2 x 2, 2 x 1 or 1 x 2 blocks of each head's state, the parts' sum and the
      // epilogue): T = 1; unfused with the states recomputed; several segments at T <= 320
      // (the sanitizers' runs), extreme decays; a long sequence in the automatic layout; every
      // D != S pair with 128 not covered above; more blocks (b, h) than a grid's y dimension
      // holds (the sliced launches)
      {2, 1, 3, 128, 128, DType::BF16, true, 0, lg, false},
      {1, 150, 2, 128, 128, DType::BF16, false, 0, lg, true},
      {2, 300, 2, 128, 128, DType::BF16, true, 4, 0, false, 2},
      {1, 300, 2, 128, 128, DType::BF16, false, 0, 5.0, true, 3},
      {1, 4097, 1, 128, 128, DType::BF16, true, 0, lg, true, 0},
      {1, 200, 2, 64, 128, DType::BF16, true, 0, lg, true, 3},
      {1, 200, 2, 128, 64, DType::BF16, true, 0, lg, false, 2},
      {1, 130, 2, 16, 128, DType::BF16, true, 0, lg, false},
      {1, 200, 2, 128, 16, DType::BF16, false, 0, 5.0, true, 2},
      {1, 3, 17000, 128, 128, DType::BF16, true, 0, lg, false},
      // (appended in session 28) the segment grids in slices of a few (b, h) pairs
      // (gdn_set_grid_slice) with several segments, on real data: the split path (12 blocks in
      // slices of 2, the row kernels' 3 heads too; 5 segments; and D = 128 with S = 32
      // recomputing), the staged kernels (6 heads in slices of 4, recomputing), the generic FP32
      // ones (3 heads in slices of 2)
      {1, 300, 3, 128, 128, DType::BF16, true, 0, lg, false, 2, 0, 2},
      {1, 200, 3, 128, 32, DType::BF16, false, 0, 5.0, true, 2, 0, 4},
      {2, 300, 3, 32, 32, DType::BF16, true, 0, lg, true, 1, 0, 4},
      {1, 130, 3, 32, 32, DType::F32, true, 0, lg, false, 1, 0, 2},
      // (appended in session 43) an even H in slices (HYMO_GDN_STATE_PAIR's state pass launches
      // head pairs in slices of half as many: 6 -> 3, a slice of 3 pairs and one of 1; 3 -> 1):
      // 8 (b, h) pairs, 5 segments, S = 32 and 16
      {2, 300, 4, 32, 32, DType::BF16, true, 0, lg, false, 1, 0, 6},
      {2, 300, 4, 32, 16, DType::BF16, false, 0, 5.0, true, 1, 0, 3},
      // (appended in session 49) HYMO_GDN_TAIL's split last segments, dispatched after the long
      // ones (gdn_set_tail_segments; in a build without the switch, plain layouts): 4 segments
      // of 4 chunks with the last in 2 of 2; 13 chunks (4, 4 | 2, 2, 1) over head pairs, the
      // states recomputed; 65 chunks (6 of 8 | 4, 4, 4, 4, 1) at S = 16, unfused; more split
      // than there are segments (5 of 1, D = 16); 5 chunks (2 | 1, 1, 1) in slices of 2 pairs (H
      // odd) and of 6 (H even: the pair passes' slices of 3); the FP32 generic kernels (16
      // chunks: 4, 4 | 2, 2, 2, 2; and 5 at T = 300: 2 | 1, 1, 1); the split path (D = S = 128,
      // C = 32: 4 of 2 | 1, 1), saving its forward (and, last, recomputing: its plain forward);
      // D = S = 64 (31 of 4 | 2, 2, 1); the staged plain forward split too (the recomputing cases
      // 92 and 95: the last flag)
      {2, 1024, 2, 32, 32, DType::BF16, true, 0, lg, false, 4, 0, 0, 1},
      {2, 777, 4, 32, 32, DType::BF16, true, 0, std::log(12.0), true, 4, 0, 0, 2, true},
      {1, 4097, 2, 32, 16, DType::BF16, false, 0, 5.0, false, 8, 0, 0, 3},
      {2, 300, 2, 16, 32, DType::BF16, true, 0, lg, false, 2, 0, 0, 9},
      {2, 300, 3, 32, 32, DType::BF16, true, 0, lg, true, 2, 0, 2, 2, true},
      {2, 300, 4, 32, 32, DType::BF16, false, 0, 5.0, false, 2, 0, 6, 2},
      {1, 1000, 2, 32, 32, DType::F32, true, 0, lg, false, 4, 0, 0, 2},
      {1, 300, 2, 128, 128, DType::BF16, true, 0, lg, false, 2, 0, 0, 1},
      {1, 4097, 2, 64, 64, DType::BF16, true, 0, lg, true, 4, 0, 0, 2},
      {1, 300, 2, 32, 32, DType::F32, false, 0, 5.0, false, 2, 0, 0, 2},
      {1, 300, 2, 128, 128, DType::BF16, true, 0, lg, true, 2, 0, 0, 1},
  };
  if (from > long(cases.size())) {
    std::fprintf(stderr, "%s: --from %ld is past the last of the %zu cases\n", argv[0], from, cases.size());
    return 2;
  }
  if (dump_path) {  // no device needed
    if (dump_idx >= long(cases.size())) {
      std::fprintf(stderr, "%s: --dump-case %ld: there are %zu cases (0..%zu)\n", argv[0], dump_idx,
                   cases.size(), cases.size() - 1);
      return 2;
    }
    if (!dump_case(cases[size_t(dump_idx)], uint64_t(seed0 + dump_idx), dump_path)) {
      std::fprintf(stderr, "%s: cannot write %s\n", argv[0], dump_path);
      return 1;
    }
    std::printf("case %ld (seed %ld) written to %s\n", dump_idx, seed0 + dump_idx, dump_path);
    return 0;
  }
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    std::printf("no CUDA device: skipping\n");
    return 77;
  }
  // shape rejection: the launcher refuses the shape with cudaErrorInvalidValue and an
  // error naming the problem
  auto expect_rejected = [](int H, int D, int S, const char* what, const char* label) {
    Shape s;
    s.B = 1; s.T = 8; s.H = H; s.D = D; s.S = S;
    FwdArgs fa;
    const cudaError_t e = gdn_forward(s, fa, nullptr, 0);
    const bool ok = e == cudaErrorInvalidValue && std::strstr(gdn_last_error(), what);
    std::printf("%-4s %s rejected: \"%s\"\n", ok ? "ok" : "FAIL", label, gdn_last_error());
    ++g_checks;
    if (!ok) ++g_fail;
  };
  expect_rejected(1, 24, 32, "expected head_dim", "D=24");
  // too many values a token for the kernels' 32-bit row offsets
  expect_rejected(1 << 19, 32, 32, "H * max(D, S)", "H=2^19 D=S=32");
  // a backward that takes the forward's states after a forward that did not save them
  // (staged BF16 variant) is refused, not run on stale buffers; after a saving forward
  // it runs
  {
    Shape s;
    s.B = 1; s.T = 8; s.H = 1; s.D = 32; s.S = 32;
    const size_t nv = 8 * 32;
    DevBuf v(nv, true), b(nv, true), c(nv, true), gate(8, true), z(nv, true), out(nv, true),
        dO(nv, true), dv(nv, true), db(nv, true), dc(nv, true), dg(8, true), dz(nv, true);
    DevBuf dtb(1, false), alog(32, false), dsk(1, false), wy(32, false);
    DevBuf gdtb(1, false), galog(32, false), gdsk(1, false), gwy(32, false);
    for (DevBuf* x : {&v, &b, &c, &gate, &z, &dO}) x->upload(std::vector<double>(x->n, 0.5));
    for (DevBuf* x : {&dtb, &alog, &dsk, &wy}) x->upload(std::vector<double>(x->n, 0.0));
    void* ws = nullptr;
    GDN_CUDA(cudaMalloc(&ws, gdn_workspace_bytes(s)));
    FwdArgs fa;
    fa.v = v.p; fa.b = b.p; fa.c = c.p; fa.gate = gate.p; fa.z = z.p;
    fa.dt_bias = static_cast<float*>(dtb.p); fa.A_log = static_cast<float*>(alog.p);
    fa.D_skip = static_cast<float*>(dsk.p); fa.w_y = static_cast<float*>(wy.p); fa.out = out.p;
    BwdArgs ba;
    ba.in = fa;
    ba.dout = dO.p; ba.dv = dv.p; ba.db = db.p; ba.dc = dc.p; ba.dgate = dg.p; ba.dz = dz.p;
    ba.ddt_bias = static_cast<float*>(gdtb.p); ba.dA_log = static_cast<float*>(galog.p);
    ba.dD_skip = static_cast<float*>(gdsk.p); ba.dw_y = static_cast<float*>(gwy.p);
    GDN_CUDA(gdn_forward(s, fa, ws, 0, /*save_for_backward=*/false));
    const cudaError_t e1 = gdn_backward(s, ba, ws, true, 0);
    const bool ok1 = e1 == cudaErrorInvalidValue && std::strstr(gdn_last_error(), "save_for_backward");
    std::printf("%-4s backward after a forward without save_for_backward refused: \"%s\"\n",
                ok1 ? "ok" : "FAIL", gdn_last_error());
    GDN_CUDA(gdn_forward(s, fa, ws, 0, /*save_for_backward=*/true));
    const cudaError_t e2 = gdn_backward(s, ba, ws, true, 0);
    const bool ok2 = e2 == cudaSuccess && cudaDeviceSynchronize() == cudaSuccess;
    std::printf("%-4s backward after a saving forward runs\n", ok2 ? "ok" : "FAIL");
    // the backward consumed the saved forward (dO over o): a second one is refused
    const cudaError_t e3 = gdn_backward(s, ba, ws, true, 0);
    const bool ok3 = e3 == cudaErrorInvalidValue && std::strstr(gdn_last_error(), "save_for_backward");
    std::printf("%-4s a second backward on the same saved forward refused: \"%s\"\n",
                ok3 ? "ok" : "FAIL", gdn_last_error());
    g_checks += 3;
    g_fail += !ok1 + !ok2 + !ok3;
    // ... and one whose segments a tuning call changed after the saving forward (4 chunks: one
    // segment of 4, then 4 of 1) is refused too: it would read the segments' gate sums at other
    // strides
    {
      Shape s4 = s;
      s4.T = 256;
      const size_t n4 = size_t(256) * 32;
      DevBuf v4(n4, true), b4(n4, true), c4(n4, true), g4(256, true), z4(n4, true), o4(n4, true),
          dO4(n4, true), dv4(n4, true), db4(n4, true), dc4(n4, true), dg4(256, true), dz4(n4, true);
      for (DevBuf* x : {&v4, &b4, &c4, &g4, &z4, &dO4}) x->upload(std::vector<double>(x->n, 0.5));
      gdn_set_chunks_per_segment(1);
      const size_t wsb = gdn_workspace_bytes(s4);  // (the more segments, the larger)
      void* ws4 = nullptr;
      GDN_CUDA(cudaMalloc(&ws4, wsb));
      FwdArgs f4 = fa;
      f4.v = v4.p; f4.b = b4.p; f4.c = c4.p; f4.gate = g4.p; f4.z = z4.p; f4.out = o4.p;
      BwdArgs b4a = ba;
      b4a.in = f4;
      b4a.dout = dO4.p; b4a.dv = dv4.p; b4a.db = db4.p; b4a.dc = dc4.p; b4a.dgate = dg4.p; b4a.dz = dz4.p;
      gdn_set_chunks_per_segment(4);
      GDN_CUDA(gdn_forward(s4, f4, ws4, 0, /*save_for_backward=*/true));
      gdn_set_chunks_per_segment(1);
      const cudaError_t e4 = gdn_backward(s4, b4a, ws4, true, 0);
      const bool ok4 = e4 == cudaErrorInvalidValue && std::strstr(gdn_last_error(), "segments changed");
      std::printf("%-4s a backward after the segments changed refused: \"%s\"\n", ok4 ? "ok" : "FAIL",
                  gdn_last_error());
      gdn_set_chunks_per_segment(4);
      const cudaError_t e5 = gdn_backward(s4, b4a, ws4, true, 0);
      const bool ok5 = e5 == cudaSuccess && cudaDeviceSynchronize() == cudaSuccess;
      std::printf("%-4s ... and with the forward's segments back, it runs\n", ok5 ? "ok" : "FAIL");
      gdn_set_chunks_per_segment(0);
      GDN_CUDA(cudaFree(ws4));
      g_checks += 2;
      g_fail += !ok4 + !ok5;
    }
    // clock stamps (gdn_clocks_arm): a build without HYMO_GDN_CLOCKS refuses to arm and names
    // the flag; a profiling build fills one record a CTA (one CTA a kernel here: one chunk)
    {
      DevBuf cb(gdn_clocks_bytes() / 4, false);
      GDN_CUDA(cudaMemset(cb.p, 0, gdn_clocks_bytes()));
      const cudaError_t ea = gdn_clocks_arm(cb.p);
      if (ea == cudaErrorNotSupported) {
        const bool ok = std::strstr(gdn_last_error(), "HYMO_GDN_CLOCKS=1") != nullptr &&
                        gdn_clocks_arm(nullptr) == cudaSuccess;
        std::printf("%-4s clock stamps refused by a build without them: \"%s\"\n", ok ? "ok" : "FAIL",
                    gdn_last_error());
        ++g_checks;
        g_fail += !ok;
      } else {
        GDN_CUDA(ea);
        GDN_CUDA(gdn_forward(s, fa, ws, 0, false));
        GDN_CUDA(gdn_forward(s, fa, ws, 0, true));
        GDN_CUDA(gdn_backward(s, ba, ws, true, 0));
        GDN_CUDA(cudaDeviceSynchronize());
        GDN_CUDA(gdn_clocks_arm(nullptr));
        std::vector<unsigned long long> w(gdn_clocks_bytes() / 8);
        GDN_CUDA(cudaMemcpy(w.data(), cb.p, gdn_clocks_bytes(), cudaMemcpyDeviceToHost));
        // kernels 1-4 (plain output, training output, adjoint, backward main): CTA 0's record
        // in order (entry <= waited <= chunk 0 <= exit), one chunk, a 1 x 1 grid
        const char* names[] = {"state", "output", "training output", "adjoint", "backward main"};
        for (int k = 1; k <= 4; ++k) {
          const unsigned long long* r = w.data() + size_t(k) * 8192 * 32;
          const bool ok = r[3] != 0 && r[3] <= r[4] && r[4] <= r[8] && r[8] <= r[5] && r[6] == 1 &&
                          r[0] != 0 && r[0] <= r[1] && (r[2] >> 16) == ((1ull << 16) | 1ull) &&
                          r[32 + 3] == 0;  // (no second CTA)
          std::printf("%-4s clock stamps of the %s pass: entry %llu, waited %llu, chunk 0 %llu, exit %llu, "
                      "%llu chunk(s), SM %llu\n", ok ? "ok" : "FAIL", names[k], r[3], r[4], r[8], r[5], r[6],
                      r[2] & 0xffff);
          ++g_checks;
          g_fail += !ok;
        }
      }
    }
    GDN_CUDA(cudaFree(ws));
  }
  uint64_t seed = uint64_t(seed0);
  long idx = 0;
  for (const Case& k : cases) {
    if (idx++ < from || (max_t >= 0 && k.T > max_t) || (max_bh >= 0 && long(k.B) * k.H > max_bh) ||
        (only_dt >= 0 && int(k.dt) != only_dt)) {
      ++seed;
      continue;
    }
    run_case(k, seed++);
  }
  std::printf("worst relative errors (seed %ld):", seed0);
  for (const auto& [name, e] : g_worst) std::printf(" %s %.2e;", name.c_str(), e);
  std::printf("\n");
  if (g_cond_pass)
    std::printf("%d check(s) passed only at the bound for ill-conditioned instances"
                " (\"ok*\" above; docs/kernels/gdn.md, \"Parity\")\n", g_cond_pass);
  std::printf("%s: %d of %d checks failed\n", g_fail ? "FAILED" : "PASSED", g_fail, g_checks);
  return g_fail ? 1 : 0;
}
