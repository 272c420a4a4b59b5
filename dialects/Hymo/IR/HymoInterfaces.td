#ifndef HYMO_INTERFACES_TD
#define HYMO_INTERFACES_TD

include "mlir/IR/OpBase.td"

def Hymo_DifferentiableOpInterface : OpInterface<"DifferentiableOpInterface"> {
  let description = [{
    An op that knows its vector-Jacobian product. `hymo-autodiff` walks the
    forward in reverse and asks each op for the adjoints of its operands
    given the adjoints of its results.
  }];
  let cppNamespace = "::mlir::hymo";
  let methods = [
    InterfaceMethod<[{
        Builds the VJP at the builder's insertion point. `resultAdjoints` has
        one entry per result, null where the result has no adjoint (zero).
        Fills `operandAdjoints` with one entry per operand, null where the
        operand gets no gradient (integer operands, routing biases, ...).
        At least one result adjoint is non-null.
      }],
      "::mlir::LogicalResult", "buildVjp",
      (ins "::mlir::OpBuilder &":$builder,
           "::llvm::ArrayRef<::mlir::Value>":$resultAdjoints,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandAdjoints)>,
  ];
}

def Hymo_NonDifferentiable : NativeOpTrait<"hymo::NonDifferentiable">;
def Hymo_Differentiable : DeclareOpInterfaceMethods<Hymo_DifferentiableOpInterface>;

#endif // HYMO_INTERFACES_TD
