// fused_elementwise: one pass over memory for a chain of elementwise ops.
// The elements are processed in blocks; every instruction runs over the whole
// block before the next (loops the compiler vectorises), with its operands
// either a block of a register / full-shape input or a broadcast scalar.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "cpu/kernels.h"
#include "cpu/vmath.h"
#include "fused_program.h"

namespace hymo::rt {
namespace {

// One operand of an instruction over a block: a pointer with stride 1, or a
// scalar (stride 0).
template <class T>
struct Src {
  const T* p;
  bool scalar;
  T at(int64_t i) const { return scalar ? *p : p[i]; }
};

// A register row never aliases the operands of the instruction writing it
// (it is a fresh row), hence __restrict__: the loops vectorise.

// Always inlined, so that each vector clone below gets its own copy of the
// loops compiled for its instruction set.
template <class T, class F>
HYMO_ALWAYS_INLINE void loop1(T* __restrict__ z, Src<T> a, int64_t n, F f) {
  if (a.scalar) {
    T v = f(*a.p);
    for (int64_t i = 0; i < n; ++i) z[i] = v;
  } else {
    const T* __restrict__ x = a.p;
    for (int64_t i = 0; i < n; ++i) z[i] = f(x[i]);
  }
}

template <class T, class F>
HYMO_ALWAYS_INLINE void loop2(T* __restrict__ z, Src<T> a, Src<T> b, int64_t n, F f) {
  if (!a.scalar && !b.scalar) {
    const T* __restrict__ x = a.p;
    const T* __restrict__ y = b.p;
    for (int64_t i = 0; i < n; ++i) z[i] = f(x[i], y[i]);
  } else if (!a.scalar) {
    const T* __restrict__ x = a.p;
    T y = *b.p;
    for (int64_t i = 0; i < n; ++i) z[i] = f(x[i], y);
  } else if (!b.scalar) {
    T x = *a.p;
    const T* __restrict__ y = b.p;
    for (int64_t i = 0; i < n; ++i) z[i] = f(x, y[i]);
  } else {
    T v = f(*a.p, *b.p);
    for (int64_t i = 0; i < n; ++i) z[i] = v;
  }
}

// One instruction over a block, compiled for the widest vector unit the CPU
// has (the runtime ships to machines it was not built on, so no -march).
template <class T>
HYMO_VECTOR_CLONES void run_instruction(const FusedInstruction& in, T* __restrict__ z, const Src<T>* s, int64_t n) {
  switch (in.op) {
    case FusedOp::kNeg: return loop1(z, s[0], n, [](T x) { return -x; });
    case FusedOp::kExp: return loop1(z, s[0], n, [](T x) { return vexp(x); });
    case FusedOp::kLog: return loop1(z, s[0], n, [](T x) { return std::log(x); });
    case FusedOp::kSqrt: return loop1(z, s[0], n, [](T x) { return std::sqrt(x); });
    case FusedOp::kRsqrt: return loop1(z, s[0], n, [](T x) { return T(1) / std::sqrt(x); });
    case FusedOp::kSquare: return loop1(z, s[0], n, [](T x) { return x * x; });
    case FusedOp::kAbs: return loop1(z, s[0], n, [](T x) { return std::fabs(x); });
    case FusedOp::kSigmoid: return loop1(z, s[0], n, [](T x) { return vsigmoid(x); });
    case FusedOp::kSilu: return loop1(z, s[0], n, [](T x) { return vsilu(x); });
    case FusedOp::kSoftplus: return loop1(z, s[0], n, [](T x) { return vsoftplus(x); });
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
    case FusedOp::kEye:  // needs the element index: handled by k_fused
      return;
    case FusedOp::kSelect: {
      // The common shapes without a per-element branch on the strides.
      if (!s[0].scalar && !s[1].scalar && !s[2].scalar) {
        const T *c = s[0].p, *x = s[1].p, *y = s[2].p;
        for (int64_t i = 0; i < n; ++i) z[i] = c[i] != T(0) ? x[i] : y[i];
      } else if (s[0].scalar) {
        Src<T> pick = *s[0].p != T(0) ? s[1] : s[2];
        loop1(z, pick, n, [](T x) { return x; });
      } else {
        for (int64_t i = 0; i < n; ++i) z[i] = s[0].p[i] != T(0) ? s[1].at(i) : s[2].at(i);
      }
      return;
    }
  }
}

// A parsed program with its register rows assigned: instruction i writes row
// slot[i]; a row is reused once its last reader has run (outputs stay live to
// the end of the block), so the rows of a long program fit in the L1 cache.
struct CompiledProgram {
  std::vector<int64_t> outputs, sums;  // the call's attributes
  std::vector<FusedInstruction> prog;
  std::vector<int32_t> slot;
  int32_t n_slots = 0;
};

void assign_slots(int64_t n_in, CompiledProgram* c) {
  const size_t n = c->prog.size();
  constexpr size_t kNever = ~size_t(0);
  std::vector<size_t> last_use(n, kNever);
  for (size_t i = 0; i < n; ++i)
    for (int k = 0; k < c->prog[i].arity; ++k) {
      const FusedOperand& o = c->prog[i].operand[k];
      if (o.is_register && o.reg >= n_in) last_use[size_t(o.reg - n_in)] = i;
    }
  // Outputs and sums are read after the last instruction: live to the end.
  for (const std::vector<int64_t>* live : {&c->outputs, &c->sums})
    for (int64_t o : *live)
      if (o >= n_in && o - n_in < int64_t(n)) last_use[size_t(o - n_in)] = n;
  c->slot.assign(n, -1);
  std::vector<int32_t> free_slots;
  auto release = [&](int32_t s) {
    if (std::find(free_slots.begin(), free_slots.end(), s) == free_slots.end()) free_slots.push_back(s);
  };
  for (size_t i = 0; i < n; ++i) {
    if (free_slots.empty()) {
      c->slot[i] = c->n_slots++;
    } else {
      c->slot[i] = free_slots.back();
      free_slots.pop_back();
    }
    // Operands read for the last time here free their rows, after the result
    // got its own (a result row never aliases its operands).
    for (int k = 0; k < c->prog[i].arity; ++k) {
      const FusedOperand& o = c->prog[i].operand[k];
      if (o.is_register && o.reg >= n_in && last_use[size_t(o.reg - n_in)] == i) release(c->slot[size_t(o.reg - n_in)]);
    }
    if (last_use[i] == kNever) release(c->slot[i]);  // never read, not an output
  }
}

// Parsed programs by call: a plan's calls live as long as its executor, and
// the parse costs more than a small kernel. Keyed by the Call's address and
// checked against the attributes the entry was built from (program, outputs,
// sums), so a reused address never returns a stale parse or slot plan.
const CompiledProgram* cached_program(const KernelArgs& a, Status* st) {
  struct Entry {
    std::string text;
    CompiledProgram compiled;
  };
  thread_local std::unordered_map<const Call*, Entry> cache;
  const std::string& text = a.call.attrs.at("program").s;
  const std::vector<int64_t>& outputs = a.call.attrs.at("outputs").ints;
  auto sums_it = a.call.attrs.find("sums");
  static const std::vector<int64_t> kNone;
  const std::vector<int64_t>& sums = sums_it == a.call.attrs.end() ? kNone : sums_it->second.ints;
  auto it = cache.find(&a.call);
  if (it != cache.end() && it->second.text == text && it->second.compiled.outputs == outputs &&
      it->second.compiled.sums == sums)
    return &it->second.compiled;
  Entry e{text, {}};
  const int64_t n_in = int64_t(a.in.size());
  *st = parse_fused_program(text, n_in, &e.compiled.prog);
  if (!st->ok()) return nullptr;
  e.compiled.outputs = outputs;
  e.compiled.sums = sums;
  assign_slots(n_in, &e.compiled);
  if (cache.size() > 65536) cache.clear();
  return &(cache[&a.call] = std::move(e)).compiled;
}

// Elements per block: the register rows and expanded inputs of one block
// stay within about 24 KiB (L1), in multiples of 64, 64..1024.
template <class T>
int64_t block_elements(int64_t rows) {
  const int64_t fit = (24 * 1024 / int64_t(sizeof(T))) / std::max<int64_t>(rows, 1);
  return std::clamp<int64_t>(fit / 64 * 64, 64, 1024);
}

// Sum of x[0..n) in double, in sum8's fixed order.
template <class T>
HYMO_VECTOR_CLONES double block_sum(const T* __restrict__ x, int64_t n) {
  return sum8(n, [&](int64_t i) { return double(x[i]); });
}

Status k_fused(const KernelArgs& a) {
  Status st = ok_status();
  const CompiledProgram* compiled = cached_program(a, &st);
  if (!compiled) return a.error(st.message());
  const std::vector<int64_t>& outputs = compiled->outputs;
  const std::vector<int64_t>& sums = compiled->sums;
  const std::vector<FusedInstruction>& prog = compiled->prog;
  const std::vector<int32_t>& slot = compiled->slot;
  // The domain iterated over: the outputs' type, or with none (only sums)
  // the input of highest rank.
  const TensorRef* dom = outputs.empty() ? &a.in[0] : &a.out[0];
  if (outputs.empty())
    for (const TensorRef& t : a.in)
      if (t.shape.size() > dom->shape.size()) dom = &t;
  return dispatch_float(dom->dtype, [&](auto tag) {
    using T = decltype(tag);
    const int64_t n_in = int64_t(a.in.size());
    const int64_t numel = dom->numel();
    thread_local std::vector<T> literals;
    literals.clear();
    literals.reserve(prog.size() * 3);
    for (const FusedInstruction& in : prog)
      for (int k = 0; k < in.arity; ++k) literals.push_back(T(in.operand[k].value));
    // eye: the last two dims of the domain.
    const auto& oshape = dom->shape;
    const int64_t eye_cols = oshape.size() >= 2 ? oshape.back() : 1;
    const int64_t eye_mat = oshape.size() >= 2 ? oshape[oshape.size() - 2] * eye_cols : 1;
    // Inputs with a prefix of the shape repeat each value over `inner`
    // elements; they are expanded per block into rows of their own.
    std::vector<int64_t> inner(size_t(n_in), 0);
    int64_t n_prefix = 0;
    for (int64_t r = 0; r < n_in; ++r) {
      const TensorRef& t = a.in[size_t(r)];
      if (!t.shape.empty() && t.numel() != numel) {
        inner[size_t(r)] = numel / t.numel();
        ++n_prefix;
      }
    }
    // The caller's literals (thread_local: the workers must not name it).
    const T* lits = literals.data();
    // An instruction whose register is an output writes straight into that
    // result (no row in the scratch, no copy after) unless the result's
    // memory is an input that this or a later instruction reads (a result
    // donated to an operand it updates: that operand must stay unchanged
    // until its last reader).
    std::vector<T*> direct(prog.size(), nullptr);
    auto overlaps = [](const TensorRef& x, const TensorRef& y) {
      const char* xa = static_cast<const char*>(x.data);
      const char* ya = static_cast<const char*>(y.data);
      return xa < ya + y.numel() * int64_t(sizeof(T)) && ya < xa + x.numel() * int64_t(sizeof(T));
    };
    for (size_t k = 0; k < outputs.size(); ++k) {
      const int64_t r = outputs[k];
      if (r < n_in || direct[size_t(r - n_in)]) continue;
      bool clash = false;
      for (size_t j = size_t(r - n_in); j < prog.size() && !clash; ++j)
        for (int q = 0; q < prog[j].arity; ++q) {
          const FusedOperand& op = prog[j].operand[q];
          if (op.is_register && op.reg < n_in && overlaps(a.in[size_t(op.reg)], a.out[k])) clash = true;
        }
      if (!clash) direct[size_t(r - n_in)] = a.out[k].as<T>();
    }
    // Register rows as long as a block, or the whole tensor when it is
    // smaller; the scratch is per thread and reused across calls (a fresh
    // register file per call cost more than the work on small tensors).
    // Direct outputs leave their scratch rows untouched: only the others
    // count towards the block's L1 footprint.
    const int64_t n_direct = std::count_if(direct.begin(), direct.end(), [](T* p) { return p != nullptr; });
    const int64_t block = block_elements<T>(std::max<int64_t>(1, compiled->n_slots - n_direct) + n_prefix);
    const int64_t row_len = std::min<int64_t>(block, std::max<int64_t>(numel, 1));
    const int64_t n_blocks = (numel + block - 1) / block;

    // Sums: each block stores the partial sum of every output element it
    // touches (`seg` slots per block); they are added up in block order after.
    const size_t n_sum = sums.size();
    std::vector<int64_t> sum_inner(n_sum), seg(n_sum);
    std::vector<std::vector<double>> partial(n_sum);
    for (size_t k = 0; k < n_sum; ++k) {
      const TensorRef& r = a.out[outputs.size() + k];
      sum_inner[k] = std::max<int64_t>(1, numel / std::max<int64_t>(1, r.numel()));
      seg[k] = (block + sum_inner[k] - 1) / sum_inner[k] + 1;
      partial[k].assign(size_t(n_blocks * seg[k]), 0.0);
    }
    a.pool.parallel_for(n_blocks, 1, [&](int64_t b0, int64_t b1) {
      thread_local std::vector<T> regs_scratch, expanded_scratch;
      thread_local std::vector<const T*> rows_scratch;
      const size_t need = size_t(compiled->n_slots) * size_t(row_len), need_e = size_t(n_prefix) * size_t(row_len);
      if (regs_scratch.size() < need) regs_scratch.resize(need);
      if (expanded_scratch.size() < need_e) expanded_scratch.resize(need_e);
      T* regs = regs_scratch.data();
      T* expanded = expanded_scratch.data();
      for (int64_t blk = b0; blk < b1; ++blk) {
        int64_t start = blk * block, n = std::min(block, numel - start);
        std::vector<const T*>& rows = rows_scratch;
        rows.assign(size_t(n_in), nullptr);
        int64_t e = 0;
        for (int64_t r = 0; r < n_in; ++r) {
          if (!inner[size_t(r)]) continue;
          const T* p = a.in[size_t(r)].as<T>();
          T* row = expanded + size_t(e++) * row_len;
          // Runs of one value each, without a division per element.
          const int64_t in_r = inner[size_t(r)];
          for (int64_t i = 0, idx = start / in_r, off = start % in_r; i < n; ++idx, off = 0) {
            const int64_t len = std::min(in_r - off, n - i);
            std::fill(row + i, row + i + len, p[idx]);
            i += len;
          }
          rows[size_t(r)] = row;
        }
        auto reg_src = [&](int64_t r) -> Src<T> {
          if (r < n_in) {
            if (rows[size_t(r)]) return {rows[size_t(r)], false};
            const TensorRef& t = a.in[size_t(r)];
            bool scalar = t.shape.empty();
            return {t.as<T>() + (scalar ? 0 : start), scalar};
          }
          const size_t i = size_t(r - n_in);
          return {direct[i] ? direct[i] + start : regs + size_t(slot[i]) * row_len, false};
        };
        size_t lit = 0;
        for (size_t i = 0; i < prog.size(); ++i) {
          Src<T> s[3];
          for (int k = 0; k < prog[i].arity; ++k, ++lit)
            s[k] = prog[i].operand[k].is_register ? reg_src(prog[i].operand[k].reg) : Src<T>{lits + lit, true};
          T* z = direct[i] ? direct[i] + start : regs + size_t(slot[i]) * row_len;
          if (prog[i].op == FusedOp::kEye) {
            // Zeros, then the diagonal entries that fall in [start, start + n):
            // row r of the matrix starting at `base` has its 1 at base + r (cols + 1).
            std::fill(z, z + n, T(0));
            const int64_t eye_rows = eye_mat / eye_cols, diag = std::min(eye_rows, eye_cols);
            int64_t base = start - start % eye_mat, r = (start % eye_mat) / eye_cols;
            for (;;) {
              for (; r < diag; ++r) {
                const int64_t idx = base + r * (eye_cols + 1);
                if (idx >= start + n) break;
                if (idx >= start) z[idx - start] = T(1);
              }
              base += eye_mat;
              r = 0;
              if (base >= start + n) break;
            }
            continue;
          }
          run_instruction<T>(prog[i], z, s, n);
        }
        for (size_t o = 0; o < outputs.size(); ++o) {
          Src<T> s = reg_src(outputs[o]);
          T* dst = a.out[o].as<T>() + start;
          if (s.p == dst) continue;  // written in place by its instruction
          if (s.scalar)
            std::fill(dst, dst + n, *s.p);
          else
            std::memcpy(dst, s.p, size_t(n) * sizeof(T));
        }
        for (size_t k = 0; k < n_sum; ++k) {
          Src<T> s = reg_src(sums[k]);
          const int64_t inner = sum_inner[k], first = start / inner;
          double* part = partial[k].data() + blk * seg[k];
          for (int64_t pos = start; pos < start + n;) {
            const int64_t o = pos / inner, end = std::min((o + 1) * inner, start + n);
            part[o - first] = s.scalar ? double(*s.p) * double(end - pos) : block_sum<T>(s.p + (pos - start), end - pos);
            pos = end;
          }
        }
      }
    });
    for (size_t k = 0; k < n_sum; ++k) {
      const TensorRef& r = a.out[outputs.size() + k];
      std::vector<double> total(size_t(std::max<int64_t>(1, r.numel())), 0.0);
      const int64_t inner = sum_inner[k];
      for (int64_t blk = 0; blk < n_blocks; ++blk) {
        const int64_t start = blk * block, n = std::min(block, numel - start);
        const int64_t first = start / inner, last = (start + n - 1) / inner;
        for (int64_t o = first; o <= last; ++o) total[size_t(o)] += partial[k][size_t(blk * seg[k] + (o - first))];
      }
      T* out = r.as<T>();
      for (int64_t o = 0; o < r.numel(); ++o) out[o] = T(total[size_t(o)]);
    }
    return ok_status();
  });
}

}  // namespace

void register_fused_kernels(KernelRegistry& r) { r.add("fused_elementwise", k_fused); }

}  // namespace hymo::rt
