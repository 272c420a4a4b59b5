// Checkpoints of an executor's persistent buffers as safetensors files
// (safetensors.h), by their plan names: parameters under the spec §5 names,
// state buffers (optimizer moments, accumulators, gate bias/EMA, the step
// counters) under theirs. Nothing here is model-specific: what is saved is
// whatever the plan declares as `param` or `state`.
#pragma once

#include <map>
#include <string>

#include "hymo/rt/api.h"
#include "hymo/rt/safetensors.h"
#include "hymo/rt/status.h"

namespace hymo::rt {

// Metadata keys every hymo checkpoint carries.
inline constexpr const char* kCheckpointFormat = "hymo-checkpoint";
inline constexpr const char* kCheckpointFormatVersion = "1";

enum class CheckpointContent {
  kAll,         // every param and state buffer (training checkpoints)
  kParamTable,  // only the parameter table (params + named buffers: --save-init)
};

// Writes the buffers atomically (atomic_write_file). Dtypes: f32 -> F32,
// f64 -> F64 (F32 if `force_f32`), bf16 -> F32 (exact), i32 -> I32.
// `metadata` gets "format" and "format_version" added. A buffer that a load
// would refuse (a non-finite value anywhere; a negative second moment,
// adamw.v.* / normuon.v.*; a counter, train.step / train.adamw_t /
// train.n_ok / train.counts.*, that is not a non-negative integer) is an
// error naming it and the element, and nothing is written.
Status save_checkpoint(const CpuExecutor& ex, const std::string& path, CheckpointContent content, bool force_f32,
                       std::map<std::string, std::string> metadata);

// Restores every param and state buffer of the plan from `f` (resume):
// each must be present with the plan's shape; a tensor the plan does not
// know is an error too. Every restored value is checked as save_checkpoint
// checks it (finite; second moments >= 0; counters non-negative integers).
// Messages name the file and the tensor.
//
// Both loaders cross-check a hymo checkpoint's metadata "precision" (which
// hymo-run records, docs/training.md): it must be fp32, fp64 or bf16 and its
// config's training.precision; and when it is the plan's precision, every
// tensor must be stored as save_checkpoint stores that buffer (with
// force_f32 for "kind" init), else the error names the tensor and both
// dtypes. A checkpoint of another precision converts (--init).
Status restore_all_buffers(CpuExecutor* ex, const SafetensorsFile& f);

// Loads the parameter table from `f` (--init): every `param` entry must be
// present with its shape; named buffers (optimizer none, e.g. gate_bias) are
// loaded where present and keep their init otherwise. A tensor under a
// model name (embed., head., norm_f., layers., mtp.) that the table lacks is
// an error (a checkpoint of another config); other tensors (optimizer state,
// counters of a training checkpoint) are ignored. Values convert to the
// buffer's dtype.
Status load_param_table(CpuExecutor* ex, const SafetensorsFile& f);

}  // namespace hymo::rt
