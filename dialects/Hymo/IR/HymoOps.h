#pragma once

#include "dialects/Hymo/IR/HymoDialect.h"
#include "dialects/Hymo/IR/HymoInterfaces.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::hymo {
/// The operand count of an op name in a fused_elementwise program (-1: not
/// one of its ops).
int fusedOpArity(llvm::StringRef op);
} // namespace mlir::hymo

#define GET_OP_CLASSES
#include "dialects/Hymo/IR/HymoOps.h.inc"
