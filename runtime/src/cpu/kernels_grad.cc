// Backward ops (docs/dialect.md "Backward ops"): the vector-Jacobian products
// of the forward kernels in kernels_dense.cc, kernels_model.cc and
// kernels_moe.cc. Everything accumulates in double; every reduction runs in
// a fixed order (independent of the thread count), so results are
// deterministic.
#include <algorithm>
#include <cmath>
#include <limits>

#include "cpu/gemm.h"
#include "cpu/kernels.h"
#include "cpu/vmath.h"

namespace hymo::rt {
namespace {

// Scatter-add of rows: out[r, :] = sum over entries p (ascending) with
// index[p] == r of scale(p) * src_row(p)[:]; index -1 is skipped. Entries are
// bucketed per row first (a counting sort), then every row is summed in
// double by one thread in entry order.
template <class T, class SrcRow, class Scale>
void scatter_add_rows(const int32_t* index, int64_t entries, int64_t rows, int64_t d, SrcRow src_row, Scale scale,
                      T* out, ThreadPool& pool) {
  std::vector<int64_t> start(size_t(rows + 1), 0);
  for (int64_t p = 0; p < entries; ++p)
    if (index[p] >= 0) ++start[size_t(index[p]) + 1];
  for (int64_t r = 0; r < rows; ++r) start[size_t(r + 1)] += start[size_t(r)];
  std::vector<int64_t> order(static_cast<size_t>(start[size_t(rows)]));
  {
    std::vector<int64_t> fill(start.begin(), start.end() - 1);
    for (int64_t p = 0; p < entries; ++p)
      if (index[p] >= 0) order[size_t(fill[size_t(index[p])]++)] = p;
  }
  pool.parallel_for(rows, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, d)), [&](int64_t r0, int64_t r1) {
    std::vector<Acc> acc(static_cast<size_t>(d));
    for (int64_t r = r0; r < r1; ++r) {
      std::fill(acc.begin(), acc.end(), Acc(0));
      for (int64_t q = start[size_t(r)]; q < start[size_t(r + 1)]; ++q) {
        const int64_t p = order[size_t(q)];
        const Acc s = Acc(scale(p));
        const T* x = src_row(p);
        for (int64_t j = 0; j < d; ++j) acc[size_t(j)] += s * Acc(x[j]);
      }
      for (int64_t j = 0; j < d; ++j) out[r * d + j] = T(acc[size_t(j)]);
    }
  });
}

// Column sums of per-row contributions, deterministic: rows are cut into
// fixed blocks of kRowBlock, each block summed by one thread, the block
// partials added in order.
inline constexpr int64_t kRowBlock = 64;

// out[v] = sum_{p: ids[p] = v} dout[p]; V from the result.
Status k_embedding_grad(const KernelArgs& a) {
  const TensorRef& ids = a.in[0];
  const int64_t v = a.out[0].dim(0), d = a.out[0].dim(1), n = ids.numel();
  HYMO_RETURN_IF_ERROR(check_ids_in_range(a, ids, 0, v, "id"));
  const int32_t* id = ids.as<int32_t>();
  return dispatch_float(a.in[1].dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* dout = a.in[1].as<T>();
    scatter_add_rows<T>(
        id, n, v, d, [&](int64_t p) { return dout + p * d; }, [](int64_t) { return 1.0; }, a.out[0].as<T>(), a.pool);
    return ok_status();
  });
}

// r = rsqrt(mean(x^2) + eps), xh = x r: dw = sum_rows(dout * xh),
// dx = r (dout w - xh mean(dout w xh)).
Status k_rms_norm_grad(const KernelArgs& a) {
  const double eps = a.attr_f64("eps");
  return dispatch_float(a.in[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    const int64_t d = a.in[0].shape.back(), rows = a.in[0].rows();
    const T* x = a.in[0].as<T>();
    const T* w = a.in[1].as<T>();
    const T* dy = a.in[2].as<T>();
    T* dx = a.out[0].as<T>();
    const int64_t nblocks = (rows + kRowBlock - 1) / kRowBlock;
    std::vector<Acc> partial(size_t(nblocks * d), 0.0);
    a.pool.parallel_for(nblocks, std::max<int64_t>(1, kParallelGrain / (kRowBlock * d)), [&](int64_t b0, int64_t b1) {
      for (int64_t blk = b0; blk < b1; ++blk) {
        Acc* dw = partial.data() + blk * d;
        for (int64_t r = blk * kRowBlock; r < std::min(rows, (blk + 1) * kRowBlock); ++r) {
          const T* xr = x + r * d;
          const T* gr = dy + r * d;
          Acc ss = 0;
          for (int64_t j = 0; j < d; ++j) ss += Acc(xr[j]) * Acc(xr[j]);
          const Acc inv = 1.0 / std::sqrt(ss / Acc(d) + eps);
          Acc dot = 0;  // sum_j dout_j w_j xh_j
          for (int64_t j = 0; j < d; ++j) {
            const Acc xh = Acc(xr[j]) * inv;
            dot += Acc(gr[j]) * Acc(w[j]) * xh;
            dw[j] += Acc(gr[j]) * xh;
          }
          const Acc mean = dot / Acc(d);
          for (int64_t j = 0; j < d; ++j)
            dx[r * d + j] = T(inv * (Acc(gr[j]) * Acc(w[j]) - Acc(xr[j]) * inv * mean));
        }
      }
    });
    T* dw = a.out[1].as<T>();
    for (int64_t j = 0; j < d; ++j) {
      Acc s = 0;
      for (int64_t blk = 0; blk < nblocks; ++blk) s += partial[size_t(blk * d + j)];
      dw[j] = T(s);
    }
    return ok_status();
  });
}

// dx = out * (dout - sum_last(dout * out)). Each row is read whole before it
// is written, so dx may be the memory of out or dout.
Status k_softmax_grad(const KernelArgs& a) {
  return dispatch_float(a.in[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    const int64_t n = a.in[0].shape.back(), rows = a.in[0].rows();
    const T* y = a.in[0].as<T>();
    const T* dy = a.in[1].as<T>();
    T* dx = a.out[0].as<T>();
    a.pool.parallel_for(rows, std::max<int64_t>(1, kParallelGrain / n), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        Acc s = 0;
        for (int64_t j = 0; j < n; ++j) s += Acc(y[r * n + j]) * Acc(dy[r * n + j]);
        for (int64_t j = 0; j < n; ++j) {
          const Acc yj = Acc(y[r * n + j]), gj = Acc(dy[r * n + j]);
          dx[r * n + j] = T(yj * (gj - s));
        }
      }
    });
    return ok_status();
  });
}

// Per (b, h), with S = scale Q K^T and P its causal softmax (recomputed as
// the forward does: S by GEMM, the softmax in double):
// dV = P^T dO, dP = dO V^T, dS = P * (dP - rowsum(dP * P)),
// dQ = scale dS K, dK = scale dS^T Q.
Status k_causal_attention_grad(const KernelArgs& a) {
  const double scale = a.attr_f64("scale");
  return dispatch_float(a.in[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    const int64_t B = a.in[0].dim(0), Tn = a.in[0].dim(1), H = a.in[0].dim(2), Dk = a.in[0].dim(3);
    const int64_t Dv = a.in[2].dim(3);
    std::vector<T> p(size_t(Tn * Tn)), dp(size_t(Tn * Tn));
    const int64_t grain = std::max<int64_t>(1, kParallelGrain / Tn);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h) {
        const int64_t ok = (b * Tn * H + h) * Dk, ov = (b * Tn * H + h) * Dv;
        const T* q = a.in[0].as<T>() + ok;
        const T* k = a.in[1].as<T>() + ok;
        const T* v = a.in[2].as<T>() + ov;
        const T* dout = a.in[3].as<T>() + ov;
        T* dq = a.out[0].as<T>() + ok;
        T* dk = a.out[1].as<T>() + ok;
        T* dv = a.out[2].as<T>() + ov;
        gemm<T>(false, true, Tn, Tn, Dk, T(scale), q, H * Dk, k, H * Dk, T(0), p.data(), Tn, a.pool);
        a.pool.parallel_for(Tn, grain, [&](int64_t r0, int64_t r1) {
          std::vector<Acc> ex(static_cast<size_t>(Tn));
          for (int64_t i = r0; i < r1; ++i) {
            T* row = p.data() + i * Tn;
            Acc m = -std::numeric_limits<Acc>::infinity();
            for (int64_t j = 0; j <= i; ++j) m = std::max(m, Acc(row[j]));
            Acc sum = 0;
            for (int64_t j = 0; j <= i; ++j) sum += (ex[size_t(j)] = std::exp(Acc(row[j]) - m));
            for (int64_t j = 0; j <= i; ++j) row[j] = T(ex[size_t(j)] / sum);
            for (int64_t j = i + 1; j < Tn; ++j) row[j] = T(0);
          }
        });
        gemm<T>(true, false, Tn, Dv, Tn, T(1), p.data(), Tn, dout, H * Dv, T(0), dv, H * Dv, a.pool);
        gemm<T>(false, true, Tn, Tn, Dv, T(1), dout, H * Dv, v, H * Dv, T(0), dp.data(), Tn, a.pool);
        a.pool.parallel_for(Tn, grain, [&](int64_t r0, int64_t r1) {
          for (int64_t i = r0; i < r1; ++i) {
            const T* pr = p.data() + i * Tn;
            T* dr = dp.data() + i * Tn;
            Acc s = 0;
            for (int64_t j = 0; j <= i; ++j) s += Acc(pr[j]) * Acc(dr[j]);
            for (int64_t j = 0; j <= i; ++j) dr[j] = T(Acc(pr[j]) * (Acc(dr[j]) - s));
            for (int64_t j = i + 1; j < Tn; ++j) dr[j] = T(0);
          }
        });
        gemm<T>(false, false, Tn, Dk, Tn, T(scale), dp.data(), Tn, k, H * Dk, T(0), dq, H * Dk, a.pool);
        gemm<T>(true, false, Tn, Dk, Tn, T(scale), dp.data(), Tn, q, H * Dk, T(0), dk, H * Dk, a.pool);
      }
    return ok_status();
  });
}

// sum_d x[d] y[d], in sum8's fixed order.
HYMO_ALWAYS_INLINE Acc dot8(const Acc* __restrict__ x, const Acc* __restrict__ y, int64_t n) {
  return sum8(n, [&](int64_t d) { return x[d] * y[d]; });
}

template <class T>
struct GdnGradIo {
  const T *v, *bb, *cc, *g, *aa, *dout;
  T *dv, *db, *dc, *dg;
  int64_t Tn, H, D, S, C, nch;
};
struct GdnGradScratch {
  std::vector<Acc> ckpt, local, dh, dov, vv, xv, decay;
};

// Forward (per (b, h), state h[S][D], h_0 = 0):
//   h_t = diag(decay_t) h_{t-1} + b_t v_t^T, decay_t[s] = exp(g_t a[s]),
//   o_t = c_t^T h_t.
// Backward, t = T..1 with the adjoint state dh (dh = 0 after the last step):
//   dh += c_t do_t^T;  dc_t = h_t do_t;  dv_t = dh^T b_t;  db_t = dh v_t;
//   l[s] = decay_t[s] sum_d dh[s,d] h_{t-1}[s,d]  (the adjoint of g_t a[s]);
//   dg_t = sum_s l[s] a[s];  da[s] += l[s] g_t;  dh = diag(decay_t) dh.
// States are kept in double. The forward states are checkpointed every
// chunk_size steps and each chunk's states recomputed (bit-identically) on
// the way back, so memory is O((T / chunk + chunk) S D) per worker.
// One (b, h) of it, per vector ISA (a clone each).
template <class T>
HYMO_VECTOR_CLONES void gdn_grad_one(const GdnGradIo<T>& io, int64_t w, GdnGradScratch& sc, Acc* da) {
  const T *v = io.v, *bb = io.bb, *cc = io.cc, *g = io.g, *aa = io.aa, *dout = io.dout;
  T *dv = io.dv, *db = io.db, *dc = io.dc, *dg = io.dg;
  const int64_t Tn = io.Tn, H = io.H, D = io.D, S = io.S, C = io.C, nch = io.nch, SD = S * D;
  std::vector<Acc>&ckpt = sc.ckpt, &local = sc.local, &dh = sc.dh, &dov = sc.dov, &vv = sc.vv, &xv = sc.xv,
                 &decay = sc.decay;
  const int64_t b = w / H, h = w % H;
  const T* ah = aa + h * S;
  auto bth = [&](int64_t t) { return (b * Tn + t) * H + h; };
  // exp(g_t a_s) once per (t, s): the forward, its recomputation and
  // the backward all read it.
  for (int64_t t = 0; t < Tn; ++t) {
    const Acc gt = Acc(g[bth(t)]);
    for (int64_t s = 0; s < S; ++s) decay[size_t(t * S + s)] = decay_factor<T>(gt * Acc(ah[s]));
  }
  // One forward step on `st` (in place) at time t.
  auto step = [&](Acc* st, int64_t t) {
    const int64_t i = bth(t);
    Acc* __restrict__ x = vv.data();
    for (int64_t d = 0; d < D; ++d) x[d] = Acc(v[i * D + d]);
    for (int64_t s = 0; s < S; ++s) {
      const Acc dcy = decay[size_t(t * S + s)], bs = Acc(bb[i * S + s]);
      Acc* __restrict__ row = st + s * D;
      for (int64_t d = 0; d < D; ++d) row[d] = dcy * row[d] + bs * x[d];
    }
  };
  // Forward: checkpoints at t = 0, C, 2C, ... (the state before step t).
  std::fill(local.begin(), local.begin() + SD, 0.0);
  for (int64_t t = 0; t < Tn; ++t) {
    if (t % C == 0) std::copy(local.begin(), local.begin() + SD, ckpt.begin() + (t / C) * SD);
    step(local.data(), t);
  }
  std::fill(dh.begin(), dh.end(), 0.0);
  for (int64_t k = nch - 1; k >= 0; --k) {
    const int64_t t0 = k * C, t1 = std::min(Tn, t0 + C);
    // local[j] = the state after steps t0 .. t0+j-1 (local[0] = ckpt k).
    std::copy(ckpt.begin() + k * SD, ckpt.begin() + (k + 1) * SD, local.begin());
    for (int64_t t = t0; t < t1; ++t) {
      Acc* nxt = local.data() + (t - t0 + 1) * SD;
      std::copy(nxt - SD, nxt, nxt);
      step(nxt, t);
    }
    for (int64_t t = t1 - 1; t >= t0; --t) {
      const int64_t i = bth(t);
      const Acc* ht = local.data() + (t - t0 + 1) * SD;  // h_t
      const Acc* hp = ht - SD;                           // h_{t-1}
      const T* dot = dout + i * D;
      const T* vt = v + i * D;
      const Acc gt = Acc(g[i]);
      for (int64_t d = 0; d < D; ++d) {
        dov[size_t(d)] = Acc(dot[d]);
        vv[size_t(d)] = Acc(vt[d]);
        xv[size_t(d)] = 0;
      }
      // One pass per state row s (unit stride over d): add c_t do_t^T
      // to the adjoint state, then read dc, dv, db and the decay
      // sensitivity off it, then decay it for step t-1.
      Acc dgt = 0;
      for (int64_t s = 0; s < S; ++s) {
        const Acc cs = Acc(cc[i * S + s]), bs = Acc(bb[i * S + s]);
        const Acc dcy = decay[size_t(t * S + s)];
        const Acc* __restrict__ hs = ht + s * D;
        const Acc* __restrict__ hps = hp + s * D;
        const Acc* __restrict__ dv_ = dov.data();
        const Acc* __restrict__ v_ = vv.data();
        Acc* __restrict__ row = dh.data() + s * D;
        Acc* __restrict__ x_ = xv.data();
        for (int64_t d = 0; d < D; ++d) row[d] += cs * dv_[d];
        dc[i * S + s] = T(dot8(hs, dv_, D));
        db[i * S + s] = T(dot8(row, v_, D));
        const Acc l = dot8(row, hps, D) * dcy;
        for (int64_t d = 0; d < D; ++d) x_[d] += row[d] * bs;
        for (int64_t d = 0; d < D; ++d) row[d] *= dcy;
        dgt += l * Acc(ah[s]);
        da[s] += l * gt;
      }
      for (int64_t d = 0; d < D; ++d) dv[i * D + d] = T(xv[size_t(d)]);
      dg[i] = T(dgt);
    }
  }
}
Status k_gdn_recurrence_grad(const KernelArgs& a) {
  const int64_t chunk = a.attr_int("chunk_size");
  return dispatch_float(a.in[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    const int64_t B = a.in[0].dim(0), Tn = a.in[0].dim(1), H = a.in[0].dim(2), D = a.in[0].dim(3);
    const int64_t S = a.in[1].dim(3);
    const int64_t C = std::min(chunk, Tn), nch = (Tn + C - 1) / C, SD = S * D;
    const GdnGradIo<T> io{a.in[0].as<T>(),  a.in[1].as<T>(),  a.in[2].as<T>(),  a.in[3].as<T>(),
                          a.in[4].as<T>(),  a.in[5].as<T>(),  a.out[0].as<T>(), a.out[1].as<T>(),
                          a.out[2].as<T>(), a.out[3].as<T>(), Tn, H, D, S, C, nch};
    // da partials per (b, h), reduced over b in order afterwards.
    std::vector<Acc> da_part(size_t(B * H * S), 0.0);
    a.pool.parallel_for(B * H, 1, [&](int64_t w0, int64_t w1) {
      GdnGradScratch sc{std::vector<Acc>(size_t(nch * SD)), std::vector<Acc>(size_t((C + 1) * SD)),
                        std::vector<Acc>(size_t(SD)),       std::vector<Acc>(size_t(D)),
                        std::vector<Acc>(size_t(D)),        std::vector<Acc>(size_t(D)),
                        std::vector<Acc>(size_t(Tn * S))};
      for (int64_t w = w0; w < w1; ++w) gdn_grad_one<T>(io, w, sc, da_part.data() + w * S);
    });
    T* da = a.out[4].as<T>();
    for (int64_t h = 0; h < H; ++h)
      for (int64_t s = 0; s < S; ++s) {
        Acc x = 0;
        for (int64_t b = 0; b < B; ++b) x += da_part[size_t((b * H + h) * S + s)];
        da[h * S + s] = T(x);
      }
    return ok_status();
  });
}

// s = sum_k probs[n, sel_k], w_k = probs[n, sel_k] / s:
// dprobs[n, sel_j] += (dweights[n,j] - sum_k dweights[n,k] w_k) / s, 0
// elsewhere (+= so that a repeated index still gives the true VJP).
Status k_moe_route_grad(const KernelArgs& a) {
  const int64_t e = a.in[0].dim(1);
  HYMO_RETURN_IF_ERROR(check_ids_in_range(a, a.in[1], 0, e, "expert index", "flat index"));
  return dispatch_float(a.in[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    const int64_t n = a.in[0].dim(0), k = a.in[1].dim(1);
    const T* p = a.in[0].as<T>();
    const int32_t* idx = a.in[1].as<int32_t>();
    const T* dw = a.in[2].as<T>();
    T* dp = a.out[0].as<T>();
    a.pool.parallel_for(n, std::max<int64_t>(1, kParallelGrain / (e + k)), [&](int64_t r0, int64_t r1) {
      std::vector<Acc> acc(static_cast<size_t>(e));
      for (int64_t r = r0; r < r1; ++r) {
        const int32_t* sel = idx + r * k;
        Acc s = 0;
        for (int64_t j = 0; j < k; ++j) s += Acc(p[r * e + sel[j]]);
        Acc dot = 0;
        for (int64_t j = 0; j < k; ++j) dot += Acc(dw[r * k + j]) * (Acc(p[r * e + sel[j]]) / s);
        std::fill(acc.begin(), acc.end(), Acc(0));
        for (int64_t j = 0; j < k; ++j) acc[size_t(sel[j])] += (Acc(dw[r * k + j]) - dot) / s;
        for (int64_t j = 0; j < e; ++j) dp[r * e + j] = T(acc[size_t(j)]);
      }
    });
    return ok_status();
  });
}

// dye.flat[slot[n,k]] += weights[n,k] dout[n] (0 in unused slots),
// dweights[n,k] = dout[n] . ye.flat[slot[n,k]] (0 when dropped).
Status k_moe_combine_grad(const KernelArgs& a) {
  const int64_t rows = a.in[0].dim(0) * a.in[0].dim(1), d = a.in[0].dim(2);
  HYMO_RETURN_IF_ERROR(check_ids_in_range(a, a.in[1], -1, rows, "slot", "flat index"));
  return dispatch_float(a.in[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    const int64_t n = a.in[1].dim(0), k = a.in[1].dim(1);
    const T* ye = a.in[0].as<T>();
    const int32_t* slot = a.in[1].as<int32_t>();
    const T* w = a.in[2].as<T>();
    const T* dout = a.in[3].as<T>();
    scatter_add_rows<T>(
        slot, n * k, rows, d, [&](int64_t p) { return dout + (p / k) * d; }, [&](int64_t p) { return w[p]; },
        a.out[0].as<T>(), a.pool);
    T* dw = a.out[1].as<T>();
    a.pool.parallel_for(n, std::max<int64_t>(1, kParallelGrain / (d * k)), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r)
        for (int64_t j = 0; j < k; ++j) {
          const int32_t s = slot[r * k + j];
          Acc x = 0;
          if (s >= 0)
            for (int64_t c = 0; c < d; ++c) x += Acc(dout[r * d + c]) * Acc(ye[int64_t(s) * d + c]);
          dw[r * k + j] = T(x);
        }
    });
    return ok_status();
  });
}

// dlogits[n] = dloss (softmax(logits[n]) - onehot(targets[n])) / N.
Status k_cross_entropy_grad(const KernelArgs& a) {
  const int64_t n = a.in[0].dim(0), v = a.in[0].dim(1);
  HYMO_RETURN_IF_ERROR(check_ids_in_range(a, a.in[1], 0, v, "target"));
  const int32_t* tg = a.in[1].as<int32_t>();
  return dispatch_float(a.in[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* x = a.in[0].as<T>();
    const Acc f = Acc(a.in[2].as<T>()[0]) / Acc(n);
    T* dx = a.out[0].as<T>();
    a.pool.parallel_for(n, std::max<int64_t>(1, kParallelGrain / v), [&](int64_t b, int64_t e) {
      std::vector<Acc> ex(static_cast<size_t>(v));
      for (int64_t i = b; i < e; ++i) {
        const T* row = x + i * v;
        Acc m = -std::numeric_limits<Acc>::infinity();
        for (int64_t j = 0; j < v; ++j) m = std::max(m, Acc(row[j]));
        Acc s = 0;
        for (int64_t j = 0; j < v; ++j) s += (ex[size_t(j)] = std::exp(Acc(row[j]) - m));
        for (int64_t j = 0; j < v; ++j) {
          const Acc onehot = j == tg[i] ? 1.0 : 0.0;
          dx[i * v + j] = T(f * (ex[size_t(j)] / s - onehot));
        }
      }
    });
    return ok_status();
  });
}

}  // namespace

void register_grad_kernels(KernelRegistry& r) {
  r.add("embedding_grad", k_embedding_grad);
  r.add("rms_norm_grad", k_rms_norm_grad);
  r.add("softmax_grad", k_softmax_grad);
  r.add("causal_attention_grad", k_causal_attention_grad);
  r.add("gdn_recurrence_grad", k_gdn_recurrence_grad);
  r.add("moe_route_grad", k_moe_route_grad);
  r.add("moe_combine_grad", k_moe_combine_grad);
  r.add("cross_entropy_grad", k_cross_entropy_grad);
}

}  // namespace hymo::rt
