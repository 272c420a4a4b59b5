#ifndef HYMO_DIALECT_TD
#define HYMO_DIALECT_TD

include "mlir/IR/OpBase.td"

def Hymo_Dialect : Dialect {
  let name = "hymo";
  let summary = "The HyMo model and training-step dialect";
  let description = [{
    Value-semantics ops on statically shaped tensors (f32, f64, bf16, i32)
    for one HyMo forward pass (spec §2): dense algebra, elementwise math,
    reductions, shape ops, and the model's own ops (RMSNorm, RoPE, causal
    attention, the gated recurrence, the MoE router/dispatch/combine, cross
    entropy). docs/dialect.md gives each op's semantics.
  }];
  let cppNamespace = "::mlir::hymo";
}

class Hymo_Op<string mnemonic, list<Trait> traits = []>
    : Op<Hymo_Dialect, mnemonic, traits>;

// Statically shaped tensors of the element types hymo computes in.
def Hymo_FloatTensor : StaticShapeTensorOf<[F32, F64, BF16]>;
def Hymo_IndexTensor : StaticShapeTensorOf<[I32]>;
def Hymo_Tensor : StaticShapeTensorOf<[F32, F64, BF16, I32]>;

#endif // HYMO_DIALECT_TD
