// Executor checkpoints as safetensors (checkpoint.h).
#include "hymo/rt/checkpoint.h"

#include <cmath>
#include <cstring>
#include <set>

#include "cpu/bf16.h"

namespace hymo::rt {
namespace {

std::string shape_str(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

bool persistent(const BufferDesc& b) { return b.storage == StorageKind::kParam || b.storage == StorageKind::kState; }

bool model_name(const std::string& n) {
  for (const char* p : {"embed.", "head.", "norm_f.", "layers.", "mtp."})
    if (n.rfind(p, 0) == 0) return true;
  return false;
}

// The index of the first NaN or infinity among n values of a float dtype, or -1.
int64_t first_non_finite(const void* data, DType dtype, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    double v = 0;
    switch (dtype) {
      case DType::kF32: v = static_cast<const float*>(data)[i]; break;
      case DType::kF64: v = static_cast<const double*>(data)[i]; break;
      case DType::kBF16: v = bf16_to_f32(static_cast<const uint16_t*>(data)[i]); break;
      case DType::kI32: return -1;
    }
    if (!std::isfinite(v)) return i;
  }
  return -1;
}

Status load_one(CpuExecutor* ex, const SafetensorsFile& f, const BufferDesc& b, const StTensorInfo& t) {
  if (t.shape != b.shape)
    return error_status("checkpoint " + f.path() + ": tensor " + b.name + " has shape " + shape_str(t.shape) +
                        ", the plan needs " + shape_str(b.shape) + " (checkpoint of another config?)");
  HYMO_RETURN_IF_ERROR(f.read_into(t, b.dtype, ex->mutable_data(b.id)));
  // A model parameter is finite in any checkpoint train writes (a non-finite step is skipped, not
  // applied): a NaN or infinity there is corruption, which eval and sample would otherwise turn
  // into a NaN loss or garbage text with exit 0.
  if (model_name(b.name))
    if (const int64_t i = first_non_finite(ex->data(b.id), b.dtype, b.numel()); i >= 0)
      return error_status("checkpoint " + f.path() + ": parameter " + b.name + " holds a non-finite value at element " +
                          std::to_string(i) + " (a corrupt checkpoint?)");
  return ok_status();
}

}  // namespace

Status save_checkpoint(const CpuExecutor& ex, const std::string& path, CheckpointContent content, bool force_f32,
                       std::map<std::string, std::string> metadata) {
  const Plan& plan = ex.plan();
  std::vector<const BufferDesc*> bufs;
  if (content == CheckpointContent::kParamTable) {
    for (const ParamEntry& p : plan.params) bufs.push_back(&plan.buffers[size_t(p.buffer)]);
  } else {
    for (const BufferDesc& b : plan.buffers)
      if (persistent(b)) bufs.push_back(&b);
  }
  std::vector<StWriteTensor> tensors;
  std::vector<std::vector<float>> widened;  // keeps converted data alive
  widened.reserve(bufs.size());
  for (const BufferDesc* b : bufs) {
    StWriteTensor t;
    t.name = b->name;
    t.shape = b->shape;
    const void* src = ex.data(b->id);
    const int64_t n = b->numel();
    switch (b->dtype) {
      case DType::kF32:
        t.dtype = StDType::kF32;
        t.data = src;
        break;
      case DType::kI32:
        t.dtype = StDType::kI32;
        t.data = src;
        break;
      case DType::kF64:
        if (!force_f32) {
          t.dtype = StDType::kF64;
          t.data = src;
          break;
        }
        [[fallthrough]];
      case DType::kBF16: {
        widened.emplace_back(size_t(n));
        std::vector<float>& w = widened.back();
        for (int64_t i = 0; i < n; ++i)
          w[size_t(i)] = b->dtype == DType::kF64 ? float(static_cast<const double*>(src)[i])
                                                 : bf16_to_f32(static_cast<const uint16_t*>(src)[i]);
        t.dtype = StDType::kF32;
        t.data = w.data();
        break;
      }
    }
    tensors.push_back(std::move(t));
  }
  metadata["format"] = kCheckpointFormat;
  metadata["format_version"] = kCheckpointFormatVersion;
  return write_safetensors(path, tensors, metadata);
}

Status restore_all_buffers(CpuExecutor* ex, const SafetensorsFile& f) {
  const Plan& plan = ex->plan();
  std::set<std::string> known;
  for (const BufferDesc& b : plan.buffers) {
    if (!persistent(b)) continue;
    known.insert(b.name);
    const StTensorInfo* t = f.find(b.name);
    if (!t)
      return error_status("checkpoint " + f.path() + ": tensor " + b.name +
                          " is missing (checkpoint of another config, or not a training checkpoint?)");
    HYMO_RETURN_IF_ERROR(load_one(ex, f, b, *t));
  }
  for (const StTensorInfo& t : f.tensors())
    if (!known.count(t.name))
      return error_status("checkpoint " + f.path() + ": tensor " + t.name +
                          " is not a buffer of the plan (checkpoint of another config?)");
  return ok_status();
}

Status load_param_table(CpuExecutor* ex, const SafetensorsFile& f) {
  const Plan& plan = ex->plan();
  std::set<std::string> table;
  for (const ParamEntry& p : plan.params) {
    table.insert(p.name);
    const BufferDesc& b = plan.buffers[size_t(p.buffer)];
    const StTensorInfo* t = f.find(p.name);
    if (!t) {
      if (b.storage == StorageKind::kState || p.optimizer == Optimizer::kNone) continue;  // a buffer: keeps its init
      return error_status("checkpoint " + f.path() + ": parameter " + p.name +
                          " is missing (checkpoint of another config?)");
    }
    HYMO_RETURN_IF_ERROR(load_one(ex, f, b, *t));
  }
  for (const StTensorInfo& t : f.tensors())
    if (!table.count(t.name) && model_name(t.name))
      return error_status("checkpoint " + f.path() + ": tensor " + t.name +
                          " is not in the model's parameter table (checkpoint of another config?)");
  return ok_status();
}

}  // namespace hymo::rt
