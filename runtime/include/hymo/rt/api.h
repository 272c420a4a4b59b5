// The runtime's public API: load a plan, execute its functions on the CPU,
// read and write buffers. Functions ending in _status never throw; the others
// throw hymo::rt::Error with the same message.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hymo/rt/plan_format.h"
#include "hymo/rt/status.h"

namespace hymo::rt {

// What this build of the runtime was built with (hymo-run --version).
struct BuildInfo {
  bool blas = false;
  std::string blas_name;  // "openblas" or "none (plain loop GEMM)"
  bool cuda = false;             // a CUDA executor is built in
  bool nccl = false;             // the NCCL collective backend is built in
  bool cuda_configured = false;  // CMake found the CUDA toolkit
  bool nccl_configured = false;  // CMake found NCCL
  int threads = 1;        // worker threads of the CPU executor
};
BuildInfo build_info();

// Parses and validates a plan; every field is checked before anything runs.
// Messages look like
//   plan: functions.f.calls[3].operands[1]: buffer 99 out of range (have 42)
Status parse_plan_status(const std::string& json_text, Plan* out);
Status load_plan_status(const std::string& path, Plan* out);
Plan parse_plan(const std::string& json_text);
Plan load_plan(const std::string& path);

// Re-checks an in-memory Plan (the same checks the loader makes on a file).
Status validate_plan(const Plan& plan);

// A human-readable summary: buffers, params, functions, arena bytes.
std::string plan_summary(const Plan& plan);

// A tensor on the host with values widened to double (i32 and bf16 exact).
struct HostTensor {
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  std::vector<double> values;
};
// .npy files: reads <f4 <f8 <i4 <i8 <u2 |u1 |i1 (C order), writes the
// buffer's dtype (bf16 as <f4).
Status read_npy(const std::string& path, HostTensor* out);
Status write_npy(const std::string& path, const HostTensor& t);

// The most CPU threads an executor takes (ExecutorOptions::num_threads,
// HYMO_NUM_THREADS): far above the core counts this runtime runs on, far
// below what exhausts a system's thread limit.
inline constexpr int kMaxThreads = 1024;

struct ExecutorOptions {
  int num_threads = 0;  // 0: HYMO_NUM_THREADS or hardware_concurrency(); at most kMaxThreads
};

// Runs plans on the CPU. Owns the param/state/input/constant storage and the
// arena. Kernels implement docs/dialect.md for f32 and f64 (bf16 through f32).
// Elementwise, row-wise and per-head work is spread over a thread pool of
// ExecutorOptions::num_threads; GEMMs go to CBLAS (which threads itself) or
// to a loop GEMM on the pool. One run at a time per executor (not
// thread-safe); separate executors are independent.
class CpuExecutor {
 public:
  explicit CpuExecutor(Plan plan, ExecutorOptions options = {});
  ~CpuExecutor();
  CpuExecutor(const CpuExecutor&) = delete;
  CpuExecutor& operator=(const CpuExecutor&) = delete;

  const Plan& plan() const;

  Status run_status(const std::string& function);
  void run(const std::string& function);

  // Buffer access by name (params, state, inputs, constants and arena
  // buffers; an arena buffer's contents are valid until the next run).
  Status set_values_status(const std::string& buffer,
                           const std::vector<double>& values);
  void set_values(const std::string& buffer, const std::vector<double>& values);
  // Raw bytes in the buffer's own dtype; `bytes` must equal its size.
  void set_bytes(const std::string& buffer, const void* data, size_t bytes);
  std::vector<double> values(const std::string& buffer) const;
  HostTensor tensor(const std::string& buffer) const;
  const void* data(int64_t buffer_id) const;
  void* mutable_data(int64_t buffer_id);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hymo::rt
