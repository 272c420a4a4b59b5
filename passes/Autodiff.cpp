// hymo-autodiff: reverse-mode AD over value-semantics hymo IR.
#include "passes/Passes.h"

#include "models/ModelBuilder.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::hymo {
#define GEN_PASS_DEF_HYMOAUTODIFF
#include "passes/Passes.h.inc"

namespace {

Value zerosLike(OpBuilder &b, Location loc, Type type) {
  auto t = cast<RankedTensorType>(type);
  return ConstantOp::create(
      b, loc, DenseElementsAttr::get(t, b.getFloatAttr(t.getElementType(), 0.0)));
}

struct AutodiffPass : impl::HymoAutodiffBase<AutodiffPass> {
  using HymoAutodiffBase::HymoAutodiffBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto fwd = module.lookupSymbol<func::FuncOp>(function);
    if (!fwd) {
      module.emitError() << "expected a function @" << function
                         << " to differentiate, found none";
      return signalPassFailure();
    }
    if (failed(differentiate(fwd)))
      signalPassFailure();
  }

  LogicalResult differentiate(func::FuncOp fwd) {
    if (!fwd.getBody().hasOneBlock())
      return fwd.emitError() << "expected a single-block function, got "
                             << fwd.getBody().getBlocks().size() << " blocks";
    int lossIndex = -1;
    for (unsigned i = 0; i < fwd.getNumResults(); ++i)
      if (auto n = fwd.getResultAttrOfType<StringAttr>(i, ::hymo::kNameAttr))
        if (n.getValue() == "loss")
          lossIndex = i;
    if (lossIndex < 0)
      return fwd.emitError() << "expected a result named \"loss\" (hymo.name), found none";

    OpBuilder top(fwd);
    top.setInsertionPointAfter(fwd);
    auto grad = cast<func::FuncOp>(top.clone(*fwd));
    grad.setSymName((fwd.getSymName() + "_grad").str());
    Block &body = grad.getBody().front();
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    Value loss = ret.getOperand(lossIndex);
    auto lossType = dyn_cast<RankedTensorType>(loss.getType());
    if (!lossType || lossType.getRank() != 0 ||
        !isa<FloatType>(lossType.getElementType()))
      return fwd.emitError() << "expected the loss to be a float scalar tensor, got "
                             << loss.getType();

    OpBuilder b(ret);
    Location loc = grad.getLoc();
    llvm::DenseMap<Value, Value> adjoint;
    auto accumulate = [&](Value v, Value d) {
      auto [it, inserted] = adjoint.try_emplace(v, d);
      if (!inserted)
        it->second = AddOp::create(b, loc, it->second, d);
    };
    adjoint[loss] = ConstantOp::create(
        b, loc, DenseElementsAttr::get(lossType, b.getFloatAttr(lossType.getElementType(), 1.0)));

    SmallVector<Operation *> forwardOps;
    for (Operation &op : body.without_terminator())
      forwardOps.push_back(&op);
    for (Operation *op : llvm::reverse(forwardOps)) {
      SmallVector<Value> dys;
      bool any = false;
      for (Value r : op->getResults()) {
        Value d = adjoint.lookup(r);
        dys.push_back(d);
        any |= static_cast<bool>(d);
      }
      if (!any || op->hasTrait<OpTrait::hymo::NonDifferentiable>())
        continue;
      auto diff = dyn_cast<DifferentiableOpInterface>(op);
      if (!diff)
        return op->emitOpError() << "has an adjoint but no vector-Jacobian product "
                                    "(implement DifferentiableOpInterface or mark it "
                                    "NonDifferentiable)";
      SmallVector<Value> dxs;
      if (failed(diff.buildVjp(b, dys, dxs)))
        return failure();
      if (dxs.size() != op->getNumOperands())
        return op->emitOpError() << "built " << dxs.size()
                                 << " operand adjoints, expected "
                                 << op->getNumOperands();
      for (auto [operand, d] : llvm::zip(op->getOperands(), dxs)) {
        if (!d)
          continue;
        if (d.getType() != operand.getType())
          return op->emitOpError() << "built an adjoint of type " << d.getType()
                                   << " for an operand of type " << operand.getType();
        accumulate(operand, d);
      }
    }

    SmallVector<Value> results(ret.getOperands());
    SmallVector<Attribute> resultAttrs;
    for (unsigned i = 0; i < grad.getNumResults(); ++i)
      resultAttrs.push_back(grad.getResultAttrDict(i)
                                ? Attribute(grad.getResultAttrDict(i))
                                : Attribute(b.getDictionaryAttr({})));
    for (unsigned i = 0; i < grad.getNumArguments(); ++i) {
      auto role = grad.getArgAttrOfType<StringAttr>(i, ::hymo::kRoleAttr);
      if (!role || role.getValue() != "param")
        continue;
      auto name = grad.getArgAttrOfType<StringAttr>(i, ::hymo::kNameAttr);
      Value arg = grad.getArgument(i);
      Value d = adjoint.lookup(arg);
      results.push_back(d ? d : zerosLike(b, loc, arg.getType()));
      std::string gname = "grad." + (name ? name.str() : "arg" + std::to_string(i));
      resultAttrs.push_back(b.getDictionaryAttr(
          b.getNamedAttr(::hymo::kNameAttr, b.getStringAttr(gname))));
    }
    func::ReturnOp::create(b, ret.getLoc(), results);
    ret.erase();
    SmallVector<Type> resultTypes;
    for (Value r : results)
      resultTypes.push_back(r.getType());
    grad.setType(b.getFunctionType(grad.getArgumentTypes(), resultTypes));
    grad.setAllResultAttrs(resultAttrs);
    return success();
  }
};

} // namespace
} // namespace mlir::hymo
