// The CPU executor: owns buffer storage (params, state, inputs, constants,
// the arena), runs a function's calls in order through the kernel registry.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>

#include "cpu/bf16.h"
#include "cpu/kernels.h"
#include "hymo/rt/api.h"
#include "plan_internal.h"

namespace hymo::rt {

const KernelRegistry& KernelRegistry::cpu() {
  static const KernelRegistry reg = [] {
    KernelRegistry r;
    register_dense_kernels(r);
    register_elementwise_kernels(r);
    register_reduce_kernels(r);
    register_shape_kernels(r);
    register_model_kernels(r);
    register_moe_kernels(r);
    register_grad_kernels(r);
    register_fused_kernels(r);
    return r;
  }();
  return reg;
}

namespace {

// Zeroed storage aligned to kArenaAlignment. calloc leaves large blocks to
// the kernel's zero pages, so an arena is only touched where it is used.
struct AlignedFree {
  void operator()(uint8_t* p) const {
    if (p) std::free(reinterpret_cast<void**>(p)[-1]);
  }
};
using AlignedBytes = std::unique_ptr<uint8_t, AlignedFree>;

AlignedBytes aligned_zeroed(int64_t bytes) {
  const size_t a = size_t(kArenaAlignment);
  const size_t n = size_t(std::max<int64_t>(bytes, 1)) + a + sizeof(void*);
  void* raw = std::calloc(n, 1);
  if (!raw) throw Error("out of memory allocating " + std::to_string(bytes) + " bytes");
  uintptr_t p = (reinterpret_cast<uintptr_t>(raw) + sizeof(void*) + a - 1) / a * a;
  reinterpret_cast<void**>(p)[-1] = raw;
  return AlignedBytes(reinterpret_cast<uint8_t*>(p));
}

void store_values(DType dt, void* dst, const std::vector<double>& v, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    double x = v.size() == 1 ? v[0] : v[size_t(i)];
    switch (dt) {
      case DType::kF32: static_cast<float*>(dst)[i] = float(x); break;
      case DType::kF64: static_cast<double*>(dst)[i] = x; break;
      case DType::kBF16: static_cast<uint16_t*>(dst)[i] = f32_to_bf16(float(x)); break;
      case DType::kI32: static_cast<int32_t*>(dst)[i] = int32_t(x); break;
    }
  }
}

std::vector<double> load_values(DType dt, const void* src, int64_t n) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    switch (dt) {
      case DType::kF32: v[size_t(i)] = double(static_cast<const float*>(src)[i]); break;
      case DType::kF64: v[size_t(i)] = static_cast<const double*>(src)[i]; break;
      case DType::kBF16: v[size_t(i)] = double(bf16_to_f32(static_cast<const uint16_t*>(src)[i])); break;
      case DType::kI32: v[size_t(i)] = double(static_cast<const int32_t*>(src)[i]); break;
    }
  }
  return v;
}

// U(low, high) from the splitmix64 stream of `seed` (docs/plan-format.md).
std::vector<double> uniform_values(uint64_t seed, double low, double high, int64_t n) {
  std::vector<double> v(static_cast<size_t>(n));
  uint64_t state = seed;
  for (int64_t i = 0; i < n; ++i) {
    state += 0x9E3779B97F4A7C15ull;
    uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    double u = double(z >> 11) * (1.0 / 9007199254740992.0);
    v[size_t(i)] = low + (high - low) * u;
  }
  return v;
}

// N(mean, stddev^2) by Box-Muller on the same splitmix64 stream
// (docs/plan-format.md): outputs 2j and 2j+1 give u1 = (z_2j>>11 + 1) 2^-53
// in (0, 1] and u2 = (z_2j+1>>11) 2^-53; r = sqrt(-2 ln u1), th = 2 pi u2;
// element 2j is mean + std r cos(th), element 2j+1 mean + std r sin(th).
std::vector<double> normal_values(uint64_t seed, double mean, double stddev, int64_t n) {
  std::vector<double> v(static_cast<size_t>(n));
  uint64_t state = seed;
  auto next = [&state] {
    state += 0x9E3779B97F4A7C15ull;
    uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  const double two_pi = 6.283185307179586476925286766559;
  for (int64_t i = 0; i < n; i += 2) {
    const double u1 = double((next() >> 11) + 1) * (1.0 / 9007199254740992.0);
    const double u2 = double(next() >> 11) * (1.0 / 9007199254740992.0);
    const double r = std::sqrt(-2.0 * std::log(u1)), th = two_pi * u2;
    v[size_t(i)] = mean + stddev * (r * std::cos(th));
    if (i + 1 < n) v[size_t(i + 1)] = mean + stddev * (r * std::sin(th));
  }
  return v;
}

// Ops whose kernels handle every dtype themselves (no bf16 -> f32 staging).
bool native_all_dtypes(const std::string& op) {
  const OpInfo* info = find_op(op);
  if (info && info->bytes_only) return true;
  return op == "constant" || op == "embedding" || op == "select" || op == "cast" || op == "moe_dispatch";
}

}  // namespace

struct CpuExecutor::Impl {
  Plan plan;
  std::unique_ptr<ThreadPool> pool;
  AlignedBytes arena;
  std::vector<AlignedBytes> owned;  // per buffer id; empty for arena buffers
  std::vector<uint8_t*> ptr;
  std::vector<bool> input_set;

  Status init() {
    const int64_t nb = int64_t(plan.buffers.size());
    const KernelRegistry& reg = KernelRegistry::cpu();
    for (const Function& f : plan.functions)
      for (size_t i = 0; i < f.calls.size(); ++i)
        if (!reg.find(f.calls[i].op))
          return error_status("cpu executor: functions." + f.name + ".calls[" + std::to_string(i) + "]: op " +
                              f.calls[i].op + " has no cpu kernel");
    arena = aligned_zeroed(plan.arena_bytes);
    owned.resize(size_t(nb));
    ptr.assign(size_t(nb), nullptr);
    input_set.assign(size_t(nb), false);
    for (const BufferDesc& b : plan.buffers) {
      if (b.storage == StorageKind::kArena) {
        ptr[size_t(b.id)] = arena.get() + b.offset;
        continue;
      }
      owned[size_t(b.id)] = aligned_zeroed(b.bytes());
      uint8_t* p = owned[size_t(b.id)].get();
      ptr[size_t(b.id)] = p;
      if (b.storage == StorageKind::kConstant) store_values(b.dtype, p, b.data, b.numel());
      switch (b.init.kind) {
        case BufferInit::Kind::kZeros: break;
        case BufferInit::Kind::kFill: store_values(b.dtype, p, {b.init.fill}, b.numel()); break;
        case BufferInit::Kind::kData: store_values(b.dtype, p, b.init.data, b.numel()); break;
        case BufferInit::Kind::kUniform:
          store_values(b.dtype, p, uniform_values(b.init.seed, b.init.low, b.init.high, b.numel()), b.numel());
          break;
        case BufferInit::Kind::kNormal:
          store_values(b.dtype, p, normal_values(b.init.seed, b.init.mean, b.init.stddev, b.numel()), b.numel());
          break;
      }
    }
    return ok_status();
  }

  TensorRef ref(int64_t id) const {
    const BufferDesc& b = plan.buffers[size_t(id)];
    TensorRef t;
    t.data = ptr[size_t(id)];
    t.dtype = b.dtype;
    t.shape = b.shape;
    return t;
  }

  Status run_call(const Call& call, const std::string& path, KernelFn fn) {
    for (int64_t id : call.operands) {
      const BufferDesc& b = plan.buffers[size_t(id)];
      if (b.storage == StorageKind::kInput && !input_set[size_t(id)])
        return error_status(path + " (" + call.op + "): input buffer " + std::to_string(id) + " '" + b.name +
                            "' was not set before the run");
    }
    KernelArgs args{call, path, {}, {}, *pool};
    bool staged = false;
    if (!native_all_dtypes(call.op)) {
      for (int64_t id : call.operands) staged = staged || plan.buffers[size_t(id)].dtype == DType::kBF16;
      for (int64_t id : call.results) staged = staged || plan.buffers[size_t(id)].dtype == DType::kBF16;
    }
    if (!staged) {
      for (int64_t id : call.operands) args.in.push_back(ref(id));
      for (int64_t id : call.results) args.out.push_back(ref(id));
      return fn(args);
    }
    // bf16: stage through f32 copies.
    std::vector<std::vector<float>> scratch;
    scratch.reserve(call.operands.size() + call.results.size());
    auto stage = [&](int64_t id, bool copy_in) {
      TensorRef t = ref(id);
      if (t.dtype != DType::kBF16) return t;
      scratch.emplace_back(size_t(t.numel()));
      float* f = scratch.back().data();
      if (copy_in) {
        const uint16_t* h = t.as<uint16_t>();
        for (int64_t i = 0; i < t.numel(); ++i) f[i] = bf16_to_f32(h[i]);
      }
      t.data = f;
      t.dtype = DType::kF32;
      return t;
    };
    for (int64_t id : call.operands) args.in.push_back(stage(id, true));
    for (int64_t id : call.results) args.out.push_back(stage(id, false));
    HYMO_RETURN_IF_ERROR(fn(args));
    for (size_t r = 0; r < call.results.size(); ++r) {
      TensorRef t = ref(call.results[r]);
      if (t.dtype != DType::kBF16) continue;
      const float* f = args.out[r].as<float>();
      uint16_t* h = t.as<uint16_t>();
      for (int64_t i = 0; i < t.numel(); ++i) h[i] = f32_to_bf16(f[i]);
    }
    return ok_status();
  }

  Status run(const std::string& name) {
    const Function* f = plan.find_function(name);
    if (!f) {
      std::string have;
      for (const Function& g : plan.functions) have += (have.empty() ? "" : ", ") + g.name;
      return error_status("no function '" + name + "' in the plan (have: " + (have.empty() ? "none" : have) + ")");
    }
    const KernelRegistry& reg = KernelRegistry::cpu();
    for (int64_t id : f->inputs)
      if (!input_set[size_t(id)])
        return error_status("functions." + name + ": input buffer " + std::to_string(id) + " '" +
                            plan.buffers[size_t(id)].name + "' was not set before the run");
    for (size_t i = 0; i < f->calls.size(); ++i) {
      const Call& c = f->calls[i];
      const double t0 = profile ? profile_now() : 0.0;
      HYMO_RETURN_IF_ERROR(run_call(c, "functions." + name + ".calls[" + std::to_string(i) + "]", reg.find(c.op)));
      if (profile) {
        const double dt = profile_now() - t0;
        ProfileEntry& e = profile_by_op[c.op];
        e.calls += 1;
        e.seconds += dt;
        if (profile_calls) {
          ProfileEntry& pc = profile_by_call[{name, int64_t(i)}];
          pc.calls += 1;
          pc.seconds += dt;
        }
      }
    }
    return ok_status();
  }

  // HYMO_PROFILE=1: time per op, printed to stderr when the executor ends;
  // HYMO_PROFILE=2 adds per function and op totals and the slowest calls
  // (function, index, op, shapes; HYMO_PROFILE_TOP of them, default 40).
  struct ProfileEntry {
    int64_t calls = 0;
    double seconds = 0;
  };
  int profile_level = [] {
    const char* v = std::getenv("HYMO_PROFILE");
    if (!v || !*v || std::string(v) == "0") return 0;
    return std::string(v) == "2" ? 2 : 1;
  }();
  bool profile = profile_level >= 1;
  bool profile_calls = profile_level >= 2;
  // HYMO_PROFILE_CLOCK=cpu: the process's CPU time (all threads) instead of
  // wall time; steadier than wall time on a machine shared with other work.
  bool profile_cpu_clock = [] {
    const char* v = std::getenv("HYMO_PROFILE_CLOCK");
    return v && std::string(v) == "cpu";
  }();
  double profile_now() const {
    if (profile_cpu_clock) {
      timespec ts;
      clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
      return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
    }
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  }
  std::map<std::string, ProfileEntry> profile_by_op;
  std::map<std::pair<std::string, int64_t>, ProfileEntry> profile_by_call;

  std::string call_signature(const Call& c) const {
    std::string s;
    auto add = [&](const std::vector<int64_t>& ids) {
      for (size_t k = 0; k < ids.size() && k < 4; ++k) {
        const BufferDesc& b = plan.buffers[size_t(ids[k])];
        s += (k ? "," : "") + type_str(b.dtype, b.shape);
      }
      if (ids.size() > 4) s += ",+" + std::to_string(ids.size() - 4);
    };
    add(c.operands);
    s += " -> ";
    add(c.results);
    return s;
  }

  void print_profile() const {
    if (!profile || profile_by_op.empty()) return;
    std::vector<std::pair<std::string, ProfileEntry>> rows(profile_by_op.begin(), profile_by_op.end());
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.seconds > b.second.seconds; });
    double total = 0;
    for (const auto& r : rows) total += r.second.seconds;
    std::fprintf(stderr, "hymo profile (CPU executor): %.3f s in %zu ops\n", total, rows.size());
    for (const auto& r : rows)
      std::fprintf(stderr, "  %-24s %8lld calls %10.3f ms %5.1f%%\n", r.first.c_str(), (long long)r.second.calls,
                   r.second.seconds * 1e3, total > 0 ? 100.0 * r.second.seconds / total : 0.0);
    if (!profile_calls) return;
    std::vector<std::pair<std::pair<std::string, int64_t>, ProfileEntry>> calls(profile_by_call.begin(),
                                                                               profile_by_call.end());
    std::sort(calls.begin(), calls.end(), [](const auto& a, const auto& b) { return a.second.seconds > b.second.seconds; });
    std::map<std::pair<std::string, std::string>, ProfileEntry> by_function_op;
    for (const auto& c : calls) {
      const Function* f = plan.find_function(c.first.first);
      ProfileEntry& e = by_function_op[{c.first.first, f->calls[size_t(c.first.second)].op}];
      e.calls += c.second.calls;
      e.seconds += c.second.seconds;
    }
    std::vector<std::pair<std::pair<std::string, std::string>, ProfileEntry>> fo(by_function_op.begin(),
                                                                                  by_function_op.end());
    std::sort(fo.begin(), fo.end(), [](const auto& a, const auto& b) { return a.second.seconds > b.second.seconds; });
    std::fprintf(stderr, "hymo profile: by function and op\n");
    for (size_t k = 0; k < fo.size() && k < 20; ++k)
      std::fprintf(stderr, "  %-12s %-24s %8lld calls %10.3f ms\n", fo[k].first.first.c_str(), fo[k].first.second.c_str(),
                   (long long)fo[k].second.calls, fo[k].second.seconds * 1e3);
    std::fprintf(stderr, "hymo profile: slowest calls (ms per run)\n");
    const char* top_env = std::getenv("HYMO_PROFILE_TOP");
    const size_t top = top_env ? size_t(std::max(0L, std::atol(top_env))) : 40;
    for (size_t k = 0; k < calls.size() && k < top; ++k) {
      const Function* f = plan.find_function(calls[k].first.first);
      const Call& c = f->calls[size_t(calls[k].first.second)];
      std::fprintf(stderr, "  %8.3f  %s[%lld] %s %s\n", calls[k].second.seconds * 1e3 / double(calls[k].second.calls),
                   calls[k].first.first.c_str(), (long long)calls[k].first.second, c.op.c_str(),
                   call_signature(c).c_str());
    }
  }

  StatusOr<int64_t> lookup(const std::string& name) const {
    const BufferDesc* b = plan.find_buffer(name);
    if (!b) return error_status("no buffer named '" + name + "' in the plan");
    return b->id;
  }
};

CpuExecutor::CpuExecutor(Plan plan, ExecutorOptions options) : impl_(new Impl) {
  throw_if_error(validate_plan(plan));
  impl_->plan = std::move(plan);
  impl_->pool.reset(new ThreadPool(options.num_threads > 0 ? options.num_threads : ThreadPool::default_threads()));
  throw_if_error(impl_->init());
}

CpuExecutor::~CpuExecutor() {
  if (impl_) impl_->print_profile();
}

const Plan& CpuExecutor::plan() const { return impl_->plan; }

Status CpuExecutor::run_status(const std::string& function) { return impl_->run(function); }
void CpuExecutor::run(const std::string& function) { throw_if_error(run_status(function)); }

Status CpuExecutor::set_values_status(const std::string& name, const std::vector<double>& values) {
  StatusOr<int64_t> id = impl_->lookup(name);
  if (!id.ok()) return id.status();
  const BufferDesc& b = impl_->plan.buffers[size_t(id.value())];
  if (b.storage == StorageKind::kConstant) return error_status("buffer '" + name + "' is a constant (read-only)");
  if (int64_t(values.size()) != b.numel())
    return error_status("buffer '" + name + "' is " + type_str(b.dtype, b.shape) + ": expected " +
                        std::to_string(b.numel()) + " values, found " + std::to_string(values.size()));
  if (b.dtype == DType::kI32)
    for (size_t i = 0; i < values.size(); ++i)
      if (values[i] != double(int32_t(values[i])))
        return error_status("buffer '" + name + "' is i32: value " + std::to_string(values[i]) + " at index " +
                            std::to_string(i) + " is not an i32");
  store_values(b.dtype, impl_->ptr[size_t(b.id)], values, b.numel());
  impl_->input_set[size_t(b.id)] = true;
  return ok_status();
}

void CpuExecutor::set_values(const std::string& name, const std::vector<double>& values) {
  throw_if_error(set_values_status(name, values));
}

void CpuExecutor::set_bytes(const std::string& name, const void* data, size_t bytes) {
  StatusOr<int64_t> id = impl_->lookup(name);
  throw_if_error(id.status());
  const BufferDesc& b = impl_->plan.buffers[size_t(id.value())];
  if (b.storage == StorageKind::kConstant) throw Error("buffer '" + name + "' is a constant (read-only)");
  if (int64_t(bytes) != b.bytes())
    throw Error("buffer '" + name + "' is " + type_str(b.dtype, b.shape) + ": expected " + std::to_string(b.bytes()) +
                " bytes, found " + std::to_string(bytes));
  std::memcpy(impl_->ptr[size_t(b.id)], data, bytes);
  impl_->input_set[size_t(b.id)] = true;
}

std::vector<double> CpuExecutor::values(const std::string& name) const { return tensor(name).values; }

HostTensor CpuExecutor::tensor(const std::string& name) const {
  StatusOr<int64_t> id = impl_->lookup(name);
  throw_if_error(id.status());
  const BufferDesc& b = impl_->plan.buffers[size_t(id.value())];
  HostTensor t;
  t.dtype = b.dtype;
  t.shape = b.shape;
  t.values = load_values(b.dtype, impl_->ptr[size_t(b.id)], b.numel());
  return t;
}

const void* CpuExecutor::data(int64_t id) const {
  if (id < 0 || id >= int64_t(impl_->ptr.size())) throw Error("buffer id " + std::to_string(id) + " out of range");
  return impl_->ptr[size_t(id)];
}

void* CpuExecutor::mutable_data(int64_t id) {
  if (id < 0 || id >= int64_t(impl_->ptr.size())) throw Error("buffer id " + std::to_string(id) + " out of range");
  impl_->input_set[size_t(id)] = true;
  return impl_->ptr[size_t(id)];
}

}  // namespace hymo::rt
