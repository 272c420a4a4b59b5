// Verifiers of the hymo ops. Each message starts with the constraint's label
// (docs/dialect.md, HymoOps.td) and says what was expected and what was found.
#include "dialects/Hymo/IR/HymoOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::hymo;

#include "dialects/Hymo/IR/HymoOpsDialect.cpp.inc"

void HymoDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/Hymo/IR/HymoOps.cpp.inc"
      >();
}

namespace {

RankedTensorType tt(Value v) { return cast<RankedTensorType>(v.getType()); }

std::string shapeStr(ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "[";
  llvm::interleave(shape, os, ",");
  os << "]";
  return s;
}

// Checks that every value has one element type.
LogicalResult sameElementType(Operation *op, StringRef label,
                              ArrayRef<Value> values) {
  Type first = tt(values.front()).getElementType();
  for (Value v : values.drop_front())
    if (tt(v).getElementType() != first)
      return op->emitOpError() << label << ": expected element type "
                               << first << " everywhere, got "
                               << tt(v).getElementType();
  return success();
}

LogicalResult expectShape(Operation *op, StringRef label, StringRef what,
                          Value v, ArrayRef<int64_t> expected) {
  if (tt(v).getShape() != expected)
    return op->emitOpError() << label << ": expected " << what << " shape "
                             << shapeStr(expected) << ", got "
                             << shapeStr(tt(v).getShape());
  return success();
}

LogicalResult expectRank(Operation *op, StringRef label, StringRef what,
                         Value v, int64_t rank) {
  if (tt(v).getRank() != rank)
    return op->emitOpError() << label << ": expected " << what << " of rank "
                             << rank << ", got rank " << tt(v).getRank();
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

LogicalResult EyeOp::verify() {
  if (tt(getOut()).getRank() < 2)
    return emitOpError() << "eye_c1: expected a result of rank >= 2, got rank "
                         << tt(getOut()).getRank();
  return success();
}

LogicalResult EmbeddingOp::verify() {
  if (failed(expectRank(*this, "embedding_c1", "table", getTable(), 2)))
    return failure();
  SmallVector<int64_t> shape(tt(getIds()).getShape());
  shape.push_back(tt(getTable()).getDimSize(1));
  if (failed(expectShape(*this, "embedding_c2", "result", getOut(), shape)))
    return failure();
  return sameElementType(*this, "embedding_c3", {getTable(), getOut()});
}

LogicalResult LinearOp::verify() {
  if (failed(expectRank(*this, "linear_c1", "weight", getW(), 2)))
    return failure();
  auto x = tt(getX()), w = tt(getW());
  if (x.getRank() < 1 || x.getShape().back() != w.getDimSize(1))
    return emitOpError() << "linear_c2: expected input last dim "
                         << w.getDimSize(1) << " (weight is (out, in) = "
                         << shapeStr(w.getShape()) << "), got "
                         << shapeStr(x.getShape());
  SmallVector<int64_t> shape(x.getShape().drop_back());
  shape.push_back(w.getDimSize(0));
  if (failed(expectShape(*this, "linear_c3", "result", getOut(), shape)))
    return failure();
  return sameElementType(*this, "linear_c4", {getX(), getW(), getOut()});
}

LogicalResult MatmulOp::verify() {
  auto a = tt(getA()), b = tt(getB());
  if (a.getRank() < 2 || a.getRank() != b.getRank() ||
      a.getShape().drop_back(2) != b.getShape().drop_back(2))
    return emitOpError() << "matmul_c1: expected operands of one rank >= 2 "
                            "with equal batch dims, got "
                         << shapeStr(a.getShape()) << " and "
                         << shapeStr(b.getShape());
  int64_t r = a.getRank();
  int64_t m = getTransposeA() ? a.getDimSize(r - 1) : a.getDimSize(r - 2);
  int64_t ka = getTransposeA() ? a.getDimSize(r - 2) : a.getDimSize(r - 1);
  int64_t kb = getTransposeB() ? b.getDimSize(r - 1) : b.getDimSize(r - 2);
  int64_t n = getTransposeB() ? b.getDimSize(r - 2) : b.getDimSize(r - 1);
  if (ka != kb)
    return emitOpError() << "matmul_c2: expected equal contraction dims, got "
                         << ka << " and " << kb;
  SmallVector<int64_t> shape(a.getShape().drop_back(2));
  shape.push_back(m);
  shape.push_back(n);
  if (failed(expectShape(*this, "matmul_c3", "result", getOut(), shape)))
    return failure();
  return sameElementType(*this, "matmul_c4", {getA(), getB(), getOut()});
}

LogicalResult GroupedLinearOp::verify() {
  auto x = tt(getX()), w = tt(getW());
  if (x.getRank() != 3 || w.getRank() != 3 ||
      x.getDimSize(0) != w.getDimSize(0) || x.getDimSize(2) != w.getDimSize(2))
    return emitOpError() << "grouped_linear_c1: expected x [E,C,K] and w "
                            "[E,N,K], got "
                         << shapeStr(x.getShape()) << " and "
                         << shapeStr(w.getShape());
  if (failed(expectShape(*this, "grouped_linear_c2", "result", getOut(),
                         {x.getDimSize(0), x.getDimSize(1), w.getDimSize(1)})))
    return failure();
  return sameElementType(*this, "grouped_linear_c3", {getX(), getW(), getOut()});
}

//===----------------------------------------------------------------------===//

namespace {
LogicalResult verifyReduce(Operation *op, Value x, ArrayRef<int64_t> dims,
                           bool keepDims, Value out) {
  int64_t rank = tt(x).getRank();
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] < 0 || dims[i] >= rank || (i > 0 && dims[i] <= dims[i - 1]))
      return op->emitOpError()
             << "reduce_c1: expected sorted unique dims in [0, " << rank
             << "), got " << shapeStr(dims);
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    bool reduced = llvm::is_contained(dims, d);
    if (!reduced)
      shape.push_back(tt(x).getDimSize(d));
    else if (keepDims)
      shape.push_back(1);
  }
  if (failed(expectShape(op, "reduce_c2", "result", out, shape)))
    return failure();
  return sameElementType(op, "reduce_c3", {x, out});
}
} // namespace

LogicalResult ReduceSumOp::verify() {
  return verifyReduce(*this, getX(), getDims(), getKeepDims(), getOut());
}
LogicalResult ReduceMeanOp::verify() {
  return verifyReduce(*this, getX(), getDims(), getKeepDims(), getOut());
}
LogicalResult ReduceMaxOp::verify() {
  return verifyReduce(*this, getX(), getDims(), getKeepDims(), getOut());
}

//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  auto x = tt(getX()), out = tt(getOut());
  if (x.getNumElements() != out.getNumElements() ||
      x.getElementType() != out.getElementType())
    return emitOpError() << "reshape_c1: expected " << x.getNumElements()
                         << " elements of " << x.getElementType() << ", got "
                         << out.getNumElements() << " of "
                         << out.getElementType();
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor) {
  if (getX().getType() == getOut().getType())
    return getX();
  return {};
}

LogicalResult TransposeOp::verify() {
  auto x = tt(getX());
  ArrayRef<int64_t> perm = getPermutation();
  SmallVector<bool> seen(x.getRank(), false);
  bool ok = static_cast<int64_t>(perm.size()) == x.getRank();
  for (int64_t p : perm) {
    if (!ok || p < 0 || p >= x.getRank() || seen[p]) {
      ok = false;
      break;
    }
    seen[p] = true;
  }
  if (!ok)
    return emitOpError() << "transpose_c1: expected a permutation of 0.."
                         << x.getRank() - 1 << ", got " << shapeStr(perm);
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(x.getDimSize(p));
  if (failed(expectShape(*this, "transpose_c2", "result", getOut(), shape)))
    return failure();
  return sameElementType(*this, "transpose_c2", {getX(), getOut()});
}

LogicalResult SliceOp::verify() {
  auto x = tt(getX());
  ArrayRef<int64_t> start = getStart(), limit = getLimit();
  bool ok = static_cast<int64_t>(start.size()) == x.getRank() &&
            static_cast<int64_t>(limit.size()) == x.getRank();
  SmallVector<int64_t> shape;
  for (int64_t d = 0; ok && d < x.getRank(); ++d) {
    ok = 0 <= start[d] && start[d] <= limit[d] && limit[d] <= x.getDimSize(d);
    shape.push_back(limit[d] - start[d]);
  }
  if (!ok)
    return emitOpError() << "slice_c1: expected 0 <= start <= limit <= "
                         << shapeStr(x.getShape()) << ", got start "
                         << shapeStr(start) << " limit " << shapeStr(limit);
  if (failed(expectShape(*this, "slice_c2", "result", getOut(), shape)))
    return failure();
  return sameElementType(*this, "slice_c2", {getX(), getOut()});
}

LogicalResult PadOp::verify() {
  auto x = tt(getX());
  ArrayRef<int64_t> low = getLow(), high = getHigh();
  bool ok = static_cast<int64_t>(low.size()) == x.getRank() &&
            static_cast<int64_t>(high.size()) == x.getRank();
  SmallVector<int64_t> shape;
  for (int64_t d = 0; ok && d < x.getRank(); ++d) {
    ok = low[d] >= 0 && high[d] >= 0;
    shape.push_back(low[d] + x.getDimSize(d) + high[d]);
  }
  if (!ok)
    return emitOpError() << "pad_c1: expected one non-negative low and high "
                            "per dim of "
                         << shapeStr(x.getShape()) << ", got low "
                         << shapeStr(low) << " high " << shapeStr(high);
  if (failed(expectShape(*this, "pad_c2", "result", getOut(), shape)))
    return failure();
  return sameElementType(*this, "pad_c2", {getX(), getOut()});
}

LogicalResult ConcatOp::verify() {
  if (getInputs().empty())
    return emitOpError() << "concat_c1: expected at least one operand, got 0";
  auto first = tt(getInputs().front());
  int64_t rank = first.getRank(), dim = getDim();
  if (dim < 0 || dim >= rank)
    return emitOpError() << "concat_c1: expected dim in [0, " << rank
                         << "), got " << dim;
  SmallVector<int64_t> shape(first.getShape());
  shape[dim] = 0;
  for (Value v : getInputs()) {
    auto t = tt(v);
    if (t.getRank() != rank || t.getElementType() != first.getElementType())
      return emitOpError() << "concat_c1: expected operands of rank " << rank
                           << " and element type " << first.getElementType()
                           << ", got " << t;
    for (int64_t d = 0; d < rank; ++d)
      if (d != dim && t.getDimSize(d) != first.getDimSize(d))
        return emitOpError() << "concat_c2: expected operands to agree off dim "
                             << dim << ", got " << shapeStr(first.getShape())
                             << " and " << shapeStr(t.getShape());
    shape[dim] += t.getDimSize(dim);
  }
  if (failed(expectShape(*this, "concat_c3", "result", getOut(), shape)))
    return failure();
  return sameElementType(*this, "concat_c1", {getInputs().front(), getOut()});
}

LogicalResult BroadcastInDimOp::verify() {
  auto x = tt(getX()), out = tt(getOut());
  ArrayRef<int64_t> dims = getDims();
  bool ok = static_cast<int64_t>(dims.size()) == x.getRank();
  for (size_t i = 0; ok && i < dims.size(); ++i)
    ok = dims[i] >= 0 && dims[i] < out.getRank() &&
         (i == 0 || dims[i] > dims[i - 1]);
  if (!ok)
    return emitOpError() << "broadcast_c1: expected " << x.getRank()
                         << " increasing dims in [0, " << out.getRank()
                         << "), got " << shapeStr(dims);
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t s = x.getDimSize(i);
    if (s != 1 && s != out.getDimSize(dims[i]))
      return emitOpError() << "broadcast_c2: expected operand dim " << i
                           << " to be 1 or " << out.getDimSize(dims[i])
                           << ", got " << s;
  }
  return sameElementType(*this, "broadcast_c3", {getX(), getOut()});
}

//===----------------------------------------------------------------------===//

LogicalResult RmsNormOp::verify() {
  auto x = tt(getX());
  if (x.getRank() < 1)
    return emitOpError() << "rms_norm_c1: expected an input of rank >= 1";
  if (failed(expectShape(*this, "rms_norm_c1", "weight", getW(),
                         {x.getShape().back()})))
    return failure();
  if (!(getEps().convertToDouble() > 0))
    return emitOpError() << "rms_norm_c2: expected eps > 0, got "
                         << getEps().convertToDouble();
  if (getOut().getType() != x)
    return emitOpError() << "rms_norm_c3: expected result type " << x
                         << ", got " << getOut().getType();
  return sameElementType(*this, "rms_norm_c3", {getX(), getW()});
}

LogicalResult RopeOp::verify() {
  auto x = tt(getX());
  if (x.getRank() != 4 || x.getShape().back() % 2 != 0)
    return emitOpError() << "rope_c1: expected [B,T,H,R] with even R, got "
                         << shapeStr(x.getShape());
  if (!(getTheta().convertToDouble() > 0))
    return emitOpError() << "rope_c2: expected theta > 0, got "
                         << getTheta().convertToDouble();
  return success();
}

LogicalResult CausalAttentionOp::verify() {
  auto q = tt(getQ()), k = tt(getK()), v = tt(getV());
  if (q.getRank() != 4 || k.getShape() != q.getShape() || v.getRank() != 4 ||
      v.getShape().take_front(3) != q.getShape().take_front(3))
    return emitOpError() << "causal_attention_c1: expected q, k [B,T,H,Dk] "
                            "of one shape and v [B,T,H,Dv], got "
                         << shapeStr(q.getShape()) << ", "
                         << shapeStr(k.getShape()) << ", "
                         << shapeStr(v.getShape());
  if (failed(expectShape(*this, "causal_attention_c2", "result", getOut(),
                         v.getShape())))
    return failure();
  if (!(getScale().convertToDouble() > 0))
    return emitOpError() << "causal_attention_c3: expected scale > 0, got "
                         << getScale().convertToDouble();
  return sameElementType(*this, "causal_attention_c4",
                         {getQ(), getK(), getV(), getOut()});
}

LogicalResult GdnRecurrenceOp::verify() {
  auto v = tt(getV());
  if (failed(expectRank(*this, "gdn_c1", "v", getV(), 4)))
    return failure();
  int64_t B = v.getDimSize(0), T = v.getDimSize(1), H = v.getDimSize(2);
  auto b = tt(getB());
  if (b.getRank() != 4 || b.getShape().take_front(3) != v.getShape().take_front(3))
    return emitOpError() << "gdn_c1: expected b [" << B << "," << T << "," << H
                         << ",S], got " << shapeStr(b.getShape());
  int64_t S = b.getDimSize(3);
  if (failed(expectShape(*this, "gdn_c1", "c", getC(), b.getShape())) ||
      failed(expectShape(*this, "gdn_c1", "g", getG(), {B, T, H})) ||
      failed(expectShape(*this, "gdn_c1", "a", getA(), {H, S})))
    return failure();
  if (getChunkSize() <= 0)
    return emitOpError() << "gdn_c2: expected chunk_size > 0, got "
                         << getChunkSize();
  if (getOut().getType() != v)
    return emitOpError() << "gdn_c3: expected result type " << v << ", got "
                         << getOut().getType();
  return sameElementType(*this, "gdn_c3",
                         {getV(), getB(), getC(), getG(), getA()});
}

LogicalResult MoeRouteOp::verify() {
  auto p = tt(getProbs());
  if (failed(expectRank(*this, "moe_route_c1", "probs", getProbs(), 2)))
    return failure();
  int64_t N = p.getDimSize(0), E = p.getDimSize(1), K = getTopK();
  if (failed(expectShape(*this, "moe_route_c1", "bias", getBias(), {E})))
    return failure();
  if (K < 1 || K > E)
    return emitOpError() << "moe_route_c2: expected 1 <= top_k <= " << E
                         << ", got " << K;
  if (failed(expectShape(*this, "moe_route_c3", "indices", getIndices(), {N, K})) ||
      failed(expectShape(*this, "moe_route_c3", "weights", getWeights(), {N, K})))
    return failure();
  return sameElementType(*this, "moe_route_c3",
                         {getProbs(), getBias(), getWeights()});
}

LogicalResult MoeDispatchOp::verify() {
  if (failed(expectRank(*this, "moe_dispatch_c1", "x", getX(), 2)) ||
      failed(expectRank(*this, "moe_dispatch_c1", "indices", getIndices(), 2)))
    return failure();
  auto x = tt(getX()), idx = tt(getIndices());
  if (idx.getDimSize(0) != x.getDimSize(0))
    return emitOpError() << "moe_dispatch_c1: expected indices for "
                         << x.getDimSize(0) << " tokens, got "
                         << idx.getDimSize(0);
  if (getNumExperts() < 1 || getCapacity() < 1)
    return emitOpError() << "moe_dispatch_c2: expected num_experts >= 1 and "
                            "capacity >= 1, got "
                         << getNumExperts() << " and " << getCapacity();
  if (failed(expectShape(*this, "moe_dispatch_c3", "expert_inputs",
                         getExpertInputs(),
                         {static_cast<int64_t>(getNumExperts()),
                          static_cast<int64_t>(getCapacity()), x.getDimSize(1)})) ||
      failed(expectShape(*this, "moe_dispatch_c3", "slots", getSlots(),
                         idx.getShape())))
    return failure();
  return sameElementType(*this, "moe_dispatch_c3", {getX(), getExpertInputs()});
}

LogicalResult MoeCombineOp::verify() {
  if (failed(expectRank(*this, "moe_combine_c1", "expert_outputs",
                        getExpertOutputs(), 3)) ||
      failed(expectRank(*this, "moe_combine_c1", "slots", getSlots(), 2)) ||
      failed(expectShape(*this, "moe_combine_c1", "weights", getWeights(),
                         tt(getSlots()).getShape())))
    return failure();
  if (failed(expectShape(*this, "moe_combine_c2", "result", getOut(),
                         {tt(getSlots()).getDimSize(0),
                          tt(getExpertOutputs()).getDimSize(2)})))
    return failure();
  return sameElementType(*this, "moe_combine_c3",
                         {getExpertOutputs(), getWeights(), getOut()});
}

LogicalResult MoeCountOp::verify() {
  if (failed(expectRank(*this, "moe_count_c1", "indices", getIndices(), 2)))
    return failure();
  if (getNumExperts() < 1)
    return emitOpError() << "moe_count_c1: expected num_experts >= 1, got "
                         << getNumExperts();
  return expectShape(*this, "moe_count_c1", "result", getOut(),
                     {static_cast<int64_t>(getNumExperts())});
}

LogicalResult CrossEntropyOp::verify() {
  if (failed(expectRank(*this, "cross_entropy_c1", "logits", getLogits(), 2)) ||
      failed(expectShape(*this, "cross_entropy_c1", "targets", getTargets(),
                         {tt(getLogits()).getDimSize(0)})))
    return failure();
  if (failed(expectShape(*this, "cross_entropy_c2", "result", getOut(), {})))
    return failure();
  return sameElementType(*this, "cross_entropy_c2", {getLogits(), getOut()});
}

//===----------------------------------------------------------------------===//
// Backward ops
//===----------------------------------------------------------------------===//

namespace {
LogicalResult expectType(Operation *op, StringRef label, StringRef what,
                         Value v, Type expected) {
  if (v.getType() != expected)
    return op->emitOpError() << label << ": expected " << what << " of type "
                             << expected << ", got " << v.getType();
  return success();
}
} // namespace

LogicalResult EmbeddingGradOp::verify() {
  auto d = tt(getDout());
  SmallVector<int64_t> shape(tt(getIds()).getShape());
  shape.push_back(d.getShape().empty() ? 0 : d.getShape().back());
  if (failed(expectShape(*this, "embedding_grad_c1", "dout", getDout(), shape)) ||
      failed(expectRank(*this, "embedding_grad_c1", "result", getOut(), 2)))
    return failure();
  if (tt(getOut()).getDimSize(1) != shape.back())
    return emitOpError() << "embedding_grad_c1: expected result width "
                         << shape.back() << ", got " << tt(getOut()).getDimSize(1);
  return sameElementType(*this, "embedding_grad_c1", {getDout(), getOut()});
}

LogicalResult RmsNormGradOp::verify() {
  if (failed(expectType(*this, "rms_norm_grad_c1", "dout", getDout(), getX().getType())) ||
      failed(expectType(*this, "rms_norm_grad_c1", "dx", getDx(), getX().getType())) ||
      failed(expectType(*this, "rms_norm_grad_c1", "dw", getDw(), getW().getType())))
    return failure();
  return success();
}

LogicalResult CausalAttentionGradOp::verify() {
  if (failed(expectType(*this, "causal_attention_grad_c1", "dout", getDout(), getV().getType())) ||
      failed(expectType(*this, "causal_attention_grad_c1", "dq", getDq(), getQ().getType())) ||
      failed(expectType(*this, "causal_attention_grad_c1", "dk", getDk(), getK().getType())) ||
      failed(expectType(*this, "causal_attention_grad_c1", "dv", getDv(), getV().getType())))
    return failure();
  return success();
}

LogicalResult GdnRecurrenceGradOp::verify() {
  if (failed(expectType(*this, "gdn_grad_c1", "dout", getDout(), getV().getType())) ||
      failed(expectType(*this, "gdn_grad_c1", "dv", getDv(), getV().getType())) ||
      failed(expectType(*this, "gdn_grad_c1", "db", getDb(), getB().getType())) ||
      failed(expectType(*this, "gdn_grad_c1", "dc", getDc(), getC().getType())) ||
      failed(expectType(*this, "gdn_grad_c1", "dg", getDg(), getG().getType())) ||
      failed(expectType(*this, "gdn_grad_c1", "da", getDa(), getA().getType())))
    return failure();
  return success();
}

LogicalResult MoeRouteGradOp::verify() {
  if (failed(expectRank(*this, "moe_route_grad_c1", "indices", getIndices(), 2)) ||
      failed(expectShape(*this, "moe_route_grad_c1", "dweights", getDweights(),
                         tt(getIndices()).getShape())) ||
      failed(expectType(*this, "moe_route_grad_c1", "dprobs", getDprobs(), getProbs().getType())))
    return failure();
  return success();
}

LogicalResult MoeCombineGradOp::verify() {
  if (failed(expectType(*this, "moe_combine_grad_c1", "dexpert_outputs",
                        getDexpertOutputs(), getExpertOutputs().getType())) ||
      failed(expectType(*this, "moe_combine_grad_c1", "dweights", getDweights(),
                        getWeights().getType())) ||
      failed(expectRank(*this, "moe_combine_grad_c1", "dout", getDout(), 2)))
    return failure();
  return success();
}

LogicalResult CrossEntropyGradOp::verify() {
  if (failed(expectType(*this, "cross_entropy_grad_c1", "dlogits", getDlogits(),
                        getLogits().getType())) ||
      failed(expectShape(*this, "cross_entropy_grad_c1", "dloss", getDloss(), {})))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// Fused elementwise
//===----------------------------------------------------------------------===//

int mlir::hymo::fusedOpArity(StringRef op) {
  static const llvm::StringMap<int> arity = {
      {"eye", 0},
      {"neg", 1},     {"exp", 1},     {"log", 1},      {"sqrt", 1},   {"rsqrt", 1},
      {"square", 1},  {"abs", 1},     {"sigmoid", 1},  {"silu", 1},   {"softplus", 1},
      {"sin", 1},     {"cos", 1},     {"isfinite", 1}, {"add", 2},    {"sub", 2},
      {"mul", 2},     {"div", 2},     {"max", 2},      {"min", 2},    {"greater", 2},
      {"select", 3}};
  auto it = arity.find(op);
  return it == arity.end() ? -1 : it->second;
}

LogicalResult FusedElementwiseOp::verify() {
  if (getResults().empty())
    return emitOpError() << "fused_c1: expected at least one result";
  ArrayRef<int64_t> sums = getSums() ? *getSums() : ArrayRef<int64_t>();
  size_t nOut = getOutputs().size();
  if (nOut + sums.size() != getResults().size())
    return emitOpError() << "fused_c2: expected " << getResults().size()
                         << " outputs and sums, got " << nOut << " + " << sums.size();
  // The domain: the outputs' type, or with none the input of highest rank.
  RankedTensorType type;
  if (nOut > 0) {
    type = tt(getResults().front());
  } else {
    for (Value in : getInputs())
      if (!type || tt(in).getRank() > type.getRank())
        type = tt(in);
    if (!type)
      return emitOpError() << "fused_c1: expected an output or an input to give the domain";
  }
  for (Value r : getResults().take_front(nOut))
    if (r.getType() != type)
      return emitOpError() << "fused_c1: expected every result of type " << type
                           << ", got " << r.getType();
  for (Value in : getInputs()) {
    auto t = tt(in);
    // The results' shape, a scalar, or a prefix of the shape (broadcast
    // over the trailing dims).
    bool prefix = t.getRank() < type.getRank() &&
                  t.getShape() == type.getShape().take_front(t.getRank());
    if (t.getElementType() != type.getElementType() ||
        (t.getShape() != type.getShape() && !prefix))
      return emitOpError() << "fused_c1: expected inputs of type " << type
                           << ", its scalar or a prefix of its shape, got " << t;
  }
  int64_t defined = getInputs().size();
  SmallVector<StringRef> insts;
  getProgram().split(insts, ';', -1, /*KeepEmpty=*/false);
  for (StringRef inst : insts) {
    SmallVector<StringRef> tok;
    inst.trim().split(tok, ' ', -1, /*KeepEmpty=*/false);
    if (tok.empty())
      return emitOpError() << "fused_c2: expected an instruction, got ''";
    int arity = fusedOpArity(tok[0]);
    if (arity < 0)
      return emitOpError() << "fused_c2: expected an elementwise op name, got '"
                           << tok[0] << "'";
    if (static_cast<int>(tok.size()) - 1 != arity)
      return emitOpError() << "fused_c2: expected " << arity << " operands for "
                           << tok[0] << ", got " << tok.size() - 1;
    for (StringRef operand : ArrayRef<StringRef>(tok).drop_front()) {
      if (operand.consume_front("%")) {
        int64_t reg;
        if (operand.getAsInteger(10, reg) || reg < 0 || reg >= defined)
          return emitOpError() << "fused_c2: expected a register below %" << defined
                               << ", got '%" << operand << "'";
      } else {
        double v;
        if (operand.getAsDouble(v))
          return emitOpError() << "fused_c2: expected a register or a number, got '"
                               << operand << "'";
      }
    }
    ++defined;
  }
  for (int64_t o : getOutputs())
    if (o < 0 || o >= defined)
      return emitOpError() << "fused_c2: expected output registers below %" << defined
                           << ", got %" << o;
  for (auto [i, reg] : llvm::enumerate(sums)) {
    if (reg < 0 || reg >= defined)
      return emitOpError() << "fused_c3: expected sum registers below %" << defined
                           << ", got %" << reg;
    auto t = tt(getResult(nOut + i));
    if (t.getElementType() != type.getElementType() || t.getRank() >= type.getRank() ||
        t.getShape() != type.getShape().take_front(t.getRank()))
      return emitOpError() << "fused_c3: expected sum " << i << " to be a shorter prefix of "
                           << type << ", got " << t;
  }
  return success();
}

#include "dialects/Hymo/IR/HymoInterfaces.cpp.inc"

#define GET_OP_CLASSES
#include "dialects/Hymo/IR/HymoOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Decode ops
//===----------------------------------------------------------------------===//

namespace {
LogicalResult expectScalar(Operation *op, StringRef label, Value v) {
  if (tt(v).getRank() != 0)
    return op->emitOpError() << label << ": expected pos to be a scalar, got "
                             << shapeStr(tt(v).getShape());
  return success();
}
} // namespace

LogicalResult RopeAtOp::verify() {
  auto x = tt(getX());
  if (x.getRank() != 3 || x.getShape().back() % 2 != 0)
    return emitOpError() << "rope_at_c1: expected [B,H,R] with even R, got "
                         << shapeStr(x.getShape());
  if (failed(expectScalar(*this, "rope_at_c2", getPos())))
    return failure();
  if (!(getTheta().convertToDouble() > 0))
    return emitOpError() << "rope_at_c3: expected theta > 0, got "
                         << getTheta().convertToDouble();
  if (getOut().getType() != x)
    return emitOpError() << "rope_at_c4: expected result type " << x
                         << ", got " << getOut().getType();
  return success();
}

LogicalResult GdnStepOp::verify() {
  if (failed(expectRank(*this, "gdn_step_c1", "v", getV(), 3)))
    return failure();
  auto v = tt(getV());
  int64_t B = v.getDimSize(0), H = v.getDimSize(1), D = v.getDimSize(2);
  auto b = tt(getB());
  if (b.getRank() != 3 || b.getDimSize(0) != B || b.getDimSize(1) != H)
    return emitOpError() << "gdn_step_c1: expected b [" << B << "," << H
                         << ",S], got " << shapeStr(b.getShape());
  int64_t S = b.getDimSize(2);
  if (failed(expectShape(*this, "gdn_step_c1", "c", getC(), b.getShape())) ||
      failed(expectShape(*this, "gdn_step_c1", "g", getG(), {B, H})) ||
      failed(expectShape(*this, "gdn_step_c1", "a", getA(), {H, S})))
    return failure();
  auto st = tt(getState());
  if (failed(expectShape(*this, "gdn_step_c2", "state", getState(), {B, H, S, D})))
    return failure();
  if (!st.getElementType().isF32() && !st.getElementType().isF64())
    return emitOpError() << "gdn_step_c2: expected an f32 or f64 state, got "
                         << st.getElementType();
  if (getNewState().getType() != st)
    return emitOpError() << "gdn_step_c2: expected new_state type " << st
                         << ", got " << getNewState().getType();
  if (getOut().getType() != v)
    return emitOpError() << "gdn_step_c3: expected result type " << v
                         << ", got " << getOut().getType();
  return sameElementType(*this, "gdn_step_c3",
                         {getV(), getB(), getC(), getG(), getA(), getState()});
}

LogicalResult CacheWriteOp::verify() {
  if (failed(expectRank(*this, "cache_write_c1", "cache", getCache(), 3)))
    return failure();
  auto c = tt(getCache());
  if (failed(expectShape(*this, "cache_write_c1", "x", getX(),
                         {c.getDimSize(0), c.getDimSize(2)})))
    return failure();
  if (failed(expectScalar(*this, "cache_write_c2", getPos())))
    return failure();
  if (getOut().getType() != c)
    return emitOpError() << "cache_write_c3: expected result type " << c
                         << ", got " << getOut().getType();
  return sameElementType(*this, "cache_write_c3", {getCache(), getX()});
}

LogicalResult LatentAttentionStepOp::verify() {
  const char *c1 = "latent_attention_c1", *c2 = "latent_attention_c2",
             *c3 = "latent_attention_c3";
  if (failed(expectRank(*this, c1, "q_nope", getQNope(), 3)))
    return failure();
  auto qn = tt(getQNope());
  int64_t B = qn.getDimSize(0), H = qn.getDimSize(1), dn = qn.getDimSize(2);
  auto qr = tt(getQRope());
  if (qr.getRank() != 3 || qr.getDimSize(0) != B || qr.getDimSize(1) != H)
    return emitOpError() << c1 << ": expected q_rope [" << B << "," << H
                         << ",dr], got " << shapeStr(qr.getShape());
  int64_t dr = qr.getDimSize(2);
  if (failed(expectRank(*this, c2, "c_kv", getCKv(), 3)))
    return failure();
  auto ckv = tt(getCKv());
  if (ckv.getDimSize(0) != B)
    return emitOpError() << c2 << ": expected c_kv [" << B << ",L,r], got "
                         << shapeStr(ckv.getShape());
  int64_t L = ckv.getDimSize(1), r = ckv.getDimSize(2);
  if (failed(expectShape(*this, c2, "k_rope", getKRope(), {B, L, dr})) ||
      failed(expectShape(*this, c3, "norm_kv", getNormKv(), {r})))
    return failure();
  auto w = tt(getWKvb());
  if (w.getRank() != 2 || w.getDimSize(1) != r || w.getDimSize(0) % H != 0 ||
      w.getDimSize(0) / H <= dn)
    return emitOpError() << c3 << ": expected w_kvb [" << H << "*(" << dn
                         << "+dv)," << r << "] with dv >= 1, got "
                         << shapeStr(w.getShape());
  int64_t dv = w.getDimSize(0) / H - dn;
  if (failed(expectScalar(*this, "latent_attention_c4", getPos())) ||
      failed(expectShape(*this, "latent_attention_c5", "result", getOut(), {B, H, dv})))
    return failure();
  if (!(getScale().convertToDouble() > 0) || !(getEps().convertToDouble() >= 0))
    return emitOpError() << "latent_attention_c6: expected scale > 0 and eps >= 0, got "
                         << getScale().convertToDouble() << " and "
                         << getEps().convertToDouble();
  return sameElementType(*this, "latent_attention_c7",
                         {getQNope(), getQRope(), getCKv(), getKRope(),
                          getNormKv(), getWKvb(), getOut()});
}
