// Writes a hymo plan (docs/plan-format.md) from value-semantics hymo IR:
// every func.func becomes an entry point, named arguments become persistent
// buffers shared between functions, every other value gets an arena slot
// from a liveness-based first-fit planner.
#pragma once

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <map>
#include <string>

namespace mlir::hymo {

struct PlanStats {
  int64_t arenaBytes = 0;                  // the planned peak (max over functions)
  std::map<std::string, int64_t> peakBytes; // per function
  std::map<std::string, int64_t> liveBytes; // per function: the most bytes live at once (the
                                            // lowest peak any placement could reach)
  int64_t unplannedBytes = 0;              // sum of all arena values, no reuse
  int64_t persistentBytes = 0;             // params, state, inputs
  int64_t calls = 0;
  int64_t reshapeViews = 0;                // reshapes that became views, no call
};

/// Replaces the module's hymo functions by their plan in IR form: one
/// hymo_rt.plan holding every buffer, the parameter table and each entry
/// point's calls (what writePlan then writes, field for field).
LogicalResult lowerToRt(ModuleOp module, PlanStats *stats = nullptr);

/// Emits the plan JSON: from a hymo_rt.plan when the module holds one (a
/// straight walk), else for every function of `module` (planned here). Fails (with a
/// diagnostic on the offending op) on ops or types a plan cannot express.
LogicalResult writePlan(ModuleOp module, llvm::raw_ostream &os,
                        PlanStats *stats = nullptr);

/// Writes `text` to `path` so that a failure leaves what was there: a
/// regular file (or a new one) is written under a temporary name, with the
/// old file's permissions, and renamed over `path`; standard output ("-"),
/// a symbolic link (/dev/stdout) or a special file is written directly and
/// never removed. On failure returns false with "cannot write PATH: why" in
/// *error. (hymo-emit-plan's output=, hymo-opt's -o.)
bool replaceOutputFile(llvm::StringRef path, llvm::StringRef text,
                       std::string *error);

} // namespace mlir::hymo
