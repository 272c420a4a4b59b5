#ifndef HYMO_PASSES_TD
#define HYMO_PASSES_TD

include "mlir/Pass/PassBase.td"

def HymoAutodiff : Pass<"hymo-autodiff", "::mlir::ModuleOp"> {
  let summary = "Reverse-mode differentiation of a forward function";
  let description = [{
    Adds `@<function>_grad`: the forward function followed by its backward.
    It takes the same arguments and returns the forward's results followed
    by the gradient of the result named `loss` (adjoint seed 1) with respect
    to every argument whose `hymo.role` is `param`, in argument order; each
    gradient result is named `grad.<param name>`. A parameter the loss does
    not reach gets zeros. Each op builds its VJP through
    DifferentiableOpInterface; ops marked NonDifferentiable stop the
    adjoint; any other op reached by an adjoint is an error.
  }];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"forward\"",
           "the forward function to differentiate">,
  ];
  let dependentDialects = ["::mlir::hymo::HymoDialect", "::mlir::func::FuncDialect"];
}

#endif // HYMO_PASSES_TD
