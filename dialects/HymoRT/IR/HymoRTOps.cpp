// The hymo_rt dialect: the plan file in IR form (see HymoRTOps.td).
#include "dialects/HymoRT/IR/HymoRTOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::hymo_rt;

#include "dialects/HymoRT/IR/HymoRTOpsDialect.cpp.inc"

void HymoRTDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/HymoRT/IR/HymoRTOps.cpp.inc"
      >();
}

namespace {
LogicalResult requireAttrs(Operation *op, StringRef label, ArrayRef<StringRef> names) {
  for (StringRef n : names)
    if (!op->hasAttr(n))
      return op->emitOpError() << label << ": expected attribute '" << n << "', found none";
  return success();
}
} // namespace

RegionKind PlanOp::getRegionKind(unsigned) { return RegionKind::Graph; }
RegionKind FunctionOp::getRegionKind(unsigned) { return RegionKind::Graph; }

LogicalResult PlanOp::verify() {
  return requireAttrs(*this, "plan_c1", {"format", "version", "arena_bytes"});
}

LogicalResult BufferOp::verify() {
  return requireAttrs(*this, "buffer_c1", {"id", "name", "dtype", "shape", "storage"});
}

LogicalResult FunctionOp::verify() { return requireAttrs(*this, "function_c1", {"name"}); }

LogicalResult CallOp::verify() {
  if (!isa_and_nonnull<StringAttr>((*this)->getAttr("op")) ||
      !isa_and_nonnull<ArrayAttr>((*this)->getAttr("operands")) ||
      !isa_and_nonnull<ArrayAttr>((*this)->getAttr("results")))
    return emitOpError() << "call_c1: expected a string 'op' and arrays 'operands' and 'results'";
  return success();
}

#define GET_OP_CLASSES
#include "dialects/HymoRT/IR/HymoRTOps.cpp.inc"
