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

def HymoTrainStep : Pass<"hymo-train-step", "::mlir::ModuleOp"> {
  let summary = "Build @micro_step and @update (spec §3) around @forward_grad";
  let description = [{
    `@micro_step` runs forward + backward of one micro-batch and adds
    `isfinite(loss) ? grad / G : 0` into the gradient accumulators (and the
    loss and MoE counts into theirs). `@update` clips by the global norm,
    computes the WSD factor from the step counter, steps NorMuon (Newton-
    Schulz as hymo matmuls) and CautiousAdamW, updates each MoE layer's gate
    bias and zeroes the accumulators; when no micro-batch of the step counted
    it changes nothing but the step counter. Optimizer hyperparameters come
    from the module's resolved config (`hymo.config`). Results that update
    persistent state carry `hymo.update = "<buffer>"`.
  }];
  let dependentDialects = ["::mlir::hymo::HymoDialect", "::mlir::func::FuncDialect"];
}

def HymoFuseElementwise : Pass<"hymo-fuse-elementwise", "::mlir::ModuleOp"> {
  let summary = "Fuse runs of elementwise ops into hymo.fused_elementwise";
  let description = [{
    Walks each block in order and groups elementwise hymo ops (not cast) of
    one tensor type of rank >= 1, with the scalar broadcasts and splat
    constants they read; an op that reads a group's value from outside the
    group ends it, and an unrelated op in between does not. A group with at
    least two computing ops becomes one hymo.fused_elementwise placed at its
    last member, returning the values used outside it. Scalars reach the
    kernel unbroadcast; constants become literals. A reduce_sum or
    reduce_mean over the trailing dims of a group value becomes one of the
    kernel's `sums` (a mean times 1/count), so a single op feeding such a
    reduction is fused too, and a value read only by reductions is never
    materialised.
  }];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "print how many ops were fused into how many kernels">,
  ];
  let dependentDialects = ["::mlir::hymo::HymoDialect"];
}

def HymoLowerToRt : Pass<"hymo-lower-to-rt", "::mlir::ModuleOp"> {
  let summary = "Plan memory and lower the hymo functions to the hymo_rt plan IR";
  let description = [{
    Runs the planner of hymo-emit-plan (arena offsets by liveness,
    donation in place, constants, parameter table) and replaces the module's
    functions by one `hymo_rt.plan`: a `hymo_rt.buffer` per buffer, a
    `hymo_rt.param` per parameter-table row and a `hymo_rt.function` per
    entry point holding its `hymo_rt.call`s in order. hymo-emit-plan on the
    result is a straight walk; `hymo-opt ... --hymo-lower-to-rt` prints
    every byte the runtime will execute.
  }];
  let dependentDialects = ["::mlir::hymo_rt::HymoRTDialect"];
}

def HymoEmitPlan : Pass<"hymo-emit-plan", "::mlir::ModuleOp"> {
  let summary = "Plan memory and write the plan file the runtime executes";
  let description = [{
    Every func.func becomes an entry point of the plan (docs/plan-format.md);
    a module already lowered by hymo-lower-to-rt is written field for field.
    Arguments named with hymo.name become persistent buffers (param, state,
    input) shared by all functions, with their hymo.init rule; constants
    become constant buffers; every other value gets an arena slot placed by
    a liveness-based first-fit planner (a slot is reused once its last
    reader has run; returned values live to the end). The IR is unchanged.
  }];
  let options = [
    Option<"output", "output", "std::string", /*default=*/"\"\"",
           "the plan file to write">,
    Option<"report", "report", "bool", /*default=*/"false",
           "print the planned peak and persistent bytes to stderr">,
  ];
}

#endif // HYMO_PASSES_TD
