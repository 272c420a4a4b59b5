// Decode ops (one token per step, docs/dialect.md "Decode ops"): rope_at,
// gdn_step, cache_write, latent_attention_step. Accumulation in double, as
// the forward kernels (kernels_model.cc) do, so that a decode step agrees
// with the full forward to rounding.
#include <cmath>
#include <limits>

#include "cpu/kernels.h"

namespace hymo::rt {
namespace {

// The run-time position (a scalar i32), checked against [0, limit).
Status read_pos(const KernelArgs& a, size_t operand, int64_t limit, int64_t* pos) {
  const int32_t p = a.in[operand].as<int32_t>()[0];
  if (p < 0 || (limit > 0 && p >= limit))
    return a.error("position " + std::to_string(p) + " out of range [0, " + std::to_string(limit) + ")");
  *pos = p;
  return ok_status();
}

Status k_rope_at(const KernelArgs& a) {
  int64_t pos;
  HYMO_RETURN_IF_ERROR(read_pos(a, 1, 0, &pos));
  const double theta = a.attr_f64("theta");
  return dispatch_float(a.in[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    const int64_t rows = a.in[0].rows(), R = a.in[0].shape.back(), h = R / 2;
    std::vector<double> cs(static_cast<size_t>(h)), sn(static_cast<size_t>(h));
    for (int64_t i = 0; i < h; ++i) {
      // The same expression as rope (kernels_model.cc): bitwise equal angles.
      const double ang = double(pos) * std::pow(theta, -2.0 * double(i) / double(R));
      cs[size_t(i)] = std::cos(ang);
      sn[size_t(i)] = std::sin(ang);
    }
    const T* x = a.in[0].as<T>();
    T* y = a.out[0].as<T>();
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t i = 0; i < h; ++i) {
        const double x0 = double(x[r * R + i]), x1 = double(x[r * R + i + h]);
        y[r * R + i] = T(x0 * cs[size_t(i)] - x1 * sn[size_t(i)]);
        y[r * R + i + h] = T(x1 * cs[size_t(i)] + x0 * sn[size_t(i)]);
      }
    return ok_status();
  });
}

// h' = diag(exp(g a)) h + b v^T; o = c^T h' per (batch, head).
Status k_gdn_step(const KernelArgs& a) {
  return dispatch_float(a.in[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    const int64_t B = a.in[0].dim(0), H = a.in[0].dim(1), D = a.in[0].dim(2), S = a.in[1].dim(2);
    const T* v = a.in[0].as<T>();
    const T* bb = a.in[1].as<T>();
    const T* cc = a.in[2].as<T>();
    const T* g = a.in[3].as<T>();
    const T* aa = a.in[4].as<T>();
    const T* st = a.in[5].as<T>();
    T* o = a.out[0].as<T>();
    T* ns = a.out[1].as<T>();
    a.pool.parallel_for(B * H, std::max<int64_t>(1, kParallelGrain / (S * D)), [&](int64_t w0, int64_t w1) {
      std::vector<double> out(static_cast<size_t>(D));
      for (int64_t w = w0; w < w1; ++w) {
        const int64_t h = w % H;
        const T* vt = v + w * D;
        const T* bt = bb + w * S;
        const T* ct = cc + w * S;
        const double gt = double(g[w]);
        std::fill(out.begin(), out.end(), 0.0);
        for (int64_t s = 0; s < S; ++s) {
          const double decay = std::exp(gt * double(aa[h * S + s]));
          const double bs = double(bt[s]), cs = double(ct[s]);
          const T* row = st + (w * S + s) * D;
          T* nrow = ns + (w * S + s) * D;
          for (int64_t d = 0; d < D; ++d) {
            const double hv = decay * double(row[d]) + bs * double(vt[d]);
            nrow[d] = T(hv);
            out[size_t(d)] += cs * hv;
          }
        }
        for (int64_t d = 0; d < D; ++d) o[w * D + d] = T(out[size_t(d)]);
      }
    });
    return ok_status();
  });
}

Status k_cache_write(const KernelArgs& a) {
  const int64_t B = a.in[0].dim(0), L = a.in[0].dim(1), R = a.in[0].dim(2);
  int64_t pos;
  HYMO_RETURN_IF_ERROR(read_pos(a, 2, L, &pos));
  const size_t es = dtype_size(a.in[0].dtype);
  const char* cache = static_cast<const char*>(a.in[0].data);
  const char* x = static_cast<const char*>(a.in[1].data);
  char* out = static_cast<char*>(a.out[0].data);
  std::memcpy(out, cache, size_t(a.in[0].bytes()));
  for (int64_t b = 0; b < B; ++b)
    std::memcpy(out + size_t((b * L + pos) * R) * es, x + size_t(b * R) * es, size_t(R) * es);
  return ok_status();
}

// Absorbed form (DeepSeek-V2): with W_kvb[h] = [W_k (dn x r); W_v (dv x r)]
// and n_t = RMSNorm(c_kv[t]), q_nope . (W_k n_t) = (W_k^T q_nope) . n_t and
// sum_t p_t W_v n_t = W_v (sum_t p_t n_t): per token O(pos * (r + dr)) work
// per head plus O((dn + dv) r), never materializing k_nope or v.
Status k_latent_attention_step(const KernelArgs& a) {
  const int64_t B = a.in[0].dim(0), H = a.in[0].dim(1), dn = a.in[0].dim(2), dr = a.in[1].dim(2);
  const int64_t L = a.in[2].dim(1), r = a.in[2].dim(2);
  const int64_t dv = a.out[0].dim(2);
  int64_t pos;
  HYMO_RETURN_IF_ERROR(read_pos(a, 6, L, &pos));
  const double scale = a.attr_f64("scale"), eps = a.attr_f64("eps");
  return dispatch_float(a.in[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* qn = a.in[0].as<T>();
    const T* qr = a.in[1].as<T>();
    const T* ckv = a.in[2].as<T>();
    const T* kr = a.in[3].as<T>();
    const T* nw = a.in[4].as<T>();
    const T* w = a.in[5].as<T>();
    T* out = a.out[0].as<T>();
    const int64_t n = pos + 1;
    for (int64_t b = 0; b < B; ++b) {
      // Normalized latents of positions 0..pos, shared by all heads. The
      // scratch is reused across steps (a fresh large vector per token would
      // be an mmap and its page faults every step).
      thread_local std::vector<double> nrm_scratch;
      if (nrm_scratch.size() < static_cast<size_t>(n * r)) nrm_scratch.resize(static_cast<size_t>(n * r));
      double* nrm = nrm_scratch.data();
      a.pool.parallel_for(n, std::max<int64_t>(1, kParallelGrain / r), [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t) {
          const T* c = ckv + (b * L + t) * r;
          double ss = 0;
          for (int64_t j = 0; j < r; ++j) ss += double(c[j]) * double(c[j]);
          const double inv = 1.0 / std::sqrt(ss / double(r) + eps);
          for (int64_t j = 0; j < r; ++j) nrm[t * r + j] = double(c[j]) * inv * double(nw[j]);
        }
      });
      a.pool.parallel_for(H, 1, [&](int64_t h0, int64_t h1) {
        thread_local std::vector<double> sc_scratch;
        if (sc_scratch.size() < static_cast<size_t>(n)) sc_scratch.resize(static_cast<size_t>(n));
        std::vector<double> qa(static_cast<size_t>(r)), nbar(static_cast<size_t>(r));
        double* sc = sc_scratch.data();
        for (int64_t h = h0; h < h1; ++h) {
          const T* wk = w + h * (dn + dv) * r;
          const T* wv = wk + dn * r;
          const T* q1 = qn + (b * H + h) * dn;
          const T* q2 = qr + (b * H + h) * dr;
          std::fill(qa.begin(), qa.end(), 0.0);
          for (int64_t i = 0; i < dn; ++i)
            for (int64_t j = 0; j < r; ++j) qa[size_t(j)] += double(q1[i]) * double(wk[i * r + j]);
          double m = -std::numeric_limits<double>::infinity();
          for (int64_t t = 0; t < n; ++t) {
            double s = 0;
            const double* nt = nrm + t * r;
            for (int64_t j = 0; j < r; ++j) s += qa[size_t(j)] * nt[j];
            const T* k = kr + (b * L + t) * dr;
            for (int64_t j = 0; j < dr; ++j) s += double(q2[j]) * double(k[j]);
            sc[t] = s * scale;
            m = std::max(m, sc[t]);
          }
          double sum = 0;
          for (int64_t t = 0; t < n; ++t) sum += (sc[t] = std::exp(sc[t] - m));
          std::fill(nbar.begin(), nbar.end(), 0.0);
          for (int64_t t = 0; t < n; ++t) {
            const double p = sc[t] / sum;
            const double* nt = nrm + t * r;
            for (int64_t j = 0; j < r; ++j) nbar[size_t(j)] += p * nt[j];
          }
          for (int64_t i = 0; i < dv; ++i) {
            double o = 0;
            for (int64_t j = 0; j < r; ++j) o += double(wv[i * r + j]) * nbar[size_t(j)];
            out[(b * H + h) * dv + i] = T(o);
          }
        }
      });
    }
    return ok_status();
  });
}

}  // namespace

void register_decode_kernels(KernelRegistry& r) {
  r.add("rope_at", k_rope_at);
  r.add("gdn_step", k_gdn_step);
  r.add("cache_write", k_cache_write);
  r.add("latent_attention_step", k_latent_attention_step);
}

}  // namespace hymo::rt
