// Builds the forward graph of one HyMo micro-batch (spec §2) in the hymo
// dialect: `func.func @forward(params..., tokens) -> (loss, ...)`, and
// `func.func @logits(params..., tokens) -> logits [B,T,V]` (the trunk's
// next-token logits, for evaluation tools).
#pragma once

#include "models/Config.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>
#include <vector>

namespace mlir::func {
class FuncOp;
}

namespace hymo {

/// Argument attributes that name the model's state on @forward.
inline constexpr const char *kNameAttr = "hymo.name";       // spec §5 name
inline constexpr const char *kRoleAttr = "hymo.role";       // param|buffer|input
inline constexpr const char *kOptimizerAttr = "hymo.optimizer"; // normuon|adamw|none
/// Initial value rule (spec §2.5): `uniform:B` (U(-B, B)), `normal:S`
/// (N(0, S^2)), `fill:V`, `zeros`, or `a_log` (row h holds log(h+1)).
inline constexpr const char *kInitAttr = "hymo.init";
/// On the op computing the trunk's logits (before the slice for the loss).
inline constexpr const char *kMainLogitsAttr = "hymo.main_logits";
/// On the module: the resolved config as JSON (carried into the plan).
inline constexpr const char *kConfigAttr = "hymo.config";
/// On each hymo.moe_route: the MoE layer's name prefix (`layers.3.ffn`).
inline constexpr const char *kLayerAttr = "hymo.layer";

/// Builds the module holding @forward. Loads the dialects it needs.
mlir::OwningOpRef<mlir::ModuleOp> buildForwardModule(mlir::MLIRContext &context,
                                                      const Config &config);

struct ParamEntry {
  std::string name;
  std::vector<int64_t> shape;
  std::string optimizer; // normuon | adamw | none
  bool isBuffer = false;
};

struct ParamTable {
  std::vector<ParamEntry> entries;
  int64_t total = 0;  // parameters, buffers excluded
  int64_t active = 0; // total minus (n_routed - top_k) experts per MoE layer
};

/// Reads the parameter table off @forward's argument attributes (and the
/// top_k of each MoE layer's hymo.moe_route). Fails with a message when the
/// function is not annotated as the builder annotates it.
bool readParamTable(mlir::func::FuncOp forward, ParamTable &table,
                    std::string &error);

/// `NAME SHAPE OPTIMIZER` lines, then `total N` and `active N`.
std::string formatParamTable(const ParamTable &table);

} // namespace hymo
