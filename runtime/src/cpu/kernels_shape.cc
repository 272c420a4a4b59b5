// Shape ops (reshape, transpose, slice, pad, concat, broadcast_in_dim) and
// constant. They move bytes, so they run on every dtype (bf16 and i32
// included) without conversion.
#include <algorithm>

#include "cpu/bf16.h"
#include "cpu/kernels.h"

namespace hymo::rt {
namespace {

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

// Copies a `shape`-shaped block: element idx goes from src + sum(idx*ss) to
// dst + sum(idx*ds) (strides in elements of `es` bytes; a stride may be 0).
void strided_copy(const char* src, const std::vector<int64_t>& ss, char* dst, const std::vector<int64_t>& ds,
                  const std::vector<int64_t>& shape, int64_t es, ThreadPool& pool) {
  const size_t r = shape.size();
  if (r == 0) {
    std::memcpy(dst, src, size_t(es));
    return;
  }
  const int64_t inner = shape[r - 1];
  const bool contiguous_inner = ss[r - 1] == 1 && ds[r - 1] == 1;
  int64_t outer = 1;
  for (size_t i = 0; i + 1 < r; ++i) outer *= shape[i];
  pool.parallel_for(outer, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, inner)),
                    [&](int64_t b, int64_t e) {
    std::vector<int64_t> idx(r > 0 ? r - 1 : 0);
    // Decompose b into the outer multi-index.
    int64_t rem = b;
    for (size_t i = r - 1; i-- > 0;) {
      idx[i] = rem % shape[i];
      rem /= shape[i];
    }
    for (int64_t o = b; o < e; ++o) {
      int64_t so = 0, d_o = 0;
      for (size_t i = 0; i + 1 < r; ++i) {
        so += idx[i] * ss[i];
        d_o += idx[i] * ds[i];
      }
      const char* s = src + so * es;
      char* d = dst + d_o * es;
      if (contiguous_inner) {
        std::memcpy(d, s, size_t(inner * es));
      } else {
        for (int64_t j = 0; j < inner; ++j)
          std::memcpy(d + j * ds[r - 1] * es, s + j * ss[r - 1] * es, size_t(es));
      }
      for (size_t i = r - 1; i-- > 0;) {
        if (++idx[i] < shape[i]) break;
        idx[i] = 0;
      }
    }
  });
}

// eye: identity matrices over the last two dims.
Status k_eye(const KernelArgs& a) {
  return dispatch_float(a.out[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    const auto& sh = a.out[0].shape;
    const int64_t cols = sh.back(), mat = sh[sh.size() - 2] * cols;
    T* y = a.out[0].as<T>();
    for (int64_t i = 0; i < a.out[0].numel(); ++i) {
      const int64_t e = i % mat;
      y[i] = e / cols == e % cols ? T(1) : T(0);
    }
    return ok_status();
  });
}

Status k_constant(const KernelArgs& a) {
  std::vector<double> v = a.attr_doubles("value");
  const TensorRef& y = a.out[0];
  const int64_t n = y.numel();
  for (int64_t i = 0; i < n; ++i) {
    double x = v.size() == 1 ? v[0] : v[size_t(i)];
    switch (y.dtype) {
      case DType::kF32: y.as<float>()[i] = float(x); break;
      case DType::kF64: y.as<double>()[i] = x; break;
      case DType::kBF16: y.as<uint16_t>()[i] = f32_to_bf16(float(x)); break;
      case DType::kI32: y.as<int32_t>()[i] = int32_t(x); break;
    }
  }
  return ok_status();
}

Status k_reshape(const KernelArgs& a) {
  if (a.out[0].data != a.in[0].data) std::memmove(a.out[0].data, a.in[0].data, size_t(a.in[0].bytes()));
  return ok_status();
}

Status k_transpose(const KernelArgs& a) {
  std::vector<int64_t> perm = a.attr_ints("permutation");
  std::vector<int64_t> in_strides = contiguous_strides(a.in[0].shape);
  std::vector<int64_t> ss(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) ss[i] = in_strides[size_t(perm[i])];
  strided_copy(static_cast<const char*>(a.in[0].data), ss, static_cast<char*>(a.out[0].data),
               contiguous_strides(a.out[0].shape), a.out[0].shape, dtype_size(a.in[0].dtype), a.pool);
  return ok_status();
}

Status k_slice(const KernelArgs& a) {
  std::vector<int64_t> start = a.attr_ints("start");
  std::vector<int64_t> ss = contiguous_strides(a.in[0].shape);
  const int64_t es = dtype_size(a.in[0].dtype);
  int64_t off = 0;
  for (size_t i = 0; i < start.size(); ++i) off += start[i] * ss[i];
  strided_copy(static_cast<const char*>(a.in[0].data) + off * es, ss, static_cast<char*>(a.out[0].data),
               contiguous_strides(a.out[0].shape), a.out[0].shape, es, a.pool);
  return ok_status();
}

Status k_pad(const KernelArgs& a) {
  std::vector<int64_t> low = a.attr_ints("low");
  std::vector<int64_t> ds = contiguous_strides(a.out[0].shape);
  const int64_t es = dtype_size(a.in[0].dtype);
  std::memset(a.out[0].data, 0, size_t(a.out[0].bytes()));  // 0 in every dtype
  int64_t off = 0;
  for (size_t i = 0; i < low.size(); ++i) off += low[i] * ds[i];
  strided_copy(static_cast<const char*>(a.in[0].data), contiguous_strides(a.in[0].shape),
               static_cast<char*>(a.out[0].data) + off * es, ds, a.in[0].shape, es, a.pool);
  return ok_status();
}

Status k_concat(const KernelArgs& a) {
  const size_t dim = size_t(a.attr_int("dim"));
  std::vector<int64_t> ds = contiguous_strides(a.out[0].shape);
  const int64_t es = dtype_size(a.out[0].dtype);
  int64_t pos = 0;
  for (const TensorRef& t : a.in) {
    strided_copy(static_cast<const char*>(t.data), contiguous_strides(t.shape),
                 static_cast<char*>(a.out[0].data) + pos * ds[dim] * es, ds, t.shape, es, a.pool);
    pos += t.shape[dim];
  }
  return ok_status();
}

Status k_broadcast_in_dim(const KernelArgs& a) {
  std::vector<int64_t> dims = a.attr_ints("dims");
  std::vector<int64_t> in_strides = contiguous_strides(a.in[0].shape);
  std::vector<int64_t> ss(a.out[0].rank(), 0);
  for (size_t i = 0; i < dims.size(); ++i)
    if (a.in[0].shape[i] != 1) ss[size_t(dims[i])] = in_strides[i];
  strided_copy(static_cast<const char*>(a.in[0].data), ss, static_cast<char*>(a.out[0].data),
               contiguous_strides(a.out[0].shape), a.out[0].shape, dtype_size(a.in[0].dtype), a.pool);
  return ok_status();
}

}  // namespace

void register_shape_kernels(KernelRegistry& r) {
  r.add("constant", k_constant);
  r.add("eye", k_eye);
  r.add("reshape", k_reshape);
  r.add("transpose", k_transpose);
  r.add("slice", k_slice);
  r.add("pad", k_pad);
  r.add("concat", k_concat);
  r.add("broadcast_in_dim", k_broadcast_in_dim);
}

}  // namespace hymo::rt
