// hymo-train-step: builds the training step of spec §3 around the
// differentiated forward (@forward_grad, from hymo-autodiff):
//
//   @micro_step  forward + backward of one micro-batch; adds
//                isfinite(loss) ? g / G : 0 into the gradient accumulators,
//                and the loss and MoE counts into theirs (NaN skip without a
//                host round trip)
//   @update      global-norm clip, the WSD factor, NorMuon and CautiousAdamW
//                (spec §3.1-3.4), the MoE gate-bias update, zeroed
//                accumulators; when every micro-batch was skipped it changes
//                nothing but the step counter
//   @forward     kept as the evaluation step
//
// Persistent state is donated: each result that updates a buffer carries
// `hymo.update = "<buffer name>"` and the plan writes it back in place.
#include "passes/Passes.h"

#include "models/ModelBuilder.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/JSON.h"

#include <cmath>
#include <map>

namespace mlir::hymo {
#define GEN_PASS_DEF_HYMOTRAINSTEP
#include "passes/Passes.h.inc"

namespace {

/// Reads numbers and strings out of the module's resolved config.
struct ConfigView {
  llvm::json::Value root = nullptr;
  std::string missing;

  const llvm::json::Value *find(StringRef path) const {
    const llvm::json::Value *v = &root;
    SmallVector<StringRef> parts;
    path.split(parts, '.');
    for (StringRef p : parts) {
      auto *o = v->getAsObject();
      if (!o || !(v = o->get(p)))
        return nullptr;
    }
    return v;
  }
  double num(StringRef path) {
    if (auto *v = find(path))
      if (auto d = v->getAsNumber())
        return *d;
    missing = path.str();
    return 0;
  }
  bool flag(StringRef path) {
    if (auto *v = find(path))
      if (auto b = v->getAsBoolean())
        return *b;
    missing = path.str();
    return false;
  }
  std::string str(StringRef path) {
    if (auto *v = find(path))
      if (auto s = v->getAsString())
        return s->str();
    missing = path.str();
    return "";
  }
  double at(StringRef path, size_t i) {
    if (auto *v = find(path))
      if (auto *a = v->getAsArray())
        if (i < a->size())
          if (auto d = (*a)[i].getAsNumber())
            return *d;
    missing = path.str();
    return 0;
  }
};

/// Builders for the optimizer math; every value is a tensor of the state's
/// float type, scalars are rank-0 tensors broadcast where needed.
struct Math {
  OpBuilder &b;
  Location loc;
  Type elt;

  RankedTensorType scalarType() { return RankedTensorType::get({}, elt); }
  Value constant(Type type, double v) {
    auto t = cast<RankedTensorType>(type);
    return ConstantOp::create(b, loc, DenseElementsAttr::get(t, b.getFloatAttr(t.getElementType(), v)));
  }
  Value scalar(double v) { return constant(scalarType(), v); }
  Value splatLike(Value like, double v) { return constant(like.getType(), v); }
  /// A rank-0 value broadcast to `like`'s shape.
  Value spread(Value s, Value like) {
    if (s.getType() == like.getType())
      return s;
    return BroadcastInDimOp::create(b, loc, like.getType(), s, b.getDenseI64ArrayAttr({}));
  }
  Value add(Value x, Value y) { return AddOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return SubOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return MulOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return DivOp::create(b, loc, x, y); }
  Value max(Value x, Value y) { return MaxOp::create(b, loc, x, y); }
  Value min(Value x, Value y) { return MinOp::create(b, loc, x, y); }
  Value greater(Value x, Value y) { return GreaterOp::create(b, loc, x, y); }
  Value sqrt(Value x) { return SqrtOp::create(b, loc, x); }
  Value exp(Value x) { return ExpOp::create(b, loc, x); }
  Value square(Value x) { return SquareOp::create(b, loc, x); }
  Value select(Value c, Value x, Value y) { return SelectOp::create(b, loc, c, x, y); }
  /// x * s for a rank-0 s.
  Value scale(Value x, Value s) { return mul(x, spread(s, x)); }
  Value scale(Value x, double s) { return s == 1.0 ? x : mul(x, splatLike(x, s)); }
  /// a*x + c*y with scalar constants.
  Value axpby(double a, Value x, double c, Value y) {
    return add(scale(x, a), scale(y, c));
  }
  Value sumAll(Value x) {
    auto t = cast<RankedTensorType>(x.getType());
    SmallVector<int64_t> dims;
    for (int64_t d = 0; d < t.getRank(); ++d)
      dims.push_back(d);
    if (dims.empty())
      return x;
    return ReduceSumOp::create(b, loc, RankedTensorType::get({}, t.getElementType()), x,
                               b.getDenseI64ArrayAttr(dims), b.getBoolAttr(false));
  }
  Value meanAll(Value x) {
    auto t = cast<RankedTensorType>(x.getType());
    return mul(sumAll(x), scalar(1.0 / double(t.getNumElements())));
  }
  Value frobenius(Value x) { return sqrt(sumAll(square(x))); }
  /// x converted to `like`'s element type (same shape as x).
  Value castLike(Value x, Value like) {
    auto xt = cast_type(x), lt = cast_type(like);
    if (xt.getElementType() == lt.getElementType())
      return x;
    return CastOp::create(b, loc, RankedTensorType::get(xt.getShape(), lt.getElementType()), x);
  }
  static RankedTensorType cast_type(Value v) { return llvm::cast<RankedTensorType>(v.getType()); }
  /// op(a) op(b) over the last two dims, batch dims alike.
  Value matmul(Value a, Value bb, bool ta, bool tb) {
    auto as = cast<RankedTensorType>(a.getType()).getShape();
    auto bs = cast<RankedTensorType>(bb.getType()).getShape();
    size_t r = as.size();
    SmallVector<int64_t> shape(as.drop_back(2));
    shape.push_back(ta ? as[r - 1] : as[r - 2]);
    shape.push_back(tb ? bs[r - 2] : bs[r - 1]);
    return MatmulOp::create(b, loc, RankedTensorType::get(shape, elt), a, bb,
                            b.getBoolAttr(ta), b.getBoolAttr(tb));
  }
};

struct Param {
  std::string name;
  std::string optimizer; // normuon | adamw
  Type type;
  unsigned arg;          // index in @forward_grad's arguments
  unsigned gradResult;   // index in @forward_grad's results
};

struct TrainStepPass : impl::HymoTrainStepBase<TrainStepPass> {
  using HymoTrainStepBase::HymoTrainStepBase;

  ModuleOp module;
  ConfigView cfg;
  func::FuncOp grad;
  Type elt;
  std::vector<Param> params;
  SmallVector<unsigned> bufferArgs;      // gate_bias, gate_ema
  SmallVector<std::pair<std::string, unsigned>> countResults; // layer prefix, result
  int lossResult = -1, lossMainResult = -1;

  void runOnOperation() override {
    module = getOperation();
    if (failed(collect()) || failed(buildMicroStep()) || failed(buildUpdate()))
      return signalPassFailure();
  }

  StringRef argName(unsigned i) {
    auto n = grad.getArgAttrOfType<StringAttr>(i, ::hymo::kNameAttr);
    return n ? n.getValue() : StringRef();
  }
  StringRef argRole(unsigned i) {
    auto n = grad.getArgAttrOfType<StringAttr>(i, ::hymo::kRoleAttr);
    return n ? n.getValue() : StringRef();
  }

  LogicalResult collect() {
    auto attr = module->getAttrOfType<StringAttr>(::hymo::kConfigAttr);
    if (!attr)
      return module.emitError() << "expected the module attribute " << ::hymo::kConfigAttr
                                << " (the resolved config), found none";
    llvm::Expected<llvm::json::Value> v = llvm::json::parse(attr.getValue());
    if (!v) {
      llvm::consumeError(v.takeError());
      return module.emitError() << "expected " << ::hymo::kConfigAttr << " to hold JSON";
    }
    cfg.root = std::move(*v);
    grad = module.lookupSymbol<func::FuncOp>("forward_grad");
    if (!grad)
      return module.emitError() << "expected @forward_grad (run hymo-autodiff first), found none";
    llvm::StringMap<unsigned> gradOf;
    for (unsigned r = 0; r < grad.getNumResults(); ++r) {
      auto n = grad.getResultAttrOfType<StringAttr>(r, ::hymo::kNameAttr);
      if (!n)
        continue;
      if (n.getValue() == "loss")
        lossResult = r;
      else if (n.getValue() == "loss_main")
        lossMainResult = r;
      else if (n.getValue().starts_with("grad."))
        gradOf[n.getValue().drop_front(5)] = r;
      else if (n.getValue().ends_with(".counts"))
        countResults.push_back({n.getValue().drop_back(7).str(), r});
    }
    if (lossResult < 0 || lossMainResult < 0)
      return grad.emitError() << "expected results named loss and loss_main";
    for (unsigned i = 0; i < grad.getNumArguments(); ++i) {
      if (argRole(i) == "buffer") {
        bufferArgs.push_back(i);
        continue;
      }
      if (argRole(i) != "param")
        continue;
      auto opt = grad.getArgAttrOfType<StringAttr>(i, ::hymo::kOptimizerAttr);
      auto it = gradOf.find(argName(i));
      if (!opt || it == gradOf.end())
        return grad.emitError() << "parameter " << argName(i)
                                << " needs hymo.optimizer and a grad result";
      if (opt.getValue() != "normuon" && opt.getValue() != "adamw")
        return grad.emitError() << "parameter " << argName(i)
                                << ": expected optimizer normuon or adamw, got " << opt;
      if (opt.getValue() == "normuon" &&
          cast<RankedTensorType>(grad.getArgument(i).getType()).getRank() != 2)
        return grad.emitError() << "parameter " << argName(i)
                                << ": NorMuon needs a matrix, got "
                                << grad.getArgument(i).getType();
      params.push_back({argName(i).str(), opt.getValue().str(), grad.getArgument(i).getType(),
                        i, it->second});
    }
    elt = cast<RankedTensorType>(grad.getFunctionType().getResult(lossResult)).getElementType();
    // Touch every key the step reads now, so a missing one fails early.
    for (StringRef k : {"optimizer.muon_lr", "optimizer.momentum", "optimizer.eps",
                        "optimizer.weight_decay", "optimizer.ns_iterations",
                        "optimizer.adamw_lr", "optimizer.adamw_eps",
                        "optimizer.adamw_weight_decay", "optimizer.embed_weight_decay",
                        "scheduler.total_steps", "scheduler.warmup_frac",
                        "scheduler.stable_frac", "scheduler.min_lr_ratio",
                        "training.gradient_accumulation_steps", "training.grad_clip",
                        "model.moe.ema_alpha", "model.moe.bias_speed"})
      cfg.num(k);
    if (!cfg.missing.empty())
      return module.emitError() << "the config lacks " << cfg.missing;
    return success();
  }

  /// Adds a named argument to `block` of `func` (attributes collected in
  /// `attrs`).
  Value addArg(func::FuncOp func, SmallVectorImpl<Attribute> &attrs, Type type,
               StringRef name, StringRef role, StringRef init = "zeros") {
    OpBuilder b(func.getContext());
    Value v = func.getBody().front().addArgument(type, func.getLoc());
    NamedAttrList a;
    a.set(::hymo::kNameAttr, b.getStringAttr(name));
    a.set(::hymo::kRoleAttr, b.getStringAttr(role));
    a.set(::hymo::kInitAttr, b.getStringAttr(init));
    attrs.push_back(a.getDictionary(func.getContext()));
    return v;
  }

  /// Finishes a function: return `results`, set its type and attributes.
  void finish(func::FuncOp func, OpBuilder &b, ArrayRef<Attribute> argAttrs,
              ArrayRef<std::pair<Value, DictionaryAttr>> results) {
    SmallVector<Value> values;
    SmallVector<Type> types;
    SmallVector<Attribute> resAttrs;
    for (auto &[v, a] : results) {
      values.push_back(v);
      types.push_back(v.getType());
      resAttrs.push_back(a);
    }
    func::ReturnOp::create(b, func.getLoc(), values);
    func.setType(b.getFunctionType(func.getBody().front().getArgumentTypes(), types));
    func.setAllArgAttrs(argAttrs);
    func.setAllResultAttrs(resAttrs);
  }

  /// True when a step accumulates several micro-batches' gradients: then
  /// micro_step adds to acc.* and update zeroes them for the next step.
  bool accumulatorsPersist() {
    return cfg.num("training.gradient_accumulation_steps") != 1.0;
  }

  DictionaryAttr updates(OpBuilder &b, StringRef name) {
    return b.getDictionaryAttr({b.getNamedAttr(::hymo::kNameAttr, b.getStringAttr(name)),
                                b.getNamedAttr("hymo.update", b.getStringAttr(name))});
  }
  DictionaryAttr output(OpBuilder &b, StringRef name) {
    return b.getDictionaryAttr(b.getNamedAttr(::hymo::kNameAttr, b.getStringAttr(name)));
  }

  LogicalResult buildMicroStep() {
    OpBuilder top(module.getContext());
    top.setInsertionPointToEnd(module.getBody());
    auto func = func::FuncOp::create(top, grad.getLoc(), "micro_step",
                                     top.getFunctionType({}, {}));
    Block *body = func.addEntryBlock();
    SmallVector<Attribute> argAttrs;
    IRMapping map;
    for (unsigned i = 0; i < grad.getNumArguments(); ++i) {
      Value a = body->addArgument(grad.getArgument(i).getType(), grad.getLoc());
      map.map(grad.getArgument(i), a);
      argAttrs.push_back(grad.getArgAttrDict(i) ? Attribute(grad.getArgAttrDict(i))
                                                : Attribute(top.getDictionaryAttr({})));
    }
    OpBuilder b = OpBuilder::atBlockEnd(body);
    for (Operation &op : grad.getBody().front().without_terminator())
      b.clone(op, map);
    auto ret = cast<func::ReturnOp>(grad.getBody().front().getTerminator());
    auto result = [&](unsigned r) { return map.lookup(ret.getOperand(r)); };

    Math m{b, grad.getLoc(), elt};
    Value loss = result(lossResult);
    Value ok = IsFiniteOp::create(b, m.loc, loss);
    double invG = 1.0 / cfg.num("training.gradient_accumulation_steps");
    SmallVector<std::pair<Value, DictionaryAttr>> results;
    // With one micro-batch per step the accumulator is just this gradient
    // (or 0 when skipped): no read of the old value, and `update` need not
    // zero it (see accumulatorsPersist).
    const bool persist = accumulatorsPersist();
    for (const Param &p : params) {
      std::string name = "acc." + p.name;
      Value acc = addArg(func, argAttrs, p.type, name, "state");
      Value g = m.scale(result(p.gradResult), invG);
      Value okb = m.spread(ok, g);
      Value kept = m.select(okb, g, m.splatLike(g, 0.0));
      results.push_back({persist ? m.add(acc, kept) : kept, updates(b, name)});
    }
    auto accumulateScalar = [&](StringRef name, Value v) {
      Value acc = addArg(func, argAttrs, m.scalarType(), name, "state");
      results.push_back({m.add(acc, m.select(ok, v, m.scalar(0.0))), updates(b, name)});
    };
    accumulateScalar("train.loss_sum", loss);
    accumulateScalar("train.loss_main_sum", result(lossMainResult));
    accumulateScalar("train.n_ok", m.scalar(1.0));
    for (auto &[layer, r] : countResults) {
      Value c = result(r);
      std::string name = "train.counts." + layer;
      Value acc = addArg(func, argAttrs, c.getType(), name, "state");
      Value okb = m.spread(m.castLike(ok, c), c);
      results.push_back({m.add(acc, m.select(okb, c, m.splatLike(c, 0.0))), updates(b, name)});
    }
    for (unsigned r = 0; r < ret.getNumOperands(); ++r) {
      auto n = grad.getResultAttrOfType<StringAttr>(r, ::hymo::kNameAttr);
      if (n && n.getValue().starts_with("loss"))
        results.push_back({result(r), output(b, n.getValue())});
    }
    finish(func, b, argAttrs, results);
    return success();
  }

  LogicalResult buildUpdate();

  /// Newton-Schulz on X ([m, n] or a stack [k, m, n]), spec §3.2: quintic
  /// or cubic, `ns_iterations` times. A tall matrix iterates on its Gram
  /// matrix X^T X instead (the same iteration on X^T, without materialising
  /// the transposes):
  ///   wide: X <- (a I + b A + c A^2) X,  A = X X^T
  ///   tall: X <- X (a I + b G + c G^2),  G = X^T X
  /// A and G are symmetric, so A^2 = A A^T: the runtime computes the Gram
  /// matrices and their squares as symmetric rank-k products.
  ///
  /// Every B_j = p(A_j) is a polynomial in A_j, so it commutes with A_j and
  /// the next Gram matrix needs no pass over X: A_{j+1} = B_j A_j B_j =
  /// A_j B_j^2, and X_K = B_{K-1} ... B_0 X_0 (tall: X_0 B_0 ... B_{K-1}).
  /// For a matrix much longer than wide (the FFN's 704 x 256) that replaces
  /// K products of the long side by small n x n ones: it is used when it
  /// costs fewer multiply-adds (docs/passes/train-step.md). Both forms are
  /// the spec's iteration exactly in real arithmetic.
  Value newtonSchulz(Math &m, Value X, int64_t rows, int64_t cols) {
    bool tall = rows > cols;
    bool cubic = cfg.str("optimizer.ns_coefficients") == "cubic";
    int64_t iters = static_cast<int64_t>(cfg.num("optimizer.ns_iterations"));
    auto gram = [&](Value Y) {
      return tall ? m.matmul(Y, Y, true, false) : m.matmul(Y, Y, false, true);
    };
    // a X + B X = (a I + B) X: the scalar term joins the small polynomial,
    // so the iteration makes no extra pass over X.
    auto polynomial = [&](Value A) {
      Value I = EyeOp::create(m.b, m.loc, A.getType());
      if (cubic)
        return m.axpby(1.5, I, -0.5, A);
      Value Bm = m.axpby(-4.7750, A, 2.0315, m.matmul(A, A, false, true));
      return m.add(m.scale(I, 3.4445), Bm);
    };
    auto apply = [&](Value Y, Value B) {
      return tall ? m.matmul(Y, B, false, false) : m.matmul(B, Y, false, false);
    };
    if (!useGramRecursion(rows, cols, iters, cubic)) {
      for (int64_t k = 0; k < iters; ++k)
        X = apply(X, polynomial(gram(X)));
      return X;
    }
    Value A = gram(X), P;
    for (int64_t k = 0; k < iters; ++k) {
      Value B = polynomial(A);
      P = k == 0 ? B : m.matmul(B, P, false, false);
      if (k + 1 < iters)
        A = m.matmul(A, m.matmul(B, B, false, true), false, false);
    }
    return apply(X, P);
  }

  /// Multiply-adds of the two Newton-Schulz forms for an m x n matrix
  /// (l = max(m, n), s = min(m, n); a symmetric product counts half).
  static bool useGramRecursion(int64_t rows, int64_t cols, int64_t iters, bool cubic) {
    if (iters < 2)
      return false;
    double l = std::max(rows, cols), s = std::min(rows, cols), s3 = s * s * s;
    double square = cubic ? 0.0 : 0.5 * s3;  // A^2
    double direct = iters * (1.5 * l * s * s + square);
    double recursion = 1.5 * l * s * s + iters * square + (iters - 1) * (0.5 + 1.0 + 1.0) * s3;
    return recursion < direct;
  }
};

LogicalResult TrainStepPass::buildUpdate() {
  OpBuilder top(module.getContext());
  top.setInsertionPointToEnd(module.getBody());
  auto func = func::FuncOp::create(top, grad.getLoc(), "update", top.getFunctionType({}, {}));
  func.addEntryBlock();
  SmallVector<Attribute> argAttrs;
  OpBuilder b = OpBuilder::atBlockEnd(&func.getBody().front());
  Math m{b, grad.getLoc(), elt};
  SmallVector<std::pair<Value, DictionaryAttr>> results;

  // Arguments: parameters and buffers (with their own attributes), then the
  // accumulators, the optimizer state and the step counters.
  auto copyArg = [&](unsigned i) {
    Value v = func.getBody().front().addArgument(grad.getArgument(i).getType(), grad.getLoc());
    argAttrs.push_back(grad.getArgAttrDict(i));
    return v;
  };
  SmallVector<Value> w, acc;
  for (const Param &p : params)
    w.push_back(copyArg(p.arg));
  llvm::StringMap<Value> buffers;
  for (unsigned i : bufferArgs)
    buffers[argName(i)] = copyArg(i);
  for (const Param &p : params)
    acc.push_back(addArg(func, argAttrs, p.type, "acc." + p.name, "state"));
  Value step = addArg(func, argAttrs, m.scalarType(), "train.step", "state");
  Value adamT = addArg(func, argAttrs, m.scalarType(), "train.adamw_t", "state");
  Value lossSum = addArg(func, argAttrs, m.scalarType(), "train.loss_sum", "state");
  Value lossMainSum = addArg(func, argAttrs, m.scalarType(), "train.loss_main_sum", "state");
  Value nOk = addArg(func, argAttrs, m.scalarType(), "train.n_ok", "state");

  // Did any micro-batch of this step count? Every state change is blended
  // with it, so an all-skipped step changes nothing but the step counter.
  Value any = m.greater(nOk, m.scalar(0.0));
  auto keep = [&](Value updated, Value old) {
    return m.select(m.spread(any, updated), updated, old);
  };

  // Global-norm clip (spec §5): coef = min(1, clip / (norm + 1e-6)).
  Value sq = m.scalar(0.0);
  for (Value g : acc)
    sq = m.add(sq, m.sumAll(m.square(g)));
  Value norm = m.sqrt(sq);
  Value coef = m.min(m.scalar(1.0), m.div(m.scalar(cfg.num("training.grad_clip")),
                                         m.add(norm, m.scalar(1e-6))));

  // WSD factor at t = step + 1 (spec §3.4).
  double total = cfg.num("scheduler.total_steps");
  double warm = std::floor(total * cfg.num("scheduler.warmup_frac"));
  double stable = std::floor(total * cfg.num("scheduler.stable_frac"));
  double decay = total - warm - stable;
  double minRatio = cfg.num("scheduler.min_lr_ratio");
  std::string shape = cfg.str("scheduler.decay");
  Value t = m.add(step, m.scalar(1.0));
  Value p = decay > 0 ? m.div(m.sub(t, m.scalar(warm + stable)), m.scalar(decay))
                      : m.scalar(1.0);
  p = m.min(m.max(p, m.scalar(0.0)), m.scalar(1.0));
  Value f;
  if (shape == "cosine")
    f = m.mul(m.scalar(0.5), m.add(m.scalar(1.0),
                                   CosOp::create(b, m.loc, m.mul(p, m.scalar(M_PI)))));
  else if (shape == "sqrt")
    f = m.sub(m.scalar(1.0), m.sqrt(p));
  else
    f = m.sub(m.scalar(1.0), p);
  Value decayed = m.add(m.scalar(minRatio), m.mul(m.scalar(1.0 - minRatio), f));
  Value warmFactor = warm > 0 ? m.div(t, m.scalar(warm)) : m.scalar(1.0);
  Value factor = m.select(m.greater(m.scalar(warm + stable), t), m.scalar(1.0), decayed);
  factor = m.select(m.greater(m.scalar(warm), t), warmFactor, factor);
  Value lrMuon = m.mul(factor, m.scalar(cfg.num("optimizer.muon_lr")));
  Value lrAdam = m.mul(factor, m.scalar(cfg.num("optimizer.adamw_lr")));

  bool cautious = cfg.flag("optimizer.cautious_wd");
  Value newAdamT = m.add(adamT, m.select(any, m.scalar(1.0), m.scalar(0.0)));
  // NorMuon, first half: momentum and the normalised U of every matrix.
  struct Muon {
    Value M, V, newM, X, O;
  };
  std::map<size_t, Muon> muon;
  double mu = cfg.num("optimizer.momentum");
  for (size_t i = 0; i < params.size(); ++i) {
    const Param &prm = params[i];
    if (prm.optimizer != "normuon")
      continue;
    Muon &mw = muon[i];
    auto shp = cast<RankedTensorType>(prm.type).getShape();
    mw.M = addArg(func, argAttrs, prm.type, "normuon.momentum." + prm.name, "state");
    mw.V = addArg(func, argAttrs, RankedTensorType::get({shp[0]}, elt), "normuon.v." + prm.name,
                  "state");
    Value G = m.scale(acc[i], coef);
    mw.newM = m.add(m.scale(mw.M, mu), G);
    Value U = cfg.flag("optimizer.nesterov") ? m.add(G, m.scale(mw.newM, mu)) : mw.newM;
    mw.X = m.scale(U, m.div(m.scalar(1.0), m.add(m.frobenius(U), m.scalar(1e-7))));
  }
  // Newton-Schulz, batched over the matrices of one shape: they are stacked
  // into [k, m, n] so each iteration is a few batched products (the runtime
  // runs the batch in parallel) instead of k chains of small ones.
  std::map<std::pair<int64_t, int64_t>, SmallVector<size_t>> byShape;
  for (auto &[i, mw] : muon) {
    auto shp = cast<RankedTensorType>(params[i].type).getShape();
    byShape[{shp[0], shp[1]}].push_back(i);
  }
  for (auto &[shape, members] : byShape) {
    auto [rows, cols] = shape;
    int64_t k = members.size();
    Value X;
    if (k == 1) {
      X = muon[members[0]].X;
    } else {
      SmallVector<Value> parts;
      for (size_t i : members)
        parts.push_back(ReshapeOp::create(b, m.loc, RankedTensorType::get({1, rows, cols}, elt),
                                          muon[i].X));
      X = ConcatOp::create(b, m.loc, RankedTensorType::get({k, rows, cols}, elt), parts,
                           b.getI64IntegerAttr(0));
    }
    X = newtonSchulz(m, X, rows, cols);
    for (int64_t j = 0; j < k; ++j) {
      Value O = X;
      if (k > 1) {
        O = SliceOp::create(b, m.loc, RankedTensorType::get({1, rows, cols}, elt), X,
                            b.getDenseI64ArrayAttr({j, 0, 0}),
                            b.getDenseI64ArrayAttr({j + 1, rows, cols}));
        O = ReshapeOp::create(b, m.loc, RankedTensorType::get({rows, cols}, elt), O);
      }
      muon[members[j]].O = O;
    }
  }

  const bool persist = accumulatorsPersist();
  for (size_t i = 0; i < params.size(); ++i) {
    const Param &prm = params[i];
    Value W = w[i];
    Value G = m.scale(acc[i], coef);
    Value newW;
    if (prm.optimizer == "normuon") {
      Muon &mw = muon[i];
      Value M = mw.M, V = mw.V, newM = mw.newM, O = mw.O;
      auto shp = cast<RankedTensorType>(prm.type).getShape();
      int64_t rows = shp[0], cols = shp[1];
      // Neuron-wise second moment and normalisation.
      double beta2 = cfg.at("optimizer.betas", 1);
      auto rowType = RankedTensorType::get({rows}, elt);
      Value rowMean = ReduceMeanOp::create(b, m.loc, rowType, m.square(O),
                                           b.getDenseI64ArrayAttr({1}), b.getBoolAttr(false));
      Value newV = m.axpby(beta2, V, 1.0 - beta2, rowMean);
      Value denom = m.add(m.sqrt(newV), m.splatLike(newV, cfg.num("optimizer.eps")));
      Value P = m.div(O, BroadcastInDimOp::create(b, m.loc, O.getType(), denom,
                                                  b.getDenseI64ArrayAttr({0})));
      // Scale: `shape` keeps ||O|| * sqrt(max(1, m/n)); `rms` gives
      // 0.2 sqrt(mn). A zero update (||P|| = 0) stays zero.
      Value target = cfg.str("optimizer.muon_scale") == "rms"
                         ? m.scalar(0.2 * std::sqrt(double(rows * cols)))
                         : m.mul(m.frobenius(O),
                                 m.scalar(std::sqrt(std::max(1.0, double(rows) / double(cols)))));
      Value s = m.div(target, m.max(m.frobenius(P), m.scalar(1e-30)));
      Value Op = m.scale(P, s);
      double wd = cfg.num("optimizer.weight_decay");
      Value decayTerm = m.scale(W, wd);
      if (cautious)
        decayTerm = m.mul(decayTerm, m.greater(m.mul(Op, W), m.splatLike(W, 0.0)));
      newW = m.sub(W, m.scale(m.add(Op, decayTerm), lrMuon));
      results.push_back({keep(newM, M), updates(b, "normuon.momentum." + prm.name)});
      results.push_back({keep(newV, V), updates(b, "normuon.v." + prm.name)});
    } else {
      Value Mm = addArg(func, argAttrs, prm.type, "adamw.m." + prm.name, "state");
      Value Vv = addArg(func, argAttrs, prm.type, "adamw.v." + prm.name, "state");
      double b1 = cfg.at("optimizer.adamw_betas", 0), b2 = cfg.at("optimizer.adamw_betas", 1);
      Value newM = m.axpby(b1, Mm, 1.0 - b1, G);
      Value newV = m.axpby(b2, Vv, 1.0 - b2, m.square(G));
      // Bias corrections with t = the updates this optimizer has made.
      Value bc1 = m.sub(m.scalar(1.0), m.exp(m.mul(newAdamT, m.scalar(std::log(b1)))));
      Value bc2 = m.sub(m.scalar(1.0), m.exp(m.mul(newAdamT, m.scalar(std::log(b2)))));
      Value mhat = m.scale(newM, m.div(m.scalar(1.0), bc1));
      Value vhat = m.scale(newV, m.div(m.scalar(1.0), bc2));
      Value u = m.div(mhat, m.add(m.sqrt(vhat), m.splatLike(vhat, cfg.num("optimizer.adamw_eps"))));
      // Cautious mask, renormalised by its mean over the whole tensor.
      Value phi = m.greater(m.mul(u, G), m.splatLike(G, 0.0));
      Value meanPhi = m.max(m.meanAll(phi), m.scalar(1e-3));
      u = m.scale(m.mul(u, phi), m.div(m.scalar(1.0), meanPhi));
      StringRef n = prm.name;
      double wd = (n == "embed.weight" || n == "head.weight")
                      ? cfg.num("optimizer.embed_weight_decay")
                  : (cast<RankedTensorType>(prm.type).getRank() == 1 || n.ends_with(".A_log") ||
                     n.ends_with(".dt_bias") || n.ends_with(".D_skip") || n.contains("norm"))
                      ? 0.0
                      : cfg.num("optimizer.adamw_weight_decay");
      Value step = u;
      if (wd != 0.0) {
        Value decayTerm = m.scale(W, wd);
        if (cautious)
          decayTerm = m.mul(decayTerm, m.greater(m.mul(u, W), m.splatLike(W, 0.0)));
        step = m.add(u, decayTerm);
      }
      newW = m.sub(W, m.scale(step, lrAdam));
      results.push_back({keep(newM, Mm), updates(b, "adamw.m." + prm.name)});
      results.push_back({keep(newV, Vv), updates(b, "adamw.v." + prm.name)});
    }
    results.push_back({keep(newW, W), updates(b, prm.name)});
    if (persist)
      results.push_back({m.splatLike(acc[i], 0.0), updates(b, "acc." + prm.name)});
  }

  // Gate-bias update per MoE layer (spec §2.3), outside autodiff.
  double alpha = cfg.num("model.moe.ema_alpha"), speed = cfg.num("model.moe.bias_speed");
  for (auto &[layer, r] : countResults) {
    Type countType = grad.getFunctionType().getResult(r);
    Value counts = addArg(func, argAttrs, countType, "train.counts." + layer, "state");
    Value bias = buffers.lookup(layer + ".gate_bias");
    Value ema = buffers.lookup(layer + ".gate_ema");
    if (!bias || !ema)
      return grad.emitError() << "expected the buffers " << layer << ".gate_bias and "
                              << layer << ".gate_ema";
    Value c = m.castLike(counts, ema);
    Value newEma = m.axpby(1.0 - alpha, ema, alpha, c);
    Value avg = m.spread(m.meanAll(newEma), newEma);
    Value up = m.greater(m.scale(avg, 0.95), newEma);
    Value down = m.greater(newEma, m.scale(avg, 1.05));
    Value newBias = m.add(bias, m.scale(m.sub(up, down), speed));
    results.push_back({keep(newEma, ema), updates(b, layer + ".gate_ema")});
    results.push_back({keep(newBias, bias), updates(b, layer + ".gate_bias")});
    results.push_back({m.splatLike(counts, 0.0), updates(b, "train.counts." + layer)});
  }

  // Metrics, then the counters.
  Value denomOk = m.max(nOk, m.scalar(1.0));
  results.push_back({m.div(lossSum, denomOk), output(b, "loss")});
  results.push_back({m.div(lossMainSum, denomOk), output(b, "loss_main")});
  results.push_back({norm, output(b, "grad_norm")});
  results.push_back({lrMuon, output(b, "lr_muon")});
  results.push_back({lrAdam, output(b, "lr_adamw")});
  results.push_back({nOk, output(b, "n_ok")});
  results.push_back({m.add(step, m.scalar(1.0)), updates(b, "train.step")});
  results.push_back({newAdamT, updates(b, "train.adamw_t")});
  for (StringRef n : {"train.loss_sum", "train.loss_main_sum", "train.n_ok"})
    results.push_back({m.scalar(0.0), updates(b, n)});
  finish(func, b, argAttrs, results);
  if (!cfg.missing.empty())
    return module.emitError() << "the config lacks " << cfg.missing;
  return success();
}

} // namespace
} // namespace mlir::hymo
