// Vector-Jacobian products of the hymo ops (DifferentiableOpInterface), each
// built from hymo ops: the backward is IR like the forward, so later passes
// fuse, plan and shard it the same way.
#include "dialects/Hymo/IR/HymoOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::hymo;

namespace {

RankedTensorType tt(Value v) { return cast<RankedTensorType>(v.getType()); }

/// Small builder helpers shared by the VJPs.
struct VjpBuilder {
  OpBuilder &b;
  Location loc;

  Value splat(Type type, double value) {
    auto t = cast<RankedTensorType>(type);
    return ConstantOp::create(
        b, loc, DenseElementsAttr::get(t, b.getFloatAttr(t.getElementType(), value)));
  }
  Value add(Value x, Value y) { return AddOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return SubOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return MulOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return DivOp::create(b, loc, x, y); }
  Value neg(Value x) { return NegOp::create(b, loc, x); }
  Value greater(Value x, Value y) { return GreaterOp::create(b, loc, x, y); }
  Value reshape(Value x, ArrayRef<int64_t> shape) {
    auto t = RankedTensorType::get(shape, tt(x).getElementType());
    if (t == x.getType())
      return x;
    return ReshapeOp::create(b, loc, t, x);
  }
  /// Collapses all leading dims: [..., K] -> [M, K].
  Value flatten2d(Value x) {
    auto s = tt(x).getShape();
    return reshape(x, {tt(x).getNumElements() / s.back(), s.back()});
  }
  Value matmul(Value a, Value bb, bool ta, bool tb) {
    auto as = tt(a).getShape(), bs = tt(bb).getShape();
    size_t r = as.size();
    SmallVector<int64_t> shape(as.drop_back(2));
    shape.push_back(ta ? as[r - 1] : as[r - 2]);
    shape.push_back(tb ? bs[r - 2] : bs[r - 1]);
    auto t = RankedTensorType::get(shape, tt(a).getElementType());
    return MatmulOp::create(b, loc, t, a, bb, b.getBoolAttr(ta), b.getBoolAttr(tb));
  }
  Value reduceSum(Value x, ArrayRef<int64_t> dims, bool keep) {
    SmallVector<int64_t> shape;
    for (int64_t d = 0; d < tt(x).getRank(); ++d) {
      if (!llvm::is_contained(dims, d))
        shape.push_back(tt(x).getDimSize(d));
      else if (keep)
        shape.push_back(1);
    }
    auto t = RankedTensorType::get(shape, tt(x).getElementType());
    return ReduceSumOp::create(b, loc, t, x, b.getDenseI64ArrayAttr(dims),
                               b.getBoolAttr(keep));
  }
  Value broadcast(Value x, Type to, ArrayRef<int64_t> dims) {
    if (x.getType() == to)
      return x;
    return BroadcastInDimOp::create(b, loc, to, x, b.getDenseI64ArrayAttr(dims));
  }
};

VjpBuilder vb(OpBuilder &b, Operation *op) { return VjpBuilder{b, op->getLoc()}; }

} // namespace

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

LogicalResult NegOp::buildVjp(OpBuilder &b, ArrayRef<Value> dys,
                              SmallVectorImpl<Value> &dxs) {
  dxs.push_back(vb(b, *this).neg(dys[0]));
  return success();
}

LogicalResult ExpOp::buildVjp(OpBuilder &b, ArrayRef<Value> dys,
                              SmallVectorImpl<Value> &dxs) {
  dxs.push_back(vb(b, *this).mul(dys[0], getOut()));
  return success();
}

LogicalResult LogOp::buildVjp(OpBuilder &b, ArrayRef<Value> dys,
                              SmallVectorImpl<Value> &dxs) {
  dxs.push_back(vb(b, *this).div(dys[0], getX()));
  return success();
}

LogicalResult SqrtOp::buildVjp(OpBuilder &b, ArrayRef<Value> dys,
                               SmallVectorImpl<Value> &dxs) {
  auto g = vb(b, *this); // d sqrt(x) = 1 / (2 sqrt(x))
  dxs.push_back(g.div(g.mul(dys[0], g.splat(getType(), 0.5)), getOut()));
  return success();
}

LogicalResult RsqrtOp::buildVjp(OpBuilder &b, ArrayRef<Value> dys,
                                SmallVectorImpl<Value> &dxs) {
  auto g = vb(b, *this); // d x^-1/2 = -1/2 y^3
  Value y = getOut();
  Value y3 = g.mul(g.mul(y, y), y);
  dxs.push_back(g.mul(dys[0], g.mul(g.splat(getType(), -0.5), y3)));
  return success();
}

LogicalResult SquareOp::buildVjp(OpBuilder &b, ArrayRef<Value> dys,
                                 SmallVectorImpl<Value> &dxs) {
  auto g = vb(b, *this);
  dxs.push_back(g.mul(dys[0], g.mul(g.splat(getType(), 2.0), getX())));
  return success();
}

LogicalResult AbsOp::buildVjp(OpBuilder &b, ArrayRef<Value> dys,
                              SmallVectorImpl<Value> &dxs) {
  auto g = vb(b, *this); // sign(x), 0 at 0
  Value zero = g.splat(getType(), 0.0);
  Value sign = g.sub(g.greater(getX(), zero), g.greater(zero, getX()));
  dxs.push_back(g.mul(dys[0], sign));
  return success();
}

LogicalResult SigmoidOp::buildVjp(OpBuilder &b, ArrayRef<Value> dys,
                                  SmallVectorImpl<Value> &dxs) {
  auto g = vb(b, *this);
  Value y = getOut();
  dxs.push_back(g.mul(dys[0], g.mul(y, g.sub(g.splat(getType(), 1.0), y))));
  return success();
}

LogicalResult SiluOp::buildVjp(OpBuilder &b, ArrayRef<Value> dys,
                               SmallVectorImpl<Value> &dxs) {
  auto g = vb(b, *this); // s (1 + x (1 - s))
  Value s = SigmoidOp::create(b, getLoc(), getX());
  Value one = g.splat(getType(), 1.0);
  Value d = g.mul(s, g.add(one, g.mul(getX(), g.sub(one, s))));
  dxs.push_back(g.mul(dys[0], d));
  return success();
}

LogicalResult SoftplusOp::buildVjp(OpBuilder &b, ArrayRef<Value> dys,
                                   SmallVectorImpl<Value> &dxs) {
  auto g = vb(b, *this);
  dxs.push_back(g.mul(dys[0], SigmoidOp::create(b, getLoc(), getX())));
  return success();
}

LogicalResult SinOp::buildVjp(OpBuilder &b, ArrayRef<Value> dys,
                              SmallVectorImpl<Value> &dxs) {
  dxs.push_back(vb(b, *this).mul(dys[0], CosOp::create(b, getLoc(), getX())));
  return success();
}

LogicalResult CosOp::buildVjp(OpBuilder &b, ArrayRef<Value> dys,
                              SmallVectorImpl<Value> &dxs) {
  auto g = vb(b, *this);
  dxs.push_back(g.neg(g.mul(dys[0], SinOp::create(b, getLoc(), getX()))));
  return success();
}

LogicalResult AddOp::buildVjp(OpBuilder &b, ArrayRef<Value> dys,
                              SmallVectorImpl<Value> &dxs) {
  dxs.append({dys[0], dys[0]});
  return success();
}

LogicalResult SubOp::buildVjp(OpBuilder &b, ArrayRef<Value> dys,
                              SmallVectorImpl<Value> &dxs) {
  dxs.append({dys[0], vb(b, *this).neg(dys[0])});
  return success();
}

LogicalResult MulOp::buildVjp(OpBuilder &b, ArrayRef<Value> dys,
                              SmallVectorImpl<Value> &dxs) {
  auto g = vb(b, *this);
  dxs.append({g.mul(dys[0], getRhs()), g.mul(dys[0], getLhs())});
  return success();
}

LogicalResult DivOp::buildVjp(OpBuilder &b, ArrayRef<Value> dys,
                              SmallVectorImpl<Value> &dxs) {
  auto g = vb(b, *this); // d(l/r) = dl/r - l dr / r^2 = dl/r - out dr / r
  Value dl = g.div(dys[0], getRhs());
  dxs.append({dl, g.neg(g.mul(dl, getOut()))});
  return success();
}

LogicalResult MaxOp::buildVjp(OpBuilder &b, ArrayRef<Value> dys,
                              SmallVectorImpl<Value> &dxs) {
  auto g = vb(b, *this); // ties go to rhs
  Value m = g.greater(getLhs(), getRhs());
  Value one = g.splat(getType(), 1.0);
  dxs.append({g.mul(dys[0], m), g.mul(dys[0], g.sub(one, m))});
  return success();
}

LogicalResult MinOp::buildVjp(OpBuilder &b, ArrayRef<Value> dys,
                              SmallVectorImpl<Value> &dxs) {
  auto g = vb(b, *this); // ties go to rhs
  Value m = g.greater(getRhs(), getLhs());
  Value one = g.splat(getType(), 1.0);
  dxs.append({g.mul(dys[0], m), g.mul(dys[0], g.sub(one, m))});
  return success();
}

LogicalResult SelectOp::buildVjp(OpBuilder &b, ArrayRef<Value> dys,
                                 SmallVectorImpl<Value> &dxs) {
  auto g = vb(b, *this);
  Value zero = g.splat(getType(), 0.0);
  dxs.push_back(Value());
  dxs.push_back(SelectOp::create(b, getLoc(), getCond(), dys[0], zero));
  dxs.push_back(SelectOp::create(b, getLoc(), getCond(), zero, dys[0]));
  return success();
}

LogicalResult CastOp::buildVjp(OpBuilder &b, ArrayRef<Value> dys,
                               SmallVectorImpl<Value> &dxs) {
  if (!isa<FloatType>(tt(getX()).getElementType())) {
    dxs.push_back(Value());
    return success();
  }
  dxs.push_back(CastOp::create(b, getLoc(), getX().getType(), dys[0]));
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

namespace {
/// The reduced result's adjoint broadcast back over the input's shape.
Value broadcastBack(VjpBuilder &g, Value dy, Type xType, ArrayRef<int64_t> dims,
                    bool keep) {
  auto x = cast<RankedTensorType>(xType);
  SmallVector<int64_t> map;
  for (int64_t d = 0; d < x.getRank(); ++d)
    if (keep || !llvm::is_contained(dims, d))
      map.push_back(d);
  return g.broadcast(dy, x, map);
}
} // namespace

LogicalResult ReduceSumOp::buildVjp(OpBuilder &b, ArrayRef<Value> dys,
                                    SmallVectorImpl<Value> &dxs) {
  auto g = vb(b, *this);
  dxs.push_back(broadcastBack(g, dys[0], getX().getType(), getDims(), getKeepDims()));
  return success();
}

LogicalResult ReduceMeanOp::buildVjp(OpBuilder &b, ArrayRef<Value> dys,
                                     SmallVectorImpl<Value> &dxs) {
  auto g = vb(b, *this);
  int64_t count = tt(getX()).getNumElements() / std::max<int64_t>(1, tt(getOut()).getNumElements());
  Value dx = broadcastBack(g, dys[0], getX().getType(), getDims(), getKeepDims());
  dxs.push_back(g.mul(dx, g.splat(getX().getType(), 1.0 / double(count))));
  return success();
}

LogicalResult ReduceMaxOp::buildVjp(OpBuilder &b, ArrayRef<Value> dys,
                                    SmallVectorImpl<Value> &dxs) {
  auto g = vb(b, *this); // every maximal element gets the full adjoint
  Value dx = broadcastBack(g, dys[0], getX().getType(), getDims(), getKeepDims());
  Value mx = broadcastBack(g, getOut(), getX().getType(), getDims(), getKeepDims());
  Value isMax = g.sub(g.splat(getX().getType(), 1.0), g.greater(mx, getX()));
  dxs.push_back(g.mul(dx, isMax));
  return success();
}

//===----------------------------------------------------------------------===//
// Shape
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::buildVjp(OpBuilder &b, ArrayRef<Value> dys,
                                  SmallVectorImpl<Value> &dxs) {
  dxs.push_back(vb(b, *this).reshape(dys[0], tt(getX()).getShape()));
  return success();
}

LogicalResult TransposeOp::buildVjp(OpBuilder &b, ArrayRef<Value> dys,
                                    SmallVectorImpl<Value> &dxs) {
  ArrayRef<int64_t> perm = getPermutation();
  SmallVector<int64_t> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    inv[perm[i]] = i;
  dxs.push_back(TransposeOp::create(b, getLoc(), getX().getType(), dys[0],
                                    b.getDenseI64ArrayAttr(inv)));
  return success();
}

LogicalResult SliceOp::buildVjp(OpBuilder &b, ArrayRef<Value> dys,
                                SmallVectorImpl<Value> &dxs) {
  if (!isa<FloatType>(tt(getX()).getElementType())) {
    dxs.push_back(Value());
    return success();
  }
  SmallVector<int64_t> high;
  for (int64_t d = 0; d < tt(getX()).getRank(); ++d)
    high.push_back(tt(getX()).getDimSize(d) - getLimit()[d]);
  dxs.push_back(PadOp::create(b, getLoc(), getX().getType(), dys[0],
                              b.getDenseI64ArrayAttr(getStart()),
                              b.getDenseI64ArrayAttr(high)));
  return success();
}

LogicalResult PadOp::buildVjp(OpBuilder &b, ArrayRef<Value> dys,
                              SmallVectorImpl<Value> &dxs) {
  SmallVector<int64_t> limit;
  for (int64_t d = 0; d < tt(getX()).getRank(); ++d)
    limit.push_back(getLow()[d] + tt(getX()).getDimSize(d));
  dxs.push_back(SliceOp::create(b, getLoc(), getX().getType(), dys[0],
                                b.getDenseI64ArrayAttr(getLow()),
                                b.getDenseI64ArrayAttr(limit)));
  return success();
}

LogicalResult ConcatOp::buildVjp(OpBuilder &b, ArrayRef<Value> dys,
                                 SmallVectorImpl<Value> &dxs) {
  int64_t dim = getDim(), at = 0;
  for (Value in : getInputs()) {
    if (!isa<FloatType>(tt(in).getElementType())) {
      dxs.push_back(Value());
      at += tt(in).getDimSize(dim);
      continue;
    }
    SmallVector<int64_t> start(tt(in).getRank(), 0);
    SmallVector<int64_t> limit(tt(getOut()).getShape());
    start[dim] = at;
    limit[dim] = at + tt(in).getDimSize(dim);
    at = limit[dim];
    dxs.push_back(SliceOp::create(b, getLoc(), in.getType(), dys[0],
                                  b.getDenseI64ArrayAttr(start),
                                  b.getDenseI64ArrayAttr(limit)));
  }
  return success();
}

LogicalResult BroadcastInDimOp::buildVjp(OpBuilder &b, ArrayRef<Value> dys,
                                         SmallVectorImpl<Value> &dxs) {
  auto g = vb(b, *this);
  auto x = tt(getX()), out = tt(getOut());
  ArrayRef<int64_t> dims = getDims();
  // First sum the expanded size-1 dims (keeping them), then drop the
  // result dims the operand does not have.
  SmallVector<int64_t> expanded, extra;
  for (size_t i = 0; i < dims.size(); ++i)
    if (x.getDimSize(i) == 1 && out.getDimSize(dims[i]) != 1)
      expanded.push_back(dims[i]);
  for (int64_t d = 0; d < out.getRank(); ++d)
    if (!llvm::is_contained(dims, d))
      extra.push_back(d);
  Value dx = dys[0];
  if (!expanded.empty())
    dx = g.reduceSum(dx, expanded, /*keep=*/true);
  if (!extra.empty())
    dx = g.reduceSum(dx, extra, /*keep=*/false);
  dxs.push_back(g.reshape(dx, x.getShape()));
  return success();
}

//===----------------------------------------------------------------------===//
// Dense algebra
//===----------------------------------------------------------------------===//

LogicalResult EmbeddingOp::buildVjp(OpBuilder &b, ArrayRef<Value> dys,
                                    SmallVectorImpl<Value> &dxs) {
  dxs.push_back(EmbeddingGradOp::create(b, getLoc(), getTable().getType(),
                                        getIds(), dys[0]));
  dxs.push_back(Value());
  return success();
}

LogicalResult LinearOp::buildVjp(OpBuilder &b, ArrayRef<Value> dys,
                                 SmallVectorImpl<Value> &dxs) {
  auto g = vb(b, *this);
  Value dy2 = g.flatten2d(dys[0]);                  // [M, N]
  Value x2 = g.flatten2d(getX());                   // [M, K]
  Value dx = g.matmul(dy2, getW(), false, false);   // [M, K]
  Value dw = g.matmul(dy2, x2, true, false);        // [N, K]
  dxs.push_back(g.reshape(dx, tt(getX()).getShape()));
  dxs.push_back(dw);
  return success();
}

LogicalResult MatmulOp::buildVjp(OpBuilder &b, ArrayRef<Value> dys,
                                 SmallVectorImpl<Value> &dxs) {
  auto g = vb(b, *this);
  Value dc = dys[0], a = getA(), bb = getB();
  bool ta = getTransposeA(), tb = getTransposeB();
  // C = op(A) op(B); derived case by case so no explicit transpose is built.
  Value da = ta ? g.matmul(bb, dc, tb, true) : g.matmul(dc, bb, false, !tb);
  Value db = tb ? g.matmul(dc, a, true, ta) : g.matmul(a, dc, !ta, false);
  dxs.append({da, db});
  return success();
}

LogicalResult GroupedLinearOp::buildVjp(OpBuilder &b, ArrayRef<Value> dys,
                                        SmallVectorImpl<Value> &dxs) {
  auto g = vb(b, *this);
  dxs.push_back(g.matmul(dys[0], getW(), false, false)); // [E,C,K]
  dxs.push_back(g.matmul(dys[0], getX(), true, false));  // [E,N,K]
  return success();
}

//===----------------------------------------------------------------------===//
// Model ops
//===----------------------------------------------------------------------===//

LogicalResult RmsNormOp::buildVjp(OpBuilder &b, ArrayRef<Value> dys,
                                  SmallVectorImpl<Value> &dxs) {
  auto op = RmsNormGradOp::create(b, getLoc(), getX().getType(), getW().getType(),
                                  getX(), getW(), dys[0], getEpsAttr());
  dxs.append({op.getDx(), op.getDw()});
  return success();
}

LogicalResult SoftmaxOp::buildVjp(OpBuilder &b, ArrayRef<Value> dys,
                                  SmallVectorImpl<Value> &dxs) {
  dxs.push_back(SoftmaxGradOp::create(b, getLoc(), getOut(), dys[0]));
  return success();
}

LogicalResult RopeOp::buildVjp(OpBuilder &b, ArrayRef<Value> dys,
                               SmallVectorImpl<Value> &dxs) {
  // A rotation's adjoint is the opposite rotation.
  dxs.push_back(RopeOp::create(b, getLoc(), dys[0], getThetaAttr(),
                               b.getBoolAttr(!getInverse())));
  return success();
}

LogicalResult CausalAttentionOp::buildVjp(OpBuilder &b, ArrayRef<Value> dys,
                                          SmallVectorImpl<Value> &dxs) {
  auto op = CausalAttentionGradOp::create(
      b, getLoc(), getQ().getType(), getK().getType(), getV().getType(), getQ(),
      getK(), getV(), dys[0], getScaleAttr());
  dxs.append({op.getDq(), op.getDk(), op.getDv()});
  return success();
}

LogicalResult GdnRecurrenceOp::buildVjp(OpBuilder &b, ArrayRef<Value> dys,
                                        SmallVectorImpl<Value> &dxs) {
  auto op = GdnRecurrenceGradOp::create(
      b, getLoc(), getV().getType(), getB().getType(), getC().getType(),
      getG().getType(), getA().getType(), getV(), getB(), getC(), getG(),
      getA(), dys[0], getChunkSizeAttr());
  dxs.append({op.getDv(), op.getDb(), op.getDc(), op.getDg(), op.getDa()});
  return success();
}

LogicalResult MoeRouteOp::buildVjp(OpBuilder &b, ArrayRef<Value> dys,
                                   SmallVectorImpl<Value> &dxs) {
  // Only the weights carry an adjoint; the indices and the bias (it only
  // picks) have none.
  Value dw = dys[1];
  dxs.push_back(dw ? Value(MoeRouteGradOp::create(b, getLoc(), getProbs().getType(),
                                                  getProbs(), getIndices(), dw))
                   : Value());
  dxs.push_back(Value());
  return success();
}

LogicalResult MoeDispatchOp::buildVjp(OpBuilder &b, ArrayRef<Value> dys,
                                      SmallVectorImpl<Value> &dxs) {
  // Gathering each kept slot back to its token is moe_combine with unit
  // weights.
  auto g = vb(b, *this);
  Value dxe = dys[0];
  if (!dxe) {
    dxs.append({Value(), Value()});
    return success();
  }
  auto wType = RankedTensorType::get(tt(getIndices()).getShape(),
                                     tt(getX()).getElementType());
  Value ones = g.splat(wType, 1.0);
  dxs.push_back(MoeCombineOp::create(b, getLoc(), getX().getType(), dxe,
                                     getSlots(), ones));
  dxs.push_back(Value());
  return success();
}

LogicalResult MoeCombineOp::buildVjp(OpBuilder &b, ArrayRef<Value> dys,
                                     SmallVectorImpl<Value> &dxs) {
  auto op = MoeCombineGradOp::create(b, getLoc(), getExpertOutputs().getType(),
                                     getWeights().getType(), getExpertOutputs(),
                                     getSlots(), getWeights(), dys[0]);
  dxs.append({op.getDexpertOutputs(), Value(), op.getDweights()});
  return success();
}

LogicalResult CrossEntropyOp::buildVjp(OpBuilder &b, ArrayRef<Value> dys,
                                       SmallVectorImpl<Value> &dxs) {
  dxs.push_back(CrossEntropyGradOp::create(b, getLoc(), getLogits().getType(),
                                           getLogits(), getTargets(), dys[0]));
  dxs.push_back(Value());
  return success();
}
