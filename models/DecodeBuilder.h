// Builds the one-token decode step of a HyMo model (spec §2 in its recurrent
// form) next to @forward: `func.func @decode_step(params..., state...,
// token [B] i32, pos [] i32) -> (logits [B,V], new state...)`. See
// docs/sampling.md.
#pragma once

#include "models/Config.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace hymo {

struct DecodeOptions {
  int64_t batch = 1;  // B: sequences decoded side by side
  int64_t maxLen = 0; // Tmax: MLA cache length; 0 means training.seq_len
};

/// Argument names of @decode_step's inputs and state (hymo.role = "state"),
/// with `i` the layer index.
inline constexpr const char *kDecodeToken = "decode.token";
inline constexpr const char *kDecodePos = "decode.pos";
std::string decodeGdnStateName(int64_t i);  // decode.layers.i.gdn_state
std::string decodeCkvCacheName(int64_t i);  // decode.layers.i.c_kv
std::string decodeKropeCacheName(int64_t i); // decode.layers.i.k_rope

/// Adds @decode_step to a module built by buildForwardModule (it takes the
/// parameters' names, types and attributes from @forward). Returns false
/// with a message on a bad option, options whose tensors the config's sizes
/// make too large (validateDecodeSizes), or a module without @forward.
bool addDecodeStep(mlir::ModuleOp module, const Config &config,
                   const DecodeOptions &options, std::string &error);

} // namespace hymo
