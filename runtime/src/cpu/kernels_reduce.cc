// reduce_sum / reduce_mean / reduce_max over a set of dims, accumulated in
// double. NaN propagates through reduce_max.
#include <cmath>
#include <algorithm>
#include <limits>

#include "cpu/kernels.h"

namespace hymo::rt {
namespace {

enum class Red { kSum, kMean, kMax };

template <Red R>
Status k_reduce(const KernelArgs& a) {
  return dispatch_float(a.in[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    const TensorRef& x = a.in[0];
    const std::vector<int64_t> dims = a.attr_ints("dims");
    const size_t r = x.rank();
    std::vector<bool> reduced(r, false);
    for (int64_t d : dims) reduced[size_t(d)] = true;
    int64_t out_n = 1, red_n = 1;
    for (size_t i = 0; i < r; ++i) (reduced[i] ? red_n : out_n) *= x.shape[i];
    const Acc init = R == Red::kMax ? -std::numeric_limits<Acc>::infinity() : Acc(0);
    auto combine = [](Acc acc, Acc v) -> Acc {
      if (R != Red::kMax) return acc + v;
      if (std::isnan(v) || std::isnan(acc)) return std::numeric_limits<Acc>::quiet_NaN();
      return v > acc ? v : acc;
    };
    const T* xs = x.as<T>();
    T* y = a.out[0].as<T>();
    // Fast path: the reduced dims are a suffix -> contiguous rows.
    bool suffix = true;
    for (size_t i = 0; i < r; ++i)
      if (reduced[i] && i + dims.size() < r) suffix = false;
    std::vector<Acc> acc(size_t(out_n), init);
    if (suffix && R != Red::kMax) {
      // Contiguous sums: 8 interleaved partial sums (no add-latency chain),
      // and a long row is cut into fixed blocks summed in parallel and then
      // in order, so the result does not depend on the thread count.
      auto sum8 = [](const T* p, int64_t n) {
        Acc l[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        int64_t j = 0;
        for (; j + 8 <= n; j += 8)
          for (int q = 0; q < 8; ++q) l[q] += Acc(p[j + q]);
        for (; j < n; ++j) l[0] += Acc(p[j]);
        return ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
      };
      constexpr int64_t kBlock = 16384;
      if (out_n == 1 && red_n > kBlock) {
        const int64_t nb = (red_n + kBlock - 1) / kBlock;
        std::vector<Acc> part(static_cast<size_t>(nb));
        a.pool.parallel_for(nb, 1, [&](int64_t b, int64_t e) {
          for (int64_t k = b; k < e; ++k)
            part[size_t(k)] = sum8(xs + k * kBlock, std::min(kBlock, red_n - k * kBlock));
        });
        Acc t = 0;
        for (Acc v : part) t += v;
        acc[0] = t;
      } else {
        a.pool.parallel_for(out_n, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, red_n)),
                            [&](int64_t b, int64_t e) {
          for (int64_t o = b; o < e; ++o) acc[size_t(o)] = sum8(xs + o * red_n, red_n);
        });
      }
    } else if (suffix) {
      a.pool.parallel_for(out_n, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, red_n)),
                          [&](int64_t b, int64_t e) {
        for (int64_t o = b; o < e; ++o) {
          Acc s = init;
          const T* row = xs + o * red_n;
          for (int64_t j = 0; j < red_n; ++j) s = combine(s, Acc(row[j]));
          acc[size_t(o)] = s;
        }
      });
    } else {
      // General: walk the input in order, tracking the output index.
      std::vector<int64_t> idx(r, 0), ostride(r, 0);
      int64_t st = 1;
      for (size_t i = r; i-- > 0;)
        if (!reduced[i]) {
          ostride[i] = st;
          st *= x.shape[i];
        }
      const int64_t n = x.numel();
      int64_t o = 0;
      for (int64_t i = 0; i < n; ++i) {
        acc[size_t(o)] = combine(acc[size_t(o)], Acc(xs[i]));
        for (size_t d = r; d-- > 0;) {
          o += ostride[d];
          if (++idx[d] < x.shape[d]) break;
          o -= ostride[d] * idx[d];
          idx[d] = 0;
        }
      }
    }
    for (int64_t o = 0; o < out_n; ++o)
      y[o] = T(R == Red::kMean ? acc[size_t(o)] / Acc(red_n) : acc[size_t(o)]);
    return ok_status();
  });
}

}  // namespace

void register_reduce_kernels(KernelRegistry& r) {
  r.add("reduce_sum", k_reduce<Red::kSum>);
  r.add("reduce_mean", k_reduce<Red::kMean>);
  r.add("reduce_max", k_reduce<Red::kMax>);
}

}  // namespace hymo::rt
