#pragma once

#include "dialects/Hymo/IR/HymoOps.h"
#include "dialects/HymoRT/IR/HymoRTOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::hymo {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

} // namespace mlir::hymo
