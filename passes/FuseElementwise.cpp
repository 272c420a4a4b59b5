// hymo-fuse-elementwise: turns runs of elementwise ops over one tensor type
// into single hymo.fused_elementwise ops, so a chain such as the optimizer's
// `W - lr * (u + wd * W * mask)` reads and writes memory once instead of once
// per op, and scalars are broadcast inside the kernel instead of being
// materialised. A reduce_sum or reduce_mean over the trailing dims of a
// chain's value (a norm's sum of squares, a row mean) is computed by the same
// kernel on the way (`sums`), so the value itself is never written when
// nothing else reads it.
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

#include <cstdio>

namespace mlir::hymo {
#define GEN_PASS_DEF_HYMOFUSEELEMENTWISE
#include "passes/Passes.h.inc"

namespace {

RankedTensorType tensorType(Value v) { return dyn_cast<RankedTensorType>(v.getType()); }

/// The tensor type an op would join a group with, or null when it cannot
/// join one: computing elementwise ops (not cast) of rank >= 1, scalar
/// broadcasts and splat constants.
RankedTensorType groupType(Operation *op) {
  if (op->getNumResults() != 1)
    return {};
  auto t = tensorType(op->getResult(0));
  if (!t || t.getRank() == 0 || !isa<FloatType>(t.getElementType()))
    return {};
  if (auto b = dyn_cast<BroadcastInDimOp>(op)) {
    // A scalar, or a prefix of the result's shape mapped onto the leading
    // dims (a row vector over rows): the kernel broadcasts both.
    auto x = tensorType(b.getX());
    ArrayRef<int64_t> dims = b.getDims();
    bool prefix = x.getRank() < t.getRank() &&
                  x.getShape() == t.getShape().take_front(x.getRank());
    for (int64_t i = 0; prefix && i < x.getRank(); ++i)
      prefix = dims[i] == i;
    return x.getRank() == 0 || prefix ? t : RankedTensorType();
  }
  if (auto c = dyn_cast<ConstantOp>(op)) {
    auto d = dyn_cast<DenseElementsAttr>(c.getValue());
    return d && d.isSplat() ? t : RankedTensorType();
  }
  if (op->getDialect() && op->getDialect()->getNamespace() == "hymo" &&
      op->hasTrait<OpTrait::Elementwise>() && !isa<CastOp>(op) &&
      fusedOpArity(op->getName().stripDialect()) > 0)
    return t;
  if (isa<EyeOp>(op))
    return t;
  return {};
}

bool isCompute(Operation *op) { return !isa<BroadcastInDimOp, ConstantOp>(op); }

/// The number of elements a reduce_sum / reduce_mean folds into each result
/// element when it reduces exactly the trailing dims of its operand (no
/// keep_dims), else 0: such a reduction can join the fused kernel.
int64_t trailingReductionCount(Operation *op) {
  auto reduced = [](auto r) -> int64_t {
    if (r.getKeepDims())
      return 0;
    auto t = tensorType(r.getX());
    ArrayRef<int64_t> dims = r.getDims();
    int64_t first = t.getRank() - static_cast<int64_t>(dims.size());
    int64_t count = 1;
    for (auto [i, d] : llvm::enumerate(dims)) {
      if (d != first + static_cast<int64_t>(i))
        return 0;
      count *= t.getDimSize(d);
    }
    return dims.empty() ? 0 : count;
  };
  if (auto r = dyn_cast<ReduceSumOp>(op))
    return reduced(r);
  if (auto r = dyn_cast<ReduceMeanOp>(op))
    return reduced(r);
  return 0;
}

std::string literal(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

struct FuseElementwisePass : impl::HymoFuseElementwiseBase<FuseElementwisePass> {
  using HymoFuseElementwiseBase::HymoFuseElementwiseBase;

  int64_t fused = 0, replaced = 0;
  /// Reductions absorbed into a kernel: erased when the block is done (the
  /// block walk still holds them).
  SmallVector<Operation *> absorbedReductions;

  void runOnOperation() override {
    getOperation().walk([&](func::FuncOp func) {
      for (Block &block : func.getBody())
        fuseBlock(block);
    });
    if (report)
      llvm::errs() << "hymo-fuse-elementwise: " << replaced << " ops into " << fused
                   << " fused kernels\n";
  }

  void fuseBlock(Block &block) {
    SmallVector<Operation *> group;
    llvm::SmallPtrSet<Operation *, 32> inGroup;
    RankedTensorType type;
    auto close = [&] {
      if (!group.empty())
        emit(group, inGroup);
      group.clear();
      inGroup.clear();
      type = {};
    };
    SmallVector<Operation *> ops;
    for (Operation &op : block)
      ops.push_back(&op);
    for (Operation *op : ops) {
      if (llvm::is_contained(absorbedReductions, op))
        continue;
      RankedTensorType t = groupType(op);
      if (t && (!type || t == type)) {
        group.push_back(op);
        inGroup.insert(op);
        type = t;
        continue;
      }
      // Another type starts a new group; an op reading the group's values
      // ends it (the fused op sits at the group's last member).
      bool reads = llvm::any_of(op->getOperands(), [&](Value v) {
        return v.getDefiningOp() && inGroup.contains(v.getDefiningOp());
      });
      if (t || reads)
        close();
      if (t) {
        group.push_back(op);
        inGroup.insert(op);
        type = t;
      }
    }
    close();
    for (Operation *op : absorbedReductions)
      op->erase();
    absorbedReductions.clear();
  }

  void emit(ArrayRef<Operation *> group, const llvm::SmallPtrSetImpl<Operation *> &inGroup) {
    // Reductions of the group's values that the kernel can compute.
    SmallVector<Operation *> reductions;
    for (Operation *op : group)
      if (isCompute(op))
        for (Operation *u : op->getResult(0).getUsers())
          if (!inGroup.contains(u) && trailingReductionCount(u) > 0 && !llvm::is_contained(reductions, u))
            reductions.push_back(u);
    llvm::sort(reductions, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
    // Inputs: values from outside the group (broadcasts contribute their
    // scalar operand; constants become literals).
    llvm::SetVector<Value> inputs;
    for (Operation *op : group) {
      if (isa<ConstantOp>(op))
        continue;
      for (Value v : op->getOperands())
        if (!v.getDefiningOp() || !inGroup.contains(v.getDefiningOp()))
          inputs.insert(v);
    }
    // A computing op's value leaves the kernel as an output when something
    // outside the group other than an absorbed reduction reads it.
    auto isOutput = [&](Operation *op) {
      return isCompute(op) && llvm::any_of(op->getResult(0).getUsers(), [&](Operation *u) {
               return !inGroup.contains(u) && !llvm::is_contained(reductions, u);
             });
    };
    // A kernel with only sums takes its domain from a full-shape input; a
    // group of broadcasts alone has none, so its reductions stay.
    Type groupTy = group.back()->getResult(0).getType();
    bool fullInput = llvm::any_of(inputs, [&](Value v) { return v.getType() == groupTy; });
    if (!fullInput && !llvm::any_of(group, isOutput))
      reductions.clear();
    // Worth a kernel: two computing ops, one that would otherwise read a
    // materialised broadcast or splat constant, or one with a reduction.
    int64_t compute = llvm::count_if(group, isCompute);
    if (compute < 1 ||
        (compute < 2 && compute == static_cast<int64_t>(group.size()) && reductions.empty()))
      return;
    llvm::DenseMap<Value, std::string> name;
    llvm::DenseMap<Value, int64_t> reg;
    for (auto [i, v] : llvm::enumerate(inputs))
      name[v] = "%" + std::to_string(i);
    int64_t next = inputs.size();
    std::string program;
    SmallVector<Value> exported;
    SmallVector<int64_t> outputs;
    for (Operation *op : group) {
      Value r = op->getResult(0);
      if (auto c = dyn_cast<ConstantOp>(op)) {
        auto d = cast<DenseElementsAttr>(c.getValue());
        name[r] = literal(d.getSplatValue<APFloat>().convertToDouble());
        continue;
      }
      if (auto b = dyn_cast<BroadcastInDimOp>(op)) {
        name[r] = name[b.getX()];
        continue;
      }
      if (!program.empty())
        program += "; ";
      program += op->getName().stripDialect().str();
      for (Value v : op->getOperands())
        program += " " + name[v];
      name[r] = "%" + std::to_string(next);
      reg[r] = next;
      if (isOutput(op)) {
        exported.push_back(r);
        outputs.push_back(next);
      }
      ++next;
    }
    if (exported.empty() && reductions.empty())
      return;
    OpBuilder b(group.back());
    b.setInsertionPointAfter(group.back());
    SmallVector<Type> types(exported.size(), exported.empty() ? Type() : exported.front().getType());
    SmallVector<int64_t> sums;
    for (Operation *u : reductions) {
      sums.push_back(reg.lookup(u->getOperand(0)));
      types.push_back(u->getResult(0).getType());
    }
    auto fusedOp = FusedElementwiseOp::create(
        b, group.back()->getLoc(), types, inputs.getArrayRef(), b.getStringAttr(program),
        b.getDenseI64ArrayAttr(outputs), sums.empty() ? DenseI64ArrayAttr() : b.getDenseI64ArrayAttr(sums));
    for (auto [old, repl] : llvm::zip(exported, fusedOp.getResults()))
      old.replaceUsesWithIf(repl, [&](OpOperand &use) { return use.getOwner() != fusedOp; });
    // Each absorbed reduction becomes the kernel's sum (times 1/count for a
    // mean: a product on the small result).
    for (auto [k, u] : llvm::enumerate(reductions)) {
      Value sum = fusedOp.getResult(exported.size() + k);
      if (isa<ReduceMeanOp>(u)) {
        b.setInsertionPoint(u);
        auto t = cast<RankedTensorType>(sum.getType());
        double inv = 1.0 / static_cast<double>(trailingReductionCount(u));
        Value c = ConstantOp::create(b, u->getLoc(),
                                     DenseElementsAttr::get(t, b.getFloatAttr(t.getElementType(), inv)));
        sum = MulOp::create(b, u->getLoc(), sum, c);
      }
      u->getResult(0).replaceAllUsesWith(sum);
      u->dropAllReferences();  // its operand may now be dead
      absorbedReductions.push_back(u);
    }
    for (Operation *op : llvm::reverse(group)) {
      if (op->use_empty()) {
        op->erase();
      }
    }
    replaced += llvm::count_if(program, [](char c) { return c == ';'; }) + 1 + reductions.size();
    ++fused;
  }
};

} // namespace
} // namespace mlir::hymo
