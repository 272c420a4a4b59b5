// Helpers for the runtime tests: run one call of a hymo op on the CPU
// executor through a plan built in memory.
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <cstdlib>
#include <string>
#include <vector>

#include "hymo/rt/api.h"

namespace hymo_test {

using hymo::rt::Attr;
using hymo::rt::DType;
using Shape = std::vector<int64_t>;

struct Tensor {
  DType dtype = DType::kF32;
  Shape shape;
  std::vector<double> v;
};

inline int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

inline Attr attr_bool(bool b) {
  Attr a;
  a.kind = Attr::Kind::kBool;
  a.b = b;
  return a;
}
inline Attr attr_int(int64_t i) {
  Attr a;
  a.kind = Attr::Kind::kInt;
  a.i = i;
  return a;
}
inline Attr attr_f64(double f) {
  Attr a;
  a.kind = Attr::Kind::kFloat;
  a.f = f;
  return a;
}
inline Attr attr_ints(std::vector<int64_t> v) {
  Attr a;
  a.kind = Attr::Kind::kIntList;
  a.ints = std::move(v);
  return a;
}
inline Attr attr_floats(std::vector<double> v) {
  Attr a;
  a.kind = Attr::Kind::kFloatList;
  a.floats = std::move(v);
  return a;
}

// Rounds a value to what a buffer of `dt` stores.
inline double round_to(DType dt, double x) {
  if (dt == DType::kF32) return double(float(x));
  return x;
}

// Random values in [lo, hi), never zero, rounded to `dt`.
inline Tensor random_tensor(std::mt19937_64& rng, DType dt, Shape shape, double lo = -1.0, double hi = 1.0) {
  std::uniform_real_distribution<double> u(lo, hi);
  Tensor t{dt, shape, {}};
  t.v.resize(size_t(numel(shape)));
  for (double& x : t.v) {
    do x = round_to(dt, u(rng));
    while (x == 0.0);
  }
  return t;
}

inline Tensor int_tensor(Shape shape, std::vector<double> v) { return Tensor{DType::kI32, std::move(shape), std::move(v)}; }

// Sets HYMO_NUM_THREADS (the executors' default thread count) while alive.
class ScopedThreads {
 public:
  explicit ScopedThreads(int n) {
    if (const char* v = std::getenv("HYMO_NUM_THREADS")) saved_ = v, had_ = true;
    setenv("HYMO_NUM_THREADS", std::to_string(n).c_str(), 1);
  }
  ~ScopedThreads() {
    if (had_)
      setenv("HYMO_NUM_THREADS", saved_.c_str(), 1);
    else
      unsetenv("HYMO_NUM_THREADS");
  }
  ScopedThreads(const ScopedThreads&) = delete;
  ScopedThreads& operator=(const ScopedThreads&) = delete;

 private:
  std::string saved_;
  bool had_ = false;
};

// Builds a plan with one function "f" holding one call: operands are input
// buffers in0.., results state buffers out0..; runs it and returns the
// results. On a failure (load or run) returns the error in *error.
inline std::vector<Tensor> run_op(const std::string& op, const std::vector<Tensor>& ins,
                                  const std::vector<std::pair<DType, Shape>>& outs,
                                  const std::map<std::string, Attr>& attrs = {}, std::string* error = nullptr,
                                  const std::vector<int64_t>& result_ids = {}) {
  hymo::rt::Plan plan;
  hymo::rt::Function fn;
  fn.name = "f";
  hymo::rt::Call call;
  call.op = op;
  call.attrs = attrs;
  for (size_t i = 0; i < ins.size(); ++i) {
    hymo::rt::BufferDesc b;
    b.id = int64_t(plan.buffers.size());
    b.name = "in" + std::to_string(i);
    b.dtype = ins[i].dtype;
    b.shape = ins[i].shape;
    b.storage = hymo::rt::StorageKind::kState;  // writable: lets a test run in place
    call.operands.push_back(b.id);
    plan.buffers.push_back(b);
  }
  for (size_t i = 0; i < outs.size(); ++i) {
    if (i < result_ids.size() && result_ids[i] >= 0) {  // a result aliasing an operand
      call.results.push_back(result_ids[i]);
      continue;
    }
    hymo::rt::BufferDesc b;
    b.id = int64_t(plan.buffers.size());
    b.name = "out" + std::to_string(i);
    b.dtype = outs[i].first;
    b.shape = outs[i].second;
    b.storage = hymo::rt::StorageKind::kState;
    call.results.push_back(b.id);
    plan.buffers.push_back(b);
  }
  fn.calls.push_back(call);
  plan.functions.push_back(fn);
  std::vector<Tensor> res;
  try {
    hymo::rt::CpuExecutor ex(plan);
    for (size_t i = 0; i < ins.size(); ++i) {
      // Poison-free: every operand is set explicitly; results start as NaN.
      ex.set_values("in" + std::to_string(i), ins[i].v);
    }
    for (size_t i = 0; i < outs.size(); ++i) {
      const auto& b = plan.buffers[size_t(call.results[i])];
      if (b.name.rfind("out", 0) == 0 && hymo::rt::dtype_is_float(b.dtype))
        ex.set_values(b.name, std::vector<double>(size_t(b.numel()), std::nan("")));
    }
    ex.run("f");
    for (size_t i = 0; i < outs.size(); ++i) {
      const auto& b = plan.buffers[size_t(call.results[i])];
      res.push_back(Tensor{b.dtype, b.shape, ex.values(b.name)});
    }
  } catch (const hymo::rt::Error& e) {
    if (error) *error = e.what();
    else throw;
  }
  return res;
}

}  // namespace hymo_test
