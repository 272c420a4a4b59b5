// fused_elementwise: one pass over memory for a chain of elementwise ops.
// The elements are processed in blocks; every instruction runs over the whole
// block before the next (loops the compiler vectorises), with its operands
// either a block of a register / full-shape input or a broadcast scalar.
#include <cmath>
#include <vector>

#include "cpu/kernels.h"
#include "fused_program.h"

namespace hymo::rt {
namespace {

constexpr int64_t kBlock = 512;

template <class T>
T sigmoid(T x) {
  if (x >= T(0)) return T(1) / (T(1) + std::exp(-x));
  T e = std::exp(x);
  return e / (T(1) + e);
}

// One operand of an instruction over a block: a pointer with stride 1, or a
// scalar (stride 0).
template <class T>
struct Src {
  const T* p;
  bool scalar;
  T at(int64_t i) const { return scalar ? *p : p[i]; }
};

template <class T, class F>
void loop1(T* z, Src<T> a, int64_t n, F f) {
  if (a.scalar) {
    T v = f(*a.p);
    for (int64_t i = 0; i < n; ++i) z[i] = v;
  } else {
    for (int64_t i = 0; i < n; ++i) z[i] = f(a.p[i]);
  }
}

template <class T, class F>
void loop2(T* z, Src<T> a, Src<T> b, int64_t n, F f) {
  if (!a.scalar && !b.scalar) {
    for (int64_t i = 0; i < n; ++i) z[i] = f(a.p[i], b.p[i]);
  } else if (!a.scalar) {
    T y = *b.p;
    for (int64_t i = 0; i < n; ++i) z[i] = f(a.p[i], y);
  } else if (!b.scalar) {
    T x = *a.p;
    for (int64_t i = 0; i < n; ++i) z[i] = f(x, b.p[i]);
  } else {
    T v = f(*a.p, *b.p);
    for (int64_t i = 0; i < n; ++i) z[i] = v;
  }
}

template <class T>
void run_instruction(const FusedInstruction& in, T* z, const Src<T>* s, int64_t n) {
  switch (in.op) {
    case FusedOp::kNeg: return loop1(z, s[0], n, [](T x) { return -x; });
    case FusedOp::kExp: return loop1(z, s[0], n, [](T x) { return std::exp(x); });
    case FusedOp::kLog: return loop1(z, s[0], n, [](T x) { return std::log(x); });
    case FusedOp::kSqrt: return loop1(z, s[0], n, [](T x) { return std::sqrt(x); });
    case FusedOp::kRsqrt: return loop1(z, s[0], n, [](T x) { return T(1) / std::sqrt(x); });
    case FusedOp::kSquare: return loop1(z, s[0], n, [](T x) { return x * x; });
    case FusedOp::kAbs: return loop1(z, s[0], n, [](T x) { return std::fabs(x); });
    case FusedOp::kSigmoid: return loop1(z, s[0], n, [](T x) { return sigmoid(x); });
    case FusedOp::kSilu: return loop1(z, s[0], n, [](T x) { return x * sigmoid(x); });
    case FusedOp::kSoftplus:
      return loop1(z, s[0], n, [](T x) { return std::max(x, T(0)) + std::log1p(std::exp(-std::fabs(x))); });
    case FusedOp::kSin: return loop1(z, s[0], n, [](T x) { return std::sin(x); });
    case FusedOp::kCos: return loop1(z, s[0], n, [](T x) { return std::cos(x); });
    case FusedOp::kIsfinite: return loop1(z, s[0], n, [](T x) { return std::isfinite(x) ? T(1) : T(0); });
    case FusedOp::kAdd: return loop2(z, s[0], s[1], n, [](T x, T y) { return x + y; });
    case FusedOp::kSub: return loop2(z, s[0], s[1], n, [](T x, T y) { return x - y; });
    case FusedOp::kMul: return loop2(z, s[0], s[1], n, [](T x, T y) { return x * y; });
    case FusedOp::kDiv: return loop2(z, s[0], s[1], n, [](T x, T y) { return x / y; });
    // NaN propagates, as in the unfused kernels.
    case FusedOp::kMax:
      return loop2(z, s[0], s[1], n, [](T x, T y) { return (std::isnan(x) || std::isnan(y)) ? x + y : (x > y ? x : y); });
    case FusedOp::kMin:
      return loop2(z, s[0], s[1], n, [](T x, T y) { return (std::isnan(x) || std::isnan(y)) ? x + y : (x < y ? x : y); });
    case FusedOp::kGreater: return loop2(z, s[0], s[1], n, [](T x, T y) { return x > y ? T(1) : T(0); });
    case FusedOp::kSelect:
      for (int64_t i = 0; i < n; ++i) z[i] = s[0].at(i) != T(0) ? s[1].at(i) : s[2].at(i);
      return;
  }
}

Status k_fused(const KernelArgs& a) {
  std::vector<FusedInstruction> prog;
  const Attr& text = a.call.attrs.at("program");
  Status st = parse_fused_program(text.s, int64_t(a.in.size()), &prog);
  if (!st.ok()) return a.error(st.message());
  std::vector<int64_t> outputs = a.attr_ints("outputs");
  return dispatch_float(a.out[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    const int64_t n_in = int64_t(a.in.size());
    const int64_t numel = a.out[0].numel();
    std::vector<T> literals;
    literals.reserve(prog.size() * 3);
    for (const FusedInstruction& in : prog)
      for (int k = 0; k < in.arity; ++k) literals.push_back(T(in.operand[k].value));
    a.pool.parallel_for((numel + kBlock - 1) / kBlock, 1, [&](int64_t b0, int64_t b1) {
      std::vector<T> regs(prog.size() * size_t(kBlock));
      for (int64_t blk = b0; blk < b1; ++blk) {
        int64_t start = blk * kBlock, n = std::min(kBlock, numel - start);
        auto reg_src = [&](int64_t r) -> Src<T> {
          if (r < n_in) {
            const TensorRef& t = a.in[size_t(r)];
            bool scalar = t.shape.empty();
            return {t.as<T>() + (scalar ? 0 : start), scalar};
          }
          return {regs.data() + size_t(r - n_in) * kBlock, false};
        };
        size_t lit = 0;
        for (size_t i = 0; i < prog.size(); ++i) {
          Src<T> s[3];
          for (int k = 0; k < prog[i].arity; ++k, ++lit)
            s[k] = prog[i].operand[k].is_register ? reg_src(prog[i].operand[k].reg) : Src<T>{&literals[lit], true};
          run_instruction(prog[i], regs.data() + i * kBlock, s, n);
        }
        for (size_t o = 0; o < outputs.size(); ++o) {
          Src<T> s = reg_src(outputs[o]);
          T* dst = a.out[o].as<T>() + start;
          for (int64_t i = 0; i < n; ++i) dst[i] = s.at(i);
        }
      }
    });
    return ok_status();
  });
}

}  // namespace

void register_fused_kernels(KernelRegistry& r) { r.add("fused_elementwise", k_fused); }

}  // namespace hymo::rt
