// Dense algebra: embedding, linear, matmul, grouped_linear. GEMMs go
// through gemm() (CBLAS when built with it).
#include "cpu/gemm.h"
#include "cpu/kernels.h"

namespace hymo::rt {
namespace {

Status k_embedding(const KernelArgs& a) {
  const TensorRef& table = a.in[0];
  const TensorRef& ids = a.in[1];
  const int64_t v = table.dim(0), d = table.dim(1), n = ids.numel();
  HYMO_RETURN_IF_ERROR(check_ids_in_range(a, ids, 0, v, "id"));
  const int32_t* id = ids.as<int32_t>();
  const int64_t es = dtype_size(table.dtype);
  const char* src = static_cast<const char*>(table.data);
  char* dst = static_cast<char*>(a.out[0].data);
  a.pool.parallel_for(n, kParallelGrain / std::max<int64_t>(1, d), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) std::memcpy(dst + i * d * es, src + int64_t(id[i]) * d * es, size_t(d * es));
  });
  return ok_status();
}

Status k_linear(const KernelArgs& a) {
  return dispatch_float(a.in[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    const int64_t m = a.in[0].rows(), k = a.in[0].shape.back(), n = a.in[1].dim(0);
    gemm<T>(false, true, m, n, k, T(1), a.in[0].as<T>(), k, a.in[1].as<T>(), k, T(0), a.out[0].as<T>(), n, a.pool);
    return ok_status();
  });
}

Status k_matmul(const KernelArgs& a) {
  const bool ta = a.attr_bool("transpose_a"), tb = a.attr_bool("transpose_b");
  return dispatch_float(a.in[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    const auto& as = a.in[0].shape;
    const auto& bs = a.in[1].shape;
    const size_t r = as.size();
    int64_t batch = 1;
    for (size_t i = 0; i + 2 < r; ++i) batch *= as[i];
    const int64_t m = ta ? as[r - 1] : as[r - 2], k = ta ? as[r - 2] : as[r - 1];
    const int64_t n = tb ? bs[r - 2] : bs[r - 1];
    const int64_t lda = as[r - 1], ldb = bs[r - 1];
    const int64_t sa = as[r - 1] * as[r - 2], sb = bs[r - 1] * bs[r - 2], sc = m * n;
    // X X^T or X^T X of one operand is symmetric: syrk does half the work
    // (Newton-Schulz's Gram matrices; the compiler writes A^2 of a symmetric
    // A as A A^T to land here too).
    const bool symmetric = a.in[0].data == a.in[1].data && ta != tb;
    auto one = [&](int64_t i) {
      if (symmetric)
        syrk<T>(ta, m, k, a.in[0].as<T>() + i * sa, lda, a.out[0].as<T>() + i * sc, n, a.pool);
      else
        gemm<T>(ta, tb, m, n, k, T(1), a.in[0].as<T>() + i * sa, lda, a.in[1].as<T>() + i * sb, ldb, T(0),
                a.out[0].as<T>() + i * sc, n, a.pool);
    };
    if (batch > 1 && a.pool.size() > 1) {
      // Independent products (Newton-Schulz over a stack of matrices): one
      // per thread, each single-threaded, scales better than threading
      // every small product.
      BlasSingleThreaded scope;
      a.pool.parallel_for(batch, 1, [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) one(i);
      });
    } else {
      for (int64_t i = 0; i < batch; ++i) one(i);
    }
    return ok_status();
  });
}

Status k_grouped_linear(const KernelArgs& a) {
  return dispatch_float(a.in[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    const int64_t e = a.in[0].dim(0), c = a.in[0].dim(1), k = a.in[0].dim(2), n = a.in[1].dim(1);
    for (int64_t g = 0; g < e; ++g)
      gemm<T>(false, true, c, n, k, T(1), a.in[0].as<T>() + g * c * k, k, a.in[1].as<T>() + g * n * k, k, T(0),
              a.out[0].as<T>() + g * c * n, n, a.pool);
    return ok_status();
  });
}

}  // namespace

void register_dense_kernels(KernelRegistry& r) {
  r.add("embedding", k_embedding);
  r.add("linear", k_linear);
  r.add("matmul", k_matmul);
  r.add("grouped_linear", k_grouped_linear);
}

}  // namespace hymo::rt
