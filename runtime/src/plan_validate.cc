// Semantic validation of a Plan: ids in range, names unique, shapes positive,
// arena offsets aligned and inside arena_bytes, constants and inits of the
// right size, and every call checked against its op (docs/dialect.md):
// operand/result counts, dtypes, shapes and attributes.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "hymo/rt/api.h"
#include "plan_internal.h"
#include "fused_program.h"

namespace hymo::rt {

std::string shape_str(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string type_str(DType dtype, const std::vector<int64_t>& shape) {
  return dtype_name(dtype) + shape_str(shape);
}

namespace {

using Shape = std::vector<int64_t>;

// ---------------------------------------------------------------------------
// Per-call checking helpers.
class CallCheck {
 public:
  CallCheck(const Plan& plan, const Call& call, const std::string& path)
      : plan_(plan), call_(call), path_(path) {}

  const BufferDesc& in(size_t i) const { return plan_.buffers[size_t(call_.operands[i])]; }
  const BufferDesc& out(size_t i) const { return plan_.buffers[size_t(call_.results[i])]; }
  size_t num_in() const { return call_.operands.size(); }
  const std::string& path() const { return path_; }

  Status in_err(size_t i, const std::string& msg) const {
    return plan_error(path_ + ".operands[" + std::to_string(i) + "]", msg);
  }
  Status out_err(size_t i, const std::string& msg) const {
    return plan_error(path_ + ".results[" + std::to_string(i) + "]", msg);
  }
  Status attr_err(const std::string& name, const std::string& msg) const {
    return plan_error(path_ + ".attrs." + name, msg);
  }

  Status counts(size_t n_in, size_t n_out) const {
    if (call_.operands.size() != n_in)
      return plan_error(path_ + ".operands", "op " + call_.op + " expects " + std::to_string(n_in) +
                                                 " operands, found " + std::to_string(call_.operands.size()));
    return result_count(n_out);
  }
  Status result_count(size_t n_out) const {
    if (call_.results.size() != n_out)
      return plan_error(path_ + ".results", "op " + call_.op + " expects " + std::to_string(n_out) +
                                                " results, found " + std::to_string(call_.results.size()));
    return ok_status();
  }

  Status in_float(size_t i) const {
    if (!dtype_is_float(in(i).dtype))
      return in_err(i, "op " + call_.op + " expects a float operand (f32, f64, bf16), found " +
                           type_str(in(i).dtype, in(i).shape));
    return ok_status();
  }
  Status in_i32(size_t i) const {
    if (in(i).dtype != DType::kI32)
      return in_err(i, "op " + call_.op + " expects an i32 operand, found " + type_str(in(i).dtype, in(i).shape));
    return ok_status();
  }
  Status in_dtype(size_t i, DType want) const {
    if (in(i).dtype != want)
      return in_err(i, std::string("expected dtype ") + dtype_name(want) + " (as operand 0), found " +
                           type_str(in(i).dtype, in(i).shape));
    return ok_status();
  }
  Status in_rank(size_t i, size_t rank) const {
    if (in(i).shape.size() != rank)
      return in_err(i, "op " + call_.op + " expects rank " + std::to_string(rank) + ", found " +
                           type_str(in(i).dtype, in(i).shape));
    return ok_status();
  }
  Status in_min_rank(size_t i, size_t rank) const {
    if (in(i).shape.size() < rank)
      return in_err(i, "op " + call_.op + " expects rank >= " + std::to_string(rank) + ", found " +
                           type_str(in(i).dtype, in(i).shape));
    return ok_status();
  }
  Status in_shape(size_t i, const Shape& want, const std::string& why) const {
    if (in(i).shape != want)
      return in_err(i, "expected shape " + shape_str(want) + " (" + why + "), found " + shape_str(in(i).shape));
    return ok_status();
  }
  // One size of the op's matrix products (M, N, K or a row stride), which
  // the CPU kernel hands to CBLAS as int (cpu/gemm.cc): at most kMaxGemmDim.
  // `what` names the size and how operand i gives it.
  Status gemm_size(size_t i, const std::string& what, int64_t v) const {
    if (v <= kMaxGemmDim) return ok_status();
    return in_err(i, "op " + call_.op + " expects GEMM sizes of at most 2^31 - 1 = " + std::to_string(kMaxGemmDim) +
                         " (CBLAS takes int), found " + what + " = " + std::to_string(v) + " of " +
                         type_str(in(i).dtype, in(i).shape));
  }
  Status out_is(size_t i, DType dtype, const Shape& shape) const {
    if (out(i).dtype != dtype || out(i).shape != shape)
      return out_err(i, "expected " + type_str(dtype, shape) + ", found " + type_str(out(i).dtype, out(i).shape));
    return ok_status();
  }

  // Attributes. Every attribute the op reads must be listed in `allowed`.
  Status only_attrs(std::initializer_list<const char*> allowed) const {
    for (const auto& kv : call_.attrs) {
      bool ok = false;
      for (const char* a : allowed) ok = ok || kv.first == a;
      if (!ok) {
        std::string list;
        for (const char* a : allowed) list += std::string(list.empty() ? "" : ", ") + a;
        return attr_err(kv.first, "unknown attribute for op " + call_.op +
                                      (list.empty() ? " (it takes none)" : " (expected: " + list + ")"));
      }
    }
    return ok_status();
  }
  const Attr* attr(const std::string& name) const {
    auto it = call_.attrs.find(name);
    return it == call_.attrs.end() ? nullptr : &it->second;
  }
  Status missing(const std::string& name, const char* what) const {
    return attr_err(name, std::string("missing required attribute (") + what + ") of op " + call_.op);
  }
  Status get_bool(const std::string& name, bool* v, bool optional = true) const {
    const Attr* a = attr(name);
    if (!a) {
      if (!optional) return missing(name, "a bool");
      *v = false;
      return ok_status();
    }
    if (a->kind != Attr::Kind::kBool) return attr_err(name, "expected a bool, found " + attr_desc(*a));
    *v = a->b;
    return ok_status();
  }
  Status get_int(const std::string& name, int64_t* v) const {
    const Attr* a = attr(name);
    if (!a) return missing(name, "an integer");
    if (a->kind != Attr::Kind::kInt) return attr_err(name, "expected an integer, found " + attr_desc(*a));
    *v = a->i;
    return ok_status();
  }
  Status get_f64(const std::string& name, double* v) const {
    const Attr* a = attr(name);
    if (!a) return missing(name, "a number");
    if (!a->is_number()) return attr_err(name, "expected a number, found " + attr_desc(*a));
    *v = a->as_double();
    if (!std::isfinite(*v)) return attr_err(name, "expected a finite number");
    return ok_status();
  }
  Status get_ints(const std::string& name, std::vector<int64_t>* v) const {
    const Attr* a = attr(name);
    if (!a) return missing(name, "an array of integers");
    if (a->kind != Attr::Kind::kIntList)
      return attr_err(name, "expected an array of integers, found " + attr_desc(*a));
    *v = a->ints;
    return ok_status();
  }

  static std::string attr_desc(const Attr& a) {
    switch (a.kind) {
      case Attr::Kind::kBool: return a.b ? "true" : "false";
      case Attr::Kind::kInt: return "the integer " + std::to_string(a.i);
      case Attr::Kind::kFloat: return "the number " + std::to_string(a.f);
      case Attr::Kind::kIntList: return "an array of integers";
      case Attr::Kind::kFloatList: return "an array of non-integer numbers";
      case Attr::Kind::kString: return "the string \"" + a.s + "\"";
    }
    return "?";
  }

  const Call& call() const { return call_; }

 private:
  const Plan& plan_;
  const Call& call_;
  std::string path_;
};

// ---------------------------------------------------------------------------
// Op verifiers.

Status v_constant(const CallCheck& c) {
  HYMO_RETURN_IF_ERROR(c.counts(0, 1));
  HYMO_RETURN_IF_ERROR(c.only_attrs({"value"}));
  const Attr* a = c.attr("value");
  if (!a) return c.missing("value", "an array of numbers, numel values or 1 (a splat)");
  std::vector<double> v;
  if (a->is_list()) v = a->as_doubles();
  else if (a->is_number()) v = {a->as_double()};
  else return c.attr_err("value", "expected a number or an array of numbers, found " + CallCheck::attr_desc(*a));
  int64_t n = c.out(0).numel();
  if (int64_t(v.size()) != n && v.size() != 1)
    return c.attr_err("value", "expected " + std::to_string(n) + " values (or 1, a splat) for result " +
                                   type_str(c.out(0).dtype, c.out(0).shape) + ", found " + std::to_string(v.size()));
  if (c.out(0).dtype == DType::kI32)
    for (size_t i = 0; i < v.size(); ++i)
      if (v[i] != std::floor(v[i]) || std::fabs(v[i]) > 2147483647.0)
        return c.attr_err("value", "expected i32 values, found " + std::to_string(v[i]) + " at index " +
                                       std::to_string(i));
  return ok_status();
}

Status v_embedding(const CallCheck& c) {
  HYMO_RETURN_IF_ERROR(c.counts(2, 1));
  HYMO_RETURN_IF_ERROR(c.only_attrs({}));
  HYMO_RETURN_IF_ERROR(c.in_float(0));
  HYMO_RETURN_IF_ERROR(c.in_rank(0, 2));
  HYMO_RETURN_IF_ERROR(c.in_i32(1));
  Shape s = c.in(1).shape;
  s.push_back(c.in(0).shape[1]);
  return c.out_is(0, c.in(0).dtype, s);
}

Status v_linear(const CallCheck& c) {
  HYMO_RETURN_IF_ERROR(c.counts(2, 1));
  HYMO_RETURN_IF_ERROR(c.only_attrs({}));
  HYMO_RETURN_IF_ERROR(c.in_float(0));
  HYMO_RETURN_IF_ERROR(c.in_min_rank(0, 1));
  HYMO_RETURN_IF_ERROR(c.in_dtype(1, c.in(0).dtype));
  HYMO_RETURN_IF_ERROR(c.in_rank(1, 2));
  int64_t k = c.in(0).shape.back();
  if (c.in(1).shape[1] != k)
    return c.in_err(1, "expected weight [N," + std::to_string(k) + "] (K of x), found " + shape_str(c.in(1).shape));
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < c.in(0).shape.size(); ++i) rows *= c.in(0).shape[i];
  HYMO_RETURN_IF_ERROR(c.gemm_size(0, "M (the rows of x)", rows));
  HYMO_RETURN_IF_ERROR(c.gemm_size(0, "K (the last dim of x)", k));
  HYMO_RETURN_IF_ERROR(c.gemm_size(1, "N (the rows of the weight)", c.in(1).shape[0]));
  Shape s = c.in(0).shape;
  s.back() = c.in(1).shape[0];
  return c.out_is(0, c.in(0).dtype, s);
}

Status v_matmul(const CallCheck& c) {
  HYMO_RETURN_IF_ERROR(c.counts(2, 1));
  HYMO_RETURN_IF_ERROR(c.only_attrs({"transpose_a", "transpose_b"}));
  bool ta, tb;
  HYMO_RETURN_IF_ERROR(c.get_bool("transpose_a", &ta));
  HYMO_RETURN_IF_ERROR(c.get_bool("transpose_b", &tb));
  HYMO_RETURN_IF_ERROR(c.in_float(0));
  HYMO_RETURN_IF_ERROR(c.in_min_rank(0, 2));
  HYMO_RETURN_IF_ERROR(c.in_dtype(1, c.in(0).dtype));
  HYMO_RETURN_IF_ERROR(c.in_rank(1, c.in(0).shape.size()));
  const Shape& a = c.in(0).shape;
  const Shape& b = c.in(1).shape;
  size_t r = a.size();
  for (size_t i = 0; i + 2 < r; ++i)
    if (a[i] != b[i])
      return c.in_err(1, "expected batch dims equal to operand 0's " + shape_str(a) + ", found " + shape_str(b));
  int64_t m = ta ? a[r - 1] : a[r - 2], ka = ta ? a[r - 2] : a[r - 1];
  int64_t kb = tb ? b[r - 1] : b[r - 2], n = tb ? b[r - 2] : b[r - 1];
  if (ka != kb)
    return c.in_err(1, "contraction size mismatch: a gives K=" + std::to_string(ka) + ", b gives K=" +
                           std::to_string(kb) + " (transpose_a=" + (ta ? "true" : "false") +
                           ", transpose_b=" + (tb ? "true" : "false") + ")");
  // (the row strides are a's and b's last dims: M or K, and K or N)
  HYMO_RETURN_IF_ERROR(c.gemm_size(0, "M", m));
  HYMO_RETURN_IF_ERROR(c.gemm_size(0, "K", ka));
  HYMO_RETURN_IF_ERROR(c.gemm_size(1, "N", n));
  Shape s(a.begin(), a.end() - 2);
  s.push_back(m);
  s.push_back(n);
  return c.out_is(0, c.in(0).dtype, s);
}

Status v_grouped_linear(const CallCheck& c) {
  HYMO_RETURN_IF_ERROR(c.counts(2, 1));
  HYMO_RETURN_IF_ERROR(c.only_attrs({}));
  HYMO_RETURN_IF_ERROR(c.in_float(0));
  HYMO_RETURN_IF_ERROR(c.in_rank(0, 3));
  HYMO_RETURN_IF_ERROR(c.in_dtype(1, c.in(0).dtype));
  HYMO_RETURN_IF_ERROR(c.in_rank(1, 3));
  const Shape& x = c.in(0).shape;
  const Shape& w = c.in(1).shape;
  if (w[0] != x[0] || w[2] != x[2])
    return c.in_err(1, "expected [" + std::to_string(x[0]) + ",N," + std::to_string(x[2]) +
                           "] (E and K of x), found " + shape_str(w));
  HYMO_RETURN_IF_ERROR(c.gemm_size(0, "M (the capacity, dim 1 of x)", x[1]));
  HYMO_RETURN_IF_ERROR(c.gemm_size(0, "K (dim 2 of x)", x[2]));
  HYMO_RETURN_IF_ERROR(c.gemm_size(1, "N (dim 1 of the weight)", w[1]));
  return c.out_is(0, c.in(0).dtype, {x[0], x[1], w[1]});
}

Status v_unary(const CallCheck& c) {
  HYMO_RETURN_IF_ERROR(c.counts(1, 1));
  HYMO_RETURN_IF_ERROR(c.only_attrs({}));
  HYMO_RETURN_IF_ERROR(c.in_float(0));
  return c.out_is(0, c.in(0).dtype, c.in(0).shape);
}

Status v_binary(const CallCheck& c) {
  HYMO_RETURN_IF_ERROR(c.counts(2, 1));
  HYMO_RETURN_IF_ERROR(c.only_attrs({}));
  HYMO_RETURN_IF_ERROR(c.in_float(0));
  HYMO_RETURN_IF_ERROR(c.in_dtype(1, c.in(0).dtype));
  HYMO_RETURN_IF_ERROR(c.in_shape(1, c.in(0).shape, "identical shapes"));
  return c.out_is(0, c.in(0).dtype, c.in(0).shape);
}

Status v_select(const CallCheck& c) {
  HYMO_RETURN_IF_ERROR(c.counts(3, 1));
  HYMO_RETURN_IF_ERROR(c.only_attrs({}));
  HYMO_RETURN_IF_ERROR(c.in_shape(1, c.in(0).shape, "same shape as cond"));
  HYMO_RETURN_IF_ERROR(c.in_shape(2, c.in(0).shape, "same shape as cond"));
  if (c.in(2).dtype != c.in(1).dtype)
    return c.in_err(2, std::string("expected dtype ") + dtype_name(c.in(1).dtype) + " (as operand 1), found " +
                           dtype_name(c.in(2).dtype));
  return c.out_is(0, c.in(1).dtype, c.in(1).shape);
}

Status v_cast(const CallCheck& c) {
  HYMO_RETURN_IF_ERROR(c.counts(1, 1));
  HYMO_RETURN_IF_ERROR(c.only_attrs({}));
  if (!dtype_is_float(c.out(0).dtype))
    return c.out_err(0, std::string("cast produces a float (f32, f64, bf16), found ") + dtype_name(c.out(0).dtype));
  return c.out_is(0, c.out(0).dtype, c.in(0).shape);
}

Status check_dims_attr(const CallCheck& c, const char* name, size_t rank, std::vector<int64_t>* dims,
                       bool sorted) {
  HYMO_RETURN_IF_ERROR(c.get_ints(name, dims));
  std::set<int64_t> seen;
  for (size_t i = 0; i < dims->size(); ++i) {
    int64_t d = (*dims)[i];
    if (d < 0 || d >= int64_t(rank))
      return c.attr_err(name, "dim " + std::to_string(d) + " at index " + std::to_string(i) +
                                  " out of range for rank " + std::to_string(rank));
    if (!seen.insert(d).second)
      return c.attr_err(name, "dim " + std::to_string(d) + " appears twice (expected unique dims)");
    if (sorted && i > 0 && (*dims)[i - 1] > d) return c.attr_err(name, "expected sorted dims, found " + shape_str(*dims));
  }
  return ok_status();
}

Status v_reduce(const CallCheck& c) {
  HYMO_RETURN_IF_ERROR(c.counts(1, 1));
  HYMO_RETURN_IF_ERROR(c.only_attrs({"dims", "keep_dims"}));
  HYMO_RETURN_IF_ERROR(c.in_float(0));
  std::vector<int64_t> dims;
  HYMO_RETURN_IF_ERROR(check_dims_attr(c, "dims", c.in(0).shape.size(), &dims, true));
  bool keep;
  HYMO_RETURN_IF_ERROR(c.get_bool("keep_dims", &keep));
  Shape s;
  for (size_t i = 0; i < c.in(0).shape.size(); ++i) {
    bool red = std::find(dims.begin(), dims.end(), int64_t(i)) != dims.end();
    if (!red) s.push_back(c.in(0).shape[i]);
    else if (keep) s.push_back(1);
  }
  return c.out_is(0, c.in(0).dtype, s);
}

Status v_reshape(const CallCheck& c) {
  HYMO_RETURN_IF_ERROR(c.counts(1, 1));
  HYMO_RETURN_IF_ERROR(c.only_attrs({}));
  if (c.out(0).dtype != c.in(0).dtype || c.out(0).numel() != c.in(0).numel())
    return c.out_err(0, std::string("expected a ") + dtype_name(c.in(0).dtype) + " shape with " +
                            std::to_string(c.in(0).numel()) + " elements (as " +
                            type_str(c.in(0).dtype, c.in(0).shape) + "), found " +
                            type_str(c.out(0).dtype, c.out(0).shape));
  return ok_status();
}

Status v_transpose(const CallCheck& c) {
  HYMO_RETURN_IF_ERROR(c.counts(1, 1));
  HYMO_RETURN_IF_ERROR(c.only_attrs({"permutation"}));
  std::vector<int64_t> perm;
  size_t r = c.in(0).shape.size();
  HYMO_RETURN_IF_ERROR(check_dims_attr(c, "permutation", r, &perm, false));
  if (perm.size() != r)
    return c.attr_err("permutation", "expected a permutation of " + std::to_string(r) + " dims, found " +
                                         std::to_string(perm.size()) + " entries");
  Shape s;
  for (int64_t p : perm) s.push_back(c.in(0).shape[size_t(p)]);
  return c.out_is(0, c.in(0).dtype, s);
}

Status v_slice(const CallCheck& c) {
  HYMO_RETURN_IF_ERROR(c.counts(1, 1));
  HYMO_RETURN_IF_ERROR(c.only_attrs({"start", "limit"}));
  std::vector<int64_t> start, limit;
  HYMO_RETURN_IF_ERROR(c.get_ints("start", &start));
  HYMO_RETURN_IF_ERROR(c.get_ints("limit", &limit));
  const Shape& in = c.in(0).shape;
  if (start.size() != in.size())
    return c.attr_err("start", "expected " + std::to_string(in.size()) + " entries (the rank), found " +
                                   std::to_string(start.size()));
  if (limit.size() != in.size())
    return c.attr_err("limit", "expected " + std::to_string(in.size()) + " entries (the rank), found " +
                                   std::to_string(limit.size()));
  Shape s;
  for (size_t i = 0; i < in.size(); ++i) {
    if (start[i] < 0 || start[i] >= in[i])
      return c.attr_err("start", "entry " + std::to_string(i) + " is " + std::to_string(start[i]) +
                                     ", expected 0 <= start < " + std::to_string(in[i]));
    if (limit[i] <= start[i] || limit[i] > in[i])
      return c.attr_err("limit", "entry " + std::to_string(i) + " is " + std::to_string(limit[i]) +
                                     ", expected " + std::to_string(start[i]) + " < limit <= " + std::to_string(in[i]));
    s.push_back(limit[i] - start[i]);
  }
  return c.out_is(0, c.in(0).dtype, s);
}

Status v_pad(const CallCheck& c) {
  HYMO_RETURN_IF_ERROR(c.counts(1, 1));
  HYMO_RETURN_IF_ERROR(c.only_attrs({"low", "high"}));
  std::vector<int64_t> low, high;
  HYMO_RETURN_IF_ERROR(c.get_ints("low", &low));
  HYMO_RETURN_IF_ERROR(c.get_ints("high", &high));
  const Shape& in = c.in(0).shape;
  for (auto [name, v] : {std::pair<const char*, std::vector<int64_t>*>{"low", &low}, {"high", &high}}) {
    if (v->size() != in.size())
      return c.attr_err(name, "expected " + std::to_string(in.size()) + " entries (the rank), found " +
                                  std::to_string(v->size()));
    for (size_t i = 0; i < v->size(); ++i)
      if ((*v)[i] < 0)
        return c.attr_err(name, "entry " + std::to_string(i) + " is " + std::to_string((*v)[i]) + ", expected >= 0");
  }
  Shape s;
  for (size_t i = 0; i < in.size(); ++i) s.push_back(in[i] + low[i] + high[i]);
  return c.out_is(0, c.in(0).dtype, s);
}

Status v_concat(const CallCheck& c) {
  HYMO_RETURN_IF_ERROR(c.result_count(1));
  HYMO_RETURN_IF_ERROR(c.only_attrs({"dim"}));
  if (c.num_in() < 1) return c.counts(1, 1);
  int64_t dim;
  HYMO_RETURN_IF_ERROR(c.get_int("dim", &dim));
  const Shape& first = c.in(0).shape;
  if (dim < 0 || dim >= int64_t(first.size()))
    return c.attr_err("dim", "dim " + std::to_string(dim) + " out of range for rank " + std::to_string(first.size()));
  Shape s = first;
  s[size_t(dim)] = 0;
  for (size_t i = 0; i < c.num_in(); ++i) {
    HYMO_RETURN_IF_ERROR(c.in_dtype(i, c.in(0).dtype));
    const Shape& si = c.in(i).shape;
    bool ok = si.size() == first.size();
    for (size_t d = 0; ok && d < si.size(); ++d) ok = int64_t(d) == dim || si[d] == first[d];
    if (!ok)
      return c.in_err(i, "expected " + shape_str(first) + " except along dim " + std::to_string(dim) +
                             ", found " + shape_str(si));
    s[size_t(dim)] += si[size_t(dim)];
  }
  return c.out_is(0, c.in(0).dtype, s);
}

Status v_broadcast_in_dim(const CallCheck& c) {
  HYMO_RETURN_IF_ERROR(c.counts(1, 1));
  HYMO_RETURN_IF_ERROR(c.only_attrs({"dims"}));
  std::vector<int64_t> dims;
  const Shape& in = c.in(0).shape;
  const Shape& out = c.out(0).shape;
  HYMO_RETURN_IF_ERROR(check_dims_attr(c, "dims", out.size(), &dims, false));
  if (dims.size() != in.size())
    return c.attr_err("dims", "expected " + std::to_string(in.size()) + " entries (the operand's rank), found " +
                                  std::to_string(dims.size()));
  if (c.out(0).dtype != c.in(0).dtype)
    return c.out_err(0, std::string("expected dtype ") + dtype_name(c.in(0).dtype) + ", found " +
                            dtype_name(c.out(0).dtype));
  for (size_t i = 0; i < in.size(); ++i)
    if (in[i] != 1 && in[i] != out[size_t(dims[i])])
      return c.out_err(0, "operand dim " + std::to_string(i) + " (size " + std::to_string(in[i]) +
                              ") maps to result dim " + std::to_string(dims[i]) + " of size " +
                              std::to_string(out[size_t(dims[i])]) + ", expected equal or 1");
  return ok_status();
}

Status v_rms_norm(const CallCheck& c) {
  HYMO_RETURN_IF_ERROR(c.counts(2, 1));
  HYMO_RETURN_IF_ERROR(c.only_attrs({"eps"}));
  double eps;
  HYMO_RETURN_IF_ERROR(c.get_f64("eps", &eps));
  if (eps < 0) return c.attr_err("eps", "expected eps >= 0, found " + std::to_string(eps));
  HYMO_RETURN_IF_ERROR(c.in_float(0));
  HYMO_RETURN_IF_ERROR(c.in_min_rank(0, 1));
  HYMO_RETURN_IF_ERROR(c.in_dtype(1, c.in(0).dtype));
  HYMO_RETURN_IF_ERROR(c.in_shape(1, {c.in(0).shape.back()}, "[D], D the last dim of x"));
  return c.out_is(0, c.in(0).dtype, c.in(0).shape);
}

Status v_softmax(const CallCheck& c) {
  HYMO_RETURN_IF_ERROR(c.counts(1, 1));
  HYMO_RETURN_IF_ERROR(c.only_attrs({}));
  HYMO_RETURN_IF_ERROR(c.in_float(0));
  HYMO_RETURN_IF_ERROR(c.in_min_rank(0, 1));
  return c.out_is(0, c.in(0).dtype, c.in(0).shape);
}

Status v_rope(const CallCheck& c) {
  HYMO_RETURN_IF_ERROR(c.counts(1, 1));
  HYMO_RETURN_IF_ERROR(c.only_attrs({"theta", "inverse"}));
  double theta;
  HYMO_RETURN_IF_ERROR(c.get_f64("theta", &theta));
  if (theta <= 0) return c.attr_err("theta", "expected theta > 0, found " + std::to_string(theta));
  bool inv;
  HYMO_RETURN_IF_ERROR(c.get_bool("inverse", &inv));
  HYMO_RETURN_IF_ERROR(c.in_float(0));
  HYMO_RETURN_IF_ERROR(c.in_rank(0, 4));
  if (c.in(0).shape[3] % 2 != 0)
    return c.in_err(0, "expected an even rotary dim R in [B,T,H,R], found " + shape_str(c.in(0).shape));
  return c.out_is(0, c.in(0).dtype, c.in(0).shape);
}

// causal_attention's matrix products (and its gradient's), per batch and
// head: T x T scores from rows of q and k strided by H*Dk, then P V from rows
// of v strided by H*Dv (Dk <= H*Dk and Dv <= H*Dv). After the shape checks.
Status attention_gemm_sizes(const CallCheck& c) {
  const Shape& q = c.in(0).shape;
  const Shape& v = c.in(2).shape;
  HYMO_RETURN_IF_ERROR(c.gemm_size(0, "T (dim 1 of q)", q[1]));
  HYMO_RETURN_IF_ERROR(c.gemm_size(0, "the row stride H*Dk of q", q[2] * q[3]));
  return c.gemm_size(2, "the row stride H*Dv of v", v[2] * v[3]);
}

Status v_causal_attention(const CallCheck& c) {
  HYMO_RETURN_IF_ERROR(c.counts(3, 1));
  HYMO_RETURN_IF_ERROR(c.only_attrs({"scale"}));
  double scale;
  HYMO_RETURN_IF_ERROR(c.get_f64("scale", &scale));
  HYMO_RETURN_IF_ERROR(c.in_float(0));
  HYMO_RETURN_IF_ERROR(c.in_rank(0, 4));
  HYMO_RETURN_IF_ERROR(c.in_dtype(1, c.in(0).dtype));
  HYMO_RETURN_IF_ERROR(c.in_shape(1, c.in(0).shape, "k like q, [B,T,H,Dk]"));
  HYMO_RETURN_IF_ERROR(c.in_dtype(2, c.in(0).dtype));
  HYMO_RETURN_IF_ERROR(c.in_rank(2, 4));
  const Shape& q = c.in(0).shape;
  const Shape& v = c.in(2).shape;
  HYMO_RETURN_IF_ERROR(c.in_shape(2, {q[0], q[1], q[2], v[3]}, "[B,T,H,Dv] with B,T,H of q"));
  HYMO_RETURN_IF_ERROR(attention_gemm_sizes(c));
  return c.out_is(0, c.in(0).dtype, {q[0], q[1], q[2], v[3]});
}

Status v_gdn_recurrence(const CallCheck& c) {
  HYMO_RETURN_IF_ERROR(c.counts(5, 1));
  HYMO_RETURN_IF_ERROR(c.only_attrs({"chunk_size"}));
  int64_t chunk;
  HYMO_RETURN_IF_ERROR(c.get_int("chunk_size", &chunk));
  if (chunk < 1) return c.attr_err("chunk_size", "expected chunk_size >= 1, found " + std::to_string(chunk));
  HYMO_RETURN_IF_ERROR(c.in_float(0));
  HYMO_RETURN_IF_ERROR(c.in_rank(0, 4));
  for (size_t i = 1; i < 5; ++i) HYMO_RETURN_IF_ERROR(c.in_dtype(i, c.in(0).dtype));
  const Shape& v = c.in(0).shape;
  HYMO_RETURN_IF_ERROR(c.in_rank(1, 4));
  int64_t s = c.in(1).shape[3];
  HYMO_RETURN_IF_ERROR(c.in_shape(1, {v[0], v[1], v[2], s}, "b [B,T,H,S] with B,T,H of v"));
  HYMO_RETURN_IF_ERROR(c.in_shape(2, {v[0], v[1], v[2], s}, "c [B,T,H,S] like b"));
  HYMO_RETURN_IF_ERROR(c.in_shape(3, {v[0], v[1], v[2]}, "g [B,T,H]"));
  HYMO_RETURN_IF_ERROR(c.in_shape(4, {v[2], s}, "a [H,S]"));
  return c.out_is(0, c.in(0).dtype, v);
}

Status v_moe_route(const CallCheck& c) {
  HYMO_RETURN_IF_ERROR(c.counts(2, 2));
  HYMO_RETURN_IF_ERROR(c.only_attrs({"top_k"}));
  int64_t k;
  HYMO_RETURN_IF_ERROR(c.get_int("top_k", &k));
  HYMO_RETURN_IF_ERROR(c.in_float(0));
  HYMO_RETURN_IF_ERROR(c.in_rank(0, 2));
  int64_t n = c.in(0).shape[0], e = c.in(0).shape[1];
  if (k < 1 || k > e)
    return c.attr_err("top_k", "expected 1 <= top_k <= " + std::to_string(e) + " (experts), found " + std::to_string(k));
  HYMO_RETURN_IF_ERROR(c.in_dtype(1, c.in(0).dtype));
  HYMO_RETURN_IF_ERROR(c.in_shape(1, {e}, "bias [E]"));
  HYMO_RETURN_IF_ERROR(c.out_is(0, DType::kI32, {n, k}));
  return c.out_is(1, c.in(0).dtype, {n, k});
}

Status v_moe_dispatch(const CallCheck& c) {
  HYMO_RETURN_IF_ERROR(c.counts(2, 2));
  HYMO_RETURN_IF_ERROR(c.only_attrs({"num_experts", "capacity"}));
  int64_t e, cap;
  HYMO_RETURN_IF_ERROR(c.get_int("num_experts", &e));
  HYMO_RETURN_IF_ERROR(c.get_int("capacity", &cap));
  if (e < 1) return c.attr_err("num_experts", "expected >= 1, found " + std::to_string(e));
  if (cap < 1) return c.attr_err("capacity", "expected >= 1, found " + std::to_string(cap));
  HYMO_RETURN_IF_ERROR(c.in_float(0));
  HYMO_RETURN_IF_ERROR(c.in_rank(0, 2));
  HYMO_RETURN_IF_ERROR(c.in_i32(1));
  HYMO_RETURN_IF_ERROR(c.in_rank(1, 2));
  int64_t n = c.in(0).shape[0], d = c.in(0).shape[1];
  if (c.in(1).shape[0] != n)
    return c.in_err(1, "expected indices [" + std::to_string(n) + ",K] (N of x), found " + shape_str(c.in(1).shape));
  HYMO_RETURN_IF_ERROR(c.out_is(0, c.in(0).dtype, {e, cap, d}));
  return c.out_is(1, DType::kI32, c.in(1).shape);
}

Status v_moe_combine(const CallCheck& c) {
  HYMO_RETURN_IF_ERROR(c.counts(3, 1));
  HYMO_RETURN_IF_ERROR(c.only_attrs({}));
  HYMO_RETURN_IF_ERROR(c.in_float(0));
  HYMO_RETURN_IF_ERROR(c.in_rank(0, 3));
  HYMO_RETURN_IF_ERROR(c.in_i32(1));
  HYMO_RETURN_IF_ERROR(c.in_rank(1, 2));
  HYMO_RETURN_IF_ERROR(c.in_dtype(2, c.in(0).dtype));
  HYMO_RETURN_IF_ERROR(c.in_shape(2, c.in(1).shape, "weights [N,K] like slot"));
  return c.out_is(0, c.in(0).dtype, {c.in(1).shape[0], c.in(0).shape[2]});
}

Status v_moe_count(const CallCheck& c) {
  HYMO_RETURN_IF_ERROR(c.counts(1, 1));
  HYMO_RETURN_IF_ERROR(c.only_attrs({"num_experts"}));
  int64_t e;
  HYMO_RETURN_IF_ERROR(c.get_int("num_experts", &e));
  if (e < 1) return c.attr_err("num_experts", "expected >= 1, found " + std::to_string(e));
  HYMO_RETURN_IF_ERROR(c.in_i32(0));
  HYMO_RETURN_IF_ERROR(c.in_rank(0, 2));
  // f32 per docs/dialect.md; f64 accepted too for precision fp64 plans.
  DType dt = c.out(0).dtype == DType::kF64 ? DType::kF64 : DType::kF32;
  return c.out_is(0, dt, {e});
}

Status v_cross_entropy(const CallCheck& c) {
  HYMO_RETURN_IF_ERROR(c.counts(2, 1));
  HYMO_RETURN_IF_ERROR(c.only_attrs({}));
  HYMO_RETURN_IF_ERROR(c.in_float(0));
  HYMO_RETURN_IF_ERROR(c.in_rank(0, 2));
  HYMO_RETURN_IF_ERROR(c.in_i32(1));
  HYMO_RETURN_IF_ERROR(c.in_shape(1, {c.in(0).shape[0]}, "targets [N], N the rows of logits"));
  return c.out_is(0, c.in(0).dtype, {});
}

// ---------------------------------------------------------------------------
// Backward ops (docs/dialect.md "Backward ops"): the forward op's operand
// rules, plus every adjoint has the type of the value it is the adjoint of.

Status v_embedding_grad(const CallCheck& c) {
  HYMO_RETURN_IF_ERROR(c.counts(2, 1));
  HYMO_RETURN_IF_ERROR(c.only_attrs({}));
  HYMO_RETURN_IF_ERROR(c.in_i32(0));
  HYMO_RETURN_IF_ERROR(c.in_float(1));
  HYMO_RETURN_IF_ERROR(c.in_rank(1, c.in(0).shape.size() + 1));
  const int64_t d = c.in(1).shape.back();
  Shape s = c.in(0).shape;
  s.push_back(d);
  HYMO_RETURN_IF_ERROR(c.in_shape(1, s, "dout [..., D] with the dims of ids"));
  if (c.out(0).shape.size() != 2 || c.out(0).shape[1] != d || c.out(0).dtype != c.in(1).dtype)
    return c.out_err(0, std::string("expected a ") + dtype_name(c.in(1).dtype) + "[V," + std::to_string(d) +
                            "] table adjoint (D and dtype of dout), found " +
                            type_str(c.out(0).dtype, c.out(0).shape));
  return ok_status();
}

Status v_rms_norm_grad(const CallCheck& c) {
  HYMO_RETURN_IF_ERROR(c.counts(3, 2));
  HYMO_RETURN_IF_ERROR(c.only_attrs({"eps"}));
  double eps;
  HYMO_RETURN_IF_ERROR(c.get_f64("eps", &eps));
  if (eps < 0) return c.attr_err("eps", "expected eps >= 0, found " + std::to_string(eps));
  HYMO_RETURN_IF_ERROR(c.in_float(0));
  HYMO_RETURN_IF_ERROR(c.in_min_rank(0, 1));
  HYMO_RETURN_IF_ERROR(c.in_dtype(1, c.in(0).dtype));
  HYMO_RETURN_IF_ERROR(c.in_shape(1, {c.in(0).shape.back()}, "[D], D the last dim of x"));
  HYMO_RETURN_IF_ERROR(c.in_dtype(2, c.in(0).dtype));
  HYMO_RETURN_IF_ERROR(c.in_shape(2, c.in(0).shape, "dout like x"));
  HYMO_RETURN_IF_ERROR(c.out_is(0, c.in(0).dtype, c.in(0).shape));
  return c.out_is(1, c.in(0).dtype, c.in(1).shape);
}

Status v_softmax_grad(const CallCheck& c) {
  HYMO_RETURN_IF_ERROR(c.counts(2, 1));
  HYMO_RETURN_IF_ERROR(c.only_attrs({}));
  HYMO_RETURN_IF_ERROR(c.in_float(0));
  HYMO_RETURN_IF_ERROR(c.in_min_rank(0, 1));
  HYMO_RETURN_IF_ERROR(c.in_dtype(1, c.in(0).dtype));
  HYMO_RETURN_IF_ERROR(c.in_shape(1, c.in(0).shape, "dout like out"));
  return c.out_is(0, c.in(0).dtype, c.in(0).shape);
}

Status v_causal_attention_grad(const CallCheck& c) {
  HYMO_RETURN_IF_ERROR(c.counts(4, 3));
  HYMO_RETURN_IF_ERROR(c.only_attrs({"scale"}));
  double scale;
  HYMO_RETURN_IF_ERROR(c.get_f64("scale", &scale));
  HYMO_RETURN_IF_ERROR(c.in_float(0));
  HYMO_RETURN_IF_ERROR(c.in_rank(0, 4));
  for (size_t i = 1; i < 4; ++i) HYMO_RETURN_IF_ERROR(c.in_dtype(i, c.in(0).dtype));
  HYMO_RETURN_IF_ERROR(c.in_shape(1, c.in(0).shape, "k like q, [B,T,H,Dk]"));
  HYMO_RETURN_IF_ERROR(c.in_rank(2, 4));
  const Shape& q = c.in(0).shape;
  const Shape vs = {q[0], q[1], q[2], c.in(2).shape[3]};
  HYMO_RETURN_IF_ERROR(c.in_shape(2, vs, "[B,T,H,Dv] with B,T,H of q"));
  HYMO_RETURN_IF_ERROR(c.in_shape(3, vs, "dout like v"));
  HYMO_RETURN_IF_ERROR(attention_gemm_sizes(c));
  HYMO_RETURN_IF_ERROR(c.out_is(0, c.in(0).dtype, q));
  HYMO_RETURN_IF_ERROR(c.out_is(1, c.in(0).dtype, q));
  return c.out_is(2, c.in(0).dtype, vs);
}

Status v_gdn_recurrence_grad(const CallCheck& c) {
  HYMO_RETURN_IF_ERROR(c.counts(6, 5));
  HYMO_RETURN_IF_ERROR(c.only_attrs({"chunk_size"}));
  int64_t chunk;
  HYMO_RETURN_IF_ERROR(c.get_int("chunk_size", &chunk));
  if (chunk < 1) return c.attr_err("chunk_size", "expected chunk_size >= 1, found " + std::to_string(chunk));
  HYMO_RETURN_IF_ERROR(c.in_float(0));
  HYMO_RETURN_IF_ERROR(c.in_rank(0, 4));
  for (size_t i = 1; i < 6; ++i) HYMO_RETURN_IF_ERROR(c.in_dtype(i, c.in(0).dtype));
  const Shape& v = c.in(0).shape;
  HYMO_RETURN_IF_ERROR(c.in_rank(1, 4));
  int64_t s = c.in(1).shape[3];
  HYMO_RETURN_IF_ERROR(c.in_shape(1, {v[0], v[1], v[2], s}, "b [B,T,H,S] with B,T,H of v"));
  HYMO_RETURN_IF_ERROR(c.in_shape(2, {v[0], v[1], v[2], s}, "c [B,T,H,S] like b"));
  HYMO_RETURN_IF_ERROR(c.in_shape(3, {v[0], v[1], v[2]}, "g [B,T,H]"));
  HYMO_RETURN_IF_ERROR(c.in_shape(4, {v[2], s}, "a [H,S]"));
  HYMO_RETURN_IF_ERROR(c.in_shape(5, v, "dout like v"));
  for (size_t i = 0; i < 5; ++i) HYMO_RETURN_IF_ERROR(c.out_is(i, c.in(0).dtype, c.in(i).shape));
  return ok_status();
}

Status v_moe_route_grad(const CallCheck& c) {
  HYMO_RETURN_IF_ERROR(c.counts(3, 1));
  HYMO_RETURN_IF_ERROR(c.only_attrs({}));
  HYMO_RETURN_IF_ERROR(c.in_float(0));
  HYMO_RETURN_IF_ERROR(c.in_rank(0, 2));
  HYMO_RETURN_IF_ERROR(c.in_i32(1));
  HYMO_RETURN_IF_ERROR(c.in_rank(1, 2));
  const int64_t n = c.in(0).shape[0];
  if (c.in(1).shape[0] != n)
    return c.in_err(1, "expected indices [" + std::to_string(n) + ",K] (N of probs), found " +
                           shape_str(c.in(1).shape));
  HYMO_RETURN_IF_ERROR(c.in_dtype(2, c.in(0).dtype));
  HYMO_RETURN_IF_ERROR(c.in_shape(2, c.in(1).shape, "dweights [N,K] like indices"));
  return c.out_is(0, c.in(0).dtype, c.in(0).shape);
}

Status v_moe_combine_grad(const CallCheck& c) {
  HYMO_RETURN_IF_ERROR(c.counts(4, 2));
  HYMO_RETURN_IF_ERROR(c.only_attrs({}));
  HYMO_RETURN_IF_ERROR(c.in_float(0));
  HYMO_RETURN_IF_ERROR(c.in_rank(0, 3));
  HYMO_RETURN_IF_ERROR(c.in_i32(1));
  HYMO_RETURN_IF_ERROR(c.in_rank(1, 2));
  HYMO_RETURN_IF_ERROR(c.in_dtype(2, c.in(0).dtype));
  HYMO_RETURN_IF_ERROR(c.in_shape(2, c.in(1).shape, "weights [N,K] like slot"));
  HYMO_RETURN_IF_ERROR(c.in_dtype(3, c.in(0).dtype));
  HYMO_RETURN_IF_ERROR(c.in_shape(3, {c.in(1).shape[0], c.in(0).shape[2]}, "dout [N,D], N of slot, D of ye"));
  HYMO_RETURN_IF_ERROR(c.out_is(0, c.in(0).dtype, c.in(0).shape));
  return c.out_is(1, c.in(0).dtype, c.in(1).shape);
}

Status v_cross_entropy_grad(const CallCheck& c) {
  HYMO_RETURN_IF_ERROR(c.counts(3, 1));
  HYMO_RETURN_IF_ERROR(c.only_attrs({}));
  HYMO_RETURN_IF_ERROR(c.in_float(0));
  HYMO_RETURN_IF_ERROR(c.in_rank(0, 2));
  HYMO_RETURN_IF_ERROR(c.in_i32(1));
  HYMO_RETURN_IF_ERROR(c.in_shape(1, {c.in(0).shape[0]}, "targets [N], N the rows of logits"));
  HYMO_RETURN_IF_ERROR(c.in_dtype(2, c.in(0).dtype));
  HYMO_RETURN_IF_ERROR(c.in_shape(2, {}, "dloss, a scalar"));
  return c.out_is(0, c.in(0).dtype, c.in(0).shape);
}

Status v_fused_elementwise(const CallCheck& c) {
  if (c.num_in() < 1) return plan_error(c.path() + ".operands", "op fused_elementwise expects at least one operand");
  HYMO_RETURN_IF_ERROR(c.only_attrs({"program", "outputs", "sums"}));
  const Attr* program = c.attr("program");
  if (!program || program->kind != Attr::Kind::kString)
    return c.attr_err("program", "missing required attribute (a string) of op fused_elementwise");
  const Attr* outputs = c.attr("outputs");
  if (!outputs || outputs->kind != Attr::Kind::kIntList)
    return c.attr_err("outputs", "missing required attribute (a list of registers) of op fused_elementwise");
  const Attr* sums = c.attr("sums");
  if (sums && sums->kind != Attr::Kind::kIntList)
    return c.attr_err("sums", "expected a list of registers");
  const size_t n_out = outputs->ints.size(), n_sum = sums ? sums->ints.size() : 0;
  std::vector<FusedInstruction> prog;
  Status st = parse_fused_program(program->s, int64_t(c.num_in()), &prog);
  if (!st.ok()) return c.attr_err("program", st.message());
  HYMO_RETURN_IF_ERROR(c.result_count(n_out + n_sum));
  if (n_out + n_sum == 0) return c.attr_err("outputs", "expected at least one output or sum register");
  int64_t defined = int64_t(c.num_in() + prog.size());
  for (int64_t r : outputs->ints)
    if (r < int64_t(c.num_in()) || r >= defined)
      return c.attr_err("outputs", "expected registers of instructions, %" + std::to_string(c.num_in()) + " to %" +
                                       std::to_string(defined - 1) + ", found %" + std::to_string(r));
  for (size_t k = 0; k < n_sum; ++k)
    if (sums->ints[k] < 0 || sums->ints[k] >= defined)
      return c.attr_err("sums", "expected registers below %" + std::to_string(defined) + ", found %" +
                                    std::to_string(sums->ints[k]));
  // The domain: the outputs' type, or with none the input of highest rank.
  const BufferDesc* domain = n_out ? &c.out(0) : &c.in(0);
  if (!n_out)
    for (size_t i = 1; i < c.num_in(); ++i)
      if (c.in(i).shape.size() > domain->shape.size()) domain = &c.in(i);
  if (!dtype_is_float(domain->dtype))
    return n_out ? c.out_err(0, "expected a float result, found " + type_str(domain->dtype, domain->shape))
                 : c.in_err(0, "expected a float input, found " + type_str(domain->dtype, domain->shape));
  for (size_t i = 0; i < n_out; ++i) HYMO_RETURN_IF_ERROR(c.out_is(i, domain->dtype, domain->shape));
  auto is_prefix = [&](const std::vector<int64_t>& s) {
    return s.size() < domain->shape.size() && std::equal(s.begin(), s.end(), domain->shape.begin());
  };
  for (size_t i = 0; i < c.num_in(); ++i) {
    const BufferDesc& b = c.in(i);
    if (b.dtype != domain->dtype || (b.shape != domain->shape && !is_prefix(b.shape)))
      return c.in_err(i, "expected " + type_str(domain->dtype, domain->shape) +
                             ", its scalar or a prefix of its shape, found " + type_str(b.dtype, b.shape));
  }
  for (size_t k = 0; k < n_sum; ++k) {
    const BufferDesc& r = c.out(n_out + k);
    if (r.dtype != domain->dtype || !is_prefix(r.shape))
      return c.out_err(n_out + k, "expected a sum over trailing dims of " + type_str(domain->dtype, domain->shape) +
                                      " (a shorter prefix of its shape), found " + type_str(r.dtype, r.shape));
  }
  return ok_status();
}

// --- decode ops (kernels_decode.cc) ---
Status c_scalar_pos(const CallCheck& c, size_t i) {
  HYMO_RETURN_IF_ERROR(c.in_i32(i));
  HYMO_RETURN_IF_ERROR(c.in_shape(i, {}, "pos, a scalar"));
  return ok_status();
}

Status v_rope_at(const CallCheck& c) {
  HYMO_RETURN_IF_ERROR(c.counts(2, 1));
  HYMO_RETURN_IF_ERROR(c.only_attrs({"theta"}));
  double theta;
  HYMO_RETURN_IF_ERROR(c.get_f64("theta", &theta));
  if (theta <= 0) return c.attr_err("theta", "expected theta > 0, found " + std::to_string(theta));
  HYMO_RETURN_IF_ERROR(c.in_float(0));
  HYMO_RETURN_IF_ERROR(c.in_rank(0, 3));
  if (c.in(0).shape[2] % 2 != 0)
    return c.in_err(0, "expected an even rotary dim R in [B,H,R], found " + shape_str(c.in(0).shape));
  HYMO_RETURN_IF_ERROR(c_scalar_pos(c, 1));
  return c.out_is(0, c.in(0).dtype, c.in(0).shape);
}

Status v_gdn_step(const CallCheck& c) {
  HYMO_RETURN_IF_ERROR(c.counts(6, 2));
  HYMO_RETURN_IF_ERROR(c.only_attrs({}));
  HYMO_RETURN_IF_ERROR(c.in_float(0));
  HYMO_RETURN_IF_ERROR(c.in_rank(0, 3));
  for (size_t i = 1; i < 6; ++i) HYMO_RETURN_IF_ERROR(c.in_dtype(i, c.in(0).dtype));
  if (c.in(0).dtype == DType::kBF16) return c.in_err(5, "expected an f32 or f64 state, found bf16");
  const Shape& v = c.in(0).shape;
  HYMO_RETURN_IF_ERROR(c.in_rank(1, 3));
  int64_t s = c.in(1).shape[2];
  HYMO_RETURN_IF_ERROR(c.in_shape(1, {v[0], v[1], s}, "b [B,H,S] with B,H of v"));
  HYMO_RETURN_IF_ERROR(c.in_shape(2, {v[0], v[1], s}, "c [B,H,S] like b"));
  HYMO_RETURN_IF_ERROR(c.in_shape(3, {v[0], v[1]}, "g [B,H]"));
  HYMO_RETURN_IF_ERROR(c.in_shape(4, {v[1], s}, "a [H,S]"));
  HYMO_RETURN_IF_ERROR(c.in_shape(5, {v[0], v[1], s, v[2]}, "state [B,H,S,D]"));
  HYMO_RETURN_IF_ERROR(c.out_is(0, c.in(0).dtype, v));
  return c.out_is(1, c.in(5).dtype, c.in(5).shape);
}

Status v_cache_write(const CallCheck& c) {
  HYMO_RETURN_IF_ERROR(c.counts(3, 1));
  HYMO_RETURN_IF_ERROR(c.only_attrs({}));
  HYMO_RETURN_IF_ERROR(c.in_float(0));
  HYMO_RETURN_IF_ERROR(c.in_rank(0, 3));
  HYMO_RETURN_IF_ERROR(c.in_dtype(1, c.in(0).dtype));
  const Shape& k = c.in(0).shape;
  HYMO_RETURN_IF_ERROR(c.in_shape(1, {k[0], k[2]}, "x [B,R] of cache [B,L,R]"));
  HYMO_RETURN_IF_ERROR(c_scalar_pos(c, 2));
  return c.out_is(0, c.in(0).dtype, k);
}

Status v_latent_attention_step(const CallCheck& c) {
  HYMO_RETURN_IF_ERROR(c.counts(7, 1));
  HYMO_RETURN_IF_ERROR(c.only_attrs({"scale", "eps"}));
  double scale, eps;
  HYMO_RETURN_IF_ERROR(c.get_f64("scale", &scale));
  if (scale <= 0) return c.attr_err("scale", "expected scale > 0, found " + std::to_string(scale));
  HYMO_RETURN_IF_ERROR(c.get_f64("eps", &eps));
  if (eps < 0) return c.attr_err("eps", "expected eps >= 0, found " + std::to_string(eps));
  HYMO_RETURN_IF_ERROR(c.in_float(0));
  HYMO_RETURN_IF_ERROR(c.in_rank(0, 3));
  for (size_t i = 1; i < 6; ++i) HYMO_RETURN_IF_ERROR(c.in_dtype(i, c.in(0).dtype));
  const Shape& qn = c.in(0).shape;
  const int64_t B = qn[0], H = qn[1], dn = qn[2];
  HYMO_RETURN_IF_ERROR(c.in_rank(1, 3));
  const int64_t dr = c.in(1).shape[2];
  HYMO_RETURN_IF_ERROR(c.in_shape(1, {B, H, dr}, "q_rope [B,H,dr] with B,H of q_nope"));
  HYMO_RETURN_IF_ERROR(c.in_rank(2, 3));
  const int64_t L = c.in(2).shape[1], r = c.in(2).shape[2];
  HYMO_RETURN_IF_ERROR(c.in_shape(2, {B, L, r}, "c_kv [B,L,r]"));
  HYMO_RETURN_IF_ERROR(c.in_shape(3, {B, L, dr}, "k_rope [B,L,dr]"));
  HYMO_RETURN_IF_ERROR(c.in_shape(4, {r}, "norm_kv [r]"));
  HYMO_RETURN_IF_ERROR(c.in_rank(5, 2));
  const Shape& w = c.in(5).shape;
  if (w[1] != r || w[0] % H != 0 || w[0] / H <= dn)
    return c.in_err(5, "expected w_kvb [H*(dn+dv), r] = [" + std::to_string(H) + "*(" + std::to_string(dn) + "+dv)," +
                           std::to_string(r) + "] with dv >= 1, found " + shape_str(w));
  HYMO_RETURN_IF_ERROR(c_scalar_pos(c, 6));
  return c.out_is(0, c.in(0).dtype, {B, H, w[0] / H - dn});
}

Status v_eye(const CallCheck& c) {
  HYMO_RETURN_IF_ERROR(c.counts(0, 1));
  HYMO_RETURN_IF_ERROR(c.only_attrs({}));
  const BufferDesc& o = c.out(0);
  if (!dtype_is_float(o.dtype) || o.shape.size() < 2)
    return c.out_err(0, "op eye expects a float result of rank >= 2, found " + type_str(o.dtype, o.shape));
  return ok_status();
}

struct OpEntry {
  OpInfo info;
  Status (*verify)(const CallCheck&);
};

const std::vector<OpEntry>& op_table() {
  static const std::vector<OpEntry> table = {
      {{"constant", false, false}, v_constant},
      {{"eye", false, false}, v_eye},
      {{"embedding", false, false}, v_embedding},
      {{"linear", false, false}, v_linear},
      {{"matmul", false, false}, v_matmul},
      {{"grouped_linear", false, false}, v_grouped_linear},
      {{"neg", true, false}, v_unary},
      {{"exp", true, false}, v_unary},
      {{"log", true, false}, v_unary},
      {{"sqrt", true, false}, v_unary},
      {{"rsqrt", true, false}, v_unary},
      {{"square", true, false}, v_unary},
      {{"abs", true, false}, v_unary},
      {{"sigmoid", true, false}, v_unary},
      {{"silu", true, false}, v_unary},
      {{"softplus", true, false}, v_unary},
      {{"sin", true, false}, v_unary},
      {{"cos", true, false}, v_unary},
      {{"isfinite", true, false}, v_unary},
      {{"add", true, false}, v_binary},
      {{"sub", true, false}, v_binary},
      {{"mul", true, false}, v_binary},
      {{"div", true, false}, v_binary},
      {{"max", true, false}, v_binary},
      {{"min", true, false}, v_binary},
      {{"greater", true, false}, v_binary},
      {{"select", true, false}, v_select},
      {{"cast", false, false}, v_cast},
      {{"reduce_sum", false, false}, v_reduce},
      {{"reduce_mean", false, false}, v_reduce},
      {{"reduce_max", false, false}, v_reduce},
      {{"reshape", true, true}, v_reshape},
      {{"transpose", false, true}, v_transpose},
      {{"slice", false, true}, v_slice},
      {{"pad", false, true}, v_pad},
      {{"concat", false, true}, v_concat},
      {{"broadcast_in_dim", false, true}, v_broadcast_in_dim},
      {{"rms_norm", false, false}, v_rms_norm},
      {{"softmax", true, false}, v_softmax},
      {{"rope", false, false}, v_rope},
      {{"causal_attention", false, false}, v_causal_attention},
      {{"gdn_recurrence", false, false}, v_gdn_recurrence},
      {{"moe_route", false, false}, v_moe_route},
      {{"moe_dispatch", false, false}, v_moe_dispatch},
      {{"moe_combine", false, false}, v_moe_combine},
      {{"moe_count", false, false}, v_moe_count},
      {{"cross_entropy", false, false}, v_cross_entropy},
      {{"rope_at", false, false}, v_rope_at},
      {{"gdn_step", false, false}, v_gdn_step},
      {{"cache_write", false, false}, v_cache_write},
      {{"latent_attention_step", false, false}, v_latent_attention_step},
      {{"embedding_grad", false, false}, v_embedding_grad},
      {{"rms_norm_grad", false, false}, v_rms_norm_grad},
      {{"softmax_grad", true, false}, v_softmax_grad},
      {{"causal_attention_grad", false, false}, v_causal_attention_grad},
      {{"gdn_recurrence_grad", false, false}, v_gdn_recurrence_grad},
      {{"moe_route_grad", false, false}, v_moe_route_grad},
      {{"moe_combine_grad", false, false}, v_moe_combine_grad},
      {{"cross_entropy_grad", false, false}, v_cross_entropy_grad},
      {{"fused_elementwise", true, false}, v_fused_elementwise},
  };
  return table;
}

const OpEntry* find_entry(const std::string& name) {
  for (const OpEntry& e : op_table())
    if (name == e.info.name) return &e;
  return nullptr;
}

// Byte range of a buffer in its storage, to detect overlapping operands and
// results. Non-arena buffers own their storage: they overlap only themselves.
struct Range {
  bool arena;
  int64_t id, begin, end;
};
Range range_of(const BufferDesc& b) {
  if (b.storage == StorageKind::kArena) return {true, b.id, b.offset, b.offset + b.bytes()};
  return {false, b.id, 0, b.bytes()};
}
bool overlaps(const Range& a, const Range& b) {
  if (a.arena != b.arena) return false;
  if (!a.arena) return a.id == b.id;
  return a.begin < b.end && b.begin < a.end;
}
bool identical(const Range& a, const Range& b) {
  return a.arena == b.arena && (a.arena ? (a.begin == b.begin && a.end == b.end) : a.id == b.id);
}

std::string buf_label(const BufferDesc& b) {
  return "buffer " + std::to_string(b.id) + " '" + b.name + "'";
}

Status validate_buffer(const Plan& plan, size_t i) {
  const BufferDesc& b = plan.buffers[i];
  std::string p = "buffers[" + std::to_string(i) + "]";
  if (b.id != int64_t(i))
    return plan_error(p + ".id", "expected " + std::to_string(i) + " (ids are the buffers' positions), found " +
                                     std::to_string(b.id));
  if (b.name.empty()) return plan_error(p + ".name", "expected a non-empty name");
  int64_t n = 1;
  for (size_t d = 0; d < b.shape.size(); ++d) {
    if (b.shape[d] < 1)
      return plan_error(p + ".shape[" + std::to_string(d) + "]",
                        "expected a positive dim, found " + std::to_string(b.shape[d]));
    if (b.shape[d] > kMaxBufferElements || n > kMaxBufferElements / b.shape[d])
      return plan_error(p + ".shape", "element count of " + shape_str(b.shape) + " exceeds the limit 2^40");
    n *= b.shape[d];
  }
  if (b.storage == StorageKind::kArena) {
    if (b.offset < 0) return plan_error(p + ".offset", "expected an offset >= 0, found " + std::to_string(b.offset));
    if (b.offset % kArenaAlignment != 0)
      return plan_error(p + ".offset", "expected a multiple of " + std::to_string(kArenaAlignment) +
                                           " (arena alignment), found " + std::to_string(b.offset));
    if (b.offset > plan.arena_bytes || b.bytes() > plan.arena_bytes - b.offset)
      return plan_error(p + ".offset", "buffer of " + std::to_string(b.bytes()) + " bytes at offset " +
                                           std::to_string(b.offset) + " ends at " +
                                           std::to_string(b.offset + b.bytes()) + ", past arena_bytes " +
                                           std::to_string(plan.arena_bytes));
  }
  auto check_values = [&](const std::vector<double>& v, const std::string& path, bool allow_splat) -> Status {
    if (int64_t(v.size()) != n && !(allow_splat && v.size() == 1))
      return plan_error(path, "expected " + std::to_string(n) + " values for " + type_str(b.dtype, b.shape) +
                                  (allow_splat ? " (or 1, a splat)" : "") + ", found " + std::to_string(v.size()));
    if (b.dtype == DType::kI32)
      for (size_t k = 0; k < v.size(); ++k)
        if (v[k] != std::floor(v[k]) || std::fabs(v[k]) > 2147483647.0)
          return plan_error(path + "[" + std::to_string(k) + "]",
                            "expected an i32 value, found " + std::to_string(v[k]));
    return ok_status();
  };
  if (b.storage == StorageKind::kConstant) HYMO_RETURN_IF_ERROR(check_values(b.data, p + ".data", true));
  if (b.init.kind == BufferInit::Kind::kData) HYMO_RETURN_IF_ERROR(check_values(b.init.data, p + ".init.data", false));
  if (b.init.kind == BufferInit::Kind::kFill)
    HYMO_RETURN_IF_ERROR(check_values({b.init.fill}, p + ".init.fill", true));
  if (b.init.kind == BufferInit::Kind::kUniform) {
    if (!(b.init.low <= b.init.high) || !std::isfinite(b.init.low) || !std::isfinite(b.init.high))
      return plan_error(p + ".init.uniform", "expected finite low <= high");
    if (!dtype_is_float(b.dtype))
      return plan_error(p + ".init.uniform", "expected a float buffer, found " + type_str(b.dtype, b.shape));
  }
  if (b.init.kind == BufferInit::Kind::kNormal) {
    if (!std::isfinite(b.init.mean) || !std::isfinite(b.init.stddev) || !(b.init.stddev >= 0))
      return plan_error(p + ".init.normal", "expected a finite mean and a finite std >= 0, found [" +
                                                std::to_string(b.init.mean) + ", " + std::to_string(b.init.stddev) +
                                                "]");
    if (!dtype_is_float(b.dtype))
      return plan_error(p + ".init.normal", "expected a float buffer, found " + type_str(b.dtype, b.shape));
  }
  return ok_status();
}

Status validate_call(const Plan& plan, const Call& call, const std::string& path) {
  const OpEntry* op = find_entry(call.op);
  if (!op)
    return plan_error(path + ".op", "unknown op \"" + call.op +
                                        "\" (expected a docs/dialect.md op name without the hymo. prefix)");
  const int64_t nb = int64_t(plan.buffers.size());
  for (size_t i = 0; i < call.operands.size(); ++i)
    if (call.operands[i] < 0 || call.operands[i] >= nb)
      return plan_error(path + ".operands[" + std::to_string(i) + "]",
                        "buffer " + std::to_string(call.operands[i]) + " out of range (have " + std::to_string(nb) + ")");
  for (size_t i = 0; i < call.results.size(); ++i) {
    std::string rp = path + ".results[" + std::to_string(i) + "]";
    if (call.results[i] < 0 || call.results[i] >= nb)
      return plan_error(rp, "buffer " + std::to_string(call.results[i]) + " out of range (have " + std::to_string(nb) + ")");
    const BufferDesc& r = plan.buffers[size_t(call.results[i])];
    if (r.storage == StorageKind::kConstant || r.storage == StorageKind::kInput)
      return plan_error(rp, buf_label(r) + " is " + storage_name(r.storage) +
                                " storage, read-only (expected param, state or arena)");
  }
  CallCheck check(plan, call, path);
  HYMO_RETURN_IF_ERROR(op->verify(check));
  // Aliasing: results never overlap each other; they overlap an operand only
  // as the very same memory, and only for elementwise ops.
  for (size_t i = 0; i < call.results.size(); ++i) {
    Range ri = range_of(plan.buffers[size_t(call.results[i])]);
    for (size_t j = 0; j < i; ++j)
      if (overlaps(ri, range_of(plan.buffers[size_t(call.results[j])])))
        return plan_error(path + ".results[" + std::to_string(i) + "]",
                          buf_label(plan.buffers[size_t(call.results[i])]) + " overlaps results[" + std::to_string(j) + "]");
    for (size_t j = 0; j < call.operands.size(); ++j) {
      Range oj = range_of(plan.buffers[size_t(call.operands[j])]);
      if (!overlaps(ri, oj)) continue;
      if (op->info.inplace_ok && identical(ri, oj)) continue;
      return plan_error(path + ".results[" + std::to_string(i) + "]",
                        buf_label(plan.buffers[size_t(call.results[i])]) + " overlaps operands[" +
                            std::to_string(j) + "] " + buf_label(plan.buffers[size_t(call.operands[j])]) +
                            (op->info.inplace_ok ? " partially (expected disjoint or identical memory)"
                                                 : " (op " + call.op + " cannot run in place)"));
    }
  }
  return ok_status();
}

}  // namespace

const OpInfo* find_op(const std::string& name) {
  const OpEntry* e = find_entry(name);
  return e ? &e->info : nullptr;
}

std::vector<std::string> all_op_names() {
  std::vector<std::string> names;
  for (const OpEntry& e : op_table()) names.push_back(e.info.name);
  return names;
}

Status verify_call(const Plan& plan, const Call& call, const std::string& path) {
  return validate_call(plan, call, path);
}

Status validate_plan(const Plan& plan) {
  if (plan.format != kPlanFormatName)
    return plan_error("format", std::string("expected \"") + kPlanFormatName + "\", found \"" + plan.format + "\"");
  if (plan.version != kPlanFormatVersion)
    return plan_error("version", "expected " + std::to_string(kPlanFormatVersion) + ", found " +
                                     std::to_string(plan.version));
  if (plan.arena_bytes < 0)
    return plan_error("arena_bytes", "expected >= 0, found " + std::to_string(plan.arena_bytes));
  std::map<std::string, size_t> names;
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    HYMO_RETURN_IF_ERROR(validate_buffer(plan, i));
    auto ins = names.emplace(plan.buffers[i].name, i);
    if (!ins.second)
      return plan_error("buffers[" + std::to_string(i) + "].name",
                        "duplicate name '" + plan.buffers[i].name + "' (also buffers[" +
                            std::to_string(ins.first->second) + "])");
  }
  const int64_t nb = int64_t(plan.buffers.size());
  std::map<std::string, size_t> pnames;
  std::map<int64_t, size_t> pbufs;
  for (size_t i = 0; i < plan.params.size(); ++i) {
    const ParamEntry& e = plan.params[i];
    std::string p = "params[" + std::to_string(i) + "]";
    if (e.name.empty()) return plan_error(p + ".name", "expected a non-empty name");
    auto ins = pnames.emplace(e.name, i);
    if (!ins.second)
      return plan_error(p + ".name", "duplicate parameter name '" + e.name + "' (also params[" +
                                         std::to_string(ins.first->second) + "])");
    if (e.buffer < 0 || e.buffer >= nb)
      return plan_error(p + ".buffer", "buffer " + std::to_string(e.buffer) + " out of range (have " +
                                           std::to_string(nb) + ")");
    const BufferDesc& b = plan.buffers[size_t(e.buffer)];
    if (b.storage != StorageKind::kParam && b.storage != StorageKind::kState)
      return plan_error(p + ".buffer", buf_label(b) + " has storage " + storage_name(b.storage) +
                                           ", expected param or state");
    if (b.storage == StorageKind::kState && e.optimizer != Optimizer::kNone)
      return plan_error(p + ".optimizer", std::string("state ") + buf_label(b) + " takes optimizer none, found " +
                                              optimizer_name(e.optimizer));
    if (e.optimizer == Optimizer::kNorMuon && b.shape.size() != 2)
      return plan_error(p + ".optimizer", "normuon needs a 2-D weight, " + buf_label(b) + " is " +
                                              type_str(b.dtype, b.shape));
    auto bins = pbufs.emplace(e.buffer, i);
    if (!bins.second)
      return plan_error(p + ".buffer", buf_label(b) + " is already params[" + std::to_string(bins.first->second) +
                                           "]");
  }
  for (size_t i = 0; i < plan.buffers.size(); ++i)
    if (plan.buffers[i].storage == StorageKind::kParam && !pbufs.count(int64_t(i)))
      return plan_error("buffers[" + std::to_string(i) + "].storage",
                        "param " + buf_label(plan.buffers[i]) + " has no entry in params");
  std::set<std::string> fnames;
  for (const Function& f : plan.functions) {
    std::string fp = "functions." + f.name;
    if (f.name.empty()) return plan_error("functions", "expected non-empty function names");
    if (!fnames.insert(f.name).second) return plan_error(fp, "duplicate function name");
    for (size_t i = 0; i < f.inputs.size(); ++i) {
      std::string ip = fp + ".inputs[" + std::to_string(i) + "]";
      if (f.inputs[i] < 0 || f.inputs[i] >= nb)
        return plan_error(ip, "buffer " + std::to_string(f.inputs[i]) + " out of range (have " + std::to_string(nb) + ")");
      const BufferDesc& b = plan.buffers[size_t(f.inputs[i])];
      if (b.storage != StorageKind::kInput)
        return plan_error(ip, buf_label(b) + " has storage " + storage_name(b.storage) + ", expected input");
    }
    for (size_t i = 0; i < f.outputs.size(); ++i)
      if (f.outputs[i] < 0 || f.outputs[i] >= nb)
        return plan_error(fp + ".outputs[" + std::to_string(i) + "]",
                          "buffer " + std::to_string(f.outputs[i]) + " out of range (have " + std::to_string(nb) + ")");
    for (size_t i = 0; i < f.calls.size(); ++i)
      HYMO_RETURN_IF_ERROR(validate_call(plan, f.calls[i], fp + ".calls[" + std::to_string(i) + "]"));
  }
  return ok_status();
}

}  // namespace hymo::rt
