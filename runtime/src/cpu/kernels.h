// The CPU kernel interface: a registry from op name (docs/dialect.md, no
// "hymo." prefix) to a function. Calls reach kernels already validated by the
// loader (counts, dtypes, shapes, attrs); kernels check only what depends on
// data (index ranges). bf16 operands arrive as f32 (the executor converts).
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "hymo/rt/plan_format.h"
#include "hymo/rt/status.h"
#include "thread_pool.h"

namespace hymo::rt {

struct TensorRef {
  void* data = nullptr;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
  size_t rank() const { return shape.size(); }
  int64_t dim(size_t i) const { return shape[i]; }
  // Product of all dims but the last (1 for rank <= 1).
  int64_t rows() const {
    int64_t n = 1;
    for (size_t i = 0; i + 1 < shape.size(); ++i) n *= shape[i];
    return n;
  }
  int64_t bytes() const { return numel() * dtype_size(dtype); }
  template <class T>
  T* as() const { return static_cast<T*>(data); }
};

struct KernelArgs {
  const Call& call;
  const std::string& path;  // "functions.f.calls[3]" for run-time errors
  std::vector<TensorRef> in;
  std::vector<TensorRef> out;
  ThreadPool& pool;

  Status error(const std::string& msg) const {
    return error_status(path + " (" + call.op + "): " + msg);
  }
  bool attr_bool(const char* name) const {
    auto it = call.attrs.find(name);
    return it != call.attrs.end() && it->second.kind == Attr::Kind::kBool && it->second.b;
  }
  int64_t attr_int(const char* name) const { return call.attrs.at(name).i; }
  double attr_f64(const char* name) const { return call.attrs.at(name).as_double(); }
  std::vector<int64_t> attr_ints(const char* name) const { return call.attrs.at(name).ints; }
  std::vector<double> attr_doubles(const char* name) const {
    const Attr& a = call.attrs.at(name);
    if (a.is_list()) return a.as_doubles();
    return {a.as_double()};
  }
};

using KernelFn = Status (*)(const KernelArgs&);

class KernelRegistry {
 public:
  // All kernels of this runtime.
  static const KernelRegistry& cpu();
  void add(const std::string& op, KernelFn fn) { fns_[op] = fn; }
  KernelFn find(const std::string& op) const {
    auto it = fns_.find(op);
    return it == fns_.end() ? nullptr : it->second;
  }
  std::vector<std::string> names() const {
    std::vector<std::string> v;
    for (const auto& kv : fns_) v.push_back(kv.first);
    return v;
  }

 private:
  std::map<std::string, KernelFn> fns_;
};

void register_dense_kernels(KernelRegistry& r);
void register_elementwise_kernels(KernelRegistry& r);
void register_reduce_kernels(KernelRegistry& r);
void register_shape_kernels(KernelRegistry& r);
void register_model_kernels(KernelRegistry& r);
void register_moe_kernels(KernelRegistry& r);
void register_grad_kernels(KernelRegistry& r);
void register_fused_kernels(KernelRegistry& r);
// Called from register_model_kernels (kernels_model.cc).
void register_decode_kernels(KernelRegistry& r);

// Calls f(T{}) with T = float or double after the dtype (f32 / f64 only).
template <class F>
Status dispatch_float(DType dt, F&& f) {
  if (dt == DType::kF32) return f(float{});
  if (dt == DType::kF64) return f(double{});
  return error_status(std::string("internal: kernel dispatched on dtype ") + dtype_name(dt));
}

// Accumulation type: "reduced in FP32 at least" -> double for both.
using Acc = double;

// Elementwise work below this many items runs on one thread.
inline constexpr int64_t kParallelGrain = 1 << 14;

// Every i32 of `ids` (token ids, targets, expert indices) lies in [lo, hi),
// else the error names the first that does not:
// "<what> <value> at <where> <i> out of range [lo, hi)".
inline Status check_ids_in_range(const KernelArgs& a, const TensorRef& ids, int64_t lo, int64_t hi,
                                 const char* what, const char* where = "index") {
  const int32_t* id = ids.as<int32_t>();
  for (int64_t i = 0; i < ids.numel(); ++i)
    if (id[i] < lo || id[i] >= hi)
      return a.error(std::string(what) + " " + std::to_string(id[i]) + " at " + where + " " + std::to_string(i) +
                     " out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + ")");
  return ok_status();
}

}  // namespace hymo::rt
