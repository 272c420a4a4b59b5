// MoE routing ops: moe_route, moe_dispatch, moe_combine, moe_count
// (docs/dialect.md; spec §2.3).
#include <algorithm>
#include <numeric>

#include "cpu/kernels.h"

namespace hymo::rt {
namespace {

// sel = topk(probs + bias), highest first, ties: lower expert first;
// weights = probs[sel] / sum(probs[sel]).
Status k_moe_route(const KernelArgs& a) {
  const int64_t k = a.attr_int("top_k");
  return dispatch_float(a.in[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    const int64_t n = a.in[0].dim(0), e = a.in[0].dim(1);
    const T* p = a.in[0].as<T>();
    const T* bias = a.in[1].as<T>();
    int32_t* idx = a.out[0].as<int32_t>();
    T* w = a.out[1].as<T>();
    a.pool.parallel_for(n, std::max<int64_t>(1, kParallelGrain / (e * 8)), [&](int64_t b0, int64_t b1) {
      std::vector<int32_t> order(static_cast<size_t>(e));
      for (int64_t i = b0; i < b1; ++i) {
        const T* pr = p + i * e;
        std::iota(order.begin(), order.end(), 0);
        // Score in the tensor's dtype, as a reference implementation would.
        std::stable_sort(order.begin(), order.end(), [&](int32_t x, int32_t y) {
          return T(pr[x] + bias[x]) > T(pr[y] + bias[y]);
        });
        Acc sum = 0;
        for (int64_t j = 0; j < k; ++j) sum += Acc(pr[order[size_t(j)]]);
        for (int64_t j = 0; j < k; ++j) {
          idx[i * k + j] = order[size_t(j)];
          w[i * k + j] = T(Acc(pr[order[size_t(j)]]) / sum);
        }
      }
    });
    return ok_status();
  });
}

// Assignments in order (token-major, then slot); each expert keeps its first
// C; slot = e*C + position or -1; unused rows of xe are 0.
Status k_moe_dispatch(const KernelArgs& a) {
  const int64_t e = a.attr_int("num_experts"), cap = a.attr_int("capacity");
  HYMO_RETURN_IF_ERROR(check_ids_in_range(a, a.in[1], 0, e, "expert index", "flat index"));
  const int64_t n = a.in[0].dim(0), d = a.in[0].dim(1), k = a.in[1].dim(1);
  const int64_t es = dtype_size(a.in[0].dtype);
  const int32_t* idx = a.in[1].as<int32_t>();
  int32_t* slot = a.out[1].as<int32_t>();
  const char* x = static_cast<const char*>(a.in[0].data);
  char* xe = static_cast<char*>(a.out[0].data);
  std::memset(xe, 0, size_t(a.out[0].bytes()));
  std::vector<int64_t> fill(size_t(e), 0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < k; ++j) {
      const int64_t ex = idx[i * k + j];
      if (fill[size_t(ex)] < cap) {
        const int64_t s = ex * cap + fill[size_t(ex)]++;
        slot[i * k + j] = int32_t(s);
        std::memcpy(xe + s * d * es, x + i * d * es, size_t(d * es));
      } else {
        slot[i * k + j] = -1;
      }
    }
  return ok_status();
}

// out[n] = sum_k (slot>=0) weights[n,k] * ye.flat[slot[n,k]].
Status k_moe_combine(const KernelArgs& a) {
  const int64_t rows = a.in[0].dim(0) * a.in[0].dim(1), d = a.in[0].dim(2);
  const int64_t n = a.in[1].dim(0), k = a.in[1].dim(1);
  const int32_t* slot = a.in[1].as<int32_t>();
  for (int64_t i = 0; i < n * k; ++i)
    if (slot[i] < -1 || slot[i] >= rows)
      return a.error("slot " + std::to_string(slot[i]) + " at flat index " + std::to_string(i) +
                     " out of range [-1, " + std::to_string(rows) + ")");
  return dispatch_float(a.in[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* ye = a.in[0].as<T>();
    const T* w = a.in[2].as<T>();
    T* out = a.out[0].as<T>();
    a.pool.parallel_for(n, std::max<int64_t>(1, kParallelGrain / (d * k)), [&](int64_t b0, int64_t b1) {
      std::vector<Acc> acc(static_cast<size_t>(d));
      for (int64_t i = b0; i < b1; ++i) {
        std::fill(acc.begin(), acc.end(), Acc(0));
        for (int64_t j = 0; j < k; ++j) {
          const int32_t s = slot[i * k + j];
          if (s < 0) continue;
          const Acc wj = Acc(w[i * k + j]);
          for (int64_t c = 0; c < d; ++c) acc[size_t(c)] += wj * Acc(ye[int64_t(s) * d + c]);
        }
        for (int64_t c = 0; c < d; ++c) out[i * d + c] = T(acc[size_t(c)]);
      }
    });
    return ok_status();
  });
}

Status k_moe_count(const KernelArgs& a) {
  const int64_t e = a.attr_int("num_experts");
  HYMO_RETURN_IF_ERROR(check_ids_in_range(a, a.in[0], 0, e, "expert index", "flat index"));
  std::vector<int64_t> cnt(size_t(e), 0);
  const int32_t* idx = a.in[0].as<int32_t>();
  for (int64_t i = 0; i < a.in[0].numel(); ++i) ++cnt[size_t(idx[i])];
  return dispatch_float(a.out[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    for (int64_t j = 0; j < e; ++j) a.out[0].as<T>()[j] = T(cnt[size_t(j)]);
    return ok_status();
  });
}

}  // namespace

void register_moe_kernels(KernelRegistry& r) {
  r.add("moe_route", k_moe_route);
  r.add("moe_dispatch", k_moe_dispatch);
  r.add("moe_combine", k_moe_combine);
  r.add("moe_count", k_moe_count);
}

}  // namespace hymo::rt
