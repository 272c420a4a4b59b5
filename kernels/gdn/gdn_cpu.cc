// The CPU twin of the GDN recurrence: FP64 reference for the CUDA kernels.
#include "gdn_cpu.h"

#include <cmath>
#include <cstddef>

namespace hymo::gdn {
namespace {

inline double sigm(double x) { return 1.0 / (1.0 + std::exp(-x)); }

struct Idx {
  const CpuShape& s;
  size_t tok(int b, int t) const { return (size_t(b) * s.T + t) * s.H; }
  size_t vd(int b, int t, int h) const { return (tok(b, t) + h) * s.D; }
  size_t vs(int b, int t, int h) const { return (tok(b, t) + h) * s.S; }
  size_t g(int b, int t, int h) const { return tok(b, t) + h; }
};

double gate_value(const CpuShape& s, const CpuInputs& in, size_t gi, int h) {
  return s.fused ? sigm(in.gate[gi] + in.dt_bias[h]) : in.gate[gi];
}

// Epilogue forward for one token: y = RMSNorm(o + Dskip v) * silu(z).
void epilogue(const CpuShape& s, const CpuInputs& in, int h, const double* o, size_t vi,
              double* y) {
  const int D = s.D;
  double ss = 0;
  std::vector<double> yp(D);
  for (int d = 0; d < D; ++d) {
    yp[d] = o[d] + in.D_skip[h] * in.v[vi + d];
    ss += yp[d] * yp[d];
  }
  const double r = 1.0 / std::sqrt(ss / D + s.eps);
  for (int d = 0; d < D; ++d) {
    const double zz = in.z[vi + d];
    y[d] = yp[d] * r * in.w_y[d] * zz * sigm(zz);
  }
}

}  // namespace

void cpu_forward(const CpuShape& s, const CpuInputs& in, std::vector<double>& out) {
  const int D = s.D, S = s.S;
  Idx ix{s};
  out.assign(size_t(s.B) * s.T * s.H * D, 0.0);
  std::vector<double> st(size_t(S) * D), A(S), o(D);
  for (int b = 0; b < s.B; ++b)
    for (int h = 0; h < s.H; ++h) {
      for (int k = 0; k < S; ++k) A[k] = -std::exp(in.A_log[size_t(h) * S + k]);
      std::fill(st.begin(), st.end(), 0.0);
      for (int t = 0; t < s.T; ++t) {
        const double g = gate_value(s, in, ix.g(b, t, h), h);
        const size_t vi = ix.vd(b, t, h), si = ix.vs(b, t, h);
        for (int k = 0; k < S; ++k) {
          const double a = std::exp(g * A[k]);
          for (int d = 0; d < D; ++d)
            st[size_t(k) * D + d] = a * st[size_t(k) * D + d] + in.b[si + k] * in.v[vi + d];
        }
        for (int d = 0; d < D; ++d) {
          double acc = 0;
          for (int k = 0; k < S; ++k) acc += in.c[si + k] * st[size_t(k) * D + d];
          o[d] = acc;
        }
        if (s.fused)
          epilogue(s, in, h, o.data(), vi, &out[vi]);
        else
          for (int d = 0; d < D; ++d) out[vi + d] = o[d];
      }
    }
}

void cpu_forward_chunked(const CpuShape& s, const CpuInputs& in, int C,
                         std::vector<double>& out) {
  const int D = s.D, S = s.S;
  Idx ix{s};
  out.assign(size_t(s.B) * s.T * s.H * D, 0.0);
  std::vector<double> st(size_t(S) * D), A(S), o(D), G(C), L(size_t(C) * S);
  for (int b = 0; b < s.B; ++b)
    for (int h = 0; h < s.H; ++h) {
      for (int k = 0; k < S; ++k) A[k] = -std::exp(in.A_log[size_t(h) * S + k]);
      std::fill(st.begin(), st.end(), 0.0);
      for (int t0 = 0; t0 < s.T; t0 += C) {
        const int n = std::min(C, s.T - t0);
        double acc = 0;
        for (int i = 0; i < n; ++i) {
          acc += gate_value(s, in, ix.g(b, t0 + i, h), h);
          G[i] = acc;
          for (int k = 0; k < S; ++k) L[size_t(i) * S + k] = G[i] * A[k];
        }
        for (int i = 0; i < n; ++i) {
          const size_t vi = ix.vd(b, t0 + i, h), si = ix.vs(b, t0 + i, h);
          for (int d = 0; d < D; ++d) o[d] = 0;
          // inter-chunk: (c_t * exp(L_t))^T h0
          for (int k = 0; k < S; ++k) {
            const double q = in.c[si + k] * std::exp(L[size_t(i) * S + k]);
            for (int d = 0; d < D; ++d) o[d] += q * st[size_t(k) * D + d];
          }
          // intra-chunk: masked attention with exact pairwise decays (<= 1)
          for (int j = 0; j <= i; ++j) {
            const size_t sj = ix.vs(b, t0 + j, h), vj = ix.vd(b, t0 + j, h);
            double p = 0;
            for (int k = 0; k < S; ++k)
              p += in.c[si + k] * in.b[sj + k] *
                   std::exp(L[size_t(i) * S + k] - L[size_t(j) * S + k]);
            for (int d = 0; d < D; ++d) o[d] += p * in.v[vj + d];
          }
          if (s.fused)
            epilogue(s, in, h, o.data(), vi, &out[vi]);
          else
            for (int d = 0; d < D; ++d) out[vi + d] = o[d];
        }
        // carry: h = exp(L_last) h0 + sum_j (b_j exp(L_last - L_j)) v_j^T
        for (int k = 0; k < S; ++k) {
          const double Ll = L[size_t(n - 1) * S + k];
          for (int d = 0; d < D; ++d) st[size_t(k) * D + d] *= std::exp(Ll);
          for (int j = 0; j < n; ++j) {
            const size_t sj = ix.vs(b, t0 + j, h), vj = ix.vd(b, t0 + j, h);
            const double kk = in.b[sj + k] * std::exp(Ll - L[size_t(j) * S + k]);
            for (int d = 0; d < D; ++d) st[size_t(k) * D + d] += kk * in.v[vj + d];
          }
        }
      }
    }
}

void cpu_backward(const CpuShape& s, const CpuInputs& in, const std::vector<double>& dout,
                  CpuGrads& gr) {
  const int D = s.D, S = s.S, T = s.T;
  Idx ix{s};
  const size_t nv = size_t(s.B) * T * s.H * D, ns = size_t(s.B) * T * s.H * S;
  gr.v.assign(nv, 0.0);
  gr.z.assign(nv, 0.0);
  gr.b.assign(ns, 0.0);
  gr.c.assign(ns, 0.0);
  gr.gate.assign(size_t(s.B) * T * s.H, 0.0);
  gr.dt_bias.assign(s.H, 0.0);
  gr.A_log.assign(size_t(s.H) * S, 0.0);
  gr.D_skip.assign(s.H, 0.0);
  gr.w_y.assign(D, 0.0);
  gr.dt_bias_mag.assign(s.H, 0.0);
  gr.A_log_mag.assign(size_t(s.H) * S, 0.0);
  gr.D_skip_mag.assign(s.H, 0.0);
  const int CK = 64;  // checkpoint interval
  const int nck = (T + CK - 1) / CK;
  std::vector<double> A(S), dA(S), dAm(S), ck(size_t(nck) * S * D), blk(size_t(CK + 1) * S * D),
      dh(size_t(S) * D), o(D), yp(D), dn(D), dop(D), a(S), dl(S);
  for (int b = 0; b < s.B; ++b)
    for (int h = 0; h < s.H; ++h) {
      for (int k = 0; k < S; ++k) A[k] = -std::exp(in.A_log[size_t(h) * S + k]);
      std::fill(dA.begin(), dA.end(), 0.0);
      std::fill(dAm.begin(), dAm.end(), 0.0);
      // forward pass storing checkpoints (state before each block)
      std::vector<double> st(size_t(S) * D, 0.0);
      for (int t = 0; t < T; ++t) {
        if (t % CK == 0) std::copy(st.begin(), st.end(), ck.begin() + size_t(t / CK) * S * D);
        const double g = gate_value(s, in, ix.g(b, t, h), h);
        const size_t vi = ix.vd(b, t, h), si = ix.vs(b, t, h);
        for (int k = 0; k < S; ++k) {
          const double aa = std::exp(g * A[k]);
          for (int d = 0; d < D; ++d)
            st[size_t(k) * D + d] = aa * st[size_t(k) * D + d] + in.b[si + k] * in.v[vi + d];
        }
      }
      std::fill(dh.begin(), dh.end(), 0.0);
      for (int bk = nck - 1; bk >= 0; --bk) {
        const int t0 = bk * CK, n = std::min(CK, T - t0);
        // recompute states: blk[i] = state after token t0+i-1 (blk[0] = checkpoint)
        std::copy(ck.begin() + size_t(bk) * S * D, ck.begin() + size_t(bk + 1) * S * D,
                  blk.begin());
        for (int i = 0; i < n; ++i) {
          const int t = t0 + i;
          const double g = gate_value(s, in, ix.g(b, t, h), h);
          const size_t vi = ix.vd(b, t, h), si = ix.vs(b, t, h);
          const double* p0 = &blk[size_t(i) * S * D];
          double* p1 = &blk[size_t(i + 1) * S * D];
          for (int k = 0; k < S; ++k) {
            const double aa = std::exp(g * A[k]);
            for (int d = 0; d < D; ++d)
              p1[size_t(k) * D + d] = aa * p0[size_t(k) * D + d] + in.b[si + k] * in.v[vi + d];
          }
        }
        for (int i = n - 1; i >= 0; --i) {
          const int t = t0 + i;
          const size_t gi = ix.g(b, t, h), vi = ix.vd(b, t, h), si = ix.vs(b, t, h);
          const double g = gate_value(s, in, gi, h);
          const double* hp = &blk[size_t(i) * S * D];       // h_{t-1}
          const double* hc = &blk[size_t(i + 1) * S * D];   // h_t
          for (int d = 0; d < D; ++d) {
            double acc = 0;
            for (int k = 0; k < S; ++k) acc += in.c[si + k] * hc[size_t(k) * D + d];
            o[d] = acc;
          }
          if (s.fused) {
            double ss = 0;
            for (int d = 0; d < D; ++d) {
              yp[d] = o[d] + in.D_skip[h] * in.v[vi + d];
              ss += yp[d] * yp[d];
            }
            const double r = 1.0 / std::sqrt(ss / D + s.eps);
            double m = 0;
            for (int d = 0; d < D; ++d) {
              const double zz = in.z[vi + d], sg = sigm(zz), sz = zz * sg, nn = yp[d] * r;
              const double dy = dout[vi + d];
              dn[d] = dy * in.w_y[d] * sz;
              gr.w_y[d] += dy * nn * sz;
              gr.z[vi + d] = dy * nn * in.w_y[d] * (sg + zz * sg * (1 - sg));
              m += dn[d] * nn;
            }
            m /= D;
            double dsk = 0;  // this token's term dyp . v
            for (int d = 0; d < D; ++d) {
              dop[d] = r * (dn[d] - yp[d] * r * m);
              gr.v[vi + d] += in.D_skip[h] * dop[d];
              dsk += dop[d] * in.v[vi + d];
            }
            gr.D_skip[h] += dsk;
            gr.D_skip_mag[h] += std::abs(dsk);
          } else {
            for (int d = 0; d < D; ++d) dop[d] = dout[vi + d];
          }
          for (int k = 0; k < S; ++k) {
            double dc = 0;
            for (int d = 0; d < D; ++d) {
              dh[size_t(k) * D + d] += in.c[si + k] * dop[d];
              dc += hc[size_t(k) * D + d] * dop[d];
            }
            gr.c[si + k] = dc;
          }
          for (int k = 0; k < S; ++k) {
            double db = 0;
            for (int d = 0; d < D; ++d) db += dh[size_t(k) * D + d] * in.v[vi + d];
            gr.b[si + k] = db;
          }
          for (int d = 0; d < D; ++d) {
            double dv = 0;
            for (int k = 0; k < S; ++k) dv += dh[size_t(k) * D + d] * in.b[si + k];
            gr.v[vi + d] += dv;
          }
          double dg = 0;
          for (int k = 0; k < S; ++k) {
            const double aa = std::exp(g * A[k]);
            double da = 0;
            for (int d = 0; d < D; ++d) da += dh[size_t(k) * D + d] * hp[size_t(k) * D + d];
            const double dlk = da * aa;
            dg += A[k] * dlk;
            dA[k] += g * dlk;
            dAm[k] += std::abs(g * dlk);
            for (int d = 0; d < D; ++d) dh[size_t(k) * D + d] *= aa;
          }
          if (s.fused) {
            const double dx = dg * g * (1 - g);
            gr.gate[gi] = dx;
            gr.dt_bias[h] += dx;
            gr.dt_bias_mag[h] += std::abs(dx);
          } else {
            gr.gate[gi] = dg;
          }
        }
      }
      for (int k = 0; k < S; ++k) {
        gr.A_log[size_t(h) * S + k] += dA[k] * A[k];
        gr.A_log_mag[size_t(h) * S + k] += dAm[k] * std::abs(A[k]);
      }
    }
}

}  // namespace hymo::gdn
