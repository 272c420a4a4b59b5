// Elementwise ops: unary, binary, select, cast. In place is allowed (the
// loader lets a result be the very memory of an operand).
#include <cmath>

#include "cpu/bf16.h"
#include "cpu/kernels.h"
#include "cpu/vmath.h"

namespace hymo::rt {
namespace {

// exp, sigmoid, silu and softplus are the fused kernel's (cpu/vmath.h), so
// that fusing a chain does not change its result.
enum class Unary { kNeg, kExp, kLog, kSqrt, kRsqrt, kSquare, kAbs, kSigmoid, kSilu, kSoftplus, kSin, kCos, kIsfinite };
enum class Binary { kAdd, kSub, kMul, kDiv, kMax, kMin, kGreater };

template <class T, Unary U>
inline T unary_op(T x) {
  switch (U) {
    case Unary::kNeg: return -x;
    case Unary::kExp: return vexp(x);
    case Unary::kLog: return std::log(x);
    case Unary::kSqrt: return std::sqrt(x);
    case Unary::kRsqrt: return T(1) / std::sqrt(x);
    case Unary::kSquare: return x * x;
    case Unary::kAbs: return std::fabs(x);
    case Unary::kSigmoid: return vsigmoid(x);
    case Unary::kSilu: return vsilu(x);
    case Unary::kSoftplus: return vsoftplus(x);
    case Unary::kSin: return std::sin(x);
    case Unary::kCos: return std::cos(x);
    case Unary::kIsfinite: return std::isfinite(x) ? T(1) : T(0);
  }
  return x;
}

template <class T, Binary B>
inline T binary_op(T x, T y) {
  switch (B) {
    case Binary::kAdd: return x + y;
    case Binary::kSub: return x - y;
    case Binary::kMul: return x * y;
    case Binary::kDiv: return x / y;
    // NaN propagates (like PyTorch's maximum/minimum).
    case Binary::kMax: return (std::isnan(x) || std::isnan(y)) ? x + y : (x > y ? x : y);
    case Binary::kMin: return (std::isnan(x) || std::isnan(y)) ? x + y : (x < y ? x : y);
    case Binary::kGreater: return x > y ? T(1) : T(0);
  }
  return x;
}

template <Unary U>
Status k_unary(const KernelArgs& a) {
  return dispatch_float(a.in[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* x = a.in[0].as<T>();
    T* y = a.out[0].as<T>();
    a.pool.parallel_for(a.in[0].numel(), kParallelGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) y[i] = unary_op<T, U>(x[i]);
    });
    return ok_status();
  });
}

template <Binary B>
Status k_binary(const KernelArgs& a) {
  return dispatch_float(a.in[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* x = a.in[0].as<T>();
    const T* y = a.in[1].as<T>();
    T* z = a.out[0].as<T>();
    a.pool.parallel_for(a.in[0].numel(), kParallelGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) z[i] = binary_op<T, B>(x[i], y[i]);
    });
    return ok_status();
  });
}

// Reads element i of a tensor of any dtype as double.
inline double load_any(const TensorRef& t, int64_t i) {
  switch (t.dtype) {
    case DType::kF32: return double(t.as<float>()[i]);
    case DType::kF64: return t.as<double>()[i];
    case DType::kI32: return double(t.as<int32_t>()[i]);
    case DType::kBF16: return double(bf16_to_f32(t.as<uint16_t>()[i]));
  }
  return 0.0;
}

Status k_select(const KernelArgs& a) {
  // a, b and the result share a dtype (any); cond may be float or i32.
  const TensorRef& cond = a.in[0];
  const int64_t n = cond.numel(), es = dtype_size(a.in[1].dtype);
  const char* x = static_cast<const char*>(a.in[1].data);
  const char* y = static_cast<const char*>(a.in[2].data);
  char* z = static_cast<char*>(a.out[0].data);
  a.pool.parallel_for(n, kParallelGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const char* src = (load_any(cond, i) != 0.0 ? x : y) + i * es;
      if (src != z + i * es) std::memcpy(z + i * es, src, size_t(es));  // in place: nothing to move
    }
  });
  return ok_status();
}

Status k_cast(const KernelArgs& a) {
  const TensorRef& x = a.in[0];
  const TensorRef& y = a.out[0];
  const int64_t n = x.numel();
  a.pool.parallel_for(n, kParallelGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      double v = load_any(x, i);
      switch (y.dtype) {
        case DType::kF32: y.as<float>()[i] = float(v); break;
        case DType::kF64: y.as<double>()[i] = v; break;
        case DType::kBF16: y.as<uint16_t>()[i] = f32_to_bf16(float(v)); break;
        case DType::kI32: break;  // rejected by the loader
      }
    }
  });
  return ok_status();
}

}  // namespace

void register_elementwise_kernels(KernelRegistry& r) {
  r.add("neg", k_unary<Unary::kNeg>);
  r.add("exp", k_unary<Unary::kExp>);
  r.add("log", k_unary<Unary::kLog>);
  r.add("sqrt", k_unary<Unary::kSqrt>);
  r.add("rsqrt", k_unary<Unary::kRsqrt>);
  r.add("square", k_unary<Unary::kSquare>);
  r.add("abs", k_unary<Unary::kAbs>);
  r.add("sigmoid", k_unary<Unary::kSigmoid>);
  r.add("silu", k_unary<Unary::kSilu>);
  r.add("softplus", k_unary<Unary::kSoftplus>);
  r.add("sin", k_unary<Unary::kSin>);
  r.add("cos", k_unary<Unary::kCos>);
  r.add("isfinite", k_unary<Unary::kIsfinite>);
  r.add("add", k_binary<Binary::kAdd>);
  r.add("sub", k_binary<Binary::kSub>);
  r.add("mul", k_binary<Binary::kMul>);
  r.add("div", k_binary<Binary::kDiv>);
  r.add("max", k_binary<Binary::kMax>);
  r.add("min", k_binary<Binary::kMin>);
  r.add("greater", k_binary<Binary::kGreater>);
  r.add("select", k_select);
  r.add("cast", k_cast);
}

}  // namespace hymo::rt
