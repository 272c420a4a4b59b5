// CPU-only test of the twin: chunked vs sequential forward, and the backward
// vs central finite differences. Runs in CI (no GPU).
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <vector>

#include "gdn_cpu.h"

using namespace hymo::gdn;

static int g_fail = 0;
#define CHECK_LT(val, tol, what)                                                    \
  do {                                                                              \
    double _v = (val);                                                              \
    bool _ok = std::isfinite(_v) && _v < (tol);                                     \
    std::printf("%-4s %-46s %.3e (tol %.1e)\n", _ok ? "ok" : "FAIL", what, _v, tol); \
    if (!_ok) ++g_fail;                                                             \
  } while (0)

static double rel(const std::vector<double>& a, const std::vector<double>& r) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num += (a[i] - r[i]) * (a[i] - r[i]);
    den += r[i] * r[i];
  }
  return std::sqrt(num / (den > 0 ? den : 1e-300));
}

static CpuInputs make_inputs(const CpuShape& s, std::mt19937_64& rng, double gate_mean,
                             double alog_max) {
  std::normal_distribution<double> n01(0.0, 1.0);
  std::uniform_real_distribution<double> u01(0.0, 1.0);
  CpuInputs in;
  const size_t nv = size_t(s.B) * s.T * s.H * s.D, ns = size_t(s.B) * s.T * s.H * s.S;
  auto fill = [&](std::vector<double>& x, size_t n, double sc) {
    x.resize(n);
    for (auto& e : x) e = sc * n01(rng);
  };
  fill(in.v, nv, 1.0);
  fill(in.z, nv, 1.0);
  fill(in.b, ns, 1.0 / std::sqrt(double(s.S)));
  fill(in.c, ns, 1.0 / std::sqrt(double(s.S)));
  in.gate.resize(size_t(s.B) * s.T * s.H);
  for (auto& e : in.gate) e = gate_mean + n01(rng);
  if (!s.fused)
    for (auto& e : in.gate) e = 1.0 / (1.0 + std::exp(-e));
  fill(in.dt_bias, s.H, 0.3);
  in.A_log.resize(size_t(s.H) * s.S);
  for (auto& e : in.A_log) e = alog_max * u01(rng);
  fill(in.D_skip, s.H, 1.0);
  in.w_y.resize(s.D);
  for (auto& e : in.w_y) e = 1.0 + 0.2 * n01(rng);
  return in;
}

static double loss(const CpuShape& s, const CpuInputs& in, const std::vector<double>& dout) {
  std::vector<double> out;
  cpu_forward(s, in, out);
  double l = 0;
  for (size_t i = 0; i < out.size(); ++i) l += out[i] * dout[i];
  return l;
}

static void run_case(const char* name, CpuShape s, double gate_mean, double alog_max,
                     uint64_t seed) {
  std::mt19937_64 rng(seed);
  CpuInputs in = make_inputs(s, rng, gate_mean, alog_max);
  std::vector<double> y1, y2;
  cpu_forward(s, in, y1);
  for (int C : {1, 16, 64}) {
    cpu_forward_chunked(s, in, C, y2);
    char buf[128];
    std::snprintf(buf, sizeof buf, "%s chunked(C=%d) vs sequential", name, C);
    CHECK_LT(rel(y2, y1), 1e-11, buf);
  }
  bool finite = true;
  for (double e : y1) finite = finite && std::isfinite(e);
  CHECK_LT(finite ? 0.0 : 1.0, 0.5, "forward finite");

  std::normal_distribution<double> n01(0.0, 1.0);
  std::vector<double> dout(y1.size());
  for (auto& e : dout) e = n01(rng);
  CpuGrads g;
  cpu_backward(s, in, dout, g);
  // the per-head sums' terms' magnitudes: dt_bias's terms are the per-token dgate_raw (an
  // independent check); every magnitude sum is at least the sum's own magnitude
  {
    bool bounds = true;
    for (size_t i = 0; i < g.A_log.size(); ++i) bounds = bounds && g.A_log_mag[i] >= std::fabs(g.A_log[i]) * (1 - 1e-12);
    if (s.fused) {
      std::vector<double> m(s.H, 0.0);
      for (size_t i = 0; i < g.gate.size(); ++i) m[i % s.H] += std::fabs(g.gate[i]);
      char buf[128];
      std::snprintf(buf, sizeof buf, "%s dt_bias_mag = sum |dgate_raw|", name);
      CHECK_LT(rel(g.dt_bias_mag, m), 1e-12, buf);
      for (int h = 0; h < s.H; ++h)
        bounds = bounds && g.D_skip_mag[h] >= std::fabs(g.D_skip[h]) * (1 - 1e-12) &&
                 g.dt_bias_mag[h] >= std::fabs(g.dt_bias[h]) * (1 - 1e-12);
    }
    char buf[128];
    std::snprintf(buf, sizeof buf, "%s magnitude sums >= |sums|", name);
    CHECK_LT(bounds ? 0.0 : 1.0, 0.5, buf);
  }
  struct T {
    const char* nm;
    std::vector<double>* x;
    std::vector<double>* gx;
  };
  std::vector<T> ts = {{"v", &in.v, &g.v}, {"b", &in.b, &g.b}, {"c", &in.c, &g.c},
                       {"gate", &in.gate, &g.gate}, {"A_log", &in.A_log, &g.A_log}};
  if (s.fused) {
    ts.push_back({"z", &in.z, &g.z});
    ts.push_back({"dt_bias", &in.dt_bias, &g.dt_bias});
    ts.push_back({"D_skip", &in.D_skip, &g.D_skip});
    ts.push_back({"w_y", &in.w_y, &g.w_y});
  }
  for (auto& t : ts) {
    // finite differences on up to 12 coordinates per tensor
    std::vector<double> fd, an;
    const size_t n = t.x->size();
    for (int k = 0; k < 12 && k < int(n); ++k) {
      const size_t i = (n <= 12) ? size_t(k) : size_t(rng() % n);
      const double x0 = (*t.x)[i], eps = 1e-5 * std::max(1.0, std::fabs(x0));
      (*t.x)[i] = x0 + eps;
      const double lp = loss(s, in, dout);
      (*t.x)[i] = x0 - eps;
      const double lm = loss(s, in, dout);
      (*t.x)[i] = x0;
      fd.push_back((lp - lm) / (2 * eps));
      an.push_back((*t.gx)[i]);
    }
    char buf[128];
    std::snprintf(buf, sizeof buf, "%s d%s vs finite differences", name, t.nm);
    CHECK_LT(rel(an, fd), 1e-6, buf);
  }
}

int main() {
  CpuShape s;
  s.B = 2; s.T = 37; s.H = 2; s.D = 16; s.S = 8;
  s.fused = true;
  run_case("fused", s, 0.0, std::log(4.0), 1);
  s.fused = false;
  run_case("unfused", s, 0.0, std::log(4.0), 2);
  // extreme decays: g close to 1, A down to -28 (log-decay about -28 per step)
  s.fused = true; s.T = 70;
  run_case("extreme", s, 4.0, std::log(28.0), 3);
  s.T = 1;
  run_case("T=1", s, 0.0, std::log(4.0), 4);
  std::printf("%s (%d failures)\n", g_fail ? "FAILED" : "PASSED", g_fail);
  return g_fail ? 1 : 0;
}
