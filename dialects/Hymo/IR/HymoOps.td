#ifndef HYMO_OPS_TD
#define HYMO_OPS_TD

include "HymoDialect.td"
include "HymoInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/BuiltinAttributes.td"

//===----------------------------------------------------------------------===//
// Sources
//===----------------------------------------------------------------------===//

def Hymo_ConstantOp : Hymo_Op<"constant",
    [Pure, ConstantLike, Hymo_NonDifferentiable, AllTypesMatch<["value", "out"]>]> {
  let summary = "a constant tensor";
  let description = [{
    ```mlir
    %c = hymo.constant dense<1.0> : tensor<4xf32>
    ```
    The value's type is the result type.
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Hymo_Tensor:$out);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

def Hymo_EyeOp : Hymo_Op<"eye", [Pure, Hymo_NonDifferentiable]> {
  let summary = "identity matrices";
  let description = [{
    `out[..., i, j] = (i == j ? 1 : 0)` over the last two dims.
    ```mlir
    %i = hymo.eye : tensor<4x256x256xf32>
    ```
    eye_c1: the result has rank >= 2.
  }];
  let results = (outs Hymo_FloatTensor:$out);
  let assemblyFormat = "attr-dict `:` type($out)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Dense algebra
//===----------------------------------------------------------------------===//

def Hymo_EmbeddingOp : Hymo_Op<"embedding", [Pure, Hymo_Differentiable]> {
  let summary = "row lookup in an embedding table";
  let description = [{
    `out[..., :] = table[ids[...], :]`.
    ```mlir
    %x = hymo.embedding %table, %ids : (tensor<256x64xf32>, tensor<2x64xi32>) -> tensor<2x64x64xf32>
    ```
    embedding_c1: table is 2-D. embedding_c2: the result's shape is
    `ids.shape + [table.shape[1]]`. embedding_c3: the result's element type
    is the table's.
  }];
  let arguments = (ins Hymo_FloatTensor:$table, Hymo_IndexTensor:$ids);
  let results = (outs Hymo_FloatTensor:$out);
  let assemblyFormat = "$table `,` $ids attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Hymo_LinearOp : Hymo_Op<"linear", [Pure, Hymo_Differentiable]> {
  let summary = "x @ w^T with w stored (out, in)";
  let description = [{
    ```mlir
    %y = hymo.linear %x, %w : (tensor<2x64x64xf32>, tensor<128x64xf32>) -> tensor<2x64x128xf32>
    ```
    linear_c1: w is 2-D. linear_c2: x's last dim equals w's second dim.
    linear_c3: the result's shape is `x.shape[:-1] + [w.shape[0]]`.
    linear_c4: x, w and the result have one element type.
  }];
  let arguments = (ins Hymo_FloatTensor:$x, Hymo_FloatTensor:$w);
  let results = (outs Hymo_FloatTensor:$out);
  let assemblyFormat = "$x `,` $w attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Hymo_MatmulOp : Hymo_Op<"matmul", [Pure, Hymo_Differentiable]> {
  let summary = "batched matrix product with optional transposes";
  let description = [{
    ```mlir
    %c = hymo.matmul %a, %b {transpose_b = true} : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x8xf32>
    ```
    matmul_c1: a and b have the same rank >= 2 and the same batch dims.
    matmul_c2: the contraction dims agree. matmul_c3: the result's shape is
    `batch + [M, N]`. matmul_c4: one element type.
  }];
  let arguments = (ins Hymo_FloatTensor:$a, Hymo_FloatTensor:$b,
                   DefaultValuedAttr<BoolAttr, "false">:$transpose_a,
                   DefaultValuedAttr<BoolAttr, "false">:$transpose_b);
  let results = (outs Hymo_FloatTensor:$out);
  let assemblyFormat = "$a `,` $b attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Hymo_GroupedLinearOp : Hymo_Op<"grouped_linear", [Pure, Hymo_Differentiable]> {
  let summary = "one linear per expert: y[e] = x[e] @ w[e]^T";
  let description = [{
    ```mlir
    %y = hymo.grouped_linear %x, %w : (tensor<4x96x64xf32>, tensor<4x128x64xf32>) -> tensor<4x96x128xf32>
    ```
    grouped_linear_c1: x is [E,C,K] and w is [E,N,K]. grouped_linear_c2: the
    result is [E,C,N]. grouped_linear_c3: one element type.
  }];
  let arguments = (ins Hymo_FloatTensor:$x, Hymo_FloatTensor:$w);
  let results = (outs Hymo_FloatTensor:$out);
  let assemblyFormat = "$x `,` $w attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

class Hymo_UnaryOp<string mnemonic, string formula, list<Trait> traits = [Hymo_Differentiable]>
    : Hymo_Op<mnemonic, !listconcat([Pure, Elementwise, SameOperandsAndResultType], traits)> {
  let summary = "elementwise " # formula;
  let description = "`y = " # formula # "` elementwise.\n"
    "```mlir\n%y = hymo." # mnemonic # " %x : tensor<4x8xf32>\n```";
  let arguments = (ins Hymo_FloatTensor:$x);
  let results = (outs Hymo_FloatTensor:$out);
  let assemblyFormat = "$x attr-dict `:` type($out)";
}

def Hymo_NegOp : Hymo_UnaryOp<"neg", "-x">;
def Hymo_ExpOp : Hymo_UnaryOp<"exp", "exp(x)">;
def Hymo_LogOp : Hymo_UnaryOp<"log", "log(x)">;
def Hymo_SqrtOp : Hymo_UnaryOp<"sqrt", "sqrt(x)">;
def Hymo_RsqrtOp : Hymo_UnaryOp<"rsqrt", "1/sqrt(x)">;
def Hymo_SquareOp : Hymo_UnaryOp<"square", "x*x">;
def Hymo_AbsOp : Hymo_UnaryOp<"abs", "|x|">;
def Hymo_SigmoidOp : Hymo_UnaryOp<"sigmoid", "1/(1+exp(-x))">;
def Hymo_SiluOp : Hymo_UnaryOp<"silu", "x*sigmoid(x)">;
def Hymo_SoftplusOp : Hymo_UnaryOp<"softplus", "log(1+exp(x))">;
def Hymo_SinOp : Hymo_UnaryOp<"sin", "sin(x)">;
def Hymo_CosOp : Hymo_UnaryOp<"cos", "cos(x)">;
def Hymo_IsFiniteOp : Hymo_UnaryOp<"isfinite", "(x is finite ? 1 : 0)", [Hymo_NonDifferentiable]>;

class Hymo_BinaryOp<string mnemonic, string formula, list<Trait> traits = [Hymo_Differentiable]>
    : Hymo_Op<mnemonic, !listconcat([Pure, Elementwise, SameOperandsAndResultType], traits)> {
  let summary = "elementwise " # formula;
  let description = "`out = " # formula # "` elementwise; operands and result share one type.\n"
    "```mlir\n%z = hymo." # mnemonic # " %x, %y : tensor<4x8xf32>\n```";
  let arguments = (ins Hymo_FloatTensor:$lhs, Hymo_FloatTensor:$rhs);
  let results = (outs Hymo_FloatTensor:$out);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($out)";
}

def Hymo_AddOp : Hymo_BinaryOp<"add", "lhs + rhs">;
def Hymo_SubOp : Hymo_BinaryOp<"sub", "lhs - rhs">;
def Hymo_MulOp : Hymo_BinaryOp<"mul", "lhs * rhs">;
def Hymo_DivOp : Hymo_BinaryOp<"div", "lhs / rhs">;
def Hymo_MaxOp : Hymo_BinaryOp<"max", "max(lhs, rhs)">;
def Hymo_MinOp : Hymo_BinaryOp<"min", "min(lhs, rhs)">;
def Hymo_GreaterOp : Hymo_BinaryOp<"greater", "(lhs > rhs ? 1 : 0)", [Hymo_NonDifferentiable]>;

def Hymo_SelectOp : Hymo_Op<"select", [Pure, Hymo_Differentiable, Elementwise, SameOperandsAndResultType]> {
  let summary = "elementwise cond != 0 ? a : b";
  let description = [{
    ```mlir
    %r = hymo.select %mask, %a, %b : tensor<4xf32>
    ```
  }];
  let arguments = (ins Hymo_FloatTensor:$cond, Hymo_FloatTensor:$a, Hymo_FloatTensor:$b);
  let results = (outs Hymo_FloatTensor:$out);
  let assemblyFormat = "$cond `,` $a `,` $b attr-dict `:` type($out)";
}

def Hymo_CastOp : Hymo_Op<"cast", [Pure, Hymo_Differentiable, Elementwise, SameOperandsAndResultShape]> {
  let summary = "element type conversion";
  let description = [{
    Float to float (round to nearest even) or i32 to float.
    ```mlir
    %y = hymo.cast %x : tensor<4xf32> -> tensor<4xbf16>
    ```
  }];
  let arguments = (ins Hymo_Tensor:$x);
  let results = (outs Hymo_FloatTensor:$out);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($out)";
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

class Hymo_ReduceOp<string mnemonic, string what>
    : Hymo_Op<mnemonic, [Pure, Hymo_Differentiable]> {
  let summary = what # " over the given dims";
  let description = "Reduces (" # what # ") over `dims`, in FP32 at least.\n"
    "```mlir\n%s = hymo." # mnemonic # " %x {dims = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>\n```\n"
    "reduce_c1: dims are sorted, unique and in range. reduce_c2: the result's "
    "shape drops (or, with keep_dims, sets to 1) the reduced dims. reduce_c3: "
    "one element type.";
  let arguments = (ins Hymo_FloatTensor:$x, DenseI64ArrayAttr:$dims,
                   DefaultValuedAttr<BoolAttr, "false">:$keep_dims);
  let results = (outs Hymo_FloatTensor:$out);
  let assemblyFormat = "$x attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Hymo_ReduceSumOp : Hymo_ReduceOp<"reduce_sum", "sum">;
def Hymo_ReduceMeanOp : Hymo_ReduceOp<"reduce_mean", "mean">;
def Hymo_ReduceMaxOp : Hymo_ReduceOp<"reduce_max", "maximum">;

//===----------------------------------------------------------------------===//
// Shape
//===----------------------------------------------------------------------===//

def Hymo_ReshapeOp : Hymo_Op<"reshape", [Pure, Hymo_Differentiable]> {
  let summary = "row-major reshape";
  let description = [{
    ```mlir
    %y = hymo.reshape %x : (tensor<2x64x64xf32>) -> tensor<128x64xf32>
    ```
    reshape_c1: same element count and element type.
  }];
  let arguments = (ins Hymo_Tensor:$x);
  let results = (outs Hymo_Tensor:$out);
  let assemblyFormat = "$x attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Hymo_TransposeOp : Hymo_Op<"transpose", [Pure, Hymo_Differentiable]> {
  let summary = "dimension permutation";
  let description = [{
    `out.shape[i] = x.shape[permutation[i]]`.
    ```mlir
    %y = hymo.transpose %x {permutation = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
    ```
    transpose_c1: permutation is a permutation of 0..rank-1. transpose_c2:
    the result's shape and element type follow it.
  }];
  let arguments = (ins Hymo_Tensor:$x, DenseI64ArrayAttr:$permutation);
  let results = (outs Hymo_Tensor:$out);
  let assemblyFormat = "$x attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Hymo_SliceOp : Hymo_Op<"slice", [Pure, Hymo_Differentiable]> {
  let summary = "contiguous slice x[start:limit]";
  let description = [{
    ```mlir
    %y = hymo.slice %x {start = array<i64: 0, 1>, limit = array<i64: 2, 64>} : (tensor<2x64xi32>) -> tensor<2x63xi32>
    ```
    slice_c1: start and limit have one entry per dim with
    `0 <= start <= limit <= size`. slice_c2: the result is `limit - start`
    of the same element type.
  }];
  let arguments = (ins Hymo_Tensor:$x, DenseI64ArrayAttr:$start, DenseI64ArrayAttr:$limit);
  let results = (outs Hymo_Tensor:$out);
  let assemblyFormat = "$x attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Hymo_PadOp : Hymo_Op<"pad", [Pure, Hymo_Differentiable]> {
  let summary = "zero padding (the adjoint of slice)";
  let description = [{
    ```mlir
    %y = hymo.pad %x {low = array<i64: 0, 1>, high = array<i64: 0, 0>} : (tensor<2x63xf32>) -> tensor<2x64xf32>
    ```
    pad_c1: low and high have one non-negative entry per dim. pad_c2: the
    result is `low + size + high` of the same element type.
  }];
  let arguments = (ins Hymo_FloatTensor:$x, DenseI64ArrayAttr:$low, DenseI64ArrayAttr:$high);
  let results = (outs Hymo_FloatTensor:$out);
  let assemblyFormat = "$x attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Hymo_ConcatOp : Hymo_Op<"concat", [Pure, Hymo_Differentiable]> {
  let summary = "concatenation along one dim";
  let description = [{
    ```mlir
    %y = hymo.concat %a, %b {dim = 1 : i64} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x16xf32>
    ```
    concat_c1: at least one operand, all of one rank and element type, and
    dim in range. concat_c2: the operands agree off `dim`. concat_c3: the
    result's `dim` is the sum.
  }];
  let arguments = (ins Variadic<Hymo_Tensor>:$inputs, I64Attr:$dim);
  let results = (outs Hymo_Tensor:$out);
  let assemblyFormat = "$inputs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Hymo_BroadcastInDimOp : Hymo_Op<"broadcast_in_dim", [Pure, Hymo_Differentiable]> {
  let summary = "broadcast with an explicit dim map";
  let description = [{
    Operand dim `i` becomes result dim `dims[i]`; it must equal that size or
    be 1 (StableHLO's broadcast_in_dim).
    ```mlir
    %y = hymo.broadcast_in_dim %x {dims = array<i64: 1>} : (tensor<8xf32>) -> tensor<4x8xf32>
    ```
    broadcast_c1: one strictly increasing, in-range entry per operand dim.
    broadcast_c2: each operand dim is 1 or equals the result dim it maps to.
    broadcast_c3: one element type.
  }];
  let arguments = (ins Hymo_Tensor:$x, DenseI64ArrayAttr:$dims);
  let results = (outs Hymo_Tensor:$out);
  let assemblyFormat = "$x attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Model ops
//===----------------------------------------------------------------------===//

def Hymo_RmsNormOp : Hymo_Op<"rms_norm", [Pure, Hymo_Differentiable]> {
  let summary = "x * rsqrt(mean(x^2, -1) + eps) * w";
  let description = [{
    Over the last dim, computed in FP32 at least.
    ```mlir
    %y = hymo.rms_norm %x, %w {eps = 1.0e-6 : f64} : (tensor<2x64x64xf32>, tensor<64xf32>) -> tensor<2x64x64xf32>
    ```
    rms_norm_c1: w is 1-D of x's last dim. rms_norm_c2: eps > 0.
    rms_norm_c3: the result has x's type; w has x's element type.
  }];
  let arguments = (ins Hymo_FloatTensor:$x, Hymo_FloatTensor:$w, F64Attr:$eps);
  let results = (outs Hymo_FloatTensor:$out);
  let assemblyFormat = "$x `,` $w attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Hymo_SoftmaxOp : Hymo_Op<"softmax", [Pure, Hymo_Differentiable, SameOperandsAndResultType]> {
  let summary = "softmax over the last dim";
  let description = [{
    ```mlir
    %p = hymo.softmax %logits : tensor<128x4xf32>
    ```
  }];
  let arguments = (ins Hymo_FloatTensor:$x);
  let results = (outs Hymo_FloatTensor:$out);
  let assemblyFormat = "$x attr-dict `:` type($out)";
}

def Hymo_RopeOp : Hymo_Op<"rope", [Pure, Hymo_Differentiable, SameOperandsAndResultType]> {
  let summary = "rotate-half rotary position embedding";
  let description = [{
    Spec §2.2 on `[B,T,H,R]`, positions `0..T-1`, angle
    `t * theta^(-2i/R)`; `inverse` rotates by the negated angle (the adjoint).
    ```mlir
    %y = hymo.rope %x {theta = 10000.0 : f64} : tensor<2x64x2x8xf32>
    ```
    rope_c1: x is 4-D with an even last dim. rope_c2: theta > 0.
  }];
  let arguments = (ins Hymo_FloatTensor:$x, F64Attr:$theta,
                   DefaultValuedAttr<BoolAttr, "false">:$inverse);
  let results = (outs Hymo_FloatTensor:$out);
  let assemblyFormat = "$x attr-dict `:` type($out)";
  let hasVerifier = 1;
}

def Hymo_CausalAttentionOp : Hymo_Op<"causal_attention", [Pure, Hymo_Differentiable]> {
  let summary = "softmax_causal(q k^T * scale) v, FP32 softmax";
  let description = [{
    Per batch and head; query and key head dims may differ from the value's.
    ```mlir
    %o = hymo.causal_attention %q, %k, %v {scale = 0.2 : f64} : (tensor<2x64x2x24xf32>, tensor<2x64x2x24xf32>, tensor<2x64x2x16xf32>) -> tensor<2x64x2x16xf32>
    ```
    causal_attention_c1: q, k and v are 4-D [B,T,H,*]; q and k have one
    shape; v shares B, T, H. causal_attention_c2: the result is [B,T,H,Dv].
    causal_attention_c3: scale > 0. causal_attention_c4: one element type.
  }];
  let arguments = (ins Hymo_FloatTensor:$q, Hymo_FloatTensor:$k,
                   Hymo_FloatTensor:$v, F64Attr:$scale);
  let results = (outs Hymo_FloatTensor:$out);
  let assemblyFormat = "$q `,` $k `,` $v attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Hymo_GdnRecurrenceOp : Hymo_Op<"gdn_recurrence", [Pure, Hymo_Differentiable]> {
  let summary = "the chunked gated linear recurrence of a GDN mixer";
  let description = [{
    Per batch and head, state `h` in R^{S x D}, `h_0 = 0`:
    `h_t = diag(exp(g_t * a)) h_{t-1} + b_t v_t^T`, `o_t = c_t^T h_t`,
    state in FP32; computed chunk by chunk (`chunk_size`).
    ```mlir
    %o = hymo.gdn_recurrence %v, %b, %c, %g, %a {chunk_size = 16 : i64}
        : (tensor<2x64x4x16xf32>, tensor<2x64x4x8xf32>, tensor<2x64x4x8xf32>,
           tensor<2x64x4xf32>, tensor<4x8xf32>) -> tensor<2x64x4x16xf32>
    ```
    gdn_c1: v is [B,T,H,D]; b and c are [B,T,H,S]; g is [B,T,H]; a is [H,S].
    gdn_c2: chunk_size > 0. gdn_c3: the result has v's type; all operands
    share one element type.
  }];
  let arguments = (ins Hymo_FloatTensor:$v, Hymo_FloatTensor:$b,
                   Hymo_FloatTensor:$c, Hymo_FloatTensor:$g,
                   Hymo_FloatTensor:$a, I64Attr:$chunk_size);
  let results = (outs Hymo_FloatTensor:$out);
  let assemblyFormat = "$v `,` $b `,` $c `,` $g `,` $a attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Hymo_MoeRouteOp : Hymo_Op<"moe_route", [Pure, Hymo_Differentiable]> {
  let summary = "top-k expert selection with a routing bias";
  let description = [{
    `sel = topk(probs + bias, top_k)` (highest first, ties to the lower
    expert), `weights = probs[sel] / sum(probs[sel])`. The bias only picks.
    ```mlir
    %idx, %w = hymo.moe_route %p, %bias {top_k = 2 : i64} : (tensor<128x4xf32>, tensor<4xf32>) -> (tensor<128x2xi32>, tensor<128x2xf32>)
    ```
    moe_route_c1: probs is [N,E], bias is [E]. moe_route_c2: 1 <= top_k <= E.
    moe_route_c3: indices are [N,top_k] i32 and weights [N,top_k] of probs'
    element type.
  }];
  let arguments = (ins Hymo_FloatTensor:$probs, Hymo_FloatTensor:$bias, I64Attr:$top_k);
  let results = (outs Hymo_IndexTensor:$indices, Hymo_FloatTensor:$weights);
  let assemblyFormat = "$probs `,` $bias attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Hymo_MoeDispatchOp : Hymo_Op<"moe_dispatch", [Pure, Hymo_Differentiable]> {
  let summary = "capacity-limited scatter of tokens to expert slots";
  let description = [{
    Assignments in order (token-major, then the top-k slot); each expert
    keeps its first `capacity`; `slot[n,k] = e*capacity + position` or -1
    when dropped; unused expert rows are 0.
    ```mlir
    %xe, %slot = hymo.moe_dispatch %x, %idx {num_experts = 4 : i64, capacity = 96 : i64}
        : (tensor<128x64xf32>, tensor<128x2xi32>) -> (tensor<4x96x64xf32>, tensor<128x2xi32>)
    ```
    moe_dispatch_c1: x is [N,D], indices [N,K]. moe_dispatch_c2:
    num_experts >= 1 and capacity >= 1. moe_dispatch_c3: expert_inputs is
    [num_experts,capacity,D] of x's element type and slots [N,K].
  }];
  let arguments = (ins Hymo_FloatTensor:$x, Hymo_IndexTensor:$indices,
                   I64Attr:$num_experts, I64Attr:$capacity);
  let results = (outs Hymo_FloatTensor:$expert_inputs, Hymo_IndexTensor:$slots);
  let assemblyFormat = "$x `,` $indices attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Hymo_MoeCombineOp : Hymo_Op<"moe_combine", [Pure, Hymo_Differentiable]> {
  let summary = "weighted gather of expert outputs back to tokens";
  let description = [{
    `out[n] = sum_k (slot[n,k] >= 0) weights[n,k] * expert_outputs.flat[slot[n,k]]`.
    ```mlir
    %y = hymo.moe_combine %ye, %slot, %w : (tensor<4x96x64xf32>, tensor<128x2xi32>, tensor<128x2xf32>) -> tensor<128x64xf32>
    ```
    moe_combine_c1: expert_outputs is [E,C,D]; slots and weights are [N,K].
    moe_combine_c2: the result is [N,D]. moe_combine_c3: one float element type.
  }];
  let arguments = (ins Hymo_FloatTensor:$expert_outputs, Hymo_IndexTensor:$slots,
                   Hymo_FloatTensor:$weights);
  let results = (outs Hymo_FloatTensor:$out);
  let assemblyFormat = "$expert_outputs `,` $slots `,` $weights attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Hymo_MoeCountOp : Hymo_Op<"moe_count", [Pure, Hymo_NonDifferentiable]> {
  let summary = "assignments per expert, before the capacity drop";
  let description = [{
    ```mlir
    %n = hymo.moe_count %idx {num_experts = 4 : i64} : (tensor<128x2xi32>) -> tensor<4xf32>
    ```
    moe_count_c1: indices are 2-D; the result is 1-D of num_experts >= 1.
  }];
  let arguments = (ins Hymo_IndexTensor:$indices, I64Attr:$num_experts);
  let results = (outs Hymo_FloatTensor:$out);
  let assemblyFormat = "$indices attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Hymo_CrossEntropyOp : Hymo_Op<"cross_entropy", [Pure, Hymo_Differentiable]> {
  let summary = "mean token cross entropy";
  let description = [{
    `mean_n(logsumexp(logits[n]) - logits[n, targets[n]])`, FP32 at least.
    ```mlir
    %l = hymo.cross_entropy %logits, %t : (tensor<126x256xf32>, tensor<126xi32>) -> tensor<f32>
    ```
    cross_entropy_c1: logits are [N,V] and targets [N]. cross_entropy_c2:
    the result is a scalar of the logits' element type.
  }];
  let arguments = (ins Hymo_FloatTensor:$logits, Hymo_IndexTensor:$targets);
  let results = (outs Hymo_FloatTensor:$out);
  let assemblyFormat = "$logits `,` $targets attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Decode ops (one token per step; built by hymo-opt --hymo-decode,
// models/DecodeBuilder.cpp)
//===----------------------------------------------------------------------===//

def Hymo_RopeAtOp : Hymo_Op<"rope_at", [Pure, Hymo_NonDifferentiable]> {
  let summary = "rotate-half RoPE of one token at a run-time position";
  let description = [{
    Spec §2.2 RoPE of `x [B,H,R]` at position `pos` (a scalar i32 read at
    run time): with `h = R/2`, `a = pos * theta^(-2i/R)` (double),
    `out[i] = x[i] cos a - x[i+h] sin a`, `out[i+h] = x[i+h] cos a + x[i] sin a`.
    ```mlir
    %y = hymo.rope_at %x, %pos {theta = 10000.0 : f64} : (tensor<1x2x8xf32>, tensor<i32>) -> tensor<1x2x8xf32>
    ```
    rope_at_c1: x is [B,H,R] with even R. rope_at_c2: pos is a scalar.
    rope_at_c3: theta > 0. rope_at_c4: the result has x's type.
  }];
  let arguments = (ins Hymo_FloatTensor:$x, Hymo_IndexTensor:$pos, F64Attr:$theta);
  let results = (outs Hymo_FloatTensor:$out);
  let assemblyFormat = "$x `,` $pos attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Hymo_GdnStepOp : Hymo_Op<"gdn_step", [Pure, Hymo_NonDifferentiable]> {
  let summary = "one step of the GDN recurrence on a carried state";
  let description = [{
    Per batch and head, the recurrent form of `gdn_recurrence` for one token:
    `h' = diag(exp(g * a)) h + b v^T`, `o = c^T h'` (state `[S,D]` per head,
    computed in FP32 at least).
    ```mlir
    %o, %h2 = hymo.gdn_step %v, %b, %c, %g, %a, %h
        : (tensor<1x4x16xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4xf32>,
           tensor<4x8xf32>, tensor<1x4x8x16xf32>) -> (tensor<1x4x16xf32>, tensor<1x4x8x16xf32>)
    ```
    gdn_step_c1: v is [B,H,D]; b and c are [B,H,S]; g is [B,H]; a is [H,S].
    gdn_step_c2: state is [B,H,S,D] of f32 or f64 and new_state has its
    type. gdn_step_c3: the result out has v's type; all operands share one
    element type.
  }];
  let arguments = (ins Hymo_FloatTensor:$v, Hymo_FloatTensor:$b,
                   Hymo_FloatTensor:$c, Hymo_FloatTensor:$g,
                   Hymo_FloatTensor:$a, Hymo_FloatTensor:$state);
  let results = (outs Hymo_FloatTensor:$out, Hymo_FloatTensor:$new_state);
  let assemblyFormat = "$v `,` $b `,` $c `,` $g `,` $a `,` $state attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Hymo_CacheWriteOp : Hymo_Op<"cache_write", [Pure, Hymo_NonDifferentiable]> {
  let summary = "the cache with one row per batch replaced at a run-time position";
  let description = [{
    `out = cache; out[b, pos, :] = x[b, :]`; `pos` (scalar i32) must lie in
    `[0, L)` at run time.
    ```mlir
    %c2 = hymo.cache_write %cache, %x, %pos : (tensor<1x128x32xf32>, tensor<1x32xf32>, tensor<i32>) -> tensor<1x128x32xf32>
    ```
    cache_write_c1: cache is [B,L,R] and x is [B,R]. cache_write_c2: pos
    is a scalar. cache_write_c3: the result has the cache's type; x shares
    its element type.
  }];
  let arguments = (ins Hymo_FloatTensor:$cache, Hymo_FloatTensor:$x, Hymo_IndexTensor:$pos);
  let results = (outs Hymo_FloatTensor:$out);
  let assemblyFormat = "$cache `,` $x `,` $pos attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Hymo_LatentAttentionStepOp : Hymo_Op<"latent_attention_step", [Pure, Hymo_NonDifferentiable]> {
  let summary = "MLA attention of one query over the latent cache, positions 0..pos";
  let description = [{
    For each batch b, head h and position `t <= pos`:
    `n_t = RMSNorm(c_kv[b,t]; norm_kv, eps)`, `[k_nope; v]_t = W_kvb[h] n_t`
    (rows of head h: `[k_nope (dn) ; v (dv)]`),
    `s_t = scale * (q_nope[b,h] . k_nope_t + q_rope[b,h] . k_rope[b,t])`,
    `out[b,h] = sum_t softmax(s)_t v_t` (FP32 softmax). `k_rope` is stored
    already rotated; positions after `pos` are not read.
    ```mlir
    %o = hymo.latent_attention_step %qn, %qr, %ckv, %kr, %nkv, %wkvb, %pos {eps = 1.0e-6 : f64, scale = 0.2 : f64}
        : (tensor<1x2x16xf32>, tensor<1x2x8xf32>, tensor<1x128x32xf32>, tensor<1x128x8xf32>,
           tensor<32xf32>, tensor<64x32xf32>, tensor<i32>) -> tensor<1x2x16xf32>
    ```
    latent_attention_c1: q_nope is [B,H,dn] and q_rope [B,H,dr].
    latent_attention_c2: c_kv is [B,L,r] and k_rope [B,L,dr].
    latent_attention_c3: norm_kv is [r] and w_kvb [H*(dn+dv), r].
    latent_attention_c4: pos is a scalar. latent_attention_c5: the result is
    [B,H,dv]. latent_attention_c6: scale > 0 and eps >= 0.
    latent_attention_c7: one float element type.
  }];
  let arguments = (ins Hymo_FloatTensor:$q_nope, Hymo_FloatTensor:$q_rope,
                   Hymo_FloatTensor:$c_kv, Hymo_FloatTensor:$k_rope,
                   Hymo_FloatTensor:$norm_kv, Hymo_FloatTensor:$w_kvb,
                   Hymo_IndexTensor:$pos, F64Attr:$scale, F64Attr:$eps);
  let results = (outs Hymo_FloatTensor:$out);
  let assemblyFormat = "$q_nope `,` $q_rope `,` $c_kv `,` $k_rope `,` $norm_kv `,` $w_kvb `,` $pos attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Fused elementwise (built by hymo-fuse-elementwise)
//===----------------------------------------------------------------------===//

def Hymo_FusedElementwiseOp : Hymo_Op<"fused_elementwise", [Pure]> {
  let summary = "a chain of elementwise ops computed in one pass over memory";
  let description = [{
    `program` is a `;`-separated list of instructions `OP A [B [C]]`, OP an
    elementwise hymo op name (neg exp log sqrt rsqrt square abs sigmoid
    silu softplus sin cos isfinite add sub mul div max min greater select)
    or `eye` (no operands: 1 on the diagonal of the last two dims).
    Operands are registers `%N` or number literals. Registers `%0 ..
    %(n-1)` are the inputs (each of the results' shape, a scalar, or a
    prefix of the shape, broadcast over the trailing dims); instruction `i`
    defines register `%(n+i)`. `outputs` names
    the register of each result. All values share one element type.
    `sums` (optional) names registers whose sums are further results, after
    the `outputs` ones: the sum over the trailing dims that the result's
    shape (a prefix of the domain's, rank 0 for the whole tensor) leaves
    out, accumulated in FP64 (at least FP32) in a fixed order. The domain
    is the outputs' type, or with no outputs the input of highest rank.
    ```mlir
    %r = hymo.fused_elementwise %x, %g, %s {program = "mul %1 %2; add %0 %3", outputs = array<i64: 4>}
        : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
    %q = hymo.fused_elementwise %x {program = "square %0", outputs = array<i64>, sums = array<i64: 1>}
        : (tensor<4x8xf32>) -> tensor<4xf32>
    ```
    fused_c1: at least one result; the `outputs` results have one type (the
    domain) and every input the domain's type, its scalar or a prefix of its
    shape. fused_c2: the program parses, each instruction has its op's arity
    and reads only defined registers, and every output names a defined
    register. fused_c3: one `sums` result per sum register, each of the
    domain's element type and a shorter prefix of its shape.
  }];
  let arguments = (ins Variadic<Hymo_FloatTensor>:$inputs, StrAttr:$program,
                   DenseI64ArrayAttr:$outputs, OptionalAttr<DenseI64ArrayAttr>:$sums);
  let results = (outs Variadic<Hymo_FloatTensor>:$results);
  let assemblyFormat = "$inputs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Backward ops (built by hymo-autodiff; not differentiable themselves)
//===----------------------------------------------------------------------===//

def Hymo_EmbeddingGradOp : Hymo_Op<"embedding_grad", [Pure]> {
  let summary = "scatter-add of row adjoints into the table's adjoint";
  let description = [{
    `out[v,:] = sum over positions p with ids[p] = v of dout[p,:]`.
    ```mlir
    %dt = hymo.embedding_grad %ids, %dx : (tensor<2x8xi32>, tensor<2x8x64xf32>) -> tensor<256x64xf32>
    ```
    embedding_grad_c1: dout is `ids.shape + [D]` and the result [V,D] of
    dout's element type.
  }];
  let arguments = (ins Hymo_IndexTensor:$ids, Hymo_FloatTensor:$dout);
  let results = (outs Hymo_FloatTensor:$out);
  let assemblyFormat = "$ids `,` $dout attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Hymo_RmsNormGradOp : Hymo_Op<"rms_norm_grad", [Pure]> {
  let summary = "adjoints of rms_norm's input and weight";
  let description = [{
    ```mlir
    %dx, %dw = hymo.rms_norm_grad %x, %w, %dy {eps = 1.0e-6 : f64} : (tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>)
    ```
    rms_norm_grad_c1: dout and dx have x's type, dw has w's type.
  }];
  let arguments = (ins Hymo_FloatTensor:$x, Hymo_FloatTensor:$w,
                   Hymo_FloatTensor:$dout, F64Attr:$eps);
  let results = (outs Hymo_FloatTensor:$dx, Hymo_FloatTensor:$dw);
  let assemblyFormat = "$x `,` $w `,` $dout attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Hymo_SoftmaxGradOp : Hymo_Op<"softmax_grad", [Pure, SameOperandsAndResultType]> {
  let summary = "softmax's VJP from its output: y * (dy - sum(dy * y))";
  let description = [{
    ```mlir
    %dx = hymo.softmax_grad %y, %dy : tensor<128x4xf32>
    ```
  }];
  let arguments = (ins Hymo_FloatTensor:$out, Hymo_FloatTensor:$dout);
  let results = (outs Hymo_FloatTensor:$dx);
  let assemblyFormat = "$out `,` $dout attr-dict `:` type($dx)";
}

def Hymo_CausalAttentionGradOp : Hymo_Op<"causal_attention_grad", [Pure]> {
  let summary = "adjoints of causal_attention's q, k and v";
  let description = [{
    ```mlir
    %dq, %dk, %dv = hymo.causal_attention_grad %q, %k, %v, %do {scale = 0.2 : f64}
        : (tensor<2x16x2x24xf32>, tensor<2x16x2x24xf32>, tensor<2x16x2x16xf32>, tensor<2x16x2x16xf32>)
        -> (tensor<2x16x2x24xf32>, tensor<2x16x2x24xf32>, tensor<2x16x2x16xf32>)
    ```
    causal_attention_grad_c1: dout has v's type; dq, dk, dv have q's, k's
    and v's types.
  }];
  let arguments = (ins Hymo_FloatTensor:$q, Hymo_FloatTensor:$k, Hymo_FloatTensor:$v,
                   Hymo_FloatTensor:$dout, F64Attr:$scale);
  let results = (outs Hymo_FloatTensor:$dq, Hymo_FloatTensor:$dk, Hymo_FloatTensor:$dv);
  let assemblyFormat = "$q `,` $k `,` $v `,` $dout attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Hymo_GdnRecurrenceGradOp : Hymo_Op<"gdn_recurrence_grad", [Pure]> {
  let summary = "adjoints of gdn_recurrence's v, b, c, g and a";
  let description = [{
    ```mlir
    %dv, %db, %dc, %dg, %da = hymo.gdn_recurrence_grad %v, %b, %c, %g, %a, %do {chunk_size = 16 : i64}
        : (tensor<2x16x4x16xf32>, tensor<2x16x4x8xf32>, tensor<2x16x4x8xf32>, tensor<2x16x4xf32>, tensor<4x8xf32>, tensor<2x16x4x16xf32>)
        -> (tensor<2x16x4x16xf32>, tensor<2x16x4x8xf32>, tensor<2x16x4x8xf32>, tensor<2x16x4xf32>, tensor<4x8xf32>)
    ```
    gdn_grad_c1: dout has v's type; each adjoint has its operand's type.
  }];
  let arguments = (ins Hymo_FloatTensor:$v, Hymo_FloatTensor:$b, Hymo_FloatTensor:$c,
                   Hymo_FloatTensor:$g, Hymo_FloatTensor:$a, Hymo_FloatTensor:$dout,
                   I64Attr:$chunk_size);
  let results = (outs Hymo_FloatTensor:$dv, Hymo_FloatTensor:$db, Hymo_FloatTensor:$dc,
                      Hymo_FloatTensor:$dg, Hymo_FloatTensor:$da);
  let assemblyFormat = "$v `,` $b `,` $c `,` $g `,` $a `,` $dout attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Hymo_MoeRouteGradOp : Hymo_Op<"moe_route_grad", [Pure]> {
  let summary = "adjoint of the router probabilities through the combine weights";
  let description = [{
    With `s = sum_k probs[n, sel_k]` and `w_k = probs[n, sel_k] / s`:
    `dprobs[n, sel_j] = (dweights[n,j] - sum_k dweights[n,k] w_k) / s`, zero
    elsewhere.
    ```mlir
    %dp = hymo.moe_route_grad %p, %idx, %dw : (tensor<128x4xf32>, tensor<128x2xi32>, tensor<128x2xf32>) -> tensor<128x4xf32>
    ```
    moe_route_grad_c1: indices and dweights are [N,K]; the result has
    probs' type.
  }];
  let arguments = (ins Hymo_FloatTensor:$probs, Hymo_IndexTensor:$indices,
                   Hymo_FloatTensor:$dweights);
  let results = (outs Hymo_FloatTensor:$dprobs);
  let assemblyFormat = "$probs `,` $indices `,` $dweights attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Hymo_MoeCombineGradOp : Hymo_Op<"moe_combine_grad", [Pure]> {
  let summary = "adjoints of moe_combine's expert outputs and weights";
  let description = [{
    `dexpert_outputs.flat[slot[n,k]] = weights[n,k] * dout[n]` (zero in
    unused slots); `dweights[n,k] = dout[n] . expert_outputs.flat[slot[n,k]]`
    (zero when dropped).
    ```mlir
    %dye, %dw = hymo.moe_combine_grad %ye, %slot, %w, %dy : (tensor<4x96x64xf32>, tensor<128x2xi32>, tensor<128x2xf32>, tensor<128x64xf32>) -> (tensor<4x96x64xf32>, tensor<128x2xf32>)
    ```
    moe_combine_grad_c1: dexpert_outputs has expert_outputs' type, dweights
    has weights' type, dout is [N,D].
  }];
  let arguments = (ins Hymo_FloatTensor:$expert_outputs, Hymo_IndexTensor:$slots,
                   Hymo_FloatTensor:$weights, Hymo_FloatTensor:$dout);
  let results = (outs Hymo_FloatTensor:$dexpert_outputs, Hymo_FloatTensor:$dweights);
  let assemblyFormat = "$expert_outputs `,` $slots `,` $weights `,` $dout attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Hymo_CrossEntropyGradOp : Hymo_Op<"cross_entropy_grad", [Pure]> {
  let summary = "adjoint of the logits of a mean cross entropy";
  let description = [{
    `dlogits[n] = dloss * (softmax(logits[n]) - onehot(targets[n])) / N`.
    ```mlir
    %dl = hymo.cross_entropy_grad %logits, %t, %dloss : (tensor<126x256xf32>, tensor<126xi32>, tensor<f32>) -> tensor<126x256xf32>
    ```
    cross_entropy_grad_c1: the result has the logits' type; dloss is a
    scalar.
  }];
  let arguments = (ins Hymo_FloatTensor:$logits, Hymo_IndexTensor:$targets,
                   Hymo_FloatTensor:$dloss);
  let results = (outs Hymo_FloatTensor:$dlogits);
  let assemblyFormat = "$logits `,` $targets `,` $dloss attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

#endif // HYMO_OPS_TD
