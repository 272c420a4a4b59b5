// Model ops: rms_norm, softmax, rope, causal_attention, gdn_recurrence,
// cross_entropy. Norms, softmaxes and losses accumulate in double; the GDN
// state is kept in double too (at least FP32, as the spec asks).
#include <cmath>
#include <limits>

#include "cpu/gemm.h"
#include "cpu/kernels.h"
#include "cpu/vmath.h"

namespace hymo::rt {
namespace {

Status k_rms_norm(const KernelArgs& a) {
  const double eps = a.attr_f64("eps");
  return dispatch_float(a.in[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    const int64_t d = a.in[0].shape.back(), rows = a.in[0].rows();
    const T* x = a.in[0].as<T>();
    const T* w = a.in[1].as<T>();
    T* y = a.out[0].as<T>();
    a.pool.parallel_for(rows, std::max<int64_t>(1, kParallelGrain / d), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const T* xr = x + r * d;
        Acc ss = 0;
        for (int64_t j = 0; j < d; ++j) ss += Acc(xr[j]) * Acc(xr[j]);
        const Acc inv = 1.0 / std::sqrt(ss / Acc(d) + eps);
        for (int64_t j = 0; j < d; ++j) y[r * d + j] = T(Acc(xr[j]) * inv * Acc(w[j]));
      }
    });
    return ok_status();
  });
}

Status k_softmax(const KernelArgs& a) {
  return dispatch_float(a.in[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    const int64_t n = a.in[0].shape.back(), rows = a.in[0].rows();
    const T* x = a.in[0].as<T>();
    T* y = a.out[0].as<T>();
    a.pool.parallel_for(rows, std::max<int64_t>(1, kParallelGrain / n), [&](int64_t b, int64_t e) {
      std::vector<Acc> ex(static_cast<size_t>(n));
      for (int64_t r = b; r < e; ++r) {
        const T* xr = x + r * n;
        Acc m = -std::numeric_limits<Acc>::infinity();
        for (int64_t j = 0; j < n; ++j) m = std::max(m, Acc(xr[j]));
        Acc s = 0;
        for (int64_t j = 0; j < n; ++j) s += (ex[size_t(j)] = std::exp(Acc(xr[j]) - m));
        for (int64_t j = 0; j < n; ++j) y[r * n + j] = T(ex[size_t(j)] / s);
      }
    });
    return ok_status();
  });
}

Status k_rope(const KernelArgs& a) {
  const double theta = a.attr_f64("theta");
  const bool inverse = a.attr_bool("inverse");
  return dispatch_float(a.in[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    const int64_t B = a.in[0].dim(0), Tn = a.in[0].dim(1), H = a.in[0].dim(2), R = a.in[0].dim(3);
    const int64_t h = R / 2;
    // cos/sin table [T, h] in double.
    std::vector<double> cs(static_cast<size_t>(Tn * h)), sn(static_cast<size_t>(Tn * h));
    for (int64_t t = 0; t < Tn; ++t)
      for (int64_t i = 0; i < h; ++i) {
        double ang = double(t) * std::pow(theta, -2.0 * double(i) / double(R));
        if (inverse) ang = -ang;
        cs[size_t(t * h + i)] = std::cos(ang);
        sn[size_t(t * h + i)] = std::sin(ang);
      }
    const T* x = a.in[0].as<T>();
    T* y = a.out[0].as<T>();
    a.pool.parallel_for(B * Tn, std::max<int64_t>(1, kParallelGrain / (H * R)), [&](int64_t b, int64_t e) {
      for (int64_t bt = b; bt < e; ++bt) {
        const int64_t t = bt % Tn;
        for (int64_t hh = 0; hh < H; ++hh) {
          const T* xr = x + (bt * H + hh) * R;
          T* yr = y + (bt * H + hh) * R;
          for (int64_t i = 0; i < h; ++i) {
            const double c = cs[size_t(t * h + i)], s = sn[size_t(t * h + i)];
            const double x0 = double(xr[i]), x1 = double(xr[i + h]);
            yr[i] = T(x0 * c - x1 * s);
            yr[i + h] = T(x1 * c + x0 * s);
          }
        }
      }
    });
    return ok_status();
  });
}

// Per (b, h): S = scale * Q K^T (T x T, GEMM), causal softmax per row in
// double, O = P V (GEMM). Q/K/V rows of one head are strided by H*D.
Status k_causal_attention(const KernelArgs& a) {
  const double scale = a.attr_f64("scale");
  return dispatch_float(a.in[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    const int64_t B = a.in[0].dim(0), Tn = a.in[0].dim(1), H = a.in[0].dim(2), Dk = a.in[0].dim(3);
    const int64_t Dv = a.in[2].dim(3);
    std::vector<T> s(static_cast<size_t>(Tn * Tn));
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h) {
        const T* q = a.in[0].as<T>() + (b * Tn * H + h) * Dk;
        const T* k = a.in[1].as<T>() + (b * Tn * H + h) * Dk;
        const T* v = a.in[2].as<T>() + (b * Tn * H + h) * Dv;
        T* o = a.out[0].as<T>() + (b * Tn * H + h) * Dv;
        gemm<T>(false, true, Tn, Tn, Dk, T(scale), q, H * Dk, k, H * Dk, T(0), s.data(), Tn, a.pool);
        a.pool.parallel_for(Tn, std::max<int64_t>(1, kParallelGrain / Tn), [&](int64_t r0, int64_t r1) {
          for (int64_t i = r0; i < r1; ++i) {
            T* row = s.data() + i * Tn;
            Acc m = -std::numeric_limits<Acc>::infinity();
            for (int64_t j = 0; j <= i; ++j) m = std::max(m, Acc(row[j]));
            Acc sum = 0;
            std::vector<Acc> ex(static_cast<size_t>(i + 1));
            for (int64_t j = 0; j <= i; ++j) sum += (ex[size_t(j)] = std::exp(Acc(row[j]) - m));
            for (int64_t j = 0; j <= i; ++j) row[j] = T(ex[size_t(j)] / sum);
            for (int64_t j = i + 1; j < Tn; ++j) row[j] = T(0);
          }
        });
        gemm<T>(false, false, Tn, Dv, Tn, T(1), s.data(), Tn, v, H * Dv, T(0), o, H * Dv, a.pool);
      }
    return ok_status();
  });
}

// Sequential reference of spec §2.1 (chunk_size does not change the
// function, only how a chunked kernel computes it): per (b, h), state
// h[S][D] = 0; for t: h = diag(exp(g_t a)) h + b_t v_t^T; o_t = c_t^T h.
template <class T>
struct GdnIo {
  const T *v, *bb, *cc, *g, *aa;
  T* o;
  int64_t Tn, H, D, S;
};

// One (b, h), per vector ISA (a clone each).
template <class T>
HYMO_VECTOR_CLONES void gdn_forward_one(const GdnIo<T>& io, int64_t w, double* st, double* out, double* vd) {
  const int64_t Tn = io.Tn, H = io.H, D = io.D, S = io.S;
  const int64_t b = w / H, h = w % H;
  std::fill(st, st + S * D, 0.0);
  for (int64_t t = 0; t < Tn; ++t) {
    const int64_t bth = (b * Tn + t) * H + h;
    const T* vt = io.v + bth * D;
    const T* bt = io.bb + bth * S;
    const T* ct = io.cc + bth * S;
    const double gt = double(io.g[bth]);
    std::fill(out, out + D, 0.0);
    for (int64_t d = 0; d < D; ++d) vd[d] = double(vt[d]);
    for (int64_t s = 0; s < S; ++s) {
      const double decay = decay_factor<T>(gt * double(io.aa[h * S + s]));
      const double bs = double(bt[s]), cs = double(ct[s]);
      double* __restrict__ row = st + s * D;
      double* __restrict__ o = out;
      const double* __restrict__ x = vd;
      for (int64_t d = 0; d < D; ++d) {
        row[d] = decay * row[d] + bs * x[d];
        o[d] += cs * row[d];
      }
    }
    T* ot = io.o + bth * D;
    for (int64_t d = 0; d < D; ++d) ot[d] = T(out[d]);
  }
}

Status k_gdn_recurrence(const KernelArgs& a) {
  return dispatch_float(a.in[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    const int64_t B = a.in[0].dim(0), Tn = a.in[0].dim(1), H = a.in[0].dim(2), D = a.in[0].dim(3);
    const int64_t S = a.in[1].dim(3);
    const GdnIo<T> io{a.in[0].as<T>(), a.in[1].as<T>(), a.in[2].as<T>(), a.in[3].as<T>(), a.in[4].as<T>(),
                      a.out[0].as<T>(), Tn, H, D, S};
    a.pool.parallel_for(B * H, 1, [&](int64_t w0, int64_t w1) {
      std::vector<double> st(size_t(S * D)), out(static_cast<size_t>(D)), vd(static_cast<size_t>(D));
      for (int64_t w = w0; w < w1; ++w) gdn_forward_one<T>(io, w, st.data(), out.data(), vd.data());
    });
    return ok_status();
  });
}

Status k_cross_entropy(const KernelArgs& a) {
  const int64_t n = a.in[0].dim(0), v = a.in[0].dim(1);
  HYMO_RETURN_IF_ERROR(check_ids_in_range(a, a.in[1], 0, v, "target"));
  const int32_t* tg = a.in[1].as<int32_t>();
  return dispatch_float(a.in[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* x = a.in[0].as<T>();
    std::vector<Acc> per_row(static_cast<size_t>(n));
    a.pool.parallel_for(n, std::max<int64_t>(1, kParallelGrain / v), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const T* row = x + i * v;
        Acc m = -std::numeric_limits<Acc>::infinity();
        for (int64_t j = 0; j < v; ++j) m = std::max(m, Acc(row[j]));
        Acc s = 0;
        for (int64_t j = 0; j < v; ++j) s += std::exp(Acc(row[j]) - m);
        per_row[size_t(i)] = m + std::log(s) - Acc(row[tg[i]]);
      }
    });
    Acc total = 0;
    for (Acc r : per_row) total += r;  // fixed order: deterministic
    a.out[0].as<T>()[0] = T(total / Acc(n));
    return ok_status();
  });
}

}  // namespace

void register_model_kernels(KernelRegistry& r) {
  r.add("rms_norm", k_rms_norm);
  r.add("softmax", k_softmax);
  r.add("rope", k_rope);
  r.add("causal_attention", k_causal_attention);
  r.add("gdn_recurrence", k_gdn_recurrence);
  r.add("cross_entropy", k_cross_entropy);
  register_decode_kernels(r);  // kernels_decode.cc
}

}  // namespace hymo::rt
