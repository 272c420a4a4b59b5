#pragma once

#include "mlir/IR/Dialect.h"

#include "dialects/Hymo/IR/HymoOpsDialect.h.inc"
