#pragma once

#include "dialects/Hymo/IR/HymoDialect.h"
#include "dialects/Hymo/IR/HymoInterfaces.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "dialects/Hymo/IR/HymoOps.h.inc"
