#pragma once

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::OpTrait::hymo {
/// Marks an op whose results carry no gradient (masks, counts, constants):
/// hymo-autodiff stops there instead of failing.
template <typename ConcreteType>
class NonDifferentiable : public TraitBase<ConcreteType, NonDifferentiable> {};
} // namespace mlir::OpTrait::hymo

#include "dialects/Hymo/IR/HymoInterfaces.h.inc"
