// plan_summary: the human-readable view of a plan (hymo-run inspect).
#include <sstream>

#include "cpu/gemm.h"
#include "hymo/rt/api.h"
#include "plan_internal.h"
#include "thread_pool.h"

namespace hymo::rt {
namespace {

std::string attr_text(const Attr& a) {
  std::ostringstream os;
  os.precision(17);
  switch (a.kind) {
    case Attr::Kind::kBool: os << (a.b ? "true" : "false"); break;
    case Attr::Kind::kInt: os << a.i; break;
    case Attr::Kind::kFloat: os << a.f; break;
    case Attr::Kind::kString: os << '"' << a.s << '"'; break;
    case Attr::Kind::kIntList:
    case Attr::Kind::kFloatList: {
      std::vector<double> v = a.as_doubles();
      os << "[";
      for (size_t i = 0; i < v.size() && i < 8; ++i) os << (i ? "," : "") << v[i];
      if (v.size() > 8) os << ",... (" << v.size() << " values)";
      os << "]";
      break;
    }
  }
  return os.str();
}

std::string human_bytes(int64_t b) {
  std::ostringstream os;
  os << b << " bytes";
  if (b >= (1 << 20)) os << " (" << double(b) / double(1 << 20) << " MiB)";
  else if (b >= 1024) os << " (" << double(b) / 1024.0 << " KiB)";
  return os.str();
}

}  // namespace

std::string plan_summary(const Plan& plan) {
  std::ostringstream os;
  os << "plan: " << plan.format << " version " << plan.version << "\n";
  std::string cfg = plan.config_json;
  if (cfg.size() > 160) cfg = cfg.substr(0, 157) + "...";
  os << "config: " << cfg << "\n";
  os << "arena: " << human_bytes(plan.arena_bytes) << "\n";
  int64_t persistent = 0;
  for (const BufferDesc& b : plan.buffers)
    if (b.storage != StorageKind::kArena) persistent += b.bytes();
  os << "owned storage (param, state, input, constant): " << human_bytes(persistent) << "\n";

  os << "\nbuffers (" << plan.buffers.size() << "):\n";
  for (const BufferDesc& b : plan.buffers) {
    os << "  %" << b.id << " " << b.name << " : " << type_str(b.dtype, b.shape) << " " << storage_name(b.storage);
    if (b.storage == StorageKind::kArena) os << " @" << b.offset << "+" << b.bytes();
    if (b.storage == StorageKind::kConstant) os << " (" << b.data.size() << " values)";
    switch (b.init.kind) {
      case BufferInit::Kind::kZeros: break;
      case BufferInit::Kind::kFill: os << " init fill " << b.init.fill; break;
      case BufferInit::Kind::kData: os << " init data"; break;
      case BufferInit::Kind::kUniform:
        os << " init uniform[" << b.init.low << "," << b.init.high << "] seed " << b.init.seed;
        break;
      case BufferInit::Kind::kNormal:
        os << " init normal[" << b.init.mean << "," << b.init.stddev << "] seed " << b.init.seed;
        break;
    }
    os << "\n";
  }

  os << "\nparams (" << plan.params.size() << "):\n";
  for (const ParamEntry& p : plan.params) {
    const BufferDesc& b = plan.buffers[size_t(p.buffer)];
    os << "  " << p.name << " -> %" << p.buffer << " " << type_str(b.dtype, b.shape) << " optimizer "
       << optimizer_name(p.optimizer) << "\n";
  }

  os << "\nfunctions (" << plan.functions.size() << "):\n";
  auto ids = [&](const std::vector<int64_t>& v) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i)
      s += (i ? ", " : "") + std::string("%") + std::to_string(v[i]) + " " + plan.buffers[size_t(v[i])].name;
    return s;
  };
  for (const Function& f : plan.functions) {
    os << "  " << f.name << ": " << f.calls.size() << " calls";
    if (!f.inputs.empty()) os << ", inputs (" << ids(f.inputs) << ")";
    if (!f.outputs.empty()) os << ", outputs (" << ids(f.outputs) << ")";
    os << "\n";
    for (size_t i = 0; i < f.calls.size(); ++i) {
      const Call& c = f.calls[i];
      os << "    [" << i << "] " << ids(c.results) << " = " << c.op << "(" << ids(c.operands) << ")";
      if (!c.attrs.empty()) {
        os << " {";
        bool first = true;
        for (const auto& kv : c.attrs) {
          os << (first ? "" : ", ") << kv.first << " = " << attr_text(kv.second);
          first = false;
        }
        os << "}";
      }
      os << "\n";
    }
  }
  return os.str();
}

BuildInfo build_info() {
  BuildInfo info;
  info.blas = gemm_uses_blas();
  info.blas_name = gemm_backend_name();
#ifdef HYMO_CONFIGURED_CUDA
  info.cuda_configured = true;
#endif
#ifdef HYMO_CONFIGURED_NCCL
  info.nccl_configured = true;
#endif
  try {
    info.threads = ThreadPool::default_threads();
  } catch (const Error&) {
    info.threads = 0;  // HYMO_NUM_THREADS is not a thread count (an executor would refuse it)
  }
  return info;
}

}  // namespace hymo::rt
