// Executor checkpoints as safetensors (checkpoint.h).
#include "hymo/rt/checkpoint.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
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

// The value of element i of n values of dtype `dtype`.
double value_at(const void* data, DType dtype, int64_t i) {
  switch (dtype) {
    case DType::kF32: return static_cast<const float*>(data)[i];
    case DType::kF64: return static_cast<const double*>(data)[i];
    case DType::kBF16: return bf16_to_f32(static_cast<const uint16_t*>(data)[i]);
    case DType::kI32: return static_cast<const int32_t*>(data)[i];
  }
  return 0;
}

std::string number_text(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

// What train's state buffers may hold, past being finite (docs/training.md,
// Checkpoints): second moments are >= 0, and the counters (train.step,
// train.adamw_t, train.n_ok, the MoE expert counts train.counts.*) are
// non-negative integers.
bool second_moment(const std::string& n) { return n.rfind("adamw.v.", 0) == 0 || n.rfind("normuon.v.", 0) == 0; }
bool counter(const std::string& n) {
  return n == "train.step" || n == "train.adamw_t" || n == "train.n_ok" || n.rfind("train.counts.", 0) == 0;
}

// "" when the persistent buffer `b` (its values at `data`) holds what a
// checkpoint train writes may hold: a finite value everywhere (a model
// parameter, optimizer state, an accumulator, a counter), a second moment
// >= 0, a counter a non-negative integer. Else what is wrong, naming the
// buffer and the first element at fault.
std::string bad_value(const BufferDesc& b, const void* data) {
  if (b.dtype == DType::kI32 || !persistent(b)) return "";
  const std::string what = model_name(b.name) ? "parameter " : "state ";
  if (const int64_t i = first_non_finite(data, b.dtype, b.numel()); i >= 0)
    return what + b.name + " holds a non-finite value at element " + std::to_string(i);
  const bool moment = second_moment(b.name), count = counter(b.name);
  if (!moment && !count) return "";
  for (int64_t i = 0; i < b.numel(); ++i) {
    const double v = value_at(data, b.dtype, i);
    if (moment && v < 0)
      return what + b.name + " holds " + number_text(v) + " at element " + std::to_string(i) +
             " (a second moment is >= 0)";
    if (count && (v < 0 || v != std::floor(v)))
      return what + b.name + " holds " + number_text(v) + " at element " + std::to_string(i) +
             " (a counter is a non-negative integer)";
  }
  return "";
}

// How save_checkpoint stores a buffer of dtype `d`.
StDType saved_dtype(DType d, bool force_f32) {
  switch (d) {
    case DType::kF32: return StDType::kF32;
    case DType::kF64: return force_f32 ? StDType::kF32 : StDType::kF64;
    case DType::kBF16: return StDType::kF32;  // widened, exact
    case DType::kI32: return StDType::kI32;
  }
  return StDType::kF32;
}

// training.precision of a config (JSON text); "" when it cannot tell.
std::string config_precision(const std::string& config_json) {
  const nlohmann::json c = nlohmann::json::parse(config_json, nullptr, false);
  if (!c.is_object()) return "";
  auto t = c.find("training");
  if (t == c.end() || !t->is_object()) return "fp32";
  auto p = t->find("precision");
  if (p == t->end()) return "fp32";  // (the config's default)
  return p->is_string() ? p->get<std::string>() : "";
}

// The precision a checkpoint that hymo-run wrote records (metadata
// "precision", docs/training.md): it says how every tensor is stored, by
// save_checkpoint's rule for the plan of that precision ("kind" init: with
// force_f32). Set when that plan is `plan`'s (eval, sample and --resume load
// a checkpoint into a plan of its own config); then a tensor stored another
// way contradicts the metadata. Unset for another file, and for a checkpoint
// of another precision (--init converts such values, docs/training.md). A
// precision that is not one, or not its own config's, is an error.
struct StoredAs {
  std::string precision;
  bool force_f32 = false;
};
Status recorded_precision(const Plan& plan, const SafetensorsFile& f, std::optional<StoredAs>* out) {
  out->reset();
  const auto& meta = f.metadata();
  auto format = meta.find("format");
  auto precision = meta.find("precision");
  if (format == meta.end() || format->second != kCheckpointFormat || precision == meta.end()) return ok_status();
  const std::string& p = precision->second;
  if (p != "fp32" && p != "fp64" && p != "bf16")
    return error_status("checkpoint " + f.path() + ": metadata precision = '" + p +
                        "' is not fp32, fp64 or bf16 (corrupt?)");
  if (auto config = meta.find("config"); config != meta.end()) {
    const std::string own = config_precision(config->second);
    if (!own.empty() && own != p)
      return error_status("checkpoint " + f.path() + ": metadata precision = '" + p +
                          "' but its config's training.precision is '" + own + "' (an edited checkpoint?)");
  }
  if (config_precision(plan.config_json) != p) return ok_status();
  auto kind = meta.find("kind");
  *out = StoredAs{p, kind != meta.end() && kind->second == "init"};
  return ok_status();
}

Status load_one(CpuExecutor* ex, const SafetensorsFile& f, const BufferDesc& b, const StTensorInfo& t,
                const std::optional<StoredAs>& stored_as, bool all_state = false) {
  if (t.shape != b.shape)
    return error_status("checkpoint " + f.path() + ": tensor " + b.name + " has shape " + shape_str(t.shape) +
                        ", the plan needs " + shape_str(b.shape) + " (checkpoint of another config?)");
  if (stored_as)
    if (const StDType want = saved_dtype(b.dtype, stored_as->force_f32); t.dtype != want)
      return error_status("checkpoint " + f.path() + ": tensor " + b.name + " is stored as " +
                          st_dtype_name(t.dtype) + ", but the metadata's precision " + stored_as->precision +
                          (stored_as->force_f32 ? " (kind init)" : "") + " stores this " + dtype_name(b.dtype) +
                          " buffer as " + st_dtype_name(want) +
                          " (an edited checkpoint, or one hymo-run did not write?)");
  HYMO_RETURN_IF_ERROR(f.read_into(t, b.dtype, ex->mutable_data(b.id)));
  // A model parameter is finite in any checkpoint train writes (a non-finite step is skipped, not
  // applied): a NaN or infinity there is corruption, which eval and sample would otherwise turn
  // into a NaN loss or garbage text with exit 0. The state a resume restores (`all_state`) is
  // checked likewise (bad_value): a NaN moment or a negative second moment would make the next
  // update write NaN parameters.
  if (model_name(b.name) || all_state)
    if (const std::string bad = bad_value(b, ex->data(b.id)); !bad.empty())
      return error_status("checkpoint " + f.path() + ": " + bad + " (a corrupt checkpoint?)");
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
  // Never a checkpoint that a load would refuse (bad_value): nothing is written, and the file
  // already at `path` (an earlier checkpoint) stays as it was.
  for (const BufferDesc* b : bufs)
    if (const std::string bad = bad_value(*b, ex.data(b->id)); !bad.empty())
      return error_status("checkpoint " + path + " not written: " + bad);
  std::vector<StWriteTensor> tensors;
  std::vector<std::vector<float>> widened;  // keeps converted data alive
  widened.reserve(bufs.size());
  for (const BufferDesc* b : bufs) {
    StWriteTensor t;
    t.name = b->name;
    t.shape = b->shape;
    t.dtype = saved_dtype(b->dtype, force_f32);
    const void* src = ex.data(b->id);
    const int64_t n = b->numel();
    if (b->dtype == DType::kF64 && t.dtype == StDType::kF32) {
      widened.emplace_back(size_t(n));
      for (int64_t i = 0; i < n; ++i) widened.back()[size_t(i)] = float(static_cast<const double*>(src)[i]);
      t.data = widened.back().data();
    } else if (b->dtype == DType::kBF16) {
      widened.emplace_back(size_t(n));
      for (int64_t i = 0; i < n; ++i) widened.back()[size_t(i)] = bf16_to_f32(static_cast<const uint16_t*>(src)[i]);
      t.data = widened.back().data();
    } else {
      t.data = src;  // f32 as F32, f64 as F64, i32 as I32
    }
    tensors.push_back(std::move(t));
  }
  metadata["format"] = kCheckpointFormat;
  metadata["format_version"] = kCheckpointFormatVersion;
  return write_safetensors(path, tensors, metadata);
}

Status restore_all_buffers(CpuExecutor* ex, const SafetensorsFile& f) {
  const Plan& plan = ex->plan();
  std::optional<StoredAs> stored_as;
  HYMO_RETURN_IF_ERROR(recorded_precision(plan, f, &stored_as));
  std::set<std::string> known;
  for (const BufferDesc& b : plan.buffers) {
    if (!persistent(b)) continue;
    known.insert(b.name);
    const StTensorInfo* t = f.find(b.name);
    if (!t)
      return error_status("checkpoint " + f.path() + ": tensor " + b.name +
                          " is missing (checkpoint of another config, or not a training checkpoint?)");
    HYMO_RETURN_IF_ERROR(load_one(ex, f, b, *t, stored_as, /*all_state=*/true));
  }
  for (const StTensorInfo& t : f.tensors())
    if (!known.count(t.name))
      return error_status("checkpoint " + f.path() + ": tensor " + t.name +
                          " is not a buffer of the plan (checkpoint of another config?)");
  return ok_status();
}

Status load_param_table(CpuExecutor* ex, const SafetensorsFile& f) {
  const Plan& plan = ex->plan();
  std::optional<StoredAs> stored_as;
  HYMO_RETURN_IF_ERROR(recorded_precision(plan, f, &stored_as));
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
    HYMO_RETURN_IF_ERROR(load_one(ex, f, b, *t, stored_as));
  }
  for (const StTensorInfo& t : f.tensors())
    if (!table.count(t.name) && model_name(t.name))
      return error_status("checkpoint " + f.path() + ": tensor " + t.name +
                          " is not in the model's parameter table (checkpoint of another config?)");
  return ok_status();
}

}  // namespace hymo::rt
