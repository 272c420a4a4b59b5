#pragma once

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/RegionKindInterface.h"

#include "dialects/HymoRT/IR/HymoRTOpsDialect.h.inc"

#define GET_OP_CLASSES
#include "dialects/HymoRT/IR/HymoRTOps.h.inc"
